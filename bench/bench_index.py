"""The workspace index at scale: the installed ``transformers`` tree, beside ``ast.parse``
of every file in the same run.

The tree is copied to a temporary folder first (not timed), so the cache starts empty and
a file can be edited without touching the installed package. Printed, then a table of goals:

- **ast baseline**: read and ``ast.parse`` every file the index walks, in this process.
- **exportlens check, cold**: ``python -m exportlens.cli check COPY`` (exportlens's bytecode
  compiled first, as an installed package has it) with no index
  cache (``.exportlens/cache/index`` in the project root deleted first; not ``--no-cache``,
  which reads and keeps nothing, so the second run could not reuse it). No module has a
  spec, so every one is skipped: this is discovery, the same engine as the editor's index
  (prefilter, skeletons, the on-disk cache), plus a whole parse of every file for its
  syntax errors.
- **exportlens check, again**: the same command: the tree unchanged, only stat'ed; and
  whether its report is the cold one's, byte for byte.
- **cold**: ``python -m exportlens.server.index.scanner COPY`` with an empty index cache, to its whole
  answer (what the server waits for; the cache is written after it); its peak RSS (the largest
  of it and its pool, from ``getrusage``).
- **warm**: the same command again: the folder as it was, answered from the cache.
- **one file changed on disk**: one modeling file gets a comment; the indexer again.
- **one-file re-index p50**: the server's ``ModuleIndex.scan`` of an open file after each of
  30 edits (what a keystroke costs the editor), bases read once and kept.
- **modules found**, and whether the set equals a full scan (every file parsed whole by
  ``discover``, no pre-filter, no skeletons) in this process.
- **server RSS** once the workspace is indexed (``bench_lsp.py``'s measurement c, on the copy).

    python bench/bench_index.py                 # about 1-2 minutes on 2 cores
    python bench/bench_index.py --root PATH     # another tree
    python bench/bench_index.py --no-full       # skip the full scan (its set is not compared)
    python bench/bench_index.py --cli-only      # ast baseline and the two checks only
    python bench/bench_index.py --quick         # transformers/models/bert, 3 edits: that it runs (CI)
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from exportlens.exporter.core.sources import Sources  # noqa: E402
from exportlens.exporter.find.discover import Project  # noqa: E402
from exportlens.exporter.find.walk import python_files_under  # noqa: E402
from exportlens.exporter.spec.loading import find_root  # noqa: E402
from exportlens.exporter.spec.pyproject import excludes  # noqa: E402
from exportlens.server.index.module_index import ModuleIndex  # noqa: E402
from exportlens.server.index.scanner import entry_of  # noqa: E402


def ast_baseline(files: list[Path]) -> float:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in files:
            try:
                ast.parse(f.read_bytes())
            except (SyntaxError, ValueError):
                pass
    return time.perf_counter() - start


def compiled_env() -> dict[str, str]:
    """The environment ``exportlens check`` runs in, with exportlens's bytecode compiled
    beside its sources first, as ``pip install`` leaves a package: a machine that sets
    PYTHONDONTWRITEBYTECODE (this one does) would otherwise compile some 70 modules on
    every run, a tenth of a check of an unchanged tree."""
    compile_all = [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "exportlens")]
    subprocess.run(compile_all, check=True, capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    return {**os.environ, "PYTHONPATH": str(HERE.parent)}


def run_check(folder: Path, env: dict[str, str]) -> tuple[float, str]:
    """Seconds ``exportlens check`` takes over ``folder``, and what it prints (text, as a terminal shows it)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "exportlens.cli", "check", str(folder)], capture_output=True, env=env)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"exportlens check failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return took, done.stdout.decode()


def checks(folder: Path, baseline: float) -> list[tuple[str, str, str, bool]]:
    """``exportlens check`` cold (no index cache) and again; their goals."""
    shutil.rmtree(find_root(folder) / ".exportlens" / "cache" / "index", ignore_errors=True)
    env = compiled_env()
    cold, report = run_check(folder, env)
    said = (report.splitlines() or ["(printed nothing)"])[-1]
    print(f"exportlens check, cold: {cold:.2f} s ({cold / baseline:.2f}x ast); {said}")
    again, second = run_check(folder, env)
    print(f"exportlens check, again: {again:.2f} s ({again / cold:.2f}x the first); same report: {second == report}")
    return [
        ("check cold", "<= 0.7x ast", f"{cold / baseline:.2f}x", cold <= 0.7 * baseline),
        ("check again", "<= 0.1x cold", f"{again / cold:.2f}x", again <= 0.1 * cold),
        ("check again, same report", "yes", str(second == report), second == report),
    ]


def run_indexer(folder: Path, cache: Path) -> tuple[float, float, int, set[tuple[str, str]]]:
    """Seconds to the whole answer (what the server waits for) and to the process's exit
    (it writes its cache after answering), peak RSS in MB of the indexer, and the modules."""
    env = {**os.environ, "EXPORTLENS_INDEX_CACHE": str(cache), "PYTHONPATH": str(HERE.parent)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "exportlens.server.index.scanner", str(folder)], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    answered = time.perf_counter() - start
    proc.wait()
    exited = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    modules = set()
    for line in out.splitlines():
        path, entry = entry_of(line)
        modules |= {(str(path), m.name) for m in entry.modules}
    return answered, exited, peak, modules


