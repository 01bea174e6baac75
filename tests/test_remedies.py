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
from exportlens.exporter.edit.async_checks import raise_as_assert, torch_assert_as_async
from exportlens.exporter.edit.branch_rewrites import as_where, without_branch, without_fast_path
from exportlens.exporter.edit.cond_branches import as_cond
from exportlens.exporter.edit.item_reads import int_as_item
from exportlens.exporter.spec.plan import make_plan

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

ROUTER_SPEC = """
[tool.exportlens.modules."router.py:TokenRouter"]
init = { hidden = 16 }
inputs = { x = "f32[tokens, 16]" }
dims = { tokens = { min = 2, max = 1024 } }
"""


def checked(root: Path, pool):
    """What ``exportlens check`` reports: each fix proven by the owner, on its probes."""
    from exportlens.exporter.workers.batch import export_in_workers

    (report,) = export_in_workers(make_plan([root]), pool, Options()).modules
    return report


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # proofs of several fixes in workers (8 s); the other pool tests here prove one remedy each
def test_the_routers_preferred_fix_keeps_the_expert(project, pool):
    import torch
    from torch.export import Dim

    shutil.copy(EXAMPLES / "models" / "router.py", project.root / "router.py")
    project.write("pyproject.toml", ROUTER_SPEC)
    written = project.read("router.py")
    finding = only(checked(project.root, pool).findings, "EL101")

    (preferred,) = [f for f in finding.fixes if f.preferred]
    assert (
        preferred.title
        == "Run both sides of `if routed > 0:` with torch.cond (module then exports and serves its ranges)"
    )
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


@pytest.mark.slow
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
    assert preferred.title == (
        "Drop `if idx.numel() == 0:`: the code after it handles that case (module then exports and serves its ranges)"
    )
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
    from exportlens.exporter.workers.validate import validated_report

    (tmp_path / "m.py").write_text("x = 1\n")
    claimed = Fix(
        "Run both sides", (Edit("m.py", 1, 1, 1, 1, "y"),), True, "exports", (Probe("zeros", "zeros", agrees=True),)
    )
    finding = Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "a branch", "m.py", 1, fixes=(claimed,))
    report = ModuleReport("m.py:M", Status.FAILED, (finding,))
    (kept,) = validated_report(Job(str(tmp_path), "m.py:M", 1), report).findings[0].fixes
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


POOLING = """\
class Router(nn.Module):
    def forward(self, input_ids):
        hidden = self.encoder(input_ids).last_hidden_state
        if hidden.mean().item() > 0:
            return hidden[:, 0]
        return hidden.mean(dim=1)
"""


def test_torch_cond_decides_on_the_tensor_an_item_reads_and_clones_a_view_it_returns():
    """A RoBERTa pooling that branches on ``.item()`` (the real-repository corpus): torch.cond
    decides on the one-element tensor itself (the number read out of it would be data-dependent
    again), and the side that returns ``hidden[:, 0]``, a view of its operand, returns a copy
    (torch.cond refuses outputs that alias inputs)."""
    new = as_cond(POOLING, 4, frozenset({"hidden", "input_ids"}))
    assert new is not None and new.endswith(
        "        def true_fn(hidden):\n"
        "            return hidden[:, 0].clone()\n"
        "\n"
        "        def false_fn(hidden):\n"
        "            return hidden.mean(dim=1)\n"
        "\n"
        "        return torch.cond(hidden.mean() > 0, true_fn, false_fn, (hidden,))\n"
    ), new


def test_torch_cond_leaves_a_blank_line_above_its_first_function_as_ruff_format_does():
    """The ``if`` follows other statements: the nested ``def`` that replaces it gets the blank
    line above it that PEP 8 and ``ruff format`` ask for, the comment above the ``if`` kept
    under that line; the rest of the file is as it was."""
    text = (EXAMPLES / "models" / "router.py").read_text()
    head, _, _ = text.partition("        routed = ")
    commented = text.replace("        if routed > 0:", "        # any token routed?\n        if routed > 0:")
    functions = (
        "        def true_fn(x, scores):\n"
        "            return x + self.expert(x) * scores.unsqueeze(-1)\n"
        "\n"
        "        def false_fn(x, scores):\n"
        "            return x.clone()\n"
        "\n"
        "        return torch.cond(routed > 0, true_fn, false_fn, (x, scores))\n"
    )
    routed = "        routed = (scores > 0.5).sum().item()\n"
    assert as_cond(text, 16, frozenset({"x", "scores"})) == head + routed + "\n" + functions
    assert as_cond(commented, 17, frozenset({"x", "scores"})) == (
        head + routed + "\n        # any token routed?\n" + functions
    )


