"""Lowering in the editor (docs/targets.md#in-the-editor): after a module exports it is lowered
for its spec's targets, and what that gave is a CodeLens, a hover line and diagnostics; the
"Compile for …" lens lowers it now, with progress that cancels it. Real ONNX lowering, real workers."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

DEPLOY = "models/deploy.py"
NET = """\
import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Zeta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = self.fc(x)
        return torch.special.zeta(h, h + 2.0)  # no ONNX function for it
"""


# exports, then sleeps ten minutes where a lowering runs it eagerly one above its batch's max
# (to see whether the artifact wrongly accepts that size): a lowering that is running when the test stops it
SLEEPY = """

import time


class Sleepy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        if not torch.compiler.is_exporting() and x.shape[0] == 65:
            time.sleep(600)
        return self.fc(x)
"""


def spec(cls: str) -> str:
    return (
        f'\n[tool.exportlens.modules."{DEPLOY}:{cls}"]\ninputs = {{ x = "f32[batch, 4]" }}\n'
        'dims = { batch = { min = 2, max = 64, example = 3 } }\ntargets = ["onnx"]\n'
    )


@pytest.fixture
def deploy(workspace):
    """The examples, with two modules whose specs name the ONNX target (before the editor opens them)."""
    (workspace / DEPLOY).write_text(NET)
    with (workspace / "pyproject.toml").open("a") as f:
        f.write(spec("Mlp") + spec("Zeta"))
    return workspace


@pytest.fixture
def sleepy(deploy):
    (deploy / DEPLOY).write_text(NET + SLEEPY)
    with (deploy / "pyproject.toml").open("a") as f:
        f.write(spec("Sleepy"))
    return deploy


async def lens_titles(editor) -> list[str]:
    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(editor.uri(DEPLOY)))
    )
    return [lens.command.title for lens in lenses]


async def hover_of(editor, cls: str) -> str:
    line = editor.line_of(DEPLOY, f"class {cls}")
    result = await editor.client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(editor.uri(DEPLOY)), types.Position(line, 8))
    )
    return result.contents.value


async def job_pid(editor, cls: str, running: bool = True, timeout: float = 60) -> int | None:
    """The pid of ``cls``'s job once it runs (``running``), or None once none runs."""
    for _ in range(int(timeout * 10)):
        pid = next((j.pid for j in (await editor.status())["jobs"] if j.target == f"{DEPLOY}:{cls}" and j.pid), None)
        if bool(pid) == running:
            return pid
        await asyncio.sleep(0.1)
    raise AssertionError(f"{cls}'s job " + ("never started" if running else "still runs"))


def compile_now(editor, cls: str) -> asyncio.Future:
    """Click the "Compile for onnx" lens of ``cls``, as VS Code runs it (the request is sent at once)."""
    args = [{"uri": editor.uri(DEPLOY), "target": f"{DEPLOY}:{cls}", "to": "onnx"}]
    params = types.ExecuteCommandParams("exportlens.lowerModule", args)
    return asyncio.ensure_future(editor.client.workspace_execute_command_async(params))


@pytest.mark.slow
async def test_a_saved_module_is_lowered_and_its_lens_hover_and_diagnostics_say_so(deploy, editor):
    editor.open(DEPLOY)
    editor.save(DEPLOY)
    await editor.logged(f"{DEPLOY}:Mlp: onnx: compiled in", timeout=180)
    titles = await lens_titles(editor)
    assert any(t.startswith("onnx: compiled in ") and " KB" in t and "max error" in t for t in titles), titles
    text = await hover_of(editor, "Mlp")
    assert "`onnx`: compiled in " in text and " vs eager" in text
    zeta = editor.line_of(DEPLOY, "torch.special.zeta")
    found = await editor.diagnostics(DEPLOY, lambda ds: any(d.code == "EL601" for d in ds), timeout=180)
    (el601,) = [d for d in found if d.code == "EL601"]
    assert el601.range.start.line == zeta and "zeta" in el601.message
    assert "onnx: failed (EL601)" in await lens_titles(editor)


@pytest.mark.slow
async def test_the_compile_lens_lowers_now_with_progress_and_its_cancel_stops_it(sleepy, editor):
    await editor.configure(lowerOnSave=False)
    editor.open(DEPLOY)
    await editor.logged(f"{DEPLOY}:Zeta: exported")
    await editor.logged(f"{DEPLOY}:Mlp: exported")
    await editor.logged(f"{DEPLOY}:Sleepy: exported")
    assert (await lens_titles(editor)).count("▶ Compile for onnx") == 3  # nothing lowered on its own
    done = await asyncio.wait_for(compile_now(editor, "Mlp"), 180)
    assert done["status"] == "compiled" and done["seconds"] > 0 and done["size"] > 0
    assert any(t.startswith("onnx: compiled in ") for t in await lens_titles(editor))

    before = len(editor.client.log_messages)
    request = compile_now(editor, "Sleepy")
    await editor.logged(f"lowering {DEPLOY}:Sleepy for onnx (command)", after=before)
    await job_pid(editor, "Sleepy")  # its process started (it waits for a worker first)
    reports = editor.client.progress_reports
    (token,) = [
        t for t, r in reports.items() if r and r[0].kind == "begin" and r[0].message == "compiling Sleepy for onnx"
    ]
    assert reports[token][0].cancellable
    editor.client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    assert await asyncio.wait_for(request, 30) is None  # the command ends without a result
    await job_pid(editor, "Sleepy", running=False)  # its process is killed
    await asyncio.sleep(1)
    assert not [d for d in editor.client.diagnostics.get(editor.uri(DEPLOY), []) if d.code.startswith("EL6")]
    assert "▶ Compile for onnx" in await lens_titles(editor)


@pytest.mark.slow
async def test_a_new_save_stops_the_running_lowering_and_lowers_the_new_text(sleepy, editor):
    editor.open(DEPLOY)
    await editor.logged(f"lowering {DEPLOY}:Sleepy for onnx", timeout=180)
    pid = await job_pid(editor, "Sleepy")
    before = len(editor.client.log_messages)
    editor.save(DEPLOY, editor.texts[editor.uri(DEPLOY)] + "\n# saved again\n")
    await editor.logged(f"{DEPLOY}:Sleepy: its lowering for onnx stopped", after=before)
    await editor.logged(f"lowering {DEPLOY}:Sleepy for onnx", after=before)  # after its new export landed
    assert await job_pid(editor, "Sleepy") != pid


@pytest.mark.slow
async def test_with_one_worker_the_running_lowering_makes_way_for_exports(sleepy, editor):
    await editor.configure(jobs=1)
    editor.open(DEPLOY)
    await editor.logged(f"lowering {DEPLOY}:Sleepy for onnx", timeout=180)
    await job_pid(editor, "Sleepy")
    before = len(editor.client.log_messages)
    editor.open("models/encoder.py")  # exported on open: it does not wait ten minutes for the worker
    await editor.logged(f"{DEPLOY}:Sleepy: its lowering for onnx makes way for exports", after=before)
    await editor.logged("models/encoder.py:TinyEncoder: exported", after=before)
    await editor.logged(f"lowering {DEPLOY}:Sleepy for onnx", after=before)  # and then runs again
