"""Sharding and merging without torch: which shard checks a module, and reports read back
from their JSON and joined (the CLI runs of both are in test_cli.py)."""

from __future__ import annotations

import json

import pytest

from exportlens.exporter.core.report import (
    Edit,
    Finding,
    Fix,
    Kind,
    LineShapes,
    ModuleReport,
    Range,
    Related,
    Report,
    Severity,
    Status,
    Summary,
    from_dict,
    to_dict,
)
from exportlens.exporter.core.shards import Shard, shard_of
from exportlens.merge import MergeError, merge

TARGETS = [f"models/m{i}.py:Net{i}" for i in range(300)]


def test_a_module_s_shard_is_its_own_target_s_alone():
    before = {t: shard_of(t, 3) for t in TARGETS}
    grown = [*TARGETS[:150], "models/new.py:Added", "models/m7.py:Another", *TARGETS[150:]]
    after = {t: shard_of(t, 3) for t in grown}
    assert all(after[t] == before[t] for t in TARGETS)  # adding modules elsewhere moves no other
    assert shard_of("models/encoder.py:TinyEncoder", 3) == 1  # sha256, the same in every process (hash() is not)


def test_each_module_is_in_exactly_one_shard_and_the_shards_are_even():
    shards = [Shard(k, 3) for k in (1, 2, 3)]
    assert all(sum(s.holds(t) for s in shards) == 1 for t in TARGETS)
    sizes = [sum(s.holds(t) for t in TARGETS) for s in shards]
    assert min(sizes) > 70, sizes  # 100 each on average
    assert all(Shard(1, 1).holds(t) for t in TARGETS)


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3", "1/0", " 1/3", "1/3/3", "-1/3", "٢/3"])
def test_a_shard_is_k_of_n(text):
    with pytest.raises(ValueError, match="K/N with 1 ≤ K ≤ N"):
        Shard.parse(text)
    assert Shard.parse("2/3") == Shard(2, 3) and str(Shard.parse("3/3")) == "3/3"


def _module(target: str, *, seconds: float = 0.5) -> ModuleReport:
    path = target.partition(":")[0]
    edit = Edit("pyproject.toml", 4, 3, 4, 7, "128")
    finding = Finding(
        "EL201",
        Kind.CONSTRAINT_VIOLATION,
        "`seq` is declared as [2, 1024]",
        path,
        15,
        9,
        15,
        30,
        Severity.ERROR,
        (Fix("Set `seq`", (edit,), True, "exports"),),
        (Related("pyproject.toml", 4, "the spec"),),
        "torch's text",
    )
    summary = Summary(
        "(x: f32[b]) -> f32[b]",
        ("x: f32[b]",),
        ("f32[b]",),
        (Range("b", 1, 64),),
        (),
        (LineShapes(path, 3, ("f32[b]",)),),
    )
    return ModuleReport(target, Status.FAILED, (finding,), summary, "pyproject.toml:3", seconds, "2.13.0+cpu", True)


def test_the_documented_json_reads_back_as_the_report_it_was():
    report = Report(
        (_module("b.py:B"), ModuleReport("a.py:A", Status.SKIPPED)),
        (Finding("EL001", Kind.SPEC_ERROR, "bad", "c.py", 2),),
    )
    assert from_dict(Report, json.loads(json.dumps(to_dict(report)))) == report


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            {"modules": [{"target": "a.py:A", "status": "done"}]},
            "modules[0].status: 'done' is not one of exported, failed, skipped",
        ),
        ({"modules": [{"target": "a.py:A"}]}, "modules[0]: no 'status'"),
        ({"modules": [], "extra": 1}, "unknown field 'extra'"),
        ({"modules": {}}, "modules: expected a list, got an object"),
        (
            {"modules": [{"target": "a.py:A", "status": "failed", "seconds": "1"}]},
            "modules[0].seconds: expected a number, got a string",
        ),
    ],
)
def test_json_that_is_not_a_report_says_where(data, problem):
    with pytest.raises(ValueError) as e:
        from_dict(Report, data)
    assert str(e.value) == problem


def test_merge_sorts_by_target_keeps_project_findings_once_and_refuses_two_different_results():
    top = (Finding("EL006", Kind.SPEC_ERROR, "pyproject.toml does not parse", "pyproject.toml", 1),)
    one, two = Report((_module("z.py:Z"), _module("a.py:A")), top), Report((_module("m.py:M"),), top)
    merged = merge([("1.json", one), ("2.json", two), ("again.json", one)])
    assert [m.target for m in merged.modules] == ["a.py:A", "m.py:M", "z.py:Z"] and merged.findings == top
    with pytest.raises(MergeError, match=r"a.py:A is in 1.json and in 3.json with different results"):
        merge([("1.json", one), ("3.json", Report((_module("a.py:A", seconds=9.0),)))])
