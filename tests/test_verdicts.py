"""The verdict store on disk: what a later run reads back, and what it never trips on.
(The CLI tests show a second run answering from it; the server tests, a reopened editor.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from exportlens.exporter.core import codes
from exportlens.exporter.core.report import Finding, Fix, ModuleReport, Status
from exportlens.exporter.workers.verdicts import MAX_ENTRIES, Verdicts, environment

KEY = "a" * 64
REPORT = ModuleReport(
    "m.py:M",
    Status.FAILED,
    (
        Finding(
            codes.RANGE_VIOLATION.code,
            codes.RANGE_VIOLATION.kind,
            "`seq` is declared as [2, 1024] — ünïcode",
            "m.py",
            7,
            fixes=(Fix("t", ()),),
        ),
    ),
    seconds=1.5,
)


def test_a_verdict_comes_back_as_it_was_kept(tmp_path: Path):
    Verdicts(tmp_path).put(KEY, REPORT)
    assert Verdicts(tmp_path).get(KEY) == REPORT
    assert Verdicts(tmp_path).get("b" * 64) is None
    assert (tmp_path / ".exportlens/.gitignore").read_text().splitlines()[-1] == "*"
    assert (
        (tmp_path / ".exportlens/cache/CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )


def test_a_damaged_entry_is_a_miss_and_a_folder_we_cannot_write_is_not_an_error(tmp_path: Path):
    store = Verdicts(tmp_path)
    store.put(KEY, REPORT)
    entry = store.folder / f"{KEY}.json"
    for damage in (
        "",
        "{not json",
        '{"format": 1, "report": {"$type": "os.system"}}',
        '{"format": 99, "report": null}',
        "[]",
    ):
        entry.write_text(damage)
        assert store.get(KEY) is None, damage
    (tmp_path / "a-file").write_text("")
    unwritable = tmp_path / "a-file" / "project"  # no folder can be made below a file: on any system, as root too
    Verdicts(unwritable).put(KEY, REPORT)  # logged, not raised
    assert Verdicts(unwritable).get(KEY) is None


def test_the_store_keeps_the_most_recently_used(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("exportlens.exporter.workers.verdicts.MAX_ENTRIES", 3)
    store = Verdicts(tmp_path)
    for i in range(5):
        store.put(f"{i:064d}", REPORT)
        os.utime(store.folder / f"{i:064d}.json", (i, 1_000_000 + i))  # apart, whatever the clock's grain
    assert sorted(p.stem[-1] for p in store.folder.glob("*.json")) == ["2", "3", "4"]
    assert MAX_ENTRIES >= 1000


def test_the_environment_is_what_the_interpreter_has_installed(tmp_path: Path):
    here = environment(sys.executable)
    assert here and here == environment(sys.executable)
    venv = tmp_path / "venv"  # another interpreter (a venv without torch): another environment
    import venv as make

    make.create(venv, with_pip=False, system_site_packages=False)
    assert environment(str(venv / "bin/python")) not in ("", here)
    assert environment(str(tmp_path / "not-a-python")) == ""


def test_the_import_graph_follows_buffers_and_the_disk_and_forgets_on_a_new_file(tmp_path):
    """The server's graph of which file imports which, as a save sees it: an edit in a buffer
    or on disk changes it; a file created where an import pointed at nothing is found after
    ``forget``."""
    from exportlens.exporter.core.sources import Sources
    from exportlens.exporter.find.deps import ImportGraph

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from . import b\n")
    (tmp_path / "pkg" / "b.py").write_text("x = 1\n")
    a, b, c = (tmp_path / "pkg" / f"{n}.py" for n in "abc")
    init = (tmp_path / "pkg" / "__init__.py").resolve()  # `from . import b` imports the package too
    graph = ImportGraph()
    disk = Sources.of(tmp_path)
    assert set(graph.closure(disk, a)) == {a.resolve(), init, b.resolve()}
    edited = Sources.of(tmp_path, {a: "from . import c\n"})  # unsaved: c does not exist yet
    assert set(graph.closure(edited, a)) == {a.resolve(), init}
    c.write_text("y = 2\n")
    assert set(graph.closure(edited, a)) == {a.resolve(), init}  # kept: a's text did not change
    graph.forget()
    assert set(graph.closure(edited, a)) == {a.resolve(), init, c.resolve()}
    b.write_text("from . import c\n# longer now\n")  # saved on disk: its size and time changed
    assert set(graph.closure(disk, b)) == {b.resolve(), init, c.resolve()}
