"""Remedies of a data-dependent branch that keep what the model computes, proven on probes.

The router of the README: its example inputs route no token, so ``torch._check(routed <= 0)``
exports and runs on them, and its program rejects every input that routes one. The fix
preferred must keep the expert: applied, its exported program agrees with the module as
written on inputs that route tokens and on inputs that do not."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from conftest import only

from exportlens.exporter.core.options import Options
from exportlens.exporter.static.plan import make_plan
from exportlens.exporter.static.remedies import as_cond, without_branch

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

ROUTER_SPEC = """
[tool.exportlens.modules."router.py:TokenRouter"]
init = { hidden = 16 }
inputs = { x = "f32[tokens, 16]" }
dims = { tokens = { min = 2, max = 1024 } }
"""


@pytest.fixture(scope="module")
def pool():
    from exportlens.exporter.workers.pool import Pool

    with Pool(jobs=2) as pool:
        yield pool


def checked(root: Path, pool):
    """What ``exportlens check`` reports: each fix proven by the owner, on its probes."""
    from exportlens.exporter.workers.batch import check_in_workers

    (report,) = check_in_workers(make_plan([root]), pool, Options()).modules
    return report


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_routers_preferred_fix_keeps_the_expert(project, pool):
    import torch
    from torch.export import Dim

    shutil.copy(EXAMPLES / "models" / "router.py", project.root / "router.py")
    project.write("pyproject.toml", ROUTER_SPEC)
    written = project.read("router.py")
    finding = only(checked(project.root, pool).findings, "EL101")

    (preferred,) = [f for f in finding.fixes if f.preferred]
    assert preferred.title == "Run both sides of `if routed > 0:` with torch.cond (module then exports and serves its ranges)"
    assert preferred.verified == "serves" and preferred.passes_probes
    assert {p.name for p in preferred.probes} >= {"example inputs"} and len(preferred.probes) >= 2
    assume = next(f for f in finding.fixes if "torch._check(routed <= 0)" in f.title)
    assert not assume.preferred and "the exported program rejects inputs where it does not hold" in assume.title
    assert any(p.rejected for p in assume.probes)
    assert not any("Drop the test" in f.title for f in finding.fixes)  # without the branch, unrouted tokens change

    project.apply(preferred)
    assert "torch.cond(routed > 0, true_fn, false_fn, (x, scores))" in project.read("router.py")
    (project.root / "written.py").write_text(written)
    torch.manual_seed(0)
    fixed = load(project.root / "router.py", "fixed_router").TokenRouter(hidden=16).eval()
    torch.manual_seed(0)
    original = load(project.root / "written.py", "written_router").TokenRouter(hidden=16).eval()
    x = torch.randn(8, 16)
    program = torch.export.export(fixed, (x,), dynamic_shapes={"x": {0: Dim("tokens", min=2, max=1024)}}).module()
    away = -100 * original.gate.weight.detach().expand(4, 16)  # every token scored below the threshold
    routed = []
    for inputs in (x, x * 1000, -x * 1000, torch.zeros(5, 16), torch.randn(300, 16), away):
        with torch.no_grad():
            torch.testing.assert_close(program(inputs), original(inputs))
            routed.append(int((torch.sigmoid(original.gate(inputs)).squeeze(-1) > 0.5).sum()))
    assert 0 in routed and any(routed), routed  # tokens routed, and none


EXPERTS = """
import torch
from torch import nn


class Experts(nn.Module):
    def __init__(self, hidden: int = 8, experts: int = 4):
        super().__init__()
        self.gate = nn.Linear(hidden, experts)
        self.experts = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(experts))

    def forward(self, x):
        choice = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = (choice == e).nonzero().squeeze(-1)
            if idx.numel() == 0:
                continue
            out.index_add_(0, idx, expert(x[idx]))
        return out
"""


def test_an_experts_early_exit_for_no_token_is_dropped_as_index_add_handles_it(project, pool):
    """A loop over experts, written as people write it: the ``continue`` for an expert that no
    token chose is what export cannot decide, and ``index_add_`` adds nothing for an empty
    index, so the preferred fix drops the test, and its program agrees with eager."""
    project.write("experts.py", EXPERTS)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."experts.py:Experts"]
        inputs = { x = "f32[tokens, 8]" }
        dims = { tokens = { min = 2, max = 512 } }
        """,
    )
    finding = only(checked(project.root, pool).findings, "EL101")
    (preferred,) = [f for f in finding.fixes if f.preferred]
    assert preferred.title == "Drop `if idx.numel() == 0:`: the code after it handles that case (module then exports and serves its ranges)"
    assert preferred.passes_probes and all(p.agrees is not False for p in preferred.probes)
    project.apply(preferred)
    assert "continue" not in project.read("experts.py")
    assert checked(project.root, pool).status.value == "exported"


