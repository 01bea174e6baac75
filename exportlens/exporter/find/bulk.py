"""Index a whole tree of files fast (no torch): the server's workspace index.

Three steps, each only where it must: every file is *sketched* from its text
(``prefilter``); only the files that may define a module are *parsed*, with function
bodies blanked (``outline.parse_skeleton``), by several processes at once; bases are
then *resolved* here, parsing on demand the few other files they lead through.
Sketches and outlines are kept on disk (``index_cache``) under each file's modification
time and size, so a tree opened again is only stat'ed.

It is the one discovery engine: the server's indexer and ``exportlens check`` both find
modules here. The editor leaves syntax errors inside function bodies unseen (it parses a
file whole when it is opened); the CLI's run is ``checked``: every file is also checked
whole (``syntax.python_syntax_error``), so it finds what ``discover`` finds, and it keeps
its whole answer too (``discover_tree``).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from ..core.codec import Codec, CodecError
from ..core.report import Edit, Finding, Fix, Kind, Related, Severity, Verified
from ..core.sources import Sources, read_text
from ..core.targets import Forward, ModuleClass, Param, Span
from .discover import Discovery, Project, python_files
from .index_cache import CODEC, Entry, IndexCache, Stamp, stamp, tree_stamp
from .outline import FileOutline
from .prefilter import Sketch, candidates, sketch
from .reach import reach

SERIAL_BELOW = 64  # fewer files than this are read in this process: a pool costs more to start
CHUNK = 16  # files per task: small enough to balance the processes, large enough to cost little to send

ANSWER = Codec(
    Discovery, ModuleClass, Forward, Param, Span, Finding, Fix, Verified, Edit, Related, Kind, Severity
)  # a check's, kept
_In, _Out = TypeVar("_In"), TypeVar("_Out")
_Run = Callable[[Callable[[_In], _Out], Sequence[_In]], list[_Out]]


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
    errors inside function bodies included (only the check of an unchanged file is kept)."""
    with _no_gc():
        return _index_tree(root, files, jobs, cache, checked)


def discover_tree(root: Path, paths: Iterable[Path], cache: IndexCache | None = None) -> Discovery:
    """What ``discover`` finds under ``paths``, through the index: the CLI's discovery. The
    answer is kept whole too, under the stamps of every file it read: a tree checked again
    unchanged is only stat'ed."""
    files = python_files(Sources.of(root), paths)
    if cache is not None:
        cache.prepare()  # before the stamps are taken: a folder made in the root changes the root's
    tree = tree_stamp(root, files)
    kept = _kept_answer(cache, root, tree)
    if kept is not None:
        return kept
    indexed = index_tree(root, files, cache=cache, checked=True)
    indexed.save()
    if cache is not None:
        others = sorted(indexed.read - set(files))
        answer = {"others": others, "stamp": tree_stamp(root, others), "found": indexed.found}
        cache.keep_answer(root, tree, ANSWER.dumps(answer))
    return indexed.found


def _kept_answer(cache: IndexCache | None, root: Path, tree: str) -> Discovery | None:
    """The answer kept for this tree, if the other files it read are unchanged too."""
    text = cache.answer(root, tree) if cache is not None else None
    try:
        answer = ANSWER.loads(text) if text is not None else None
        if answer is not None and answer["stamp"] == tree_stamp(root, answer["others"]):
            return answer["found"]
    except (CodecError, KeyError, TypeError):
        pass
    return None


