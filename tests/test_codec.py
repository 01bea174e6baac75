"""The codec every process boundary uses: what goes in comes out, of the same types, and
a line naming a type it does not carry is refused (nothing like pickle's arbitrary code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from exportlens.exporter.core.codec import TUPLE, CodecError
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
from exportlens.exporter.workers.validate import validated_report

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
    spec = sent.plan.modules[0].spec
    assert spec is not None
    spec.init["released"] = datetime.date(2026, 1, 1)  # a TOML date
    job = Job(str(EXAMPLES), planned.target, name_span=Span(1), plan=sent)
    back = decode(encode_run(Run("7", job)), Run)
    assert back.id == "7" and back.job.target == planned.target and back.job.plan is None


def test_a_job_carries_its_own_spec_not_the_projects_other_tables(tmp_path):
    """A pyproject.toml of a hundred module tables: each job's line holds its module's plan,
    not the text and tables of the other ninety-nine (the storm encoded each one whole)."""
    spec = '[project]\nname = "many"\nversion = "0"\n'
    for i in range(100):
        (tmp_path / f"m{i}.py").write_text(
            f"import torch\n\n\nclass M{i}(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        )
        spec += f'\n[tool.exportlens.modules."m{i}.py:M{i}"]\ninputs = {{ x = "f32[batch, 4]" }}\n'
    (tmp_path / "pyproject.toml").write_text(spec)
    plan = make_plan([tmp_path / "m7.py"], root=tmp_path)
    planned = plan.modules[0]
    line = encode_run(Run("1", Job(str(tmp_path), planned.target, name_span=Span(4), plan=owner_plan(plan, planned))))
    back = decode(line, Run).job.plan
    assert back is not None and [m.target for m in back.plan.modules] == ["m7.py:M7"]
    assert b"M8" not in line and len(line) < len(spec)


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
        shown = validated_report(job, report)  # what a job's report may say: no fix proven
        (fix,) = shown.findings[0].fixes
        (written,) = report_json(Report((shown,)))["modules"][0]["findings"][0]["fixes"]
        assert (fix.title, written["title"], written["verified"]) == (
            "Apply all suggested fixes for Two",
            "Apply all suggested fixes for Two",
            "unverified",
        )
        kept = validated_report(job, report, proven=True)  # the owner's own verdict: both say it
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
    """A tree checked again reads its modules from the kept answer, in the positional form derived
    from their fields (core/rows.py): each must be the module discovered, field for field, of the
    same type, whole (no part left to decode on first read) and as immutable."""
    import dataclasses

    from exportlens.exporter.find import compact
    from exportlens.exporter.find.discover import discover

    (tmp_path / "net.py").write_text(KEPT, encoding="utf-8")
    found = discover(tmp_path).modules + discover(EXAMPLES).modules
    assert any(m.forward and m.forward.params and m.forward.params[0].annotation_span for m in found)
    assert any(m.example_span for m in found)
    back = [compact.loads(compact.dumps(compact.module_data(m)), compact.module_of) for m in found]
    assert [m.jaxtyped for m in found[:2]] == [True, True]  # Net's forward, and Child's, inherited
    assert all(vars(b) == vars(m) for b, m in zip(back, found, strict=True))  # every field, the uncompared too
    assert not hasattr(type(back[0]), "__getattr__")  # a plain record: nothing decodes inside it
    assert back == found and [hash(m) for m in back] == [hash(m) for m in found]
    for module in back:
        assert type(module) is type(found[0]) and {f.name for f in dataclasses.fields(module)} <= vars(module).keys()
        with pytest.raises(dataclasses.FrozenInstanceError):
            module.name = "Other"  # type: ignore[misc]
        if module.forward is not None:
            with pytest.raises(dataclasses.FrozenInstanceError):
                module.forward.span.line = 0  # type: ignore[misc]


def test_a_damaged_kept_answer_is_a_miss_and_so_is_a_forged_forward(tmp_path):
    """The answer is checked whole against its digest, and a damaged one is answered afresh.
    One written with a matching digest but a forward that does not decode is a miss too: the
    whole answer is decoded as it is read, never an error where a module is first used."""
    import hashlib
    import json

    from exportlens.exporter.find.bulk import discover_tree
    from exportlens.exporter.find.index_cache import IndexCache

    (tmp_path / "net.py").write_text(KEPT, encoding="utf-8")
    cache = IndexCache.of_project(tmp_path)
    fresh = discover_tree(tmp_path, [tmp_path], cache).modules
    kept = next(cache.folder.glob("*.answer.json"))
    header, _, answer = kept.read_text(encoding="utf-8").partition("\n")
    assert '"positional"' in answer  # each forward's parameters, written in the answer

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
    assert read == fresh and read[0].forward is not None  # found afresh


def test_a_fix_lowered_for_a_target_rides_in_its_diagnostic_and_comes_back(tmp_path):
    """A diagnostic carries its fixes (server/features/fix_data.py). Its codec's types were a
    hand-kept list that lacked ``Lowering`` once fixes said what lowering gave: a proven fix
    with a lowering made the diagnostic fail to build. The types now come from ``Fix`` itself."""
    from exportlens.exporter.core.lowering import COMPILED, Lowering
    from exportlens.server.features.fix_data import carried, fixes_of

    edit = Edit("pyproject.toml", 2, 1, 2, 1, "dims = {}\n")
    lowered = (Lowering("aoti", COMPILED, 3.5, 2048, 1e-7, ("example",)),)
    fix = Fix("Set `seq` to Dim('seq', max=512)", (edit,), verified=Verified.EXPORTS, lowerings=lowered)
    assert fixes_of(carried((fix,), None, tmp_path)) == (fix,)


def test_every_codec_carries_what_its_roots_reach_and_nothing_of_one_name_twice():
    """The types are the schema: each codec is made from its roots, and carries every record
    their fields reach, so a record added to a field needs no list edited."""
    from exportlens.exporter.core.codec import Codec, records
    from exportlens.exporter.core.lowering import Lowering
    from exportlens.exporter.core.report import Guard, Range, Summary
    from exportlens.exporter.spec.shapes import Derived

    assert {Lowering, Guard, Range, Summary, Derived, Finding, Kind} <= set(CODEC.types.values())
    assert records(Fix)[0] is Fix and Lowering in records(Fix)
    with pytest.raises(ValueError, match="two types of one name"):
        from exportlens.exporter.find.outline import Ref as OutlineRef
        from exportlens.exporter.spec.values import Ref as ValueRef

        Codec(OutlineRef, ValueRef)


def test_the_index_form_is_derived_from_the_records_fields_and_refuses_another_shape(tmp_path):
    """Outlines (a union with findings, nested classes, mappings, paths), sketches and findings
    come back equal from the positional form that their own fields define (core/rows.py); a row
    of another length, or a record's own check failing, is a ValueError: a damaged cache is a miss."""
    from exportlens.exporter.core.sources import Sources
    from exportlens.exporter.find import compact
    from exportlens.exporter.find.discover import Project, discover
    from exportlens.exporter.find.prefilter import sketch

    text = KEPT + "\n\nclass Outer(nn.Module):\n    class Inner:\n        pass\n"
    (tmp_path / "net.py").write_text(text, encoding="utf-8")
    outline = Project(Sources.of(tmp_path)).load(tmp_path / "net.py")
    problem = Finding("EL401", Kind.IMPORT_ERROR, "invalid syntax", "bad.py", 3, 5)
    for value in (outline, problem, None):
        assert compact.loads(compact.dumps(compact.outline_data(value)), compact.outline_of) == value
    assert compact.loads(compact.dumps(compact.sketch_data(sketch(text))), compact.sketch_of) == sketch(text)
    row = compact.module_data(discover(tmp_path).modules[0])
    with pytest.raises(ValueError, match="not a compact value"):
        compact.loads(compact.dumps(row[:-1]), compact.module_of)
    line_zero = [*compact.finding_data(problem)[:4], 0, *compact.finding_data(problem)[5:]]
    with pytest.raises(ValueError, match="1-based"):
        compact.loads(compact.dumps(line_zero), compact.maybe_finding)


