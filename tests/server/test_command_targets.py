"""A command names its module by target text (``path.py:Class[variant]``): taken apart once,
where it enters; a variant's target runs that variant, a target that names nothing is refused
with a message."""

from __future__ import annotations

from lsprotocol import types

TWICE = "models/twice.py"
TWICE_TEXT = """\
import torch
from torch import nn


class Twice(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1
"""
TWICE_SPEC = """
[tool.exportlens.modules."models/twice.py:Twice"]
inputs = { x = "f32[n, 3]" }

[[tool.exportlens.modules."models/twice.py:Twice".variants]]
name = "narrow"
dims = { n = { min = 2, max = 8 } }

[[tool.exportlens.modules."models/twice.py:Twice".variants]]
name = "wide"
dims = { n = { min = 2, max = 512 } }
"""


async def test_the_export_command_given_one_variant_exports_that_variant(editor):
    (editor.root / TWICE).write_text(TWICE_TEXT)
    spec = editor.root / "pyproject.toml"
    spec.write_text(spec.read_text() + TWICE_SPEC)
    editor.open(TWICE)
    args = [{"uri": editor.uri(TWICE), "target": f"{TWICE}:Twice[narrow]"}]
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams("exportlens.exportModule", args)
    )
    assert dict(result) == {"target": f"{TWICE}:Twice[narrow]", "status": "exported", "artifact": None, "findings": 0}
    commanded = [m.message for m in editor.client.log_messages[editor.log_start :] if "(command, job" in m.message]
    assert [m.split(" (")[0] for m in commanded] == [f"exportlens: exporting {TWICE}:Twice[narrow]"]


async def test_a_command_whose_target_names_no_file_is_refused_with_a_message(editor):
    shown = len(editor.client.messages)
    args = [{"uri": editor.uri("models/encoder.py"), "target": ""}]
    result = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams("exportlens.exportModule", args)
    )
    assert result is None
    said = [m.message for m in editor.client.messages[shown:]]
    assert said == ["exportlens: put the cursor inside an nn.Module class"]
