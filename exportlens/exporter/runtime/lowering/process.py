"""The lowering process: forked from a lowering job's process before the user's module is
imported and before that process is confined, so it never runs the user's code; and confined
as a job is (Landlock, the seccomp filter, the memory limit, a scratch folder of its own)
before it reads anything the job handed over: the lowered artifact it runs is code made from
the module's program. It loads the exported program and eager's answers the job wrote
(handoff.py), lowers, runs, and answers one line. AOTInductor's compile, which must change
files' modes, is the one step it leaves to a process of its own (compiler.py), forked before
it confines itself (docs/workers.md, "The sandbox")."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...workers.platform import limit_memory
from ...workers.sandbox import confine
from . import compiler
from .artifact import Artifact
from .handoff import CODEC, Answer, Failure, Request, load
from .pipes import fork_serving, read_all, reap, write_all

_started: Apart | None = None  # in the job's process, once ``start`` forked the lowering process


@dataclass(frozen=True)
class Apart:
    pid: int
    ask: int  # the request pipe's write end
    answers: int  # the answer pipe's read end
    handoff: Path  # where the job writes what it hands over


def start(handoff: Path, work: Path, memory_limit: int | None) -> None:
    """In the job's process, while it has one thread and nothing of the user's: fork the
    lowering process, which reads ``handoff`` and writes ``work`` only."""
    global _started
    served = fork_serving(lambda asked, answer: _serve(handoff, work, memory_limit, asked, answer))
    _started = Apart(served.pid, served.ask, served.answers, handoff)


def started() -> Apart | None:
    return _started


def ask(apart: Apart, request: Request) -> tuple[Answer, ...]:
    """The lowering process's answers (the job wrote the handoff first); each target failed,
    and why, where it ended without one (out of memory, killed)."""
    write_all(apart.ask, CODEC.dumps(request).encode() + b"\n")
    os.close(apart.ask)
    data = read_all(apart.answers)
    reap(apart.pid)
    if not data.endswith(b"\n"):
        why = Failure("the lowering process ended without an answer (out of memory, or killed)")
        return tuple(Answer(t, failure=why) for t in request.targets)
    return tuple(CODEC.loads(data))


def _serve(handoff: Path, work: Path, memory_limit: int | None, asked: int, answer: int) -> None:
    from .aoti import load_aoti
    from .compiled import lower_all, unloaded

    data = read_all(asked)
    if not data.endswith(b"\n"):
        return  # the job ended, or had nothing to lower
    request = CODEC.loads(data)
    own, built = work / "run", work / "compiler"
    for folder in (own, built):
        folder.mkdir(mode=0o700)
    # forked while this process has one thread, and before it is confined (a filter cannot be lifted)
    builder = compiler.start(handoff, built, memory_limit) if "aoti" in request.targets else None
    os.environ["TMPDIR"] = tempfile.tempdir = str(own)
    limit_memory(memory_limit)
    confine([handoff, built], [own])  # where the kernel lacks some of it, it runs as the job would
    try:
        ep, probes = load(handoff)
    except Exception as exc:
        answers = unloaded(exc, request)
        if builder is not None:
            compiler.stop(builder)
    else:  # `aoti` is asked for only where it is a target, and so where the compiler was started

        def aoti(_ep: Any, where: Path) -> Artifact:
            assert builder is not None
            return load_aoti(compiler.build(builder), where)

        answers = lower_all(ep, probes, request, own, aoti=aoti)
    write_all(answer, CODEC.dumps(answers).encode() + b"\n")
