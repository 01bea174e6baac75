"""An int that forward takes, kept a variable of the program: the spec's ``"int[pos]"`` (no torch).

torch.export bakes a Python int input into the program as the example's number, and the
program refuses every other value (``Guard failed: start_pos == 7``). Declared as a dim's
values (``start_pos = "int[start_pos]"``), it stays a variable over the dim's range.
"""

from __future__ import annotations

from typing import Any

import tomlkit

from .spec_tables import edit_spec, tidied


def declare_dynamic(text: str, target: str, name: str, example: int) -> str:
    """pyproject.toml with input ``name`` of ``target`` written ``"int[name]"``, and the dim
    ``name`` declared with the value it had as its example (so the check traces the same),
    where that is not 0 or 1."""

    def change(table: Any) -> None:
        table["inputs"][name] = f"int[{name}]"
        if "dims" not in table:
            table["dims"] = tomlkit.inline_table()
        dim = tomlkit.inline_table()
        if example >= 2:  # (torch specializes 0 and 1: the check picks another example for those)
            dim["example"] = example
        table["dims"][name] = dim

    return tidied(text, edit_spec(text, target, change, inherit=("inputs", "dims")))
