"""A successful export, described in the user's names: signature, ranges, per-line shapes, .pt2."""

from __future__ import annotations

from conftest import line_of

from exportlens.exporter.core.equality import Equality
from exportlens.exporter.core.report import Status, to_dict
from exportlens.exporter.spec.plan import make_plan


def test_signature_ranges_and_line_shapes_in_dim_names(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."enc.py:Enc"]
        inputs = { x = "f32[batch, seq, 16]" }
        dims = { batch = { min = 2, max = 64 }, seq = { max = 512 } }
    """,
    )
    project.write(
        "enc.py",
        """
        import torch
        from torch import nn

        class Enc(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(16, 32)
                self.out = nn.Linear(32, 8)

            def forward(self, x):
                h = self.fc(x)
                pooled = h.mean(dim=1)
                return self.out(pooled)
    """,
    )
    report = project.module("Enc")
    assert report.status is Status.EXPORTED
    s = report.summary
    assert s.signature == "(x: f32[batch, seq, 16]) -> f32[batch, 8]"
    assert set(map(str, s.range_constraints)) == {"batch ∈ [2, 64]", "seq ∈ [0, 512]"}
    shapes = {ls.line: ls.shapes for ls in s.line_shapes}
    assert shapes[line_of(project, "enc.py", "h = self.fc(x)")][-1] == "f32[batch, seq, 32]"
    assert shapes[line_of(project, "enc.py", "pooled = h.mean")][-1] == "f32[batch, 32]"
    assert "s" not in " ".join(str(x) for x in shapes.values()).replace("seq", "")  # no torch symbols left
    assert report.spec_source == "pyproject.toml:1"


def test_a_line_after_a_torch_check_shows_no_none_shape(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."gate.py:Gate"]
        inputs = { x = "f32[tokens, 4]" }
    """,
    )
    project.write(
        "gate.py",
        """
        import torch
        from torch import nn

        class Gate(nn.Module):
            def forward(self, x):
                routed = (x > 0).sum().item()
                torch._check(routed > 0)
                if routed > 0:
                    return x * 2
                return x
    """,
    )
    report = project.module("Gate")
    assert report.status is Status.EXPORTED
    shapes = [s for ls in report.summary.line_shapes for s in ls.shapes]
    assert shapes and "None" not in shapes, report.summary.line_shapes


def test_nested_inputs_kwargs_and_derived_dims(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."multi.py:Multi"]
        inputs = { pair = ["f32[batch, n]", "f32[batch, n + 1]"], extra = { a = "f32[batch, 4]" }, scale = 2.0 }
    """,
    )
    project.write(
        "multi.py",
        """
        from torch import nn

        class Multi(nn.Module):
            def forward(self, pair, extra, *, scale):
                first, second = pair
                return (first + second[:, 1:]) * scale, extra["a"].sum(dim=1)
    """,
    )
    report = project.module("Multi")
    assert report.status is Status.EXPORTED, report.findings
    # a plain number is baked into the program: shown with its value
    assert report.summary.inputs == (
        "pair[0]: f32[batch, n]",
        "pair[1]: f32[batch, n + 1]",
        "extra['a']: f32[batch, 4]",
        "scale: 2.0",
    )
    assert report.summary.outputs == ("f32[batch, n]", "f32[batch]")


def test_auto_dims_that_torch_ties_to_a_named_dim(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."add.py:Add"]
        inputs = { x = "f32[batch, 4]", y = "f32[?, 4]" }
    """,
    )
    project.write(
        "add.py",
        """
        from torch import nn

        class Add(nn.Module):
            def forward(self, x, y):
                return x + y
    """,
    )
    report = project.module("Add")
    assert report.status is Status.EXPORTED, report.findings
    assert report.summary.equalities == (Equality("y.shape[0]", "batch", ("batch",)),)
    assert list(map(str, report.summary.equalities)) == ["y.shape[0] = batch"]
    assert to_dict(report.summary)["equalities"] == [{"left": "y.shape[0]", "right": "batch", "dims": ["batch"]}]


