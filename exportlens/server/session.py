"""What the server knows, changed only on the event loop: settings, trust, the module
index, and the latest export result per module. No LSP types and no torch here."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from ..exporter.core.lowering import Lowering
from ..exporter.core.report import Finding, ModuleReport
from ..exporter.core.settings import effective
from ..exporter.core.targets import Location, ModuleClass, Span, Target
from ..exporter.spec.loading import ExportSpec, ProjectSpecs, find_root
from ..exporter.spec.plan import Plan
from ..exporter.spec.plan_cache import PlanCache
from .index.module_index import ModuleIndex
from .settings import ServerSettings, in_folder
from .snapshots import WorkspaceSnapshot

DISK = WorkspaceSnapshot()  # no document open: every file as the disk has it


class ModuleKey(NamedTuple):
    """A module (or one of its variants) in one project: what every map of the server is
    keyed by. Made from parts where the server has them, parsed once where a string enters."""

    root: Path
    target: Target

    def __str__(self) -> str:
        return str(self.target)


class State(str, enum.Enum):
    """A module's export state, as its CodeLens shows it."""

    IDLE = "idle"  # never exported in this session
    RUNNING = "running"
    DONE = "done"


@dataclass(frozen=True)
class Lowered:
    """What lowering an exported module for one deployment target gave (lowering.py): its
    record, and its findings (EL6xx), positions in the text the export read."""

    lowering: Lowering
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Result:
    """One export's report, and what the export read: the version of each document open
    then (its fixes' edits name those versions, so the editor refuses them after an edit),
    and the text of the module's file and pyproject.toml where it read them from disk; the
    texts its findings' positions are in (``remap`` carries them into the text of now)."""

    report: ModuleReport
    versions: Mapping[Path, int] = field(default_factory=dict)
    disk: Mapping[Path, str] = field(default_factory=dict, repr=False)
    texts: Mapping[Path, str] = field(default_factory=dict, repr=False)
    spec: ExportSpec | None = None  # ``spec_key`` of the spec it was exported with: one no longer the module's is stale
    proven: bool = False  # its fixes' proofs are done: one they left unverified is no longer "proving…"
    # deployment target -> its lowering of this export, filled in as each lands; the proofs' and the
    # serving run's ``replace`` keep the same dict, a new export starts an empty one
    lowered: dict[str, Lowered] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.report.target}: {self.report.status.value}"

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The export's findings, then its lowerings'."""
        return self.report.findings + tuple(f for lowered in self.lowered.values() for f in lowered.findings)


NOWHERE = Location("", Span(1))  # a spec's place in ``spec_key``: where it is written changes no verdict


def spec_key(spec: ExportSpec | None) -> ExportSpec | None:
    """What an export depends on in a spec: all of it but where it is written (a line added
    above a table changes no verdict); compared as the record it is."""
    return None if spec is None else replace(spec, location=NOWHERE, locations={})


@dataclass
class Session:
    settings: ServerSettings = ServerSettings()  # the window's
    folder_settings: dict[Path, ServerSettings] = field(
        default_factory=dict
    )  # a workspace folder's, where the client has them
    trusted: bool = True
    index: ModuleIndex = field(default_factory=ModuleIndex)
    plans: PlanCache = field(default_factory=PlanCache)  # each module planned once per text
    results: dict[ModuleKey, Result] = field(default_factory=dict)  # each module's latest
    running: dict[ModuleKey, int] = field(default_factory=dict)  # module -> its export's job number
    # (module, deployment target) -> True while it is being lowered, False while it waits its turn
    compiling: dict[tuple[ModuleKey, str], bool] = field(default_factory=dict)
    exports_started: int = 0
    checked: set[Path] = field(
        default_factory=set
    )  # project roots a workspace check ran on: problems show in closed files too
    _numbers: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def folders(self) -> list[Path]:
        """The workspace folders, kept by the index: it needs them for the roots of projects without pyproject.toml."""
        return self.index.folders

    @folders.setter
    def folders(self, folders: list[Path]) -> None:
        self.index.folders = folders

    def settings_at(self, path: Path) -> ServerSettings:
        """The settings for a project or file: its workspace folder's own (device, artifact
        folder...), else the window's."""
        holders = [f for f in self.folder_settings if path.is_relative_to(f)]
        if not holders:
            return self.settings
        return in_folder(self.settings, self.folder_settings[max(holders, key=lambda f: len(f.parts))])

    def next_number(self) -> int:
        return next(self._numbers)

    def state(self, key: ModuleKey) -> State:
        if key in self.running:
            return State.RUNNING
        return State.DONE if key in self.results else State.IDLE

    def result(self, key: ModuleKey) -> Result | None:
        return self.results.get(key)

    def drop(self, gone: Callable[[Path], bool]) -> None:
        """Forget every project whose root is ``gone``: results and running exports (the index
        forgets its files and parsed specs)."""
        for table in (self.results, self.running):
            for key in [k for k in table if gone(k.root)]:
                del table[key]
        for lowering in [k for k in self.compiling if gone(k[0].root)]:
            del self.compiling[lowering]
        self.checked = {r for r in self.checked if not gone(r)}

    def forget(self, key: ModuleKey) -> None:
        self.results.pop(key, None)
        self.running.pop(key, None)

    # -- specs ---------------------------------------------------------------------

    def project(self, root: Path, docs: WorkspaceSnapshot) -> ProjectSpecs:
        """The project's pyproject.toml, as the editor has it (parsed once per text)."""
        return self.index.project(docs.sources(root))

    def plan(self, root: Path, modules: list[ModuleClass], docs: WorkspaceSnapshot) -> Plan:
        project = self.project(root, docs)
        # the texts the plan was made from: the worker re-plans if it imports other text
        plan = Plan(root, project, findings=list(project.findings), sources=docs.sources(root))
        for m in modules:
            plan.modules += self.plans.planned(m, project)  # once per variant
        return plan

    def plan_of(self, root: Path, targets: Iterable[Target], docs: WorkspaceSnapshot) -> Plan:
        """The plan of ``targets``: a class with each of its variants, a variant alone."""
        targets = list(targets)
        classes = dict.fromkeys(t.of_variant(None) for t in targets)  # in order, each once
        modules = [m for m in (self.index.by_target(root, t) for t in classes) if m is not None]
        plan, wanted = self.plan(root, modules, docs), set(targets)
        plan.modules = [p for p in plan.modules if {Target.of(p.module), Target.of(p.module, p.variant)} & wanted]
        return plan

    def warm_specs(self, folder: Path) -> None:
        """Parse the pyproject.toml of each project under ``folder`` and plan the modules its
        tables name, as the disk has them, into the caches (both thread-safe): called from a
        scan's thread, so that the first diagnostics after indexing, which plan every module
        with a table, do not do it on the event loop (a 200-table spec: over half a second)."""
        roots = {e.root for p, e in list(self.index.files.items()) if p == folder or folder in p.parents}
        for root in roots:
            project = self.project(root, DISK)
            classes = {Target.parse(t).module for t in project.tables}  # pyproject's keys: the user's text
            self.plan(root, [m for _, m in self.index.under(root) if m.target in classes], DISK)

    def variants(self, root: Path, module: ModuleClass, docs: WorkspaceSnapshot) -> list[Target]:
        """The targets ``module`` is checked as: ``path.py:Class[name]`` for each of its variants, else its own."""
        tables = map(Target.parse, self.project(root, docs).tables)  # pyproject's keys: the user's text
        return [t for t in tables if t.module == module.target and t.variant] or [Target.of(module)]

    def spec_of(
        self, root: Path, module: ModuleClass, docs: WorkspaceSnapshot
    ) -> tuple[ExportSpec | None, list[Finding]]:
        return self.plans.resolved(module, self.project(root, docs))

    def has_spec(self, root: Path, targets: list[Target], docs: WorkspaceSnapshot) -> dict[Target, bool]:
        """Whether each module has example inputs that resolve (no spec error)."""
        out = {}
        for t in targets:
            m = self.index.by_target(root, t)
            out[t] = m is not None and self.spec_of(root, m, docs)[0] is not None
        return out

    def stale(self, root: Path, docs: WorkspaceSnapshot, files: Collection[Path] | None = None) -> list[ModuleKey]:
        """Modules of ``root`` (of ``files`` only, where given) whose result was exported with a
        spec that is not the module's now: changed, turned invalid, or gone with its table,
        its variant or its class. Their findings no longer say anything of the code."""
        out = []
        for key, result in list(self.results.items()):
            file = root / key.target.path
            if key.root != root or (files is not None and file not in files):
                continue
            entry = self.index.get(file)
            if entry is not None and entry.findings:
                continue  # a syntax error (a line being typed): what the file defines is not known now
            now = self.spec_key(key, docs)
            if now is None or now != result.spec:
                out.append(key)
        return out

    def _spec_now(self, key: ModuleKey, docs: WorkspaceSnapshot) -> ExportSpec | None:
        """``key``'s spec as the editor leaves it; None where it has none (no table, variant or
        class of that name, or a spec error)."""
        module = self.index.by_target(key.root, key.target)
        planned = self.plans.planned(module, self.project(key.root, docs)) if module is not None else []
        return next((p.spec for p in planned if p.variant == key.target.variant), None)

    def spec_key(self, key: ModuleKey, docs: WorkspaceSnapshot) -> ExportSpec | None:
        """``spec_key`` of the module's spec now; None where it has none."""
        return spec_key(self._spec_now(key, docs))

    def lower_to(self, key: ModuleKey, docs: WorkspaceSnapshot) -> tuple[str, ...]:
        """The deployment targets the module's spec names (``targets = ["onnx"]``), as the editor leaves them."""
        spec = self._spec_now(key, docs)
        return effective(spec.settings, self.settings_at(key.root).overrides).targets if spec else ()

    def root_of(self, path: Path) -> Path:
        entry = self.index.get(path)
        return entry.root if entry is not None else find_root(path, self.folders)
