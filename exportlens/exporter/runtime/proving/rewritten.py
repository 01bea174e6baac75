"""Does a branch-free rewrite keep eager's results? (torch side)

A branch-free form (remedies.py) is only a remedy where the side it drops added nothing:
``x + expert(x) * scores`` is not ``x`` when no token is routed, since the scores are not
zero. Before it is offered, the function it rewrites is compiled from the new text, put in
place of the running one on its class for a moment, and forward is run on each probe both
ways: any difference, and it is not offered. Where that cannot be done (a function that is
not a method of a class at the top of its file, one that closes over names), the owner's
proof still says it.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import Any

import libcst as cst
import torch
from libcst.metadata import PositionProvider

from ...core.report import Fix
from ...edit.at_line import visit_parsed
from ...edit.text_edits import apply_edits
from ..compat.internals import pytree
from ..inputs import Built, copied
from .agreement import differs as _differs


def keeps_results(model: torch.nn.Module, fix: Fix, root: str, text: str, inputs: list[Built]) -> bool | None:
    """Whether forward gives the same outputs on each of ``inputs`` with the fix's rewrite of
    one function of ``text`` (its file, as the export read it); None where it cannot be tried."""
    paths = {e.path for e in fix.edits}
    if len(paths) != 1:
        return None
    (path,) = paths
    found = _method(apply_edits(text, fix.edits), fix.edits[0].line)
    module = next((m for m in list(sys.modules.values()) if _file(m) == os.path.join(root, path)), None)
    if found is None or module is None:
        return None
    class_name, name, source = found
    owner = getattr(module, class_name, None)
    old = vars(owner).get(name) if isinstance(owner, type) else None
    if old is None or getattr(old, "__closure__", True) is not None:
        return None  # not a plain function of the class (super() makes a closure)
    namespace: dict[str, Any] = {}
    exec(
        compile(source, os.path.join(root, path), "exec"), dict(old.__globals__), namespace
    )  # the user's own code, rewritten
    new = namespace[name]
    for built in inputs:
        want = _run(model, built)
        setattr(owner, name, new)
        try:
            got = _run(model, built)
        finally:
            setattr(owner, name, old)
        if isinstance(want, list) and (not isinstance(got, list) or _differs(got, want)):
            return False
    return True


def _file(module: Any) -> str:
    return os.path.abspath(getattr(module, "__file__", None) or "")


def _run(model: torch.nn.Module, built: Built) -> list[Any] | None:
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            return pytree.tree_leaves(model(*copied(built.args), **copied(built.kwargs)))
    except Exception:
        return None


class _Methods(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        self.line = line
        self.classes: list[str] = []
        self.found: tuple[str, cst.FunctionDef] | None = None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        place = self.get_metadata(PositionProvider, node)
        if len(self.classes) == 1 and place.start.line <= self.line <= place.end.line:
            self.found = (self.classes[0], node)


def _method(text: str, line: int) -> tuple[str, str, str] | None:
    """The class (at the top of the file) and method holding ``line``, and the method's source."""
    visitor = _Methods(line)
    if visit_parsed(text, visitor) is None or visitor.found is None:
        return None
    class_name, node = visitor.found
    source = textwrap.dedent(cst.Module([node.with_changes(leading_lines=[])]).code)
    return class_name, node.name.value, source