def test_a_tensor_tested_by_if_gets_torch_cond_and_probes_for_its_other_side(project):
    """``if h.sum() > 4:`` asks a tensor for its truth: no ``torch._check`` fits, a torch.cond
    does, and the probe set holds inputs that take the other side (random draws of fewer
    positives, here), beside the example."""
    project.write(
        "gate.py",
        """
        import torch
        from torch import nn

        class Gate(nn.Module):
            def forward(self, x):
                h = torch.relu(x)
                if h.sum() > 4:  # large activations: normalise
                    h = h / h.sum()
                return h * 2
        """,
    )
    project.write("pyproject.toml", '[tool.exportlens.modules."gate.py:Gate"]\ninputs = { x = "f32[batch, 8]" }\n')
    finding = only(project.module("Gate").findings, "EL101")
    cond = next(f for f in finding.fixes if "torch.cond" in f.title)
    assert cond.title == "Run both sides of `if h.sum() > 4:` with torch.cond"  # the line's comment is not the test
    assert not any("torch._check" in f.title for f in finding.fixes)
    assert len(cond.probes) >= 2 and cond.probes[0].name == "example inputs"
    project.apply(cond)
    assert "h = torch.cond(h.sum() > 4, true_fn, false_fn, (h,))" in project.read("gate.py")
    assert project.module("Gate").status.value == "exported"


def test_what_a_job_says_its_probes_gave_is_not_taken(tmp_path):
    """Only the owner's proof compares a fix with eager: a job's report that says its fix
    agreed on every probe has that reset, like ``verified``."""
    from exportlens.exporter.core.report import Edit, Finding, Fix, Kind, ModuleReport, Probe, Status
    from exportlens.exporter.workers.protocol import Job
    from exportlens.exporter.workers.validate import checked_report

    (tmp_path / "m.py").write_text("x = 1\n")
    claimed = Fix("Run both sides", (Edit("m.py", 1, 1, 1, 1, "y"),), True, "exports", (Probe("zeros", "zeros", agrees=True),))
    finding = Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "a branch", "m.py", 1, fixes=(claimed,))
    report = ModuleReport("m.py:M", Status.FAILED, (finding,))
    (kept,) = checked_report(Job(str(tmp_path), "m.py:M", 1), report).findings[0].fixes
    assert kept.verified == "unverified" and kept.probes == (Probe("zeros", "zeros"),) and not kept.passes_probes


def test_an_early_exit_the_loop_handles_is_dropped():
    text = (
        "def forward(self, x, out):\n"
        "    for e in range(4):\n"
        "        idx = (x == e).nonzero().squeeze(-1)\n"
        "        if idx.numel() == 0:\n"
        "            continue\n"
        "        out.index_add_(0, idx, x[idx])\n"
        "    return out\n"
    )
    new, how = without_branch(text, 4)
    assert how == "drop" and "continue" not in new and "out.index_add_(0, idx, x[idx])" in new


def test_torch_cond_takes_the_tensors_each_side_reads_and_clones_what_it_returns_unchanged():
    text = (EXAMPLES / "models" / "router.py").read_text()
    new = as_cond(text, 16, frozenset({"x", "scores"}))
    assert new.endswith(
        "        def true_fn(x, scores):\n"
        "            return x + self.expert(x) * scores.unsqueeze(-1)\n"
        "\n"
        "        def false_fn(x, scores):\n"
        "            return x.clone()\n"
        "\n"
        "        return torch.cond(routed > 0, true_fn, false_fn, (x, scores))\n"
    )
    assert as_cond(text, 16, frozenset()) is not None  # no operands: both sides read closures only


def test_a_number_asked_of_a_value_read_from_a_tensor_is_kept_symbolic():
    """`int(...)` of a value read from a tensor is written `torch.sym_int(...)` (a tensor
    argument read with `.item()`, as `int()` reads it); every other byte stays."""
    from exportlens.exporter.static.numbers import conversion, symbolic

    text = (
        "import torch\n\n\n"
        "def forward(self, chosen, lengths, e, n):\n"
        "    capacity = int((chosen == e).sum().item() * self.capacity_factor)  # per expert\n"
        "    longest = int(lengths.max())\n"
        "    rows = self.table[: int(n)] + int(2 * 3) + float(n.item())\n"
    )
    asked = conversion(text, 5, ["(chosen == e).sum().item()"])
    assert (asked.call, asked.argument, asked.target, asked.symbolic) == (
        "int((chosen == e).sum().item() * self.capacity_factor)",
        "(chosen == e).sum().item() * self.capacity_factor",
        "capacity",
        "torch.sym_int",
    )
    assert symbolic(text, 5) == text.replace("= int((chosen", "= torch.sym_int((chosen")
    assert symbolic(text, 6, tensor=True) == text.replace("int(lengths.max())", "torch.sym_int(lengths.max().item())")
    assert conversion(text, 7) is None  # three: which one reads the value is for torch's guard to say
    assert conversion(text, 7, ["n.item()"]).call == "float(n.item())"
    assert conversion(text, 7, ["n.item()"]).target is None
    assert symbolic(text, 7, ["n.item()"]).endswith("int(2 * 3) + torch.sym_float(n.item())\n")
    assert conversion(text, 4) is None
