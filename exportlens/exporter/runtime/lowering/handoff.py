"""What the lowering job's two processes hand each other (torch side): the confined one, which
imported the user's module, writes the exported program and eager's answers at each size to
its scratch folder; the lowering process, which imports no user code, reads them, and answers
one line of these records. Plain data only: nothing it reads is unpickled (``load``)."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ...core.codec import Codec

PROGRAM, PROBES = "program.pt2", "probes.pt"
# what torch.export.load restores with pickle itself, not through torch.load (2.13's archive):
# script objects and opaque objects, which a program of plain tensors has none of
PICKLED = ("custom_obj_", "opaque_obj_")


@dataclass(frozen=True)
class Probe:
    """One size's inputs, and eager's outputs there (None where eager raised)."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    outputs: list[Any] | None


@dataclass(frozen=True)
class Request:
    targets: tuple[str, ...]
    ops: tuple[str, ...] = ()  # the program's operations ("mylib::twice.default"), to name those it cannot load
    run: bool = True  # False on ``device = "meta"``: compile only


@dataclass(frozen=True)
class Place:
    """A graph node a target raised on: its operation, and the user's stacks that may name
    its line (its own, then the nodes it was made from)."""

    op: str
    stacks: tuple[str, ...]


@dataclass(frozen=True)
class Failure:
    text: str  # the target's innermost word: "DispatchError: ..."
    untranslated: bool = False  # the ONNX exporter has no function for an op
    outside_core: str = ""  # the operation ExecuTorch's verifier found outside Core ATen ("aten::special_zeta")
    places: tuple[Place, ...] = ()
    unknown_ops: tuple[str, ...] = ()  # the program did not load: operations this torch does not have


@dataclass(frozen=True)
class Ran:
    """The artifact at one probe: what it raised (and where), or how it differs from eager."""

    refused: str = ""
    stack: str = ""
    differs: str = ""
    error: float | None = None


@dataclass(frozen=True)
class Answer:
    target: str
    name: str = ""  # "the AOTInductor package"
    seconds: float = 0.0
    size: int = 0
    failure: Failure | None = None
    ran: tuple[Ran | None, ...] = ()  # one per probe; None where eager raised and so did it


@dataclass(frozen=True)
class Built:
    """What AOTInductor's compiler (compiler.py) answers: where its package is, or why there is none."""

    path: str = ""
    failure: Failure | None = None


CODEC = Codec(Request, Answer, Built)  # each and every record their fields reach


def save(folder: Path, ep: Any, probes: list[Probe]) -> None:
    torch.export.save(ep, folder / PROGRAM)
    torch.save([(p.args, p.kwargs, p.outputs) for p in probes], folder / PROBES)


def load(folder: Path) -> tuple[Any, list[Probe]]:
    """The program and probes the other process wrote, with nothing unpickled that could run
    code: every ``torch.load`` on the way is weights-only (torch.export.load's own fallbacks to
    full pickle included); raises ``Unsafe`` where the program holds what only pickle restores."""
    ep = load_program(folder)
    saved = torch.load(folder / PROBES, weights_only=True)
    return ep, [Probe(tuple(args), dict(kwargs), outputs) for args, kwargs, outputs in saved]


def load_program(folder: Path) -> Any:
    """The program alone, as ``load`` reads it (AOTInductor's compiler needs no probes)."""
    os.environ.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"  # read by each torch.load
    with zipfile.ZipFile(folder / PROGRAM) as archive:
        if any(_pickled(archive.read(name)) for name in archive.namelist() if name.endswith("_config.json")):
            raise Unsafe("the program holds objects only pickle restores (script objects)")
    return torch.export.load(folder / PROGRAM)


class Unsafe(RuntimeError):
    """What the lowering process will not load."""


def _pickled(config: bytes) -> bool:
    try:
        entries = json.loads(config)["config"].values()
        return any(str(entry["path_name"]).startswith(PICKLED) for entry in entries)
    except (ValueError, KeyError, TypeError, AttributeError):
        return True  # what it cannot read it does not trust