def edited_file(folder: Path, files: list[Path]) -> Path:
    """The file edited: BERT's model in transformers, else the first file of another tree."""
    bert = folder / "models" / "bert" / "modeling_bert.py"
    return bert if bert.exists() else files[0]


def reindex_p50(folder: Path, path: Path, edits: int = 30) -> float:
    text = path.read_text(encoding="utf-8")
    index = ModuleIndex(folders=[folder])
    index.scan(path, {path: text})  # the file opened: its bases are read once
    times = []
    for i in range(edits):
        edited = f"{text}\n# edit {i}\n"
        start = time.perf_counter()
        index.scan(path, {path: edited})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def full_scan(folder: Path, files: list[Path]) -> tuple[float, set[tuple[str, str]]]:
    start = time.perf_counter()
    found = Project(Sources.of(folder)).discover(files)  # transformers has no pyproject.toml: one root
    modules = {(str(folder / m.path), m.name) for m in found.modules}
    return time.perf_counter() - start, modules


def server_rss(folder: Path, cache: Path) -> float | None:
    os.environ["EXPORTLENS_INDEX_CACHE"] = str(cache)
    try:
        from bench_lsp import bench_index
    except ImportError:
        return None
    result = asyncio.run(bench_index(folder, timeout=600))
    return result["after"].get("VmHWM", 0) / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", help="the tree to index (default: the installed transformers package)")
    p.add_argument("--no-full", action="store_true", help="skip the full scan")
    p.add_argument("--no-server", action="store_true", help="skip the server's RSS")
    p.add_argument("--cli-only", action="store_true", help="the ast baseline and exportlens check only")
    p.add_argument("--quick", action="store_true", help="transformers/models/bert only, 3 edits (CI)")
    args = p.parse_args()
    if args.root:
        source = Path(args.root).resolve()
    else:
        import transformers  # only to find it: its files are read as text

        source = Path(transformers.__file__).resolve().parent
        source = source / "models" / "bert" if args.quick else source
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        folder = Path(tmp) / source.name
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
        return measure(folder, Path(tmp) / "cache", args)


def measure(folder: Path, cache: Path, args: argparse.Namespace) -> int:
    files = sorted(python_files_under(folder, exclude=excludes()))
    lines = sum(f.read_bytes().count(b"\n") for f in files)
    print(f"tree: {folder.name}, {len(files)} files, {lines:,} lines (a copy, cache empty)")
    baseline = ast_baseline(files)
    print(f"ast baseline: {baseline:.2f} s")
    cli = checks(folder, baseline)
    if args.cli_only:
        return table(cli)
    cold, cold_exit, cold_rss, found = run_indexer(folder, cache)
    print(
        f"cold index: answered in {cold:.2f} s ({cold / baseline:.2f}x), cache written by {cold_exit:.2f} s;", end=" "
    )
    print(f"indexer peak RSS {cold_rss} MB; {len(found):,} modules")
    warm, _, _, again = run_indexer(folder, cache)
    print(f"warm index: {warm:.2f} s ({warm / baseline:.2f}x); same modules: {again == found}")
    edited = edited_file(folder, files)
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    changed, _, _, after_edit = run_indexer(folder, cache)
    print(f"one file changed on disk: {changed:.2f} s; same modules: {after_edit == found}")
    p50 = reindex_p50(folder, edited, edits=3 if args.quick else 30)
    print(f"one-file re-index in the editor: p50 {p50 * 1000:.1f} ms")
    same = None
    if not args.no_full:
        took, full = full_scan(folder, files)
        same = full == found
        print(
            f"full scan (every file parsed whole): {took:.2f} s, {len(full):,} modules; same set as the index: {same}"
        )
        for missing in sorted(full - found)[:5]:
            print(f"  only in the full scan: {missing}")
        for extra in sorted(found - full)[:5]:
            print(f"  only in the index: {extra}")
    rss = None if args.no_server else server_rss(folder, cache)
    if rss is not None:
        print(f"server peak RSS with the tree indexed: {rss:.1f} MB")
    goals = cli + [
        ("cold index", "<= 0.3x ast", f"{cold / baseline:.2f}x", cold <= 0.3 * baseline),
        ("warm index", "<= 0.5 s", f"{warm:.2f} s", warm <= 0.5),
        ("one-file re-index p50", "<= 20 ms", f"{p50 * 1000:.1f} ms", p50 <= 0.020),
        ("server RSS", "<= 150 MB", "-" if rss is None else f"{rss:.1f} MB", rss is not None and rss <= 150),
        ("same module set as a full scan", "yes", "-" if same is None else str(same), bool(same)),
    ]
    return table(goals)


def table(goals: list[tuple[str, str, str, bool]]) -> int:
    print(f"\n{'goal':34} {'target':14} {'measured':12} met")
    for name, target, measured, met in goals:
        print(f"{name:34} {target:14} {measured:12} {'yes' if met else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
