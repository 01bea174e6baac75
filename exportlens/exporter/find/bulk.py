"""Index a whole tree of files fast (no torch): the server's workspace index.

Three steps, each only where it must: every file is *sketched* from its text
(``prefilter``); only the files that may define a module are *parsed*, with function
bodies blanked (``outline.parse_skeleton``), by several processes at once; bases are
then *resolved* here, parsing on demand the few other files they lead through.
Sketches and outlines are kept on disk (``index_cache``) under each file's modification
time and size, so a tree opened again is only stat'ed.

It is the one discovery engine: the server's indexer and ``exportlens check`` both find
modules here. The editor leaves syntax errors inside function bodies unseen (it parses a
file whole when it is opened); the CLI's run is ``checked``: a file that may define a
module is parsed whole, once (its outline and its syntax check), and every other file is
checked whole (``syntax.python_syntax_error``), so it finds what ``discover`` finds; it
keeps its whole answer too (``discover_tree``).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..core.report import Finding
from ..core.sources import Sources, read_text
from ..core.targets import ModuleClass
from . import compact
from .discover import Discovery, Project, python_files
from .index_cache import Entry, IndexCache, Stamp, stamp, tree_stamp
from .outline import FileOutline
from .packages import Finder
from .pool import working
from .prefilter import Sketch, candidates, sketch
from .reach import disk_finder, leads, reach
from .syntax import name_finding
from .walk import Exclude, no_exclude

_SURROGATE = re.compile("[\ud800-\udfff]")  # os.fsdecode's stand-in for a byte a name's UTF-8 cannot hold


@dataclass
class Indexed:
    modules: dict[Path, list[ModuleClass]] = field(default_factory=dict)  # by file, in file order
    findings: dict[Path, list[Finding]] = field(default_factory=dict)  # syntax errors outside function bodies
    sketched: int = 0  # files read in this run (the others came from the cache)
    parsed: int = 0
    found: Discovery = field(default_factory=Discovery)  # the same, as ``discover`` gives them
    read: set[Path] = field(default_factory=set)  # every file whose sketch or outline the answer rests on
    _save: Callable[[], None] = field(default=lambda: None, repr=False)

    def save(self) -> None:
        """Write what this run learned to the cache: after the answer, which need not wait for it."""
        self._save()


def index_tree(
    root: Path,
    files: Sequence[Path],
    *,
    jobs: int | None = None,
    cache: IndexCache | None = None,
    checked: bool = False,
) -> Indexed:
    """The modules ``files`` (absolute paths, under ``root`` or in its packages) define. What
    was learned goes to ``cache`` when the result's ``save`` is called. ``checked`` (the CLI):
    every file's whole text is parsed too, so that ``found`` is what ``discover`` finds, syntax
    errors inside function bodies included (only the check of an unchanged file is kept). A file
    whose name is not UTF-8 is not read: it is an EL401 finding, under its own path."""
    misnamed = _misnamed(root, files)
    if misnamed:
        files = [f for f in files if f not in misnamed]
    with _no_gc():
        indexed = _index_tree(root, files, jobs, cache, checked)
    for f, finding in misnamed.items():
        indexed.findings[f] = [finding]
        indexed.found.findings.append(finding)
    return indexed


def _misnamed(root: Path, files: Iterable[Path]) -> dict[Path, Finding]:
    """The files whose name below ``root`` is not UTF-8, each with its finding (a root that is
    not UTF-8 is the user's to name: only what is below it counts)."""
    out = {}
    for f in files:
        name = str(f)
        if _SURROGATE.search(name):
            rel = f.relative_to(root).as_posix() if f.is_relative_to(root) else f.as_posix()
            if _SURROGATE.search(rel):
                out[f] = name_finding(rel)
    return out


def discover_tree(
    root: Path, paths: Iterable[Path], cache: IndexCache | None = None, *, exclude: Exclude = no_exclude
) -> Discovery:
    """What ``discover`` finds under ``paths``, through the index: the CLI's discovery. The
    answer is kept whole too, under the stamps of every file it read: a tree checked again
    unchanged is only stat'ed. ``exclude``: each project's exclude patterns."""
    files = python_files(Sources.of(root), paths, exclude)
    if cache is not None:
        cache.prepare()  # before the stamps are taken: a folder made in the root changes the root's
    tree = tree_stamp(root, files)
    with _no_gc():  # a kept answer is a hundred thousand objects and no cycle: the collector would cost most of it
        kept = _kept_answer(cache, root, tree)
    if kept is not None:
        return kept
    indexed = index_tree(root, files, cache=cache, checked=True)
    indexed.save()
    if cache is not None:
        others = sorted(indexed.read - set(files))
        cache.keep_answer(root, tree, compact.dumps(_answer_data(others, tree_stamp(root, others), indexed.found)))
    return indexed.found


def _answer_data(others: list[Path], tree: str, found: Discovery) -> object:
    modules = [compact.module_data(m) for m in found.modules]
    findings = [compact.finding_data(f) for f in found.findings]
    return ([str(p) for p in others], tree, modules, findings, sorted(found.unmarked))


def _kept_answer(cache: IndexCache | None, root: Path, tree: str) -> Discovery | None:
    """The answer kept for this tree, if the other files it read are unchanged too."""
    text = cache.answer(root, tree) if cache is not None else None
    try:
        others, stamped, found = compact.loads(text, _answer_of) if text is not None else ((), None, None)
    except ValueError:
        return None
    if found is None:
        return None
    return found if stamped == tree_stamp(root, others) else None


def _answer_of(d: list) -> tuple[list[Path], str, Discovery]:
    others, stamped, modules, findings, unmarked = d
    found = Discovery(list(map(compact.module_of, modules)), list(map(compact.finding_of, findings)))
    found.unmarked = frozenset(map(str, unmarked))
    return [Path(p) for p in others], stamped, found


def _index_tree(
    root: Path, files: Sequence[Path], jobs: int | None, cache: IndexCache | None, checked: bool
) -> Indexed:
    fresh = {f: e for f, e in (cache.load(root) if cache else {}).items() if e.stamp == stamp(f)}
    todo = [f for f in files if f not in fresh or fresh[f].sketch is None or (checked and not fresh[f].checked)]
    sources = Sources.of(root)  # made once: resolving the root for each file costs
    read = _read(sources, files, todo, fresh, jobs, checked)
    problems, known = read.problems, dict(read.known)
    wanted = [f for f in files if f in read.maybe and not problems.get(f)]
    known.update((f, p) for f, p in problems.items() if p)
    sound = {f for f, p in problems.items() if p is None}  # checked whole already: a skeleton tells the rest
    project = Project(sources, skeletons=True, checked=checked, files=known, sound=sound, finder=read.finder)
    found = project.discover(sorted({*wanted, *(f for f in files if problems.get(f))}))
    found.unmarked = _unmarked(sources, files, read.sketches) if checked else frozenset()
    indexed = Indexed(sketched=len(todo), parsed=read.parsed + len(project.files) - len(known), found=found)
    indexed.read = {*read.sketches, *project.files}
    for m in found.modules:
        indexed.modules.setdefault(root / m.path, []).append(m)
    for finding in found.findings:
        indexed.findings.setdefault(root / finding.path, []).append(finding)
    learned = todo or read.parsed or len(project.files) > len(known) or not read.reached <= fresh.keys()
    if cache is not None and learned:  # else the cache holds it all already
        made = _Made(read.sketches, project.files, problems if checked else None)
        indexed._save = lambda: cache.save(root, dict(made.entries(files, fresh)))
    return indexed


@dataclass
class _Read:
    """What the files' texts say, before bases are resolved."""

    sketches: dict[Path, Sketch | None]  # every file's, and those of the files reached from them
    known: dict[Path, FileOutline | Finding]  # the outlines parsed (or kept), or why a file has none
    problems: dict[Path, Finding | None]  # checked: whether each file parses whole
    maybe: set[Path]  # the files that may define a module
    reached: set[Path]  # the files outside ``files`` that bases lead to (reach.py)
    parsed: int  # files parsed in this run
    finder: Finder  # the disk's lookups made to follow imports: resolving bases asks the same


def _read(
    sources: Sources,
    files: Sequence[Path],
    todo: list[Path],
    fresh: Mapping[Path, Entry],
    jobs: int | None,
    checked: bool,
) -> _Read:
    """Sketch the files not kept, then parse those that may define a module and the files their bases
    lead to (checked: check every other file whole). The pool starts on the candidates first seen
    while this process follows imports: a sketch added only adds candidates."""
    stale = set(todo)
    sketches = {f: fresh[f].sketch for f in files if f not in stale}
    problems = {f: fresh[f].problem for f in files if f not in stale and checked}
    known = _known(fresh, checked)
    with working(jobs, len(todo)) as work:
        sketches.update(zip(todo, work.run(partial(_sketch, sources), todo)))
        job = partial(_parsed, sources, checked)
        first = candidates(sketches)  # type: ignore[arg-type]  # every file has its sketch now
        early = [f for f in files if f in first and f not in known]
        parsed_early = work.start(job, [(f, False) for f in early])
        lookups = disk_finder(sources.root)
        reached = reach(lookups, sketches, partial(_kept_sketch, fresh))  # type: ignore[arg-type]
        maybe = candidates(sketches)  # type: ignore[arg-type]
        led = leads(lookups, sketches, maybe) - known.keys()  # type: ignore[arg-type]
        later = [f for f in files if (f in maybe or f in led) and f not in known and f not in first]
        # checked, a file that may define a module is parsed whole (its syntax check too); any other is only checked
        check = [f for f in todo if f not in maybe and f not in led] if checked else []
        done = work.start(job, [(f, True) for f in check] + [(f, False) for f in later])
        work.finish()
    parse = early + later
    problems.update(zip(check, done))
    known.update(zip(parse, parsed_early + done[len(check) :]))
    problems.update((f, _error(known[f])) for f in parse if checked)
    return _Read(sketches, known, problems, maybe, reached, len(parse), lookups)


def _unmarked(sources: Sources, files: Iterable[Path], sketches: Mapping[Path, Sketch | None]) -> frozenset[str]:
    """The files whose sketch says their text holds no suppression comment (each sketch read the
    whole text): a check need not read them for one."""
    return frozenset(sources.rel(f) for f in files if (s := sketches[f]) is not None and not s.marked)


def _error(parsed: FileOutline | Finding | None) -> Finding | None:
    return parsed if isinstance(parsed, Finding) else None


def _known(fresh: Mapping[Path, Entry], checked: bool) -> dict[Path, FileOutline | Finding]:
    """The outlines the cache holds, as a run of that kind may use them: checked, one of a file
    that does not parse whole is its error."""
    if not checked:
        return {f: e.outline for f, e in fresh.items() if e.outline is not None}
    return {f: known for f, e in fresh.items() if e.checked and (known := e.problem or e.outline) is not None}


@dataclass
class _Made:
    """What a run learned, for the cache: every file's sketch, the outline of every file parsed,
    and (``problems`` given: checked) whether each parses whole."""

    sketches: Mapping[Path, Sketch | None]
    outlines: Mapping[Path, FileOutline | Finding]
    problems: Mapping[Path, Finding | None] | None

    def entries(self, files: Iterable[Path], fresh: Mapping[Path, Entry]) -> Iterator[tuple[Path, Entry]]:
        yield from ((f, e) for f, e in fresh.items() if f not in self.outlines and f not in self.sketches)
        for f in {*files, *self.outlines, *self.sketches}:
            at = fresh[f].stamp if f in fresh else stamp(f)
            if at is not None:
                yield f, self._entry(f, at)

    def _entry(self, f: Path, at: Stamp) -> Entry:
        outline = self.outlines.get(f)
        if self.problems is None:
            return Entry(at, self.sketches.get(f), outline)
        if f not in self.problems and f not in self.outlines:
            return Entry(at, self.sketches.get(f))  # only sketched, where a scan's bases may lead (reach.py)
        # checked: a file parsed on demand was checked whole as it was read; its error is its outline
        problem = self.problems[f] if f in self.problems else outline if isinstance(outline, Finding) else None
        return Entry(at, self.sketches.get(f), None if problem else outline, True, problem)


def _sketch(sources: Sources, path: Path) -> Sketch:
    return sketch(sources.text(path))  # "" where unreadable: a whole parse says why, where it matters


def _kept_sketch(fresh: Mapping[Path, Entry], path: Path) -> Sketch:
    kept = fresh[path].sketch if path in fresh else None
    return kept or sketch(read_text(path))


def _parsed(sources: Sources, checked: bool, job: tuple[Path, bool]) -> FileOutline | Finding | None:
    """A file's outline (parsed whole where ``checked``) or its error; or, ``only_check``,
    only its error (a whole parse's, that makes no tree)."""
    path, only_check = job
    project = Project(sources, skeletons=True, checked=checked)
    if only_check:
        return project.problem(path, project.read(path))
    return project.load(path)


@contextmanager
def _no_gc() -> Iterator[None]:
    """Parsing makes millions of objects and no cycles: the collector would walk them all
    again and again for nothing (a quarter of the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
