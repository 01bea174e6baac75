"""pyproject.toml specs written by hypothesis: any value of any kind under any key the
spec reads. Whatever it writes, planning gives findings on pyproject lines, never a
traceback (the CLI and the server read specs through the same make_plan)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exportlens.exporter.spec.plan import make_plan

NET = "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, y=None):\n        return x\n"

_names = st.sampled_from(
    ["x", "y", "batch", "seq", "n", "2*n", "shape", "value", "fill", "min", "max", "example", "low", "high", "dtype"]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(
        ["f32[batch, 4]", "f32[batch,,4", "i64[2*n]", "f33[4]", "randn", "8GiB", "1B", "cpu", "tpu", "", "ä🚀"]
    )
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars.filter(lambda v: v is not None),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner, max_size=4),
    max_leaves=10,
)
_table_keys = st.sampled_from(
    ["init", "inputs", "dims", "device", "strict", "ir", "timeout", "memory_limit", "sandbox", "shapes", "x"]
)
_module_table = st.dictionaries(_table_keys, _values, max_size=5)
_exportlens = st.fixed_dictionaries(
    {},
    optional={
        "modules": st.dictionaries(
            st.sampled_from(["net.py:Net", "net.py:Gone", "nope", "net.py"]), _module_table | _values, max_size=3
        )
        | _values,
        "device": _values,
        "timeout": _values,
        "memory_limit": _values,
        "strict": _values,
        "sandbox": _values,
    },
)
_documents = st.one_of(
    st.builds(lambda e: {"tool": {"exportlens": e}}, _exportlens),
    st.builds(lambda v: {"tool": {"exportlens": v}}, _values),
    st.builds(lambda v: {"tool": v}, _values),
)


def _toml(document: dict) -> str | None:
    try:
        return tomlkit.dumps(document)
    except Exception:  # a value TOML cannot hold (None, NaN keys...): not a pyproject.toml anyone can write
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_documents)
def test_any_spec_plans_to_findings_and_never_raises(document):
    text = _toml(document)
    if text is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "net.py").write_text(NET)
        (root / "pyproject.toml").write_text(text)
        plan = make_plan([root])
    for f in [*plan.findings, *(f for m in plan.modules for f in m.findings)]:
        assert f.line >= 1 and f.column >= 1 and f.message, f
        assert "Traceback" not in f.message and "object has no attribute" not in f.message, f


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_as_pyproject_plan_to_findings(data):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "net.py").write_text(NET)
        (root / "pyproject.toml").write_bytes(b"[tool.exportlens]\n" + data)
        make_plan([root])
