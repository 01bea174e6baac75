"""The server keys every module by a ``Target`` (``ModuleKey``), never by a string to take
apart again, and says why an export runs with a ``Why``, never with a word to compare."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import exportlens.server as server

SERVER = Path(server.__file__).parent
REASONED = {"file_changed": 1, "export": 2}  # the methods given a reason, and its argument's place


@functools.cache
def _trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(SERVER)): ast.parse(p.read_text()) for p in sorted(SERVER.rglob("*.py"))}


def keyed_by_strings(tree: ast.Module) -> list[int]:
    """Lines of annotations that hold ``tuple[Path, str, ...]``: a module keyed by its target's text."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "tuple"
        and isinstance(node.slice, ast.Tuple)
        and [ast.unparse(e) for e in node.slice.elts[:2]] == ["Path", "str"]
    ]


def reasons_as_words(tree: ast.Module) -> list[int]:
    """Lines that hand an export's reason over as a string literal."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in REASONED
        and len(node.args) > REASONED[node.func.attr]
        and isinstance(node.args[REASONED[node.func.attr]], ast.Constant)
        and isinstance(node.args[REASONED[node.func.attr]].value, str)
    ]


def test_no_server_map_is_keyed_by_a_targets_text():
    found = {name: lines for name, tree in _trees().items() if (lines := keyed_by_strings(tree))}
    assert found == {}


def test_no_export_is_given_its_reason_as_a_word():
    found = {name: lines for name, tree in _trees().items() if (lines := reasons_as_words(tree))}
    assert found == {}


def test_the_checks_find_what_they_look_for():
    """Each check fails on the shapes the server had before ``ModuleKey`` and ``Why``."""
    before = ast.parse(
        "results: dict[tuple[Path, str], Result] = {}\n"
        "compiling: dict[tuple[Path, str, str], bool] = {}\n"
        'exports.file_changed(path, "save")\n'
        'await exports.export(root, [target], "command", artifacts=None)\n'
    )
    assert keyed_by_strings(before) == [1, 2]
    assert reasons_as_words(before) == [3, 4]
