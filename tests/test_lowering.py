"""Lowering for deployment targets (docs/targets.md): real exports in real workers, then real
ONNX / AOTInductor / ExecuTorch lowering of the program and real runs of what it gives."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import line_of, only

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import ModuleReport, Severity, Status
from exportlens.exporter.spec.plan import make_plan

NET = """
import torch
from torch import nn


class Zeta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = self.fc(x)
        return torch.special.zeta(h, h + 2.0)  # no ONNX function for it


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


class OneSample(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = self.fc(x)
        if h.shape[0] == 1:  # one sample: no batch axis (never taken inside the declared range)
            return h[0]
        return h


class Squeeze(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return self.fc(x).squeeze(0)  # a no-op where batch is not 1; ONNX's Squeeze refuses it there
"""


POOL_JOBS = 1  # (the pool fixture, conftest.py) lowering is heavy: one at a time


def spec(cls: str, targets: str = '["onnx"]', inputs: str = "f32[batch, 4]") -> str:
    return (
        f'[tool.exportlens.modules."net.py:{cls}"]\ninputs = {{ x = "{inputs}" }}\n'
        f"dims = {{ batch = {{ min = 2, max = 64, example = 3 }} }}\ntargets = {targets}\n"
    )


def checked(root: Path, pool, target: str) -> ModuleReport:
    """What ``exportlens check`` reports of one module: its export's verdict, then its lowering."""
    from exportlens.exporter.workers.batch import export_in_workers

    report = export_in_workers(make_plan([root]), pool, Options(), prove_fixes=False)
    return next(m for m in report.modules if m.target == f"net.py:{target}")


def one(project, pool, cls: str, targets: str = '["onnx"]') -> ModuleReport:
    project.write("net.py", NET)
    project.write("pyproject.toml", spec(cls, targets))
    return checked(project.root, pool, cls)


def differs(project, pool, text: str, cls: str, targets: str, inputs: str) -> tuple[str, float | None]:
    """The EL603 a module's lowering gets where it answers otherwise than eager, on the module's
    table (the example inputs differ too), its lowering failed: the message and the largest error."""
    project.write("net.py", text)
    project.write("pyproject.toml", spec(cls, targets, inputs))
    report = checked(project.root, pool, cls)
    f = only(report.findings, "EL603")
    assert (f.path, f.line, f.severity) == ("pyproject.toml", 1, Severity.ERROR)
    assert report.lowerings[0].status == "failed"
    return f.message, report.lowerings[0].max_error


@pytest.fixture
def onnx():
    pytest.importorskip("onnxscript")
    pytest.importorskip("onnxruntime")


@pytest.mark.slow
def test_an_op_without_an_onnx_translation_is_a_finding_on_its_line(project, pool, onnx):
    report = one(project, pool, "Zeta")
    assert report.status is Status.EXPORTED  # the export's own verdict stands
    f = only(report.findings, "EL601")
    assert (f.path, f.line) == ("net.py", line_of(project, "net.py", "special.zeta"))
    assert f.message.startswith("`return torch.special.zeta(h, h + 2.0)` has no ONNX translation:"), f.message
    assert "prims::zeta" in f.message and not re.search(r"\b[su]\d+\b|%", f.message)
    (lowering,) = report.lowerings
    assert (lowering.target, lowering.status) == ("onnx", "failed")


@pytest.mark.slow
def test_a_module_that_lowers_is_compiled_with_its_time_size_and_error(project, pool, onnx):
    report = one(project, pool, "Mlp")
    assert not report.findings
    (lowering,) = report.lowerings
    assert lowering.status == "compiled" and lowering.seconds > 0 and lowering.size > 1000
    assert lowering.max_error is not None and lowering.max_error < 1e-4
    assert lowering.sizes == ("the example inputs", "batch = 2", "batch = 64")
    assert re.fullmatch(r"compiled for onnx in \d+\.\d s, \d+\.\d KB, max error \S+", str(lowering)), str(lowering)


@pytest.mark.slow  # an ONNX export and runs of it at several sizes (5 s); the quick loop keeps a lighter one
def test_a_size_the_onnx_model_refuses_where_eager_runs_is_a_finding(project, pool, onnx):
    report = one(project, pool, "Squeeze")
    f = only(report.findings, "EL604")
    assert (f.path, f.line) == ("net.py", line_of(project, "net.py", "squeeze(0)"))  # the ONNX node's stack
    assert f.message == (
        "`return self.fc(x).squeeze(0)`: the ONNX model (onnxruntime) refuses the example inputs, where eager runs:"
        " onnxruntime's Squeeze fails: Dimension of input 0 must be 1 instead of 3. shape={3,8}"
    )
    assert report.lowerings[0].status == "failed"
    assert not f.fixes  # it refuses the example inputs: no narrower range serves


ACCEPTS = (
    "{name} accepts batch = 1, outside the declared range (`batch` is declared as [2, 64]), and answers otherwise"
    " than eager (output 0 has shape [1, 8], eager's [8]): its runtime does not check the range, so whatever serves"
    " it must"
)


def test_a_size_below_min_that_onnx_accepts_and_eager_answers_otherwise_is_a_warning(project, pool, onnx):
    report = one(project, pool, "OneSample")
    f = only(report.findings, "EL604")
    assert (f.path, f.line, f.severity) == ("pyproject.toml", 3, Severity.WARNING)  # the dim's spec
    assert f.message == ACCEPTS.format(name="the ONNX model (onnxruntime)")
    assert report.lowerings[0].status == "compiled"  # inside the range it serves


@pytest.mark.slow
def test_a_target_whose_packages_are_missing_says_what_to_install(project, pool, onnx, monkeypatch):
    """onnxruntime hidden from the interpreter that runs exports (as where it is not installed)."""
    hide = project.root / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "from importlib.machinery import PathFinder\n\nfound = PathFinder.find_spec\n\n\n"
        "def find_spec(name, path=None, target=None):\n"
        "    return None if name.split('.')[0] == 'onnxruntime' else found(name, path, target)\n\n\n"
        "PathFinder.find_spec = find_spec\n"
    )
    from exportlens.exporter.workers.pool import Pool

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hide), os.environ.get("PYTHONPATH", "")]))
    with Pool(jobs=1, persist=False) as hidden:
        report = one(project, hidden, "Mlp", '["onnx"]')
    f = only(report.findings, "EL605")
    assert f.message == (
        "the `onnx` target cannot be checked: onnxruntime is not installed: pip install 'exportlens[onnx]'"
    )
    assert (f.path, f.line, f.severity) == ("pyproject.toml", 4, Severity.ERROR)  # the `targets` key
    assert report.lowerings[0].status == "unavailable"