def _index_tree(
    root: Path, files: Sequence[Path], jobs: int | None, cache: IndexCache | None, checked: bool
) -> Indexed:
    fresh = {f: e for f, e in (cache.load(root) if cache else {}).items() if e.stamp == stamp(f)}
    todo = [f for f in files if f not in fresh or fresh[f].sketch is None or (checked and not fresh[f].checked)]
    stale = set(todo)
    sketches = {f: fresh[f].sketch for f in files if f not in stale}
    problems = {f: fresh[f].problem for f in files if f not in stale and checked}
    with _runner(jobs, len(todo)) as run:
        for f, (sketched, problem) in zip(todo, run(partial(_sketch, root, checked), todo)):
            sketches[f], problems[f] = sketched, problem
        reached = reach(root, sketches, partial(_kept_sketch, fresh))  # type: ignore[arg-type]  # every file has its sketch now
        maybe = candidates(sketches)  # type: ignore[arg-type]  # every file has its sketch now
        wanted = [f for f in files if f in maybe and not problems.get(f)]
        known = _known(fresh, checked) | {f: p for f, p in problems.items() if p}
        parse = [f for f in wanted if f not in known]
        known.update(zip(parse, run(_outline, [(root, f) for f in parse])))
    project = Project(Sources.of(root), skeletons=True, checked=checked, files=known)
    found = project.discover(sorted({*wanted, *(f for f in files if problems.get(f))}))
    indexed = Indexed(sketched=len(todo), parsed=len(parse) + len(project.files) - len(known), found=found)
    indexed.read = {*sketches, *project.files}
    for m in found.modules:
        indexed.modules.setdefault(root / m.path, []).append(m)
    for finding in found.findings:
        indexed.findings.setdefault(root / finding.path, []).append(finding)
    learned = todo or parse or len(project.files) > len(known) or not reached <= fresh.keys()
    if cache is not None and learned:  # else the cache holds it all already
        made = _Made(sketches, project.files, problems if checked else None)
        indexed._save = lambda: cache.save(root, dict(made.entries(files, fresh)))
    return indexed


def _known(fresh: Mapping[Path, Entry], checked: bool) -> dict[Path, FileOutline | Finding]:
    """The outlines the cache holds, as a run of that kind may use them: checked, one of a file
    that does not parse whole is its error."""
    if not checked:
        return {f: e.outline for f, e in fresh.items() if e.outline is not None}
    return {f: e.problem or e.outline for f, e in fresh.items() if e.checked and (e.problem or e.outline) is not None}


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


def _sketch(root: Path, checked: bool, path: Path) -> tuple[Sketch, Finding | None]:
    """A file's sketch; and, ``checked``, its encoding or syntax error from a whole parse."""
    if not checked:
        return sketch(read_text(path)), None  # "" where unreadable: the editor says so when the file is opened
    project = Project(Sources.of(root))
    text = project.read(path)
    return sketch("" if isinstance(text, Finding) else text), project.problem(path, text)


def _kept_sketch(fresh: Mapping[Path, Entry], path: Path) -> Sketch:
    kept = fresh[path].sketch if path in fresh else None
    return kept or sketch(read_text(path))


def _outline(job: tuple[Path, Path]) -> FileOutline | Finding:
    root, path = job
    return Project(Sources.of(root), skeletons=True).load(path)


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


@contextmanager
def _runner(jobs: int | None, size: int) -> Iterator[_Run]:
    """Runs a function over items: in a pool of ``jobs`` processes, or here when the work is
    small. By default one process per core but one, and none on two cores or fewer: this
    process decodes what the pool sends back, and on two cores that costs what the second
    core gives (transformers, 903 files: 2.6 s here, 2.8 s with a pool of two)."""
    cores = os.cpu_count() or 1
    jobs = jobs or (1 if cores <= 2 else cores - 1)
    if jobs == 1 or size < SERIAL_BELOW:
        yield lambda fn, items: [fn(i) for i in items]
        return
    # fork where there is one: the children start at once, with this process's imports
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=gc.disable) as pool:
        yield lambda fn, items: [CODEC.loads(r) for r in pool.map(partial(_encoded, fn), items, chunksize=CHUNK)]


def _encoded(fn: Callable[[_In], object], item: _In) -> str:
    """``fn(item)`` as the index cache's codec writes it: what crosses the process boundary."""
    return CODEC.dumps(fn(item))