def test_torch_cond_writes_a_one_line_else_as_a_line_of_its_false_side():
    """``else: y = x - 1`` on the ``else`` line itself: the false side's function holds that
    statement on a line of its own, indented as the function's body."""
    text = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x, scores):\n"
        "        if scores.sum() > 0:\n"
        "            y = x * 2\n"
        "        else: y = x - 1\n"
        "        return y\n"
    )
    assert as_cond(text, 4, frozenset({"x", "scores", "y"})) == (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x, scores):\n"
        "        def true_fn(y, x):\n"
        "            y = x * 2\n"
        "            return y\n"
        "\n"
        "        def false_fn(y, x):\n"
        "            y = x - 1\n"
        "            return y\n"
        "\n"
        "        y = torch.cond(scores.sum() > 0, true_fn, false_fn, (y, x))\n"
        "        return y\n"
    )


MASK = """import torch


class Masked(torch.nn.Module):
    def forward(self, x, mask):
        x = x * 2.0
        # all ones: nothing to mask
        if torch.all(mask == 1):  # fast path
            mask = None
        if mask is not None:
            x = x * mask[..., None]
        return x.cumsum(1)
"""


def test_a_fast_path_that_only_assigns_names_is_dropped_whole():
    """``mask = None`` for a mask of ones: the code after it multiplies by the mask, which for
    ones is the identity; the whole ``if`` goes (every other byte stays), and the proof says
    whether the code after it computes the same."""
    assert without_fast_path(MASK, 8) == (
        "import torch\n"
        "\n"
        "\n"
        "class Masked(torch.nn.Module):\n"
        "    def forward(self, x, mask):\n"
        "        x = x * 2.0\n"
        "        if mask is not None:\n"
        "            x = x * mask[..., None]\n"
        "        return x.cumsum(1)\n"
    )
    assert as_cond(MASK, 8, frozenset({"x", "mask"})) is None  # a torch.cond side cannot give None


@pytest.mark.parametrize(
    "branch",
    [
        "if torch.all(mask == 1):\n            mask = mask.float()\n",  # a call: its effects are not ours to see
        "if torch.all(mask == 1):\n            mask = None\n        else:\n            mask = mask * 2\n",  # an else
        "if x.sum() > 0:\n            x = x + 1\n"
        "        elif torch.all(mask == 1):\n            mask = None\n",  # an elif
        "if torch.all(mask == 1):\n            self.mask = None\n",  # the module changed, not a name
        "if torch.all(mask == 1):\n            x += 1\n",  # a tensor changed in place
    ],
)
def test_a_fast_path_is_not_dropped_where_it_does_more_than_assign_names(branch):
    text = MASK.replace("if torch.all(mask == 1):  # fast path\n            mask = None\n", branch)
    line = 8 if not branch.startswith("if x.sum()") else 10
    assert without_fast_path(text, line) is None


ROPE = """import torch


class Rope(torch.nn.Module):
    def forward(self, x, position_ids):
        seq_len = position_ids.max() + 1
        if seq_len > self.original_max:  # long context
            inv = self.long_inv
        else:
            inv = self.short_inv
        return x * inv
"""


def test_an_if_else_that_assigns_one_name_either_way_becomes_torch_where():
    assert as_where(ROPE, 7) == (
        "import torch\n"
        "\n"
        "\n"
        "class Rope(torch.nn.Module):\n"
        "    def forward(self, x, position_ids):\n"
        "        seq_len = position_ids.max() + 1\n"
        "        inv = torch.where(seq_len > self.original_max, self.long_inv, self.short_inv)\n"
        "        return x * inv\n",
        ("inv",),
    )


def test_several_names_are_each_picked_with_the_same_test():
    text = ROPE.replace("inv = self.long_inv\n", "inv = self.long_inv\n            scale = x * 0.5\n").replace(
        "inv = self.short_inv\n", "scale = x\n            inv = self.short_inv\n"
    )
    new, names = as_where(text, 7)
    assert names == ("inv", "scale")
    assert new.endswith(
        "        seq_len = position_ids.max() + 1\n"
        "        inv = torch.where(seq_len > self.original_max, self.long_inv, self.short_inv)\n"
        "        scale = torch.where(seq_len > self.original_max, x * 0.5, x)\n"
        "        return x * inv\n"
    )


@pytest.mark.parametrize(
    "other",
    [
        "else:\n            scale = self.short_inv\n",  # another name
        "else:\n            inv = self.short_inv\n            x.mul_(2)\n",  # something else besides
        "else:\n            inv = None\n",  # no tensor to pick
        "elif seq_len > 8:\n            inv = self.short_inv\n",  # a chain
    ],
)
def test_torch_where_is_not_proposed_where_the_sides_do_not_pick_one_value(other):
    text = ROPE.replace("else:\n            inv = self.short_inv\n", other)
    assert as_where(text, 7) is None


