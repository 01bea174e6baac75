"""jaxtyping annotations on forward as a spec, read statically (no torch, no jaxtyping import):
what the spec becomes, where each finding lands, and how it combines with a pyproject table."""

from __future__ import annotations

from conftest import Project, line_of

from exportlens.exporter.core.report import Edit
from exportlens.exporter.core.sources import Sources
from exportlens.exporter.edit.jaxtyping_edits import annotation_edits
from exportlens.exporter.edit.text_edits import apply_edits
from exportlens.exporter.spec.loading import SpecSource
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.spec.shapes import AUTO, Derived

ALIASES = """
import torch
import jaxtyping as jt
from jaxtyping import Float as F, Int64
from torch import Tensor, nn


class Net(nn.Module):
    def forward(
        self,
        x: F[Tensor, "batch seq 16"],
        ids: Int64[torch.Tensor, "batch seq"],
        mask: jt.Bool[Tensor, "batch _ #seq"],
        pos: jt.Float16[Tensor, "seq+1 rows=3"],
        scale: float = 1.0,
    ):
        return x
"""


def planned(project: Project, name: str):
    plan = make_plan([project.root])
    return next(m for m in plan.modules if m.module.name == name)


def shapes(spec) -> dict[str, str]:
    return {name: str(value.shape) for name, value in spec.inputs.items()}


def test_annotations_through_any_alias_are_the_inputs(project):
    project.write("models/net.py", ALIASES)
    p = planned(project, "Net")
    assert p.findings == ()
    assert p.spec.source is SpecSource.ANNOTATIONS
    assert shapes(p.spec) == {
        "x": "f32[batch, seq, 16]",
        "ids": "i64[batch, seq]",
        "mask": "bool[batch, ?, seq]",  # `_`: unchecked, torch decides; `#seq`: traced as seq
        "pos": "f16[seq+1, 3]",  # `rows=3` is jaxtyping's other way to write 3
    }
    assert p.spec.inputs["pos"].shape.sizes[0] == Derived("seq", 1, 1, "seq+1")
    assert p.spec.inputs["mask"].shape.sizes[1] == AUTO
    assert set(p.spec.dims) == {"batch", "seq"}
    assert (
        p.spec.describe()
        == f"models/net.py:{line_of(project, 'models/net.py', 'x: F[')} (forward's jaxtyping annotations)"
    )


def test_a_dim_is_placed_on_its_first_axis_in_the_annotations(project):
    project.write("models/net.py", ALIASES)
    spec = planned(project, "Net").spec
    line = project.read("models/net.py").splitlines()[spec.where("dims.seq").line - 1]
    where = spec.where("dims.seq").span
    assert line[where.column - 1 : where.end_column - 1] == "seq"
    assert line.strip().startswith("x: F[")
    annotation = spec.where("inputs.ids").span
    assert line_of(project, "models/net.py", "ids: Int64") == annotation.line
    ids_line = project.read("models/net.py").splitlines()[annotation.line - 1]
    assert ids_line[annotation.column - 1 : annotation.end_column - 1] == 'Int64[torch.Tensor, "batch seq"]'


def test_a_class_named_like_jaxtypings_is_not_an_annotation(project):
    project.write(
        "models/net.py",
        """
        from torch import Tensor, nn
        from .types import Float


        class Net(nn.Module):
            def forward(self, x: Float[Tensor, "batch 4"]):
                return x
        """,
    )
    p = planned(project, "Net")
    assert p.spec is None and p.findings == ()  # no spec: EL007, as for any unannotated module


UNSUPPORTED = """
from jaxtyping import Float, UInt16
from torch import Tensor, nn

SHAPE = "batch 4"


class Net(nn.Module):
    def forward(self, x: Float[Tensor, "batch *rest"], y: Float[Tensor, "... 4"], z: Float[Tensor, "n//2 4"],
                u: UInt16[Tensor, "batch"], v: Float[Tensor, SHAPE], mask):
        return x
"""


