"""The codec every process boundary uses: what goes in comes out, of the same types, and
a line naming a type it does not carry is refused (nothing like pickle's arbitrary code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from exportlens.exporter.core.codec import CodecError
from exportlens.exporter.core.report import (
    Edit,
    Finding,
    Fix,
    Kind,
    ModuleReport,
    Report,
    Status,
    Verified,
    from_dict,
    report_json,
    to_dict,
)
from exportlens.exporter.core.targets import Span
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.proof_plans import owner_plan
from exportlens.exporter.workers.protocol import CODEC, Done, Job, Run, decode, encode, encode_run
from exportlens.exporter.workers.validate import checked_report

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_an_owner_plan_of_a_real_project_comes_back_equal():
    plan = make_plan([EXAMPLES])
    for planned in plan.modules:
        sent = owner_plan(plan, planned)
        back = CODEC.loads(CODEC.dumps(sent))
        assert back == sent
        # tuples stay tuples and lists stay lists: forward gets what the spec says
        assert isinstance(back.plan.modules, list) and isinstance(back.plan.modules[0].module.bases, tuple)


def test_nested_inputs_keep_their_containers():
    value = {"pair": (1, [2, 3]), "paths": {Path("/a"): "x"}, "$odd": None}
    assert CODEC.loads(CODEC.dumps(value)) == value


def test_a_message_of_another_kind_or_an_unknown_type_is_refused():
    line = encode(Run("1", None))  # a Run where a Done is expected
    with pytest.raises(CodecError, match="expected Done, got Run"):
        decode(line, Done)
    with pytest.raises(CodecError, match="unknown type 'Popen'"):
        CODEC.loads('{"$type": "Popen", "args": ["rm", "-rf", "/"]}')
    with pytest.raises(CodecError, match="not JSON"):
        CODEC.loads(b"\x80\x81 not json")
    with pytest.raises(CodecError, match="cannot carry a set"):
        CODEC.dumps({1, 2})


def test_a_plan_json_cannot_carry_is_left_for_the_worker_to_make():
    import datetime

    plan = make_plan([EXAMPLES])
    planned = plan.modules[0]
    sent = owner_plan(plan, planned)
    sent.plan.project.tables["released"] = (
        datetime.date(2026, 1, 1),
        sent.plan.project.tables[planned.target][1],
    )  # a TOML date
    job = Job(str(EXAMPLES), planned.target, name_span=Span(1), plan=sent)
    back = decode(encode_run(Run("7", job)), Run)
    assert back.id == "7" and back.job.target == planned.target and back.job.plan is None


def test_a_fix_title_and_its_verified_never_disagree(tmp_path):
    """The "Apply all" case: a fix the owner proved said "(module then exports)" in its title
    while the JSON said ``"verified": "unverified"`` once its verified was reset (a job's own
    report is not proof). The suffix is derived from ``verified``: reset, the title says nothing."""
    (tmp_path / "two.py").write_text("class Two:\n    pass\n")
    edit = Edit("pyproject.toml", 2, 1, 2, 1, "dims = {}\n")
    proven = Fix("Apply all suggested fixes for Two", (edit,), preferred=True, verified=Verified.EXPORTS)
    assert proven.title == "Apply all suggested fixes for Two (module then exports)"
    finding = Finding(
        "EL201", Kind.CONSTRAINT_VIOLATION, "`seq` is declared as [2, 4096]", "two.py", 1, fixes=(proven,)
    )
    job = Job(str(tmp_path), "two.py:Two", 1)
    for report in (ModuleReport("two.py:Two", Status.FAILED, (finding,)),):
        shown = checked_report(job, report)  # what a job's report may say: no fix proven
        (fix,) = shown.findings[0].fixes
        (written,) = report_json(Report((shown,)))["modules"][0]["findings"][0]["fixes"]
        assert (fix.title, written["title"], written["verified"]) == (
            "Apply all suggested fixes for Two",
            "Apply all suggested fixes for Two",
            "unverified",
        )
        kept = checked_report(job, report, proven=True)  # the owner's own verdict: both say it
        (written,) = report_json(Report((kept,)))["modules"][0]["findings"][0]["fixes"]
        assert (written["title"], written["verified"]) == (proven.title, "exports")
        assert from_dict(Fix, written) == proven  # the JSON reads back to the same fix


def test_a_partial_fix_says_how_many_problems_remain_and_reads_back():
    fix = Fix("Set `seq` to Dim('seq', max=512)", (), verified=Verified.PARTIAL, remaining=1)
    written = to_dict(fix)
    assert (written["title"], written["remaining"]) == ("Set `seq` to Dim('seq', max=512) (1 more problem remains)", 1)
    assert from_dict(Fix, written) == fix
    with pytest.raises(ValueError, match="its title does not end with what it reached"):
        from_dict(Fix, {**written, "verified": "serves"})  # a title that says otherwise is refused


KEPT = """
import torch
from jaxtyping import Float
from torch import nn


