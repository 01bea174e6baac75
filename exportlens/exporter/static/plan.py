"""What to export: modules found, each with its spec or the reason it has none (no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core import codes
from ..core.report import Finding
from ..core.sources import Sources
from ..core.targets import ModuleClass, Target
from .discover import discover
from .module_spec import resolve
from .spec import ExportSpec, ProjectSpecs, find_root, load_project


@dataclass(frozen=True)
class Planned:
    module: ModuleClass
    spec: ExportSpec | None
    findings: tuple[Finding, ...] = ()  # spec errors; with a spec of None, the module is skipped

    @property
    def target(self) -> str:
        return self.module.target


@dataclass
class Plan:
    root: Path
    project: ProjectSpecs
    modules: list[Planned] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # syntax errors, pyproject problems
    sources: Sources | None = None  # the texts it was made from (None: the disk's)

    def __post_init__(self) -> None:
        if self.sources is None:
            self.sources = Sources(self.root)


def make_plan(
    paths: list[Path], root: Path | None = None, only: set[str] | None = None, sources: Sources | Mapping[Path, str] | None = None
) -> Plan:
    """Modules under ``paths`` (files or folders) in the project holding the first path.
    ``sources`` overrides file text (unsaved editor buffers, pyproject.toml included), by absolute path."""
    paths = [p.resolve() for p in paths] or [Path.cwd()]
    root = (root or find_root(paths[0])).resolve()
    files = Sources.of(root, sources)
    project = load_project(files)
    found = discover(root, paths, files)
    plan = Plan(root, project, findings=list(found.findings) + list(project.findings), sources=files)
    for module in found.modules:
        if only and module.target not in only and module.name not in only:
            continue
        spec, problems = resolve(module, project)
        plan.modules.append(Planned(module, spec, tuple(problems)))
    known = {m.target for m in found.modules}
    unreadable = {f.path for f in found.findings}  # a syntax error hides its classes: it is the one problem to report
    for target, (_, loc) in project.tables.items():
        t = Target.parse(target)
        if target not in known and t.path not in unreadable and _in_scope(root / t.path, paths):
            plan.findings.append(codes.finding(codes.SPEC_INVALID, f"no nn.Module '{t.name}' in {t.path}", loc.path, loc.line))
    return plan


def _in_scope(file: Path, paths: list[Path]) -> bool:
    return any(file == p or p in file.parents for p in paths)


def no_spec_finding(module: ModuleClass) -> Finding:
    message = f'{module.name} has no example inputs: add [tool.exportlens.modules."{module.target}"] to pyproject.toml, or an example_inputs() staticmethod'
    return codes.finding_at(codes.SPEC_MISSING, message, module.path, module.name_span)