def test_what_cannot_be_built_is_a_finding_on_the_axis_that_says_it(project):
    project.write("models/net.py", UNSUPPORTED)
    p = planned(project, "Net")
    assert p.spec is None
    text = project.read("models/net.py").splitlines()
    got = {(f.code, text[f.line - 1][f.column - 1 : f.end_column - 1]): f.message for f in p.findings}
    first = line_of(project, "models/net.py", "def forward")
    assert {f.line for f in p.findings} == {first, first + 1}
    assert "`*rest` stands for any number of axes" in got["EL003", "*rest"]
    assert '[tool.exportlens.modules."models/net.py:Net"]' in got["EL003", "*rest"]
    assert "`...` stands for any number of axes" in got["EL003", "..."]
    assert "axis `n//2` is not a size exportlens reads" in got["EL003", "n//2"]
    assert "jaxtyping's `UInt16` has no dtype" in got["EL002", 'UInt16[Tensor, "batch"]']
    assert "is not a string literal" in got["EL003", "Float[Tensor, SHAPE]"]
    assert got["EL001", "forward"].startswith("forward's `mask` has no jaxtyping shape annotation and no default")


ANNOTATED = """
from jaxtyping import Float
from torch import Tensor, nn


class Net(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()

    def forward(self, x: Float[Tensor, "batch seq 16"]):
        return x
"""


def test_a_table_without_inputs_adds_init_and_dim_bounds_to_the_annotations(project):
    project.write("models/net.py", ANNOTATED)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."models/net.py:Net"]
        init = { hidden = 8 }
        dims = { seq = { max = 128 } }
        """,
    )
    spec = planned(project, "Net").spec
    assert spec.source is SpecSource.ANNOTATIONS
    assert spec.init == {"hidden": 8}
    assert shapes(spec) == {"x": "f32[batch, seq, 16]"}
    assert spec.dims["seq"].max == 128
    assert spec.where("dims.seq").path == "pyproject.toml"  # the bound is written there
    assert spec.where("dims.batch").path == "models/net.py"


def test_a_table_with_inputs_wins_over_the_annotations(project):
    project.write("models/net.py", ANNOTATED)
    project.write(
        "pyproject.toml",
        """
        [tool.exportlens.modules."models/net.py:Net"]
        init = { hidden = 8 }
        inputs = { x = "f32[b, 4, 16]" }
        """,
    )
    spec = planned(project, "Net").spec
    assert spec.source is SpecSource.PYPROJECT
    assert shapes(spec) == {"x": "f32[b, 4, 16]"}


def test_example_inputs_win_over_the_annotations(project):
    project.write(
        "models/net.py",
        ANNOTATED.replace(
            "    def forward",
            "    @staticmethod\n    def example_inputs():\n        return ()\n\n    def forward",
        ),
    )
    assert planned(project, "Net").spec.source is SpecSource.CODE


def fixed(project: Project, changes) -> dict[str, str]:
    spec = planned(project, "Net").spec
    edits: list[Edit] = list(annotation_edits(spec, changes, Sources(project.root)))
    return {
        path: apply_edits(project.read(path), [e for e in edits if e.path == path]) for path in {e.path for e in edits}
    }


def test_a_dim_made_static_or_substituted_is_rewritten_in_every_annotation(project):
    project.write(
        "models/net.py",
        """
        from jaxtyping import Float
        from torch import Tensor, nn


        class Net(nn.Module):
            def forward(self, x: Float[Tensor, "batch seq"], y: Float[Tensor, "batch #seq seq+1"]):
                return x
        """,
    )
    project.write("pyproject.toml", '[tool.exportlens.modules."models/net.py:Net"]\ndims = { seq = { max = 64 } }\n')
    new = fixed(project, [("seq", {}, "dx + 1")])
    assert 'x: Float[Tensor, "batch dx+1"], y: Float[Tensor, "batch #dx+1 dx+2"]' in new["models/net.py"]
    assert "seq" not in new["pyproject.toml"] and "dx = { max = 63 }" in new["pyproject.toml"]  # its range passes to dx
    assert 'Float[Tensor, "4 seq"]' in fixed(project, [("batch", {}, "4")])["models/net.py"]


def test_a_new_bound_goes_in_a_new_table_beside_the_annotations(project):
    project.write("models/net.py", ANNOTATED)
    project.write("pyproject.toml", '[project]\nname = "x"\n')
    new = fixed(project, [("seq", {"max": 128}, "")])
    assert set(new) == {"pyproject.toml"}
    assert new["pyproject.toml"].endswith('[tool.exportlens.modules."models/net.py:Net"]\ndims = {seq = {max = 128}}\n')
    project.write("pyproject.toml", new["pyproject.toml"] + "init = { hidden = 3 }\n")
    spec = planned(project, "Net").spec
    assert spec.source is SpecSource.ANNOTATIONS and spec.dims["seq"].max == 128