class Net(nn.Module):
    def forward(self, x: Float[torch.Tensor, "batch 4"], mask: torch.Tensor | None = None, *, scale=2.0):
        return x * scale

    @staticmethod
    def example_inputs():
        return (torch.randn(2, 4),)


class Child(Net):
    pass
"""


def test_the_modules_a_kept_answer_holds_come_back_equal_and_frozen(tmp_path):
    """A tree checked again reads its modules from the kept answer, built without ``__init__``
    (find/compact.py): each must be the module discovered, field for field, and as immutable."""
    import dataclasses

    from exportlens.exporter.find import compact
    from exportlens.exporter.find.discover import discover

    (tmp_path / "net.py").write_text(KEPT, encoding="utf-8")
    found = discover(tmp_path).modules + discover(EXAMPLES).modules
    assert any(m.forward and m.forward.params and m.forward.params[0].annotation_span for m in found)
    assert any(m.example_span for m in found)
    back = [compact.loads(compact.dumps(compact.module_data(m)), compact.module_of) for m in found]
    assert [m.jaxtyped for m in found[:2]] == [True, True]  # Net's forward, and Child's, inherited
    assert "forward" not in vars(back[0])  # decoded when first read
    assert back == found and [hash(m) for m in back] == [hash(m) for m in found]
    for module in back:
        assert type(module) is type(found[0]) and {f.name for f in dataclasses.fields(module)} <= vars(module).keys()
        with pytest.raises(dataclasses.FrozenInstanceError):
            module.name = "Other"  # type: ignore[misc]
        if module.forward is not None:
            with pytest.raises(dataclasses.FrozenInstanceError):
                module.forward.span.line = 0  # type: ignore[misc]


def test_a_damaged_kept_answer_is_a_miss_and_a_forged_forward_reads_as_none(tmp_path):
    """Forwards stay encoded until first read, so damage to one must show where the answer is
    read: the answer is checked whole against its digest, and a damaged one is answered afresh.
    One written with a matching digest but a forward that does not decode reads as no forward,
    never an error wherever it is first read."""
    import hashlib
    import json

    from exportlens.exporter.find.bulk import discover_tree
    from exportlens.exporter.find.index_cache import IndexCache

    (tmp_path / "net.py").write_text(KEPT, encoding="utf-8")
    cache = IndexCache.of_project(tmp_path)
    fresh = discover_tree(tmp_path, [tmp_path], cache).modules
    kept = next(cache.folder.glob("*.answer.json"))
    header, _, answer = kept.read_text(encoding="utf-8").partition("\n")
    assert '\\"positional\\"' in answer  # each forward is JSON text inside the answer

    kept.write_text(f"{header}\n{answer.replace('positional', 'keyword', 1)}", encoding="utf-8")
    again = discover_tree(tmp_path, [tmp_path], cache).modules
    assert [m.forward for m in again] == [m.forward for m in fresh]  # a miss: found again, not the damage

    *rest, _ = json.loads(header)
    forged = json.loads(answer)
    forged[2][0][5] = "[[not json"
    text = json.dumps(forged, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()
    kept.write_text(f"{json.dumps([*rest, digest], separators=(',', ':'))}\n{text}", encoding="utf-8")
    read = discover_tree(tmp_path, [tmp_path], cache).modules
    assert read[0].name == fresh[0].name and read[0].forward is None
