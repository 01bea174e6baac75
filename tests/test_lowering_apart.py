"""A lowering job keeps the sandbox's promise (docs/workers.md, "The sandbox"): the user's module
runs confined in full, metadata filter included, and only the lowering process, which imports
none of the user's code, may change files' modes, as AOTInductor must. Real workers, real
lowering; and EL603 on a module whose ONNX model answers otherwise than eager."""

from __future__ import annotations

import stat

import pytest
from conftest import only
from test_lowering import checked, differs, spec

from exportlens.exporter.workers.sandbox import available

POOL_JOBS = 1  # (the pool fixture, conftest.py) lowering is heavy: one at a time

confined = pytest.mark.skipif(
    "seccomp" not in available() or not available().startswith("landlock"), reason=f"no sandbox here: {available()}"
)

CHMOD = """
import os
from pathlib import Path

import torch
from torch import nn

VICTIMS = (Path(__file__).parent / "victim.py", Path({outside!r}))


def attempt():
    for victim in VICTIMS:
        try:
            os.chmod(victim, 0o777)
        except PermissionError:
            pass


attempt()  # on import


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        attempt()  # at each export and each eager run, the lowering job's included
        return torch.relu(self.fc(x))
"""


def chmodded(project, pool, target: str, tmp_path_factory) -> tuple[str, list[int]]:
    outside = tmp_path_factory.mktemp("home") / "id_ed25519"
    outside.write_text("PRIVATE KEY")
    victims = [project.write("victim.py", "# the user's work\n"), outside]
    for victim in victims:
        victim.chmod(0o600)
    project.write("net.py", CHMOD.format(outside=str(outside)))
    project.write("pyproject.toml", spec("Mlp", f'["{target}"]'))
    report = checked(project.root, pool, "Mlp")
    assert not report.findings, [str(f) for f in report.findings]
    return report.lowerings[0].status, [stat.S_IMODE(v.stat().st_mode) for v in victims]


@confined
@pytest.mark.slow
def test_a_lowering_job_s_module_cannot_change_a_file_s_mode(project, pool, tmp_path_factory):
    pytest.importorskip("onnxruntime")
    status, modes = chmodded(project, pool, "onnx", tmp_path_factory)
    assert status == "compiled"
    assert modes == [0o600, 0o600]  # inside the project and outside it


@confined
@pytest.mark.slow
def test_aoti_compiles_while_the_module_beside_it_cannot_change_a_file_s_mode(project, pool, tmp_path_factory):
    status, modes = chmodded(project, pool, "aoti", tmp_path_factory)
    assert status == "compiled"  # the compiler changes its outputs' modes, in the lowering process
    assert modes == [0o600, 0o600]


CUSTOM = """
import torch
from torch import nn


@torch.library.custom_op("exportlens_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return twice(self.fc(x))
"""


@pytest.mark.slow
@confined
def test_a_program_that_calls_an_op_the_user_s_code_registers_says_why_it_cannot_be_lowered(project, pool):
    pytest.importorskip("onnxruntime")
    project.write("net.py", CUSTOM)
    project.write("pyproject.toml", spec("Twice", '["onnx"]'))
    report = checked(project.root, pool, "Twice")
    f = only(report.findings, "EL602")
    assert (f.path, f.line) == ("net.py", 15)  # the class
    assert f.message == (
        "lowering for ONNX cannot load the program: it calls `exportlens_test::twice`, which your code registers,"
        " and the lowering runs apart from your code, which the sandbox keeps from changing files' modes as a"
        " compiler must; register the operation in an installed package, or set `sandbox = false` in this"
        " module's table to lower it beside your code"
    )
    assert report.lowerings[0].status == "failed"


HALF = """
import torch
from torch import nn


class Cancel(nn.Module):
    def forward(self, x):
        big = x * 4096
        return (big + 1) - big  # float16 rounds each step: 1 is lost beside 4096 * x
"""


@pytest.mark.slow  # an ONNX export and runs of it at several sizes (5 s); test_lowering.py keeps a lighter one quick
def test_an_onnx_model_that_answers_otherwise_than_eager_names_the_sizes_and_the_error(project, pool):
    """onnxruntime computes this float16 arithmetic in float32 (it has no float16 kernels on CPU
    for it and casts around them), so `(big + 1) - big` is 1 where eager's float16 gives 0 or 2."""
    pytest.importorskip("onnxruntime")
    message, _ = differs(project, pool, HALF, "Cancel", '["onnx"]', "f16[batch, 4]")
    assert message == (
        "the ONNX model (onnxruntime) answers otherwise than eager at the example inputs, batch = 2 and batch = 64:"
        " its outputs differ by up to 1"
    )


def test_the_sandbox_has_one_mode_for_user_code():
    import inspect

    from exportlens.exporter.workers.sandbox import confine

    assert list(inspect.signature(confine).parameters) == ["project", "writable"]
