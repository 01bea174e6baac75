"""A value read from a tensor, asked for as a Python number (libcst, no torch).

``int(...)`` and ``float(...)`` ask what export traces for a concrete number, which it
cannot give where the value is read from a tensor (``capacity = int((chosen == e).sum().item()
* self.capacity_factor)``). ``torch.sym_int(...)`` and ``torch.sym_float(...)`` give the same
number when the model runs and keep it symbolic while exporting; a tensor argument is read
with ``.item()`` first, as ``int()`` itself reads it (``int(lengths.max())`` is
``torch.sym_int(lengths.max().item())``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from .at_line import replaced, visit_parsed
from .python_edits import importing_torch

SYMBOLIC = {"int": "torch.sym_int", "float": "torch.sym_float"}
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)  # ``x.item()`` needs no parentheses


@dataclass(frozen=True)
class Conversion:
    """``int(...)`` or ``float(...)`` of one argument, on a line, as written."""

    call: str  # ``int((chosen == e).sum().item() * self.capacity_factor)``
    builtin: str  # "int" | "float"
    argument: str  # ``(chosen == e).sum().item() * self.capacity_factor``
    target: str | None  # the one name the statement assigns (``capacity``), where it does

    @property
    def symbolic(self) -> str:
        return SYMBOLIC[self.builtin]


class _Calls(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.calls: list[cst.Call] = []
        self.targets: dict[cst.Call, str] = {}  # a conversion a statement assigns, as it is, to one name

    def visit_Call(self, node: cst.Call) -> None:
        if self.get_metadata(PositionProvider, node).start.line == self.line and _converts(node):
            self.calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Name) and isinstance(node.value, cst.Call):
            self.targets[node.value] = target.value


def _converts(node: cst.Call) -> bool:
    func, args = node.func, node.args
    return (
        isinstance(func, cst.Name)
        and func.value in SYMBOLIC
        and len(args) == 1
        and args[0].keyword is None
        and not args[0].star
    )


def _called(conversion: cst.Call) -> str:
    """``int`` or ``float``: what a conversion (``_converts``) calls."""
    assert isinstance(conversion.func, cst.Name)
    return conversion.func.value


def _found(text: str, line: int, values: Sequence[str]) -> tuple[cst.Module, cst.Call, _Calls] | None:
    """The one conversion on ``line``: where several, the one whose argument reads ``values``."""
    calls = _Calls(line)
    module = visit_parsed(text, calls)
    if module is None:
        return None
    if len(calls.calls) > 1:
        calls.calls = [c for c in calls.calls if any(v in module.code_for_node(c.args[0].value) for v in values)]
    return (module, calls.calls[0], calls) if len(calls.calls) == 1 else None


def conversion(text: str, line: int, values: Sequence[str] = ()) -> Conversion | None:
    """The ``int(...)``/``float(...)`` on ``line`` that asks for a value (where the line has
    several, the one that reads one of ``values``, the expressions torch's symbols stand for)."""
    found = _found(text, line, values)
    if found is None:
        return None
    module, call, calls = found
    code = module.code_for_node
    return Conversion(code(call), _called(call), code(call.args[0].value), calls.targets.get(call))


def symbolic(text: str, line: int, values: Sequence[str] = (), tensor: bool = False) -> str | None:
    """``text`` with that conversion written ``torch.sym_int(...)`` (``torch.sym_float(...)``),
    its argument read with ``.item()`` where it is a tensor; None where there is none."""
    found = _found(text, line, values)
    if found is None:
        return None
    module, call, _ = found
    argument = call.args[0].value
    if tensor:
        inner = (
            argument
            if isinstance(argument, _ATOMS)
            else argument.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        )
        argument = cst.Call(cst.Attribute(inner, cst.Name("item")))
    new = call.with_changes(
        func=cst.parse_expression(SYMBOLIC[_called(call)]), args=[call.args[0].with_changes(value=argument)]
    )
    return importing_torch(replaced(module, call, new).code)
