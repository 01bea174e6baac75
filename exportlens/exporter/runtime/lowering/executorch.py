"""ExecuTorch: ``to_edge_transform_and_lower`` with the XNNPACK partitioner, run by ExecuTorch's
runtime (torch side)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..compat.internals import pytree
from .artifact import Artifact


def compile_executorch(ep: Any, folder: Path) -> Artifact:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    path = folder / "model.pte"
    path.write_bytes(program.buffer)
    buffer = program.buffer
    loaded = Runtime.get().load_program(buffer)
    method = loaded.load_method("forward")

    def run(*args: Any, **kwargs: Any) -> list[Any]:
        assert loaded is not None and buffer  # the method reads both: they live as long as it is run
        # the runtime takes the flat inputs, as the program's signature orders them
        return list(method.execute([v for v in pytree.tree_leaves((args, kwargs)) if isinstance(v, torch.Tensor)]))

    return Artifact(run, path.stat().st_size, "the ExecuTorch program (XNNPACK)")
