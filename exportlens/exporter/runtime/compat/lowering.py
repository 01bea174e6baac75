"""torch's private API that lowering touches (compat, torch side; checked on 2.13).

AOTInductor's entry points live in ``torch._inductor``. Where a lowering fails, torch
names the graph node it was translating only in its text, but the node itself is a local
of the frame that raised (``node`` in the ONNX exporter's ``_translate_fx_graph``, ``n``
in Inductor's ``run_node``): read from the traceback, it carries the user's stack. Where
Inductor fails generating a kernel, the frame holds the kernel's scheduler node, whose IR
node lists the graph nodes fused into it (``origins``). A node of a graph the target
decomposed names the node it came from in ``meta["from_node"]``.
Without any of it a lowering failure is a finding on the class, never a wrong line."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch.fx


def aoti_compile(ep: Any, path: Path, cache: Path) -> None:
    """The program as an AOTInductor package (a .pt2 a C++ or Python server loads); 2.6–2.15.
    Inductor's caches go to ``cache`` (where the job may write), not /tmp/torchinductor_<user>:
    the folder its functions read from the environment, and the precompiled headers' folder,
    which ``codecache`` computed when it was imported (2.13)."""
    from torch._inductor import aoti_compile_and_package

    _caches_in(cache)
    aoti_compile_and_package(ep, package_path=str(path))


def aoti_load(path: Path, cache: Path) -> Any:
    """The package, loaded; what loading caches goes to ``cache`` too (a process apart from the
    one that compiled, which may not write there)."""
    from torch._inductor import aoti_load_package

    _caches_in(cache)
    return aoti_load_package(str(path))


def _caches_in(cache: Path) -> None:
    import torch._inductor.codecache as codecache

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    if hasattr(codecache, "_HEADER_DIR"):
        codecache._HEADER_DIR = str(cache / "precompiled_headers")
        codecache._HEADER_LOCK_DIR = str(cache / "precompiled_headers" / "locks")


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
                yield from _fused(value)


def _fused(value: Any) -> list[torch.fx.Node]:
    """The graph nodes an Inductor kernel was made from, in the graph's order (2.6–2.15: a
    ``SchedulerNode``'s ``.node.origins``, an IR node's ``.origins``); [] for anything else."""
    try:
        found = getattr(value, "origins", None)
        if found is None:
            found = getattr(getattr(value, "node", None), "origins", None)
        nodes = [n for n in found or () if isinstance(n, torch.fx.Node) and n.op == "call_function"]
    except Exception:  # a local of torch's whose attributes raise: not a kernel
        return []
    if not nodes:
        return []
    order = {n: i for i, n in enumerate(nodes[0].graph.nodes)}
    return sorted(nodes, key=lambda n: order.get(n, len(order)))


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


# torch.export's verifier, as ExecuTorch's ``to_edge`` runs it (torch 2.6–2.15, executorch 1.x):
# "Operator torch._ops.aten.special_zeta.default is not in Core ATen opset (https://...)"
_NOT_CORE = re.compile(r"Operator torch\._ops\.(?P<ns>\w+)\.(?P<name>\w+)\.(?P<overload>\w+) is not in Core ATen opset")


def not_in_core_aten(exc: BaseException) -> str:
    """The operation the verifier found outside Core ATen, as the user could look it up
    (``aten::special_zeta``), anywhere in the chain; "" where none."""
    for raised in chain(exc):
        m = _NOT_CORE.search(str(raised)) if type(raised).__name__ == "SpecViolationError" else None
        if m is not None:
            overload = "" if m["overload"] == "default" else f".{m['overload']}"
            return f"{m['ns']}::{m['name']}{overload}"
    return ""


# the ONNX exporter writes each node's fx stack into its metadata (2.6–2.15)
ONNX_STACK = "pkg.torch.onnx.stack_trace"
# onnxruntime 1.2x–1.30: "... while running Squeeze node. Name:'node_squeeze' Status Message: <source>
# <function>(...) <check> was false. <why>"
_ORT = re.compile(r"while running (?P<op>\w+) node\. Name:'(?P<node>[^']*)' Status Message: (?P<said>.*)", re.S)


def onnx_stacks(program: Any) -> dict[str, str]:
    """Each ONNX node's name, to the user's stack it was made from."""
    return {node.name: node.metadata_props.get(ONNX_STACK, "") for node in program.model.graph}


def ort_said(text: str) -> tuple[str, str] | None:
    """The node onnxruntime failed on, and what it said, in one line without its C++ source; None
    where it is not onnxruntime's."""
    m = _ORT.search(text)
    if m is None:
        return None
    said = m["said"].strip()
    said = said.rsplit(" was false. ", 1)[-1] if " was false. " in said else said.rsplit(") ", 1)[-1]
    return m["node"], f"onnxruntime's {m['op']} fails: {said}"


def program_ops(ep: Any) -> tuple[str, ...]:
    """The program's operations, as torch names them ("mylib::twice.default"): ``OpOverload`` is
    private (``torch._ops``; 2.9–2.15)."""
    ops = {str(n.target.name()) for n in ep.graph.nodes if isinstance(n.target, torch._ops.OpOverload)}
    return tuple(sorted(ops))
