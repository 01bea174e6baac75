"""Where a lowering failed, in the user's code: the graph node the target raised on,
through the nodes it was decomposed from, to the line of the user's that made it (torch side).
The lowering process reads the nodes (``places``); the job's, which has the user's files,
finds the line (``where_failed``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.sources import Sources
from ..compat.lowering import chain, failing_nodes, no_translation, not_in_core_aten, origins
from ..locate import Frame, deepest_in_text
from ..reading.violations import first_line
from .handoff import Failure, Place


@dataclass(frozen=True)
class Failed:
    frame: Frame | None  # the user's line, where a node says it
    op: str  # the operation the target raised on ("prims.zeta"), "" where no node says it


def failure_of(exc: BaseException, ep: Any = None) -> Failure:
    """What a target raised, as plain data the job's process can place (with ``ep``, the nodes it passed)."""
    innermost = list(chain(exc))[-1]  # what the target itself said, under its wrappers' "see above"
    text = f"{type(innermost).__name__}: {first_line(str(innermost))[:300]}"
    return Failure(text, no_translation(exc), not_in_core_aten(exc), places(exc, ep) if ep is not None else ())


def places(exc: BaseException, ep: Any) -> tuple[Place, ...]:
    """Each node the failure passed through, innermost first, with the stacks that may name its line."""
    nodes = {n.name: n for n in ep.graph.nodes}
    out = []
    for node in failing_nodes(exc):
        made_from = (nodes[name] for name in origins(node) if name in nodes)
        stacks = (node.meta.get("stack_trace"), *(origin.meta.get("stack_trace") for origin in made_from))
        out.append(Place(op_name(node.target), tuple(s for s in stacks if s)))
    return tuple(out)


def where_failed(found: tuple[Place, ...], files: Sources) -> Failed:
    first = found[0].op if found else ""
    for place in found:
        for stack in place.stacks:
            frame = deepest_in_text(files, stack)
            if frame is not None:
                return Failed(frame, first)
    return Failed(None, first)


def op_name(target: Any) -> str:
    """``prims.zeta`` for ``torch.ops.prims.zeta.default``: the op as the user could look it up."""
    name = str(getattr(target, "__qualname__", None) or target)
    return name.removesuffix(".default")
