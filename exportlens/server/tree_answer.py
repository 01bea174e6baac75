"""A submodule tree as a client reads it: plain JSON, each failure with the file, the
range (in the negotiated position encoding) and the message a client opens at a click."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..exporter.core.report import Finding, to_dict
from ..exporter.core.sources import read_text
from ..exporter.core.tree import SubmoduleTree
from .remap import range_now
from .snapshots import WorkspaceSnapshot


def tree_answer(tree: SubmoduleTree, root: Path, docs: WorkspaceSnapshot, read: Mapping[Path, str]) -> dict[str, Any]:
    """``tree`` as ``exportlens tree --format json`` writes it, each node's ``finding`` given
    as a ``problem``: ``{code, message, uri, range}``. ``read``: the texts the job was handed
    in place of the disk's; a range is in the text now, or null where the user has edited
    its lines since the job read them."""
    nodes = []
    for node in tree.nodes:
        plain = {k: v for k, v in to_dict(node).items() if k != "finding"}
        nodes.append(plain | {"problem": _problem(node.finding, root, docs, read) if node.finding else None})
    return {
        "target": tree.target,
        "nodes": nodes,
        "to_fix": [n.path for n in tree.to_fix()],
        "findings": [_problem(f, root, docs, read) for f in tree.findings],
        "carried": list(tree.carried),
        "stopped": tree.stopped,
        "seconds": tree.seconds,
    }


def _problem(finding: Finding, root: Path, docs: WorkspaceSnapshot, read: Mapping[Path, str]) -> dict[str, Any]:
    path = root / finding.path
    where = range_now(finding, read[path] if path in read else read_text(path), docs.get(path))
    return {
        "code": finding.code,
        "message": finding.message,
        "uri": path.as_uri(),
        "range": None if where is None else _plain(where),
    }


def _plain(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }
