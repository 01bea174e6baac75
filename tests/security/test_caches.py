"""exportlens's caches never follow a link and never delete what they did not write: the
verdict store lives in the project (``.exportlens/cache``), whose files are not ours, and
the index cache is read from files anything may stand in place of."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from exportlens.exporter.core.report import Finding, Kind, ModuleReport, Status
from exportlens.exporter.find.index_cache import Entry, IndexCache
from exportlens.exporter.workers import verdicts
from exportlens.exporter.workers.verdicts import Verdicts

REPORT = ModuleReport("m.py:M", Status.FAILED, (Finding("EL201", Kind.CONSTRAINT_VIOLATION, "too wide", "m.py", 7),))
KEY = "c" * 64


def user_folder(folder: Path, n: int) -> dict[str, str]:
    """A folder of the user's own .json files, some named as our entries are."""
    folder.mkdir(parents=True)
    files = {f"{i:064x}.json" if i % 2 else f"notes-{i}.json": json.dumps({"mine": i}) for i in range(n)}
    for name, text in files.items():
        (folder / name).write_text(text)
    return files


def contents(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


@pytest.mark.parametrize("linked", [".exportlens", ".exportlens/cache", ".exportlens/cache/verdicts"])
def test_a_linked_cache_folder_is_neither_written_read_nor_pruned(tmp_path, monkeypatch, linked):
    monkeypatch.setattr(verdicts, "MAX_ENTRIES", 5)  # what the user's 2,100 files were to a store of 2,000
    project, theirs = tmp_path / "project", tmp_path / "theirs"
    files = user_folder(theirs, 21)
    (project / linked).parent.mkdir(parents=True, exist_ok=True)
    (project / linked).symlink_to(theirs, target_is_directory=True)
    store = Verdicts(project)
    for i in range(7):
        store.put(f"{i:064x}", REPORT)
    assert contents(theirs) == files  # none written, none deleted
    assert store.get(f"{1:064x}") is None and not store.has(f"{1:064x}")  # the user's file is no verdict of ours


def test_pruning_removes_only_entries_we_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "MAX_ENTRIES", 3)
    store = Verdicts(tmp_path)
    store.put(KEY, REPORT)
    os.utime(store.folder / f"{KEY}.json", (5, 5))
    theirs = {"a" * 64 + ".json": '{"mine": true}', "notes.json": "{}", "b" * 64 + ".json.bak": "{}"}
    for name, text in theirs.items():
        (store.folder / name).write_text(text)
        os.utime(store.folder / name, (1, 1))  # older than every entry: pruned first, were they ours
    (store.folder / ("d" * 64 + ".json")).symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text(json.dumps({"format": verdicts.FORMAT, "report": None}))
    for i in range(6):
        store.put(f"{i:064x}", REPORT)
        os.utime(store.folder / f"{i:064x}.json", (10 + i, 10 + i))
    ours = sorted(p.name for p in store.folder.glob("*.json") if p.name not in theirs and not p.is_symlink())
    assert ours == [f"{i:064x}.json" for i in (3, 4, 5)]  # the oldest of ours went, ours only
    assert {name: (store.folder / name).read_text() for name in theirs} == theirs
    assert (store.folder / ("d" * 64 + ".json")).is_symlink() and (tmp_path / "elsewhere.json").exists()


@pytest.mark.timeout(10)
def test_an_entry_that_is_a_link_to_dev_zero_or_a_fifo_is_a_quick_miss(tmp_path):
    store = Verdicts(tmp_path)
    store.put(KEY, REPORT)
    zero, fifo = store.folder / ("e" * 64 + ".json"), store.folder / ("f" * 64 + ".json")
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    start = time.monotonic()
    for entry in (zero, fifo):
        assert store.get(entry.stem) is None and not store.has(entry.stem)
    assert time.monotonic() - start < 1
    assert store.get(KEY) == REPORT
    store.put("0" * 64, REPORT)  # a store holding them still works, and leaves them be
    assert zero.is_symlink() and fifo.exists()


@pytest.mark.timeout(10)
def test_an_entry_past_any_size_of_ours_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "MAX_ENTRY", 1 << 10)
    store = Verdicts(tmp_path)
    store.put(
        KEY,
        ModuleReport("m.py:M", Status.FAILED, (Finding("EL201", Kind.CONSTRAINT_VIOLATION, "x" * 4096, "m.py", 7),)),
    )
    assert store.get(KEY) is None


@pytest.mark.timeout(10)
@pytest.mark.parametrize("kind", ["jsonl", "answer.json"])
def test_the_index_cache_reads_no_link_and_no_fifo(tmp_path, kind):
    cache = IndexCache(tmp_path / "index")
    root = tmp_path / "project"
    entries = {root / "m.py": Entry((1, 2), None, None)}
    cache.save(root, entries)
    cache.keep_answer(root, "tree", "answer")
    assert cache.load(root) == entries and cache.answer(root, "tree") == "answer"
    file = cache._file(root, kind)
    for stand_in in ("/dev/zero", "fifo"):
        file.unlink()
        if stand_in == "fifo":
            os.mkfifo(file)
        else:
            file.symlink_to(stand_in)
        start = time.monotonic()
        assert (cache.load(root) if kind == "jsonl" else cache.answer(root, "tree")) in ({}, None)
        assert time.monotonic() - start < 1