@pytest.mark.slow
def test_aoti_compiles_and_agrees_with_eager_at_the_declared_bounds(project, pool):
    report = one(project, pool, "Mlp", '["aoti"]')
    assert not report.findings
    (lowering,) = report.lowerings
    assert lowering.status == "compiled" and lowering.seconds > 0 and lowering.size > 1000 and lowering.max_error < 1e-4
    assert lowering.sizes == ("the example inputs", "batch = 2", "batch = 64")
    assert re.fullmatch(r"compiled for aoti in \d+\.\d s, \d+\.\d MB, max error \S+", str(lowering)), str(lowering)


@pytest.mark.slow
def test_executorch_lowers_and_agrees_with_eager_at_the_declared_bounds(project, pool):
    pytest.importorskip("executorch")
    report = one(project, pool, "Mlp", '["executorch"]')
    assert not report.findings
    (lowering,) = report.lowerings
    assert lowering.status == "compiled" and lowering.seconds > 0 and lowering.size > 1000 and lowering.max_error < 1e-4
    assert lowering.sizes == ("the example inputs", "batch = 2", "batch = 64")
    said = str(lowering)
    assert re.fullmatch(r"compiled for executorch in \d+\.\d s, \d+\.\d KB, max error \S+", said), said


@pytest.mark.slow
def test_executorch_lowering_fails_on_the_line_of_an_op_outside_core_aten(project, pool):
    pytest.importorskip("executorch")
    report = one(project, pool, "Zeta", '["executorch"]')
    f = only(report.findings, "EL602")
    assert (f.path, f.line) == ("net.py", line_of(project, "net.py", "special.zeta"))
    assert f.message == (
        "`return torch.special.zeta(h, h + 2.0)` calls `aten::special_zeta`, which is not in Core ATen, the operation"
        " set ExecuTorch lowers: write it with Core ATen operations"
    )
    assert "torch._ops" not in f.message and "not in Core ATen opset" in f.detail  # the verifier's own text


@pytest.mark.slow
def test_executorch_accepts_a_size_below_min_where_eager_answers_otherwise(project, pool):
    pytest.importorskip("executorch")
    report = one(project, pool, "OneSample", '["executorch"]')
    f = only(report.findings, "EL604")
    assert f.message == ACCEPTS.format(name="the ExecuTorch program (XNNPACK)")
    assert report.lowerings[0].status == "compiled" and report.lowerings[0].size > 1000


HALF_LINEAR = """
import torch
from torch import nn


class HalfLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4096, 8).half()

    def forward(self, x):
        return self.fc(x)
"""


