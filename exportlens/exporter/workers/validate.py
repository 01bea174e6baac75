"""A job's end, as its process said it: untrusted input (owner side, no torch).

The module being exported runs in the process that writes the job's result, so it can
write that result itself (patch our encoder, write to the result pipe). Before anything
of it is shown, proven or cached, the owner checks it against the job: every field of
the type the protocol says, no text or list of an absurd size, the job's own target,
every path a project file (an edit: a Python file or pyproject.toml), and nothing the
owner did not do itself: a fix is verified only by the owner's own proof (proofs.py),
and a verdict is cached only by the owner. A report that breaks any of it is refused
whole: whoever wrote it, none of it can be trusted.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.options import lowered_for
from ..core.report import Finding, Fix, ModuleReport, Probe, ProbeFill, Summary, Verified, from_dict, to_dict
from ..core.tree import SubmoduleTree
from ..spec.loading import PYPROJECT
from .protocol import Died, Done, Encoded, End, Exited, Internal, Job, OutOfMemory, Reported, TreeReported

MAX_TEXT = 1 << 20  # characters of a message, a title, an edit's text, the output's tail
MAX_GRAPH = 64 << 20  # the printed program of a large model runs to megabytes
MAX_ITEMS = 100_000  # findings, fixes, edits, related places, shaped lines: each list
MAX_LINE = 100_000_000  # a line or column past this is no place in a file
MAX_PATH = 4096  # characters: PATH_MAX on Linux
# characters of a message kept, the rest cut and its length said: a diagnostic or a hover shows
# a line or two, and a megabyte in every message the editor is sent slows every client
MAX_MESSAGE = 4000
EDITABLE = (".py", ".pyi")  # beside pyproject.toml: what a fix of ours edits


class Refused(ValueError):
    """What is wrong with a job's end, in a sentence for the user."""


def accepted(job: Job, done: Done) -> Done:
    """``done`` as the owner may use it: checked against ``job``, its report's fixes
    unverified and its verdict not marked cached; Refused saying why it cannot be."""
    try:
        if not isinstance(done.output, str) or not isinstance(done.fault, str):
            raise Refused("its output is not text")
        end = _typed(done.end)
        if isinstance(end, Exited):
            end = replace(end, message=shortened(end.message))
        if isinstance(end, Reported):
            end = replace(end, report=validated_report(job, end.report))
        if isinstance(end, TreeReported):
            end = replace(end, tree=validated_tree(job, end.tree))
        # what it printed, and what stood beside its result line: shown as they end
        return replace(done, end=end, output=done.output[-MAX_TEXT:], fault=done.fault[-MAX_TEXT:])
    except RecursionError:
        raise Refused("it is nested too deeply") from None


def _typed(end: End | Encoded) -> End:
    """``end`` rebuilt field by field from its plain form, so that every field holds what
    its type says (the codec builds what the text names, whatever the values)."""
    if isinstance(end, Encoded) or type(end) not in (Reported, TreeReported, Exited, OutOfMemory, Internal, Died):
        raise Refused(f"it is not a job's end but {type(end).__name__}")
    try:
        typed = from_dict(type(end), to_dict(end))
    except (ValueError, TypeError) as e:
        raise Refused(f"it does not fit the protocol: {str(e)[:200]}") from None
    for text in _texts(typed):
        if len(text) > MAX_TEXT:
            raise Refused(f"it holds a text of {len(text)} characters")
    return typed


def _texts(end: End) -> list[str]:
    if isinstance(end, Exited):
        return [end.message]
    if isinstance(end, Internal):
        return [end.trace]
    return []


def kept(job: Job, report: ModuleReport) -> ModuleReport | None:
    """A verdict read back from disk (verdicts.py), checked as a job's report is, its proofs
    kept (the owner wrote them); None where it is not fit to show."""
    try:
        typed = from_dict(ModuleReport, to_dict(report))
        return validated_report(job, typed, proven=True)
    except (ValueError, TypeError, RecursionError):  # (Refused is a ValueError)
        return None


