"""torch's private API that lowering touches (compat, torch side; checked on 2.13).

AOTInductor's entry points live in ``torch._inductor``. Where a lowering fails, torch
names the graph node it was translating only in its text, but the node itself is a local
of the frame that raised (``node`` in the ONNX exporter's ``_translate_fx_graph``, ``n``
in Inductor's ``run_node``): read from the traceback, it carries the user's stack. A node
of a graph the target decomposed names the node it came from in ``meta["from_node"]``.
Without any of it a lowering failure is a finding on the class, never a wrong line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch.fx


def aoti_compile(ep: Any, path: Path) -> None:
    """The program as an AOTInductor package (a .pt2 a C++ or Python server loads); 2.6–2.15."""
    from torch._inductor import aoti_compile_and_package

    aoti_compile_and_package(ep, package_path=str(path))


def aoti_load(path: Path) -> Any:
    from torch._inductor import aoti_load_package

    return aoti_load_package(str(path))


def chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and its causes, each once, outermost first."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def failing_nodes(exc: BaseException) -> Iterator[torch.fx.Node]:
    """The graph nodes live in the frames the failure passed through, innermost first,
    over the whole chain of causes."""
    for raised in chain(exc):
        frames = []
        tb = raised.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):
            for value in list(frame.f_locals.values()):
                if isinstance(value, torch.fx.Node) and value.op == "call_function":
                    yield value


def origins(node: torch.fx.Node) -> Iterator[str]:
    """The names of the nodes ``node`` was made from, nearest first (2.6–2.15's ``NodeSource``)."""
    sources = list(node.meta.get("from_node") or ())
    while sources:
        source = sources.pop(0)
        name = getattr(source, "name", None)
        if isinstance(name, str):
            yield name
        sources.extend(getattr(source, "from_node", None) or ())


def no_translation(exc: BaseException) -> bool:
    """The ONNX exporter found no function for an op (its ``DispatchError``, 2.6–2.15), anywhere in the chain."""
    return any(type(e).__name__ == "DispatchError" for e in chain(exc))