def test_names_read_by_the_other_picks_are_not_picked_one_after_another():
    text = ROPE.replace("inv = self.long_inv\n", "inv = self.long_inv\n            scale = inv * 2\n").replace(
        "inv = self.short_inv\n", "inv = self.short_inv\n            scale = inv\n"
    )
    assert as_where(text, 7) is None  # the second torch.where would read the new ``inv``
    assert (
        as_where(ROPE.replace("long context\n", "long context\n            x = x.clone()\n"), 7) is None
    )  # a side that does more


@pytest.mark.slow
def test_a_finite_check_is_kept_in_the_program_proven_on_probes_it_passes(project, pool):
    """``if not torch.isfinite(y).all(): raise ...``: the preferred fix is the same check as
    ``torch._assert_async``, proven on probes that eager runs through (none fails the check),
    and its program raises, with the message, on a state that is not finite."""
    import torch

    project.write(
        "solver.py",
        """
        import torch
        from torch import nn

        class Solver(nn.Module):
            def forward(self, y):
                y = y + 0.1 * y.tanh()
                if not torch.isfinite(y).all():
                    raise ValueError("the solver reached a non-finite state")
                return y
        """,
    )
    project.write("pyproject.toml", '[tool.exportlens.modules."solver.py:Solver"]\ninputs = { y = "f32[3, 4]" }\n')
    finding = only(checked(project.root, pool).findings, "EL101")
    assert finding.message == (
        "`not torch.isfinite(y).all()` is a tensor, and `if` needs it as a Python bool,"
        " which is only known when the model runs;"
        " torch._assert_async makes the same check inside the exported program"
    )
    (preferred,) = [f for f in finding.fixes if f.preferred]
    assert preferred.title == (
        "Check it when the program runs: `torch._assert_async(...)` in place of `raise ValueError`"
        " (it raises RuntimeError) (module then exports and serves its ranges)"
    )
    assert preferred.passes_probes and len(preferred.probes) >= 2 and all(p.agrees for p in preferred.probes)
    project.apply(preferred)
    assert (
        '        torch._assert_async(torch.isfinite(y).all(), "the solver reached a non-finite state")\n'
        in project.read("solver.py")
    )
    program = torch.export.export(
        load(project.root / "solver.py", "kept_solver").Solver(), (torch.randn(3, 4),)
    ).module()
    with pytest.raises(RuntimeError, match="the solver reached a non-finite state"):
        program(torch.full((3, 4), float("nan")))


def test_int_of_a_tensor_read_with_item_is_preferred_only_where_probes_of_other_values_agree(project, pool):
    """``int(lengths.max())`` as ``lengths.max().item()`` keeps the number; probes give it other
    values. An argmax whose ``.item()`` then indexes a Python list needs its value pinned
    (``torch._check(best == 0)``), which no fix folds in: it is not preferred."""
    project.write(
        "lengths.py",
        """
        import torch
        from torch import nn

        class Mask(nn.Module):
            def forward(self, lengths):
                longest = int(lengths.max())
                return (torch.arange(longest) < lengths[:, None]).float()

        class Pick(nn.Module):
            def forward(self, x):
                best = int(x.argmax())
                return x * [1.0, 2.0, 3.0, 4.0][best]
        """,
    )
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."lengths.py:Mask"]
        inputs = { lengths = { value = [5, 4, 4, 4], dtype = "i64" } }
        [tool.exportlens.modules."lengths.py:Pick"]
        inputs = { x = { value = [3.0, 1.0, 2.0, 0.5] } }
        """,
    )
    from exportlens.exporter.workers.batch import export_in_workers

    mask, pick = sorted(export_in_workers(make_plan([project.root]), pool, Options()).modules, key=lambda m: m.target)
    (item,) = only(mask.findings, "EL101").fixes
    assert item.preferred and item.title.startswith(
        "Write `lengths.max().item()` for `int(lengths.max())`: the same number"
    )
    # other longest lengths than the example's 5: 40 (scaled by 8) and 1 (ones)
    assert {"values scaled up", "ones"} <= {p.name for p in item.probes} and all(p.agrees for p in item.probes)
    # indexing a Python list with it needs the argmax pinned: a torch._check is no step a fix
    # folds in (converge.py), so the fix says what it reaches, and is not preferred
    (pinned,) = only(pick.findings, "EL101").fixes
    assert not pinned.preferred and pinned.title.endswith(
        "the same number, read when the program runs (1 more problem remains)"
    )


SOLVER = """import torch


def step(y, dt):
    y = y + dt * y.tanh()
    # a diverged solver is a bug, not a result
    if not torch.isfinite(y).all():  # stop here
        raise ValueError("the solver reached a non-finite state")
    return y