def test_an_auto_dim_left_open_is_named_by_its_axis_and_the_program_lists_its_operators(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."open.py:Open"]
        inputs = { x = "f32[batch, ?]" }
        dims = { batch = { min = 2, max = 64 } }
    """,
    )
    project.write(
        "open.py",
        """
        from torch import nn

        class Open(nn.Module):
            def forward(self, x):
                return (x * 2).relu()
    """,
    )
    report = project.module("Open")
    assert report.status is Status.EXPORTED, report.findings
    s = report.summary
    # never torch's own symbol (``s27``): the axis as the code reads it
    assert s.signature == "(x: f32[batch, x.shape[1]]) -> f32[batch, x.shape[1]]"
    assert set(map(str, s.range_constraints)) == {"batch ∈ [2, 64]", "x.shape[1] ∈ [2, ∞]"}
    assert s.equalities == ()
    assert s.ops == ("aten.mul.Tensor", "aten.relu")


def test_in_code_example_inputs_with_kwargs_and_dynamic_shapes(project):
    project.write(
        "attn.py",
        """
        import torch
        from torch import nn
        from torch.export import Dim

        class Attn(nn.Module):
            def __init__(self):
                super().__init__()
                self.q = nn.Linear(8, 8)

            @staticmethod
            def example_inputs():
                return (torch.randn(2, 5, 8),), {"mask": torch.ones(2, 5)}

            @staticmethod
            def dynamic_shapes():
                batch, seq = Dim("batch"), Dim("seq", max=128)
                return {"x": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}}

            def forward(self, x, mask):
                return self.q(x) * mask.unsqueeze(-1)
    """,
    )
    report = project.module("Attn")
    assert report.status is Status.EXPORTED, report.findings
    assert report.summary.signature == "(x: f32[batch, seq, 8], mask: f32[batch, seq]) -> f32[batch, seq, 8]"
    assert "seq ∈ [0, 128]" in map(str, report.summary.range_constraints)
    assert report.spec_source.startswith("attn.py:") and "example_inputs()" in report.spec_source


def test_get_example_inputs_returning_a_plain_tuple(project):
    project.write(
        "mlp.py",
        """
        import torch
        from torch import nn

        class MLP(nn.Sequential):
            def __init__(self):
                super().__init__(nn.Linear(4, 4), nn.ReLU())

            @classmethod
            def get_example_inputs(cls):
                return (torch.randn(3, 4),)
    """,
    )
    report = project.module("MLP")
    assert report.status is Status.EXPORTED, report.findings
    assert report.summary.signature == "(input: f32[3, 4]) -> f32[3, 4]"


def test_saves_a_pt2_that_loads_and_runs(project, tmp_path):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."net.py:Net"]
        inputs = { x = "f32[batch, 4]" }
        ir = "core-aten"
    """,
    )
    project.write(
        "net.py",
        """
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x).softmax(-1)
    """,
    )
    import torch  # here, not at the top: collecting the suite stays free of torch

    from exportlens.exporter.runtime.in_process import export_planned
    from exportlens.exporter.runtime.run import Options

    plan = make_plan([project.root])
    artifact = tmp_path / "out" / "Net.pt2"
    report = export_planned(plan, plan.modules[0], Options(artifact=artifact))
    assert report.summary.artifact == str(artifact)
    ep = torch.export.load(str(artifact))
    assert ep.module()(torch.randn(7, 4)).shape == (7, 2)
    assert "aten.addmm" in report.summary.graph or "aten.mm" in report.summary.graph  # decomposed to core ATen


def test_meta_device_exports_without_allocating(project):
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens]
        device = "meta"

        [tool.exportlens.modules."big.py:Big"]
        inputs = { x = "f32[batch, 4096]" }
    """,
    )
    project.write(
        "big.py",
        """
        from torch import nn

        class Big(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4096, 65536)  # 1 GiB of weights on a real device

            def forward(self, x):
                return self.fc(x)
    """,
    )
    report = project.module("Big")
    assert report.status is Status.EXPORTED, report.findings
    assert report.summary.signature == "(x: f32[batch, 4096]) -> f32[batch, 65536]"
