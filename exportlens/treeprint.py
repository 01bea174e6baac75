"""What ``exportlens tree`` prints for a person: the submodules to fix first, each failure
on its line, then the whole tree with a verdict per node."""

from __future__ import annotations

import json
from pathlib import Path

from .exporter.core.escapes import terminal_line
from .exporter.core.report import to_dict
from .exporter.core.tree import SubmoduleTree, TreeNode, Verdict
from .printed import located

MARKS = {Verdict.EXPORTED: "ok  ", Verdict.FAILS: "FAIL", Verdict.NOT_CALLED: "--  "}


def tree_text(root: Path, tree: SubmoduleTree) -> str:
    """Each line escaped for a terminal: a node's path and class, its inputs and why the
    run stopped are the module's own words (``add_module`` takes any name without a dot)."""
    return "\n".join(map(terminal_line, _lines(root, tree)))


def _lines(root: Path, tree: SubmoduleTree) -> list[str]:
    lines = [located(root, f) for f in tree.findings]
    if not tree.nodes:
        return lines
    fix = tree.to_fix()
    if fix:
        many = len(fix) > 1
        lines.append(f"smallest failing submodule{'s' if many else ''} (fix {'these' if many else 'this'} first):")
        lines += [f"  {_name(n)} ({n.cls}): {located(root, n.finding)}" for n in fix if n.finding]
        lines.append("")
    lines += [_row(n, [m for m in tree.nodes if m.holds(n)]) for n in tree.nodes]
    if tree.stopped:
        lines.append(f"the run that records each submodule's inputs stopped: {tree.stopped}")
    lines.append(_summary(tree))
    return lines


def _name(node: TreeNode) -> str:
    return node.path or "(the module)"


def _row(node: TreeNode, above: list[TreeNode]) -> str:
    """One node, indented under the nodes shown above it, named from its parent's path on
    (``blocks.0`` under ``encoder``: a ModuleList between them has no row of its own)."""
    parent = max(above, key=lambda n: n.depth).path if above else ""
    name = node.path.removeprefix(parent + "." if parent else "") if node.path else "(the module)"
    said = {Verdict.EXPORTED: "exports", Verdict.FAILS: "fails", Verdict.NOT_CALLED: "not called"}[node.verdict]
    if node.finding is not None:
        said += f": {node.finding.code} at {node.finding.path}:{node.finding.line}"
    if node.same_as:
        said += f" (as {node.same_as})"
    return " ".join(
        part for part in (MARKS[node.verdict], "  " * len(above) + name, node.cls, node.inputs, said) if part
    )


def _summary(tree: SubmoduleTree) -> str:
    """``31 submodules: 28 export, 2 fail, 1 not called; dims carried down: batch, seq; 12.3 s``."""
    counts = {v: sum(1 for n in tree.nodes if n.verdict is v) for v in Verdict}
    n = len(tree.nodes) - 1  # the module itself is not its own submodule
    dims = f"dims carried down: {', '.join(tree.carried)}" if tree.carried else "no dynamic dims carried down"
    return (
        f"{n} submodule{'s' if n != 1 else ''} and the module: {counts[Verdict.EXPORTED]} export,"
        f" {counts[Verdict.FAILS]} fail, {counts[Verdict.NOT_CALLED]} not called; {dims}; {tree.seconds:.1f} s"
    )


def tree_json(tree: SubmoduleTree) -> str:
    """The tree as the codec writes it, with ``to_fix``: the paths of the smallest failing submodules."""
    return json.dumps(to_dict(tree) | {"to_fix": [n.path for n in tree.to_fix()]}, ensure_ascii=False, indent=2)