"""


def test_an_if_that_only_raises_becomes_the_same_check_in_the_program():
    kept = raise_as_assert(SOLVER, 7)
    assert kept.error == "ValueError"
    assert kept.text == (
        "import torch\n"
        "\n"
        "\n"
        "def step(y, dt):\n"
        "    y = y + dt * y.tanh()\n"
        "    # a diverged solver is a bug, not a result\n"
        '    torch._assert_async(torch.isfinite(y).all(), "the solver reached a non-finite state")  # stop here\n'
        "    return y\n"
    )


def test_a_raise_without_not_is_negated_and_without_a_message_says_the_error():
    text = "def f(x):\n    if (x < 0).any():\n        raise errors.Negative\n    return x\n"
    assert raise_as_assert(text, 2).text == (
        "import torch\ndef f(x):\n"
        '    torch._assert_async(torch.logical_not((x < 0).any()), "errors.Negative")\n    return x\n'
    )
    text = "import torch\ndef f(x):\n    if not (x.sum() > 0):\n        raise RuntimeError()\n    return x\n"
    assert (
        raise_as_assert(text, 3).text
        == 'import torch\ndef f(x):\n    torch._assert_async(x.sum() > 0, "RuntimeError")\n    return x\n'
    )


@pytest.mark.parametrize(
    "branch",
    [
        "    if x.isnan().any() or x.isinf().any():\n        raise ValueError('bad')\n",  # Python asks `or` for a bool
        "    if not (0 < x.sum() < 1):\n        raise ValueError('bad')\n",  # and a chained comparison
        "    if not x.all():\n        raise ValueError(f'bad {x}')\n",  # a message formatted while tracing
        "    if not x.all():\n        raise ValueError('bad', x)\n",
        "    if not x.all():\n        raise ValueError('bad')\n"
        "    else:\n        x = x + 1\n",  # an else: no mere check
        "    if not x.all():\n        x = x * 0\n        raise ValueError('bad')\n",  # a body that does more
        "    if not x.all():\n        return x\n",
        "    if not x.all(): raise ValueError('bad')\n",  # one line: left as written
    ],
)
def test_no_kept_check_where_the_if_is_more_than_a_check(branch):
    text = "import torch\ndef f(x):\n" + branch + "    return x\n"
    assert raise_as_assert(text, 3) is None


def test_torch_assert_becomes_torch_assert_async_and_nothing_else_changes():
    text = (
        "def forward(self, logits):\n"
        '    torch._assert((logits.abs() < 1e4).all(), "logits overflow")  # why\n    return logits\n'
    )
    assert torch_assert_as_async(text, 2) == (
        "def forward(self, logits):\n"
        '    torch._assert_async((logits.abs() < 1e4).all(), "logits overflow")  # why\n    return logits\n'
    )
    assert torch_assert_as_async(text, 3) is None
    other = 'def forward(self, x):\n    ok = torch._assert(x.all(), "m")\n    _assert(x.all(), "m")\n    return x\n'
    assert (
        torch_assert_as_async(other, 2) is None and torch_assert_as_async(other, 3) is None
    )  # its value used; not torch's


def test_int_of_a_tensor_becomes_item_the_same_number_kept_unknown():
    text = (
        "def forward(self, lengths):\n    longest = int(lengths.max())  # the widest\n"
        "    return torch.arange(longest)\n"
    )
    read = int_as_item(text, 2, frozenset({"lengths"}))
    assert (read.written, read.item) == ("int(lengths.max())", "lengths.max().item()")
    assert read.text == (
        "def forward(self, lengths):\n    longest = lengths.max().item()  # the widest\n"
        "    return torch.arange(longest)\n"
    )
    text = "def forward(self, x):\n    n = 2 * int(x.sum() + 1)\n    return n\n"
    assert (
        int_as_item(text, 2, frozenset({"x"})).text
        == "def forward(self, x):\n    n = 2 * (x.sum() + 1).item()\n    return n\n"
    )


@pytest.mark.parametrize(
    "line",
    [
        "n = int(x.shape[0])",  # a size: no tensor's value
        "n = int(x.max().item())",  # already read
        "n = int(self.steps)",  # no tensor the line names
        "n = int(x.max()) + int(x.min())",  # two: which one failed is not known
        "n = x.max()",
    ],
)
def test_no_item_read_where_int_reads_no_tensor_or_more_than_one(line):
    text = f"def forward(self, x):\n    {line}\n    return n\n"
    assert int_as_item(text, 2, frozenset({"x"})) is None


def test_a_number_asked_of_a_value_read_from_a_tensor_is_kept_symbolic():
    """`int(...)` of a value read from a tensor is written `torch.sym_int(...)` (a tensor
    argument read with `.item()`, as `int()` reads it); every other byte stays."""
    from exportlens.exporter.edit.numbers import conversion, symbolic

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
