"""Where a lowering failed, in the user's code: the graph node the target raised on,
through the nodes it was decomposed from, to the line of the user's that made it (torch side)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.sources import Sources
from ..compat.lowering import failing_nodes, origins
from ..locate import Frame, deepest_in_text


@dataclass(frozen=True)
class Failed:
    frame: Frame | None  # the user's line, where a node says it
    op: str  # the operation the target raised on ("prims.zeta"), "" where no node says it


def where_failed(exc: BaseException, ep: Any, files: Sources) -> Failed:
    nodes = {n.name: n for n in ep.graph.nodes}
    first = ""
    for node in failing_nodes(exc):
        first = first or op_name(node.target)
        frame = deepest_in_text(files, node.meta.get("stack_trace"))
        for name in origins(node) if frame is None else ():
            origin = nodes.get(name)
            frame = deepest_in_text(files, origin.meta.get("stack_trace")) if origin is not None else None
            if frame is not None:
                break
        if frame is not None:
            return Failed(frame, first or op_name(node.target))
    return Failed(None, first)


def op_name(target: Any) -> str:
    """``prims.zeta`` for ``torch.ops.prims.zeta.default``: the op as the user could look it up."""
    name = str(getattr(target, "__qualname__", None) or target)
    return name.removesuffix(".default")
