"""AOTInductor, past the export (docs/targets.md): a kernel Inductor cannot generate, a
compiled package that answers otherwise than eager, and one that accepts a size outside the
declared range. Real exports, real C++ builds, real runs of the package (about 30 s each)."""

from __future__ import annotations

import pytest
from conftest import line_of, only
from test_lowering import ACCEPTS, checked, differs, one, spec
from test_lowering_apart import HALF

from exportlens.exporter.core.report import Severity, Status

POOL_JOBS = 1  # (the pool fixture, conftest.py) lowering is heavy: one at a time

IDS = """
import torch
from torch import nn


class Ids(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("ids", torch.arange(4).to(torch.uint32))  # ids kept as unsigned 32-bit

    def forward(self, x):
        offsets = self.ids.to(torch.float32)
        return x + offsets
"""


@pytest.mark.slow
def test_a_kernel_inductor_cannot_generate_is_a_finding_on_the_line_fused_into_it(project, pool):
    """Export keeps the unsigned buffer; Inductor's C++ code generation has no type promotion
    for uint32, and raises while generating the kernel the conversion and the add fuse into.
    The finding is on the first of the user's lines in that kernel, not inside torch."""
    project.write("net.py", IDS)
    project.write("pyproject.toml", spec("Ids", '["aoti"]'))
    report = checked(project.root, pool, "Ids")
    f = only(report.findings, "EL602")
    assert (f.path, f.line) == ("net.py", line_of(project, "net.py", "offsets = self.ids"))
    assert f.message == (
        "lowering for AOTInductor failed on `offsets = self.ids.to(torch.float32)` (at `prims::convert_element_type`):"
        " RuntimeError: Promotion for uint16, uint32, uint64 types is not supported, attempted to promote Bool and"
        " UInt32"
    )
    assert report.status is Status.EXPORTED  # the export's own verdict stands
    assert report.lowerings[0].status == "failed"


@pytest.mark.slow
def test_an_aoti_package_that_answers_otherwise_than_eager_names_the_sizes_and_the_error(project, pool):
    """Inductor computes the fused float16 arithmetic in float32 and rounds once, at the end, so
    `(big + 1) - big` is 1 where eager's float16, rounding after each step, gives 0 or 2."""
    message, _ = differs(project, pool, HALF, "Cancel", '["aoti"]', "f16[batch, 4]")
    assert message == (
        "the AOTInductor package answers otherwise than eager at the example inputs, batch = 2 and batch = 64:"
        " its outputs differ by up to 1"
    )


@pytest.mark.slow
def test_an_aoti_package_accepts_a_size_below_min_where_eager_answers_otherwise(project, pool):
    """The package checks no input size: at batch = 1 it runs the branch compiled for batch >= 2."""
    report = one(project, pool, "OneSample", '["aoti"]')
    f = only(report.findings, "EL604")
    assert f.message == ACCEPTS.format(name="the AOTInductor package")
    assert (f.path, f.line, f.severity) == ("pyproject.toml", 3, Severity.WARNING)  # the dim's spec
    assert report.lowerings[0].status == "compiled"  # inside the range it serves