@pytest.mark.slow
def test_an_executorch_program_that_answers_otherwise_than_eager_names_the_sizes_and_the_error(project, pool):
    """A half-precision Linear over 4096 features: eager on CPU sums the products in float32
    and rounds once; XNNPACK's float16 kernel sums them in float16."""
    pytest.importorskip("executorch")
    project.write("net.py", HALF_LINEAR)
    project.write("pyproject.toml", spec("HalfLinear", '["executorch"]', "f16[batch, 4096]"))
    (lowering,) = checked(project.root, pool, "HalfLinear").lowerings
    if lowering.status == "compiled" and lowering.max_error is not None and lowering.max_error < 0.01:
        # XNNPACK picks its float16 kernel by what the processor offers: some accumulate in float32
        pytest.skip(f"XNNPACK on this processor sums float16 like eager (max error {lowering.max_error:g})")
    message, error = differs(project, pool, HALF_LINEAR, "HalfLinear", '["executorch"]', "f16[batch, 4096]")
    assert re.fullmatch(
        r"the ExecuTorch program \(XNNPACK\) answers otherwise than eager at the example inputs, batch = 2 and"
        r" batch = 64: its outputs differ by up to 0\.\d+",
        message,
    ), message
    assert error is not None and error > 0.01


def test_lowerings_survive_the_json_a_shard_writes_and_merge_reads():
    from exportlens.exporter.core.lowering import Lowering
    from exportlens.exporter.core.report import Report, from_dict, to_dict

    lowering = Lowering("onnx", "compiled", 3.61, 2458, 1.2e-7, ("the example inputs", "batch = 64"))
    report = Report((ModuleReport("net.py:Mlp", Status.EXPORTED, lowerings=(lowering,)),))
    data = to_dict(report)
    assert data["modules"][0]["lowerings"] == [
        {"target": "onnx", "status": "compiled", "seconds": 3.61, "size": 2458, "max_error": 1.2e-7,
         "sizes": ["the example inputs", "batch = 64"]}
    ]  # fmt: skip
    assert from_dict(Report, data) == report
    assert str(lowering) == "compiled for onnx in 3.6 s, 2.4 KB, max error 1e-07"


def test_an_export_job_that_reports_lowerings_is_refused():
    from exportlens.exporter.core.lowering import Lowering
    from exportlens.exporter.core.options import Task
    from exportlens.exporter.workers.lowering import lowering_job
    from exportlens.exporter.workers.protocol import Job
    from exportlens.exporter.workers.validate import Refused, validated_report

    job = Job("/nonexistent", "net.py:Mlp", 1)
    forged = ModuleReport("net.py:Mlp", Status.EXPORTED, lowerings=(Lowering("aoti", "compiled"),))
    with pytest.raises(Refused, match="lowerings the job did not ask for"):
        validated_report(job, forged)
    proof = replace(job, task=Task.PROVE)  # a proof whose spec names no targets lowers nothing
    with pytest.raises(Refused, match="lowerings the job did not ask for"):
        validated_report(proof, forged)
    lowering = lowering_job(job, ("aoti",))
    assert lowering.task is Task.LOWER
    assert validated_report(lowering, forged).lowerings == forged.lowerings


@pytest.mark.slow
def test_check_prints_each_targets_result_and_its_json_carries_them(project, onnx):
    import json
    import subprocess
    import sys

    project.write("net.py", NET)
    project.write("pyproject.toml", spec("Mlp"))
    run = [sys.executable, "-m", "exportlens.cli", "check", "--no-cache", "net.py"]
    text = subprocess.run(run, cwd=project.root, capture_output=True, text=True, check=True).stdout
    assert re.search(r"^net\.py:Mlp: compiled for onnx in \d+\.\d s, \d+\.\d KB, max error \S+$", text, re.M), text
    done = subprocess.run([*run, "--format", "json"], cwd=project.root, capture_output=True, text=True, check=True)
    (mlp,) = [m for m in json.loads(done.stdout)["modules"] if m["target"] == "net.py:Mlp"]
    (lowering,) = mlp["lowerings"]
    assert (lowering["target"], lowering["status"]) == ("onnx", "compiled") and lowering["max_error"] < 1e-4


@pytest.mark.slow
def test_a_size_executorch_refuses_at_one_end_offers_the_range_it_serves(project, pool):
    """ExecuTorch's squeeze is a no-op at every size but batch = 1, where eager drops the axis: it
    refuses the declared min and serves the next size up, the example and the max."""
    pytest.importorskip("executorch")
    project.write("net.py", NET)
    project.write("pyproject.toml", spec("Squeeze", '["executorch"]').replace("min = 2", "min = 1"))
    report = checked(project.root, pool, "Squeeze")
    f = only(report.findings, "EL604")
    assert (f.path, f.line) == ("pyproject.toml", 3)  # the dim's spec: its runtime names no node
    assert f.message.startswith(
        "the ExecuTorch program (XNNPACK) refuses batch = 1 (`batch` is declared as [1, 64]), where eager runs:"
    ), f.message
    (fix,) = f.fixes
    assert (fix.title, fix.preferred) == ("Set `batch` to Dim('batch', min=2)", True)
    project.apply(fix)
    assert project.read("pyproject.toml") == spec("Squeeze", '["executorch"]')  # min = 2, as the user would write it
    assert report.lowerings[0].sizes == ("the example inputs", "batch = 64")  # the size next to min only narrows
