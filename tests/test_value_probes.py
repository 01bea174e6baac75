"""Sizes made from values: ``int()`` of a scaled size, which torch.export pins to the example
(EL204, fixed in integer arithmetic, proven on the class's ``probe_inputs()``), and a size
torch.export assumes of a value-made tensor, which the exported program then refuses where
eager does not (EL206, found by running the program on the class's probes and value fills)."""

from __future__ import annotations

import pytest
from conftest import line_of, only

from exportlens.exporter.core.report import Status
from exportlens.exporter.edit.int_sizes import exact_fraction, scaled_int
from exportlens.exporter.edit.size_calls import with_keyword

INTERP = """
import torch
from torch import nn
from torch.export import Dim
from torch.nn import functional as F


class Interp(nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(1, 4, 40),)

    @staticmethod
    def dynamic_shapes():
        return {"x": {2: Dim("length", min=8, max=256)}}

    @staticmethod
    def probe_inputs():
        return [(torch.randn(1, 4, n),) for n in (8, 33, 128)]

    def forward(self, x):
        size = int(x.shape[2] * 1.5)
        return F.interpolate(x, size=size, mode="linear")
"""

BINCOUNT = """
import torch
from torch import nn


class Prior(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("prior", torch.full((8,), 0.125))

    @staticmethod
    def example_inputs():
        return (torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 3]),)

    @staticmethod
    def probe_inputs():
        return [(torch.arange(9) % 8,), (torch.zeros(9, dtype=torch.long),)]

    def forward(self, ids):
        counts = torch.bincount(ids)
        return counts.float() / self.prior
"""


@pytest.mark.parametrize(
    ("literal", "fraction"),
    [("1.5", (3, 2)), ("0.25", (1, 4)), ("2.0", (2, 1)), ("0.1", None), ("1e-9", None), ("0.0", None)],
)
def test_only_an_exact_small_binary_fraction_is_rewritten(literal: str, fraction):
    got = exact_fraction(literal)
    assert (got.numerator, got.denominator) == fraction if fraction else got is None
    if fraction:  # int(n * f) == n * p // q for every size the rewrite may meet
        p, q = fraction
        assert all(int(n * float(literal)) == n * p // q for n in range(4097))


def test_int_of_a_scaled_size_is_rewritten_keeping_every_other_byte():
    text = (
        "def f(x):\n    a = int(x.shape[2] * 1.5)  # keep\n"
        "    b = -int(0.25 * x.size(0)) + 1\n    c = int(x.shape[0] * 0.1)\n"
    )
    first = scaled_int(text, 2)
    assert (first.written, first.rewritten) == ("int(x.shape[2] * 1.5)", "x.shape[2] * 3 // 2")
    assert first.text == text.replace("int(x.shape[2] * 1.5)", "x.shape[2] * 3 // 2")
    assert scaled_int(text, 3).rewritten == "(x.size(0) // 4)"  # -(n // 4), not -n // 4
    assert scaled_int(text, 4) is None  # 0.1 is not 1/10 as a float


def test_a_call_is_given_the_size_its_result_must_have():
    text = "def f(ids):\n    counts = torch.bincount(ids)  # classes\n"
    new, call = with_keyword(text, 2, "bincount", "minlength", 8)
    assert call == "torch.bincount(ids, minlength=8)"
    assert new == text.replace("torch.bincount(ids)", "torch.bincount(ids, minlength=8)")
    assert with_keyword(new, 2, "bincount", "minlength", 8) is None


@pytest.mark.slow
def test_int_of_a_scaled_size_is_a_specialization_fixed_in_integer_arithmetic_proven_on_the_probes(project):
    from test_converge import apply_preferred_once, check

    project.write("interp.py", INTERP)
    code, report = check(project.root)
    [module] = report["modules"]
    finding = module["findings"][0]
    assert (finding["code"], finding["line"]) == ("EL204", line_of(project, "interp.py", "size = int("))
    assert finding["message"].startswith("`int(x.shape[2] * 1.5)` fixes `length` to 40"), finding["message"]
    preferred = [f for f in finding["fixes"] if f["preferred"]]
    assert [f["title"] for f in preferred] == [
        "Write `x.shape[2] * 3 // 2` for `int(x.shape[2] * 1.5)`: the same sizes in integer arithmetic,"
        " which stays symbolic (module then exports and serves its ranges)"
    ]
    probes = {p["name"]: p["agrees"] for p in preferred[0]["probes"]}
    assert {probes[f"probe_inputs() #{i}"] for i in (1, 2, 3)} == {True}  # lengths 8, 33 and 128, as eager
    assert module["fixes_dropped"] == 0
    apply_preferred_once(project, report)
    assert "size = x.shape[2] * 3 // 2" in project.read("interp.py")
    assert check(project.root)[1]["modules"][0]["status"] == "exported"


@pytest.mark.slow
def test_a_size_torch_assumes_of_a_value_made_tensor_is_refused_where_eager_takes_it(project):
    project.write("prior.py", BINCOUNT)
    report = project.module("Prior")
    assert report.status is Status.FAILED
    finding = only(report.findings, "EL206")
    assert (finding.path, finding.line) == ("prior.py", line_of(project, "prior.py", "/ self.prior"))
    assert finding.message.startswith(
        "the exported program refuses inputs where `torch.bincount(ids)` has other than 8 bins,"
        " e.g. `ids` all zeros (probe_inputs() #2), which eager takes"
    ), finding.message
    [fix] = finding.fixes
    assert not fix.preferred and fix.title.startswith("Write `torch.bincount(ids, minlength=8)`")
    project.apply(fix)
    assert project.module("Prior").status is Status.EXPORTED


@pytest.mark.slow
def test_a_value_made_size_the_program_does_not_assume_is_not_refused(project):
    """A program without such an assumption is not run on value fills, and one whose probes
    it takes exports as before."""
    project.write("prior.py", BINCOUNT.replace("torch.bincount(ids)", "torch.bincount(ids, minlength=8)"))
    assert project.module("Prior").status is Status.EXPORTED
