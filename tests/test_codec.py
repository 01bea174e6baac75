"""The codec every process boundary uses: what goes in comes out, of the same types, and
a line naming a type it does not carry is refused (nothing like pickle's arbitrary code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from exportlens.exporter.core.codec import CodecError
from exportlens.exporter.core.targets import Span
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.proof_plans import owner_plan
from exportlens.exporter.workers.protocol import CODEC, Done, Job, Run, decode, encode, encode_run

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
