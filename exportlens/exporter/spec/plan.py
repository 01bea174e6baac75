"""What to export: modules found, each with its spec or the reason it has none (no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core import codes
from ..core.report import Finding
from ..core.sources import Sources
from ..core.targets import ModuleClass, Target
from ..find.bulk import discover_tree
from ..find.children import parents
from ..find.declared import declared_module
from ..find.discover import Discovery, discover
from ..find.index_cache import IndexCache
from .loading import ExportSpec, ProjectSpecs, find_root, load_project
from .module_spec import resolve, resolve_variants
from .pyproject import excludes
from .variants import named


@dataclass(frozen=True)
class Planned:
    module: ModuleClass
    spec: ExportSpec | None
    findings: tuple[Finding, ...] = ()  # spec errors; with a spec of None, the module is skipped
    variant: str | None = None  # one of the class's [[...variants]] (variants.py)
    covered_by: str | None = None  # without a spec: the module that builds it, exported with it inside (children.py)

    @property
    def target(self) -> str:
        """``str(Target(path, name, variant))``, made without one: a check reads it at each step, for every module."""
        own = self.module.target
        return own if self.variant is None else f"{own}[{self.variant}]"


def planned_of(module: ModuleClass, project: ProjectSpecs) -> list[Planned]:
    """``module`` as it is checked: once per variant, or once."""
    variants = resolve_variants(module, project)
    if variants:
        return [
            Planned(module, spec, named(problems, Target.of(module, v or None)), v) for v, spec, problems in variants
        ]
    spec, problems = resolve(module, project)
    return [Planned(module, spec, tuple(problems))]


@dataclass
class Plan:
    root: Path
    project: ProjectSpecs
    modules: list[Planned] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # syntax errors, pyproject problems
    sources: Sources = field(kw_only=True)  # the texts it was made from (``Sources(root)``: the disk's)
    unmarked: tuple[str, ...] = ()  # files known to hold no suppression comment (Discovery's; a tuple: the codec's)


def make_plan(
    paths: list[Path],
    root: Path | None = None,
    only: set[str] | None = None,
    sources: Sources | Mapping[Path, str] | None = None,
    *,
    indexed: bool = False,
    cache: IndexCache | None = None,
) -> Plan:
    """Modules under ``paths`` (files or folders) in the project holding the first path.
    ``sources`` overrides file text (unsaved editor buffers, pyproject.toml included), by absolute path.
    ``indexed`` (the CLI): found by the workspace index's engine (``bulk.discover_tree``: the
    same modules and errors), what it learns kept in ``cache``; not where buffers override the disk."""
    paths = [p.resolve() for p in paths] or [Path.cwd()]
    root = (root or find_root(paths[0])).resolve()
    files = Sources.of(root, sources)
    project = load_project(files)
    found = _discover(root, paths, files, indexed, cache)
    plan = Plan(root, project, findings=list(found.findings) + list(project.findings), sources=files)
    plan.unmarked = tuple(found.unmarked)
    known = {m.target for m in found.modules}
    unreadable = {f.path for f in found.findings}  # a syntax error hides its classes: it is the one problem to report
    modules = list(found.modules)
    for target, (table, loc) in project.tables.items():
        t = Target.parse(target)
        if t.module in known or t.path in unreadable or not _in_scope(root / t.path, paths):
            continue
        declared = declared_module(target, table, files)
        if declared is not None:
            known.add(t.module)
            modules.append(declared)
        else:
            plan.findings.append(codes.finding(codes.SPEC_INVALID, _not_found(t, table), loc.path, loc.line))
    for module in modules:
        for planned in planned_of(module, project):
            if not only or only & {planned.target, module.target, module.name}:
                plan.modules.append(planned)
    plan.modules = _covered(plan.modules, modules, files)
    return plan


def _covered(planned: list[Planned], modules: list[ModuleClass], files: Sources) -> list[Planned]:
    """Each module without a spec that a checked module builds (``covered_by``: no EL007 for it)."""
    among = [p.module for p in planned if p.spec is not None]  # none: no module is covered by another
    if not among or all(p.spec is not None or p.findings for p in planned):
        return planned
    covered = parents(modules, files, among=among)
    return [replace(p, covered_by=covered.get(p.target)) if p.spec is None else p for p in planned]


def _discover(root: Path, paths: list[Path], files: Sources, indexed: bool, cache: IndexCache | None) -> Discovery:
    exclude = excludes(files)  # each project's, read from its pyproject.toml as the user sees it
    if indexed and not files.buffers:
        return discover_tree(root, paths, cache, exclude=exclude)
    return discover(root, paths, files, exclude=exclude)


def _not_found(t: Target, table: object) -> str:
    if isinstance(table, dict) and "factory" in table:
        return (
            f"no file {t.path} in the project for {t.module}:"
            " a module built by a factory is keyed by the project file it belongs to"
        )
    return f"no nn.Module '{t.name}' in {t.path}"


def _in_scope(file: Path, paths: list[Path]) -> bool:
    return any(file == p or p in file.parents for p in paths)


def no_spec_findings(planned: Planned) -> tuple[Finding, ...]:
    """What a module checked without a spec says: its spec's errors; nothing where a checked
    module builds it (it is exported inside that one); else that it needs example inputs."""
    if planned.findings or planned.covered_by:
        return planned.findings
    return (no_spec_finding(planned.module),)


def no_spec_finding(module: ModuleClass) -> Finding:
    message = (
        f'{module.name} has no example inputs: add [tool.exportlens.modules."{module.target}"] to pyproject.toml,'
        " or an example_inputs() staticmethod"
    )
    return codes.finding_at(codes.SPEC_MISSING, message, module.path, module.name_span)