class _Root:
    """The project root, with what ``inside`` said of each path asked about: a report names
    a few files thousands of times (a shaped line each), and each answer costs a walk of
    the path's links."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, bool] = {}

    def holds(self, path: str) -> bool:
        if path not in self.known:
            self.known[path] = inside(self.path, path)
        return self.known[path]


def validated_report(job: Job, report: ModuleReport, *, proven: bool = False) -> ModuleReport:
    """``report`` (its types already checked) as the owner keeps it; Refused where it is not
    ``job``'s or names a place outside the project. ``proven``: its fixes' ``verified`` is
    the owner's own (a verdict it stored), not the job's."""
    if report.target != job.target:
        raise Refused(f"it reports on {report.target[:200]!r}, not on {job.target!r}")
    if not math.isfinite(report.seconds) or report.seconds < 0:
        raise Refused(f"it took {report.seconds} seconds")
    root = _Root(Path(job.root).resolve())
    _sized("findings", report.findings)
    findings = tuple(_finding(f, root, proven) for f in report.findings)
    if report.summary is not None:
        _summary(job, report.summary, root)
    _short(report.spec_source, report.torch_version)
    _probes(report.probes)  # a proof's, of the probes it was given
    _lowerings(job, report)
    return replace(report, findings=findings, cached=False)  # a verdict is marked cached by the owner only


def _summary(job: Job, summary: Summary, root: _Root) -> None:
    """A successful export's description: every list and text of a sane size, every line it names in a project file."""
    if len(summary.graph) > MAX_GRAPH:
        raise Refused(f"its program is {len(summary.graph)} characters long")
    for name in ("inputs", "outputs", "range_constraints", "equalities", "line_shapes", "guards"):
        _sized(name, getattr(summary, name))
    _short(summary.signature, *summary.inputs, *summary.outputs)
    _short(*(part for e in summary.equalities for part in (e.left, e.right, *e.dims)))
    _short(*(r.name for r in summary.range_constraints))
    _sized("ops", summary.ops or ())  # the operators it calls (``exportlens diff``)
    _short(*(summary.ops or ()))
    for shaped in summary.line_shapes:
        _place(root, shaped.path, shaped.line)
        _sized("shapes", shaped.shapes)
        _short(*shaped.shapes)
    for guard in summary.guards:  # the editor puts each on its line (server/features/guard_lines.py)
        _short(guard.text)
        if guard.path is not None:
            _place(root, guard.path, guard.line)
    artifact = job.options.artifact
    if summary.artifact is not None and (artifact is None or summary.artifact != str(artifact)):
        raise Refused(f"it names a saved program the job did not ask for: {summary.artifact[:200]!r}")


def validated_tree(job: Job, tree: SubmoduleTree) -> SubmoduleTree:
    """``tree`` (its types already checked) as the owner shows it; Refused as ``validated_report``
    refuses a report (a fix it carries is unverified, as a report's is)."""
    if tree.target != job.target:
        raise Refused(f"it reports on {tree.target[:200]!r}, not on {job.target!r}")
    root = _Root(Path(job.root).resolve())
    _sized("nodes", tree.nodes)
    _sized("findings", tree.findings)
    _short(*tree.carried, tree.stopped)
    nodes = []
    for node in tree.nodes:
        _short(node.path, node.cls, node.inputs, node.same_as)
        if not math.isfinite(node.seconds) or node.seconds < 0:
            raise Refused(f"it took {node.seconds} seconds")
        nodes.append(replace(node, finding=_finding(node.finding, root, False)) if node.finding else node)
    findings = tuple(_finding(f, root, False) for f in tree.findings)
    return replace(tree, nodes=tuple(nodes), findings=findings)


def _finding(finding: Finding, root: _Root, proven: bool) -> Finding:
    _short(finding.code, finding.message, finding.detail)
    _place(root, finding.path, finding.line, finding.column, finding.end_line, finding.end_column)
    _sized("related places", finding.related)
    for r in finding.related:
        _short(r.message)
        _place(_READ_ONLY if _library_file(r.path) else root, r.path, r.line)
    _sized("fixes", finding.fixes)
    fixes = tuple(_fix(fix, root, proven) for fix in finding.fixes)
    if sum(fix.preferred for fix in fixes) > 1:
        raise Refused(f"it prefers {sum(fix.preferred for fix in fixes)} fixes for one finding")
    related = tuple(replace(r, message=shortened(r.message)) for r in finding.related)
    return replace(finding, message=shortened(finding.message), related=related, fixes=fixes)


