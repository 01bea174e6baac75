"""A finding's id is made where the finding is made and names it wherever it goes: through
the worker protocol, the documented JSON and the verdict cache, the same for the same finding
in every run, so that a diagnostic's data can carry it and a code action find the finding by it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from exportlens.exporter.core.codec import CodecError
from exportlens.exporter.core.report import SCHEMA, Finding, Kind, ModuleReport, Status, from_dict, to_dict
from exportlens.exporter.workers.protocol import CODEC

REPO = Path(__file__).resolve().parents[1]


def _finding(**changed: object) -> Finding:
    said = {
        "code": "EL201",
        "kind": Kind.CONSTRAINT_VIOLATION,
        "message": "`seq` is declared as [2, 1024], but this line requires `seq <= 128`",
        "path": "models/positional.py",
        "line": 15,
        "column": 9,
        "end_line": 15,
        "end_column": 30,
        "dims": ("seq",),
    }
    return Finding(**{**said, **changed})


def test_a_finding_keeps_its_id_through_a_move_the_codec_and_the_json():
    made = _finding()
    assert re.fullmatch("[0-9a-f]{16}", made.id)
    assert _finding().id == made.id  # made again, as a fresh run makes it
    assert {_finding(line=16).id, _finding(message="`seq` is declared").id, _finding(dims=()).id} & {made.id} == set()
    moved = replace(made, line=40, column=1, end_line=None, end_column=None)  # today's text moved it
    assert moved.id == made.id
    report = ModuleReport("models/positional.py:LearnedPositions", Status.FAILED, findings=(moved,))
    assert CODEC.loads(CODEC.dumps(report)).findings[0].id == made.id
    written = to_dict(moved)
    assert written["id"] == made.id
    assert from_dict(Finding, written).id == made.id
    # a report written before schema 2.5 has no ids: each finding gets the one its fields give
    assert from_dict(Finding, {k: v for k, v in to_dict(made).items() if k != "id"}).id == made.id
    assert SCHEMA == "2.5"


@pytest.mark.parametrize("forged", ["../../etc/passwd", "A" * 16, "0" * 17, "x" * 100_000])
def test_an_id_that_is_no_finding_id_is_refused_where_it_is_read(forged):
    """What a worker sends is untrusted: an id is 16 hex digits, or the finding is refused."""
    sent = CODEC.dumps(_finding()).replace(_finding().id, forged)
    with pytest.raises(CodecError, match="not a finding's id"):
        CODEC.loads(sent)
    with pytest.raises(ValueError, match="not a finding's id"):
        from_dict(Finding, {**to_dict(_finding()), "id": forged})


@pytest.mark.slow  # two CLI runs, the first exporting (and proving) with torch
def test_a_cached_verdict_names_its_findings_with_the_ids_of_the_fresh_one(tmp_path):
    ignored = shutil.ignore_patterns("__pycache__", ".exportlens")
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=ignored)
    command = [sys.executable, "-m", "exportlens.cli", "check", "examples/models/positional.py", "--format", "json"]
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def findings() -> tuple[bool, list[tuple[str, int, str]]]:
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        (module,) = json.loads(done.stdout)["modules"]
        return module["cached"], [(f["code"], f["line"], f["id"]) for f in module["findings"]]

    fresh_cached, fresh = findings()
    again_cached, again = findings()
    assert (fresh_cached, again_cached) == (False, True)
    assert [code for code, _, _ in fresh] == ["EL201"]
    assert again == fresh