def test_kinds_come_back_as_their_enums_and_keep_their_words(tmp_path):
    """A parameter's kind, a spec's source, a tensor's fill and a probe's fill are enums made
    where the value is made, and members wherever they are read back: the index's kept answer,
    the plan a worker is handed, a job's report, the verdict cache. The index and the JSON
    report keep the words they wrote before; a job's report may name a fill by its word (it
    comes back a member) but not by another."""
    import json

    from exportlens.exporter.core.report import Probe, ProbeFill
    from exportlens.exporter.core.targets import ParamKind
    from exportlens.exporter.find import compact
    from exportlens.exporter.find.discover import discover
    from exportlens.exporter.spec.loading import SpecSource, TensorFill, TensorInput
    from exportlens.exporter.spec.shapes import parse_shape
    from exportlens.exporter.workers.validate import Refused
    from exportlens.exporter.workers.verdicts import Verdicts

    (tmp_path / "net.py").write_text(KEPT, encoding="utf-8")
    (net,) = [m for m in discover(tmp_path).modules if m.name == "Net"]
    kept = compact.dumps(compact.module_data(net))
    back = compact.loads(kept, compact.module_of)
    assert back.forward is not None and [(p.name, p.kind) for p in back.forward.params] == [
        ("x", ParamKind.POSITIONAL),
        ("mask", ParamKind.POSITIONAL),
        ("scale", ParamKind.KEYWORD_ONLY),
    ]
    assert all(type(p.kind) is ParamKind for p in back.forward.params)
    assert '"positional"' in kept and "$enum" not in kept  # the index's words, as before

    plan = make_plan([EXAMPLES])
    sent = CODEC.loads(CODEC.dumps(owner_plan(plan, plan.modules[0]))).plan.modules
    assert [type(p.spec.source) for p in sent if p.spec] == [SpecSource] * len(sent)
    ones = TensorInput(parse_shape("f32[n, 4]"), TensorFill.ONES)
    assert CODEC.loads(CODEC.dumps(ones)).fill is TensorFill.ONES

    probes = tuple(Probe(f.value, f, i) for i, f in enumerate(ProbeFill))
    fix = Fix("Add `torch._check(x > 0)`", (Edit("net.py", 8, 1, 8, 1, "x\n"),), probes=probes)
    finding = Finding("EL202", Kind.DATA_DEPENDENT_GUARD, "a branch on `x`", "net.py", 8, fixes=(fix,))
    report = ModuleReport("net.py:Net", Status.FAILED, (finding,))
    job = Job(str(tmp_path), "net.py:Net", 1)
    shown = validated_report(job, CODEC.loads(CODEC.dumps(report)))
    assert [p.fill for p in shown.findings[0].fixes[0].probes] == list(ProbeFill)
    assert all(type(p.fill) is ProbeFill for p in shown.findings[0].fixes[0].probes)
    written = report_json(Report((shown,)))["modules"][0]["findings"][0]["fixes"][0]["probes"]
    assert [p["fill"] for p in written] == [f.value for f in ProbeFill]  # the JSON's words, as before
    assert json.loads(json.dumps(written)) == written

    Verdicts(tmp_path).put("c" * 64, shown)
    cached = Verdicts(tmp_path).get("c" * 64)
    assert cached == shown and all(type(p.fill) is ProbeFill for p in cached.findings[0].fixes[0].probes)

    bare = CODEC.plain(report)
    bare["findings"][TUPLE][0]["fixes"][TUPLE][0]["probes"][TUPLE][1]["fill"] = "zeros"
    for proven in (False, True):
        said = validated_report(job, CODEC.value(bare), proven=proven).findings[0].fixes[0].probes
        assert said[1].fill is ProbeFill.ZEROS and all(type(p.fill) is ProbeFill for p in said)
    bare["findings"][TUPLE][0]["fixes"][TUPLE][0]["probes"][TUPLE][1]["fill"] = "twos"
    with pytest.raises(Refused, match="a probe filled with 'twos'"):
        validated_report(job, CODEC.value(bare))