def _fix(fix: Fix, root: _Root, proven: bool) -> Fix:
    """The fix, not verified: only the owner's proof verifies one (proofs.py); a preferred
    one is the fix the owner tries."""
    _short(fix.action)
    _sized("edits", fix.edits)
    for edit in fix.edits:
        _short(edit.new_text)
        _place(root, edit.path, edit.line, edit.column, edit.end_line, edit.end_column)
        name = PurePosixPath(edit.path)
        if name.suffix not in EDITABLE and edit.path != PYPROJECT:
            raise Refused(f"its fix edits {edit.path[:200]!r}, which is neither Python nor the project's {PYPROJECT}")
    if fix.verified not in tuple(Verified):
        raise Refused(f"its fix says it was {str(fix.verified)[:200]!r}")
    probes = _probes(fix.probes)
    _sized("lowerings", fix.lowerings)
    if proven:
        return replace(fix, verified=Verified(fix.verified), probes=probes)
    # what the probes gave is the owner's proof's to say, like verified
    return replace(
        fix,
        verified=Verified.UNVERIFIED,
        remaining=0,
        probes=tuple(Probe(p.name, p.fill, p.seed, p.sizes) for p in probes),
        lowerings=(),  # (as is what lowering it gave)
    )


def _probes(probes: tuple[Probe, ...]) -> tuple[Probe, ...]:
    """The probes, each fill a member: a report may name one by its word, as the JSON does."""
    _sized("probes", probes)
    for probe in probes:
        _short(probe.name, probe.said)
        if probe.fill not in tuple(ProbeFill):
            raise Refused(f"it names a probe filled with {str(probe.fill)[:200]!r}")
        _sized("sizes", probe.sizes)
        _short(*(s.dim for s in probe.sizes))
    return tuple(replace(p, fill=ProbeFill(p.fill)) for p in probes)


def inside(root: Path, path: str) -> bool:
    """Whether ``path`` (project-relative, POSIX) names a file in the project ``root``
    (resolved): not absolute, no ``..``, and no link on the way that leads out."""
    parts = PurePosixPath(path).parts
    if not path or PurePosixPath(path).is_absolute() or ".." in parts or "\\" in path or "\0" in path:
        return False
    try:
        return (root / path).resolve().is_relative_to(root)
    except (OSError, RuntimeError, ValueError):  # a loop of links, a name the system refuses
        return False


class _Anywhere(_Root):
    def holds(self, path: str) -> bool:
        return True


_READ_ONLY = _Anywhere(Path(os.devnull))  # a place named for reading only: checked by ``_library_file``


def _library_file(path: str) -> bool:
    """A related place outside the project: an installed package's own Python file that made a
    guard (runtime/library.py), named for reading, never edited."""
    return os.path.isabs(path) and path.endswith(".py") and os.path.isfile(path) and not os.path.islink(path)


def _place(root: _Root, path: str, *numbers: int | None) -> None:
    if len(path) > MAX_PATH:
        raise Refused(f"it names a path of {len(path)} characters")
    if not root.holds(path):
        raise Refused(f"it names {path[:200]!r}, which is not a file of the project")
    if any(n is not None and not 1 <= n <= MAX_LINE for n in numbers):
        raise Refused(f"it names a place in {path!r} no file has: {numbers}")


def _lowerings(job: Job, report: ModuleReport) -> None:
    """Only a lowering job's report carries lowerings: one per target, each once, numbers that are numbers."""
    if report.lowerings and not lowered_for(job.task, job.options):
        raise Refused("it reports lowerings the job did not ask for")
    _sized("lowerings", report.lowerings)
    if len({lowering.target for lowering in report.lowerings}) != len(report.lowerings):
        raise Refused("it reports one target twice")
    for lowering in report.lowerings:
        _short(lowering.target, lowering.status, *lowering.sizes)
        error = lowering.max_error
        if not math.isfinite(lowering.seconds) or lowering.size < 0 or (error is not None and math.isnan(error)):
            raise Refused(f"its lowering for {lowering.target[:50]!r} has numbers that are none")


def shortened(message: str) -> str:
    """``message`` cut to ``MAX_MESSAGE`` characters, saying how long it was."""
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[:MAX_MESSAGE]}… (cut: {len(message):,} characters in all)"


def _short(*texts: str) -> None:
    for text in texts:
        if len(text) > MAX_TEXT:
            raise Refused(f"it holds a text of {len(text)} characters")


def _sized(name: str, items: tuple[Any, ...]) -> None:
    if len(items) > MAX_ITEMS:
        raise Refused(f"it lists {len(items)} {name}")
