"""The lowering process: forked from a lowering job's process before the user's module is
imported and before that process is confined, it is never confined by the seccomp filter that
refuses changes to files' metadata (AOTInductor copies its build outputs with their modes, the
C++ linker marks what it links executable), and so never runs the user's code: it loads the
exported program and eager's answers the job wrote (handoff.py), lowers, runs, and answers
one line. Landlock confines it still: it reads the job's folder and writes its own only
(docs/workers.md, "The sandbox")."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...workers.platform import die_with_parent
from ...workers.sandbox import confine_files
from .handoff import CODEC, Answer, Failure, Request, load

_started: Apart | None = None  # in the job's process, once ``start`` forked the lowering process


@dataclass(frozen=True)
class Apart:
    pid: int
    ask: int  # the request pipe's write end
    answers: int  # the answer pipe's read end
    handoff: Path  # where the job writes what it hands over


def start(handoff: Path, work: Path) -> None:
    """In the job's process, while it has one thread and nothing of the user's: fork the
    lowering process, which reads ``handoff`` and writes ``work`` only."""
    global _started
    asked, ask = os.pipe()
    answers, answer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.close(ask)
            os.close(answers)
            die_with_parent(parent)
            _serve(handoff, work, asked, answer)
            code = 0
        finally:
            os._exit(code)
    os.close(asked)
    os.close(answer)
    _started = Apart(pid, ask, answers, handoff)


def started() -> Apart | None:
    return _started


def ask(apart: Apart, request: Request) -> tuple[Answer, ...]:
    """The lowering process's answers (the job wrote the handoff first); each target failed,
    and why, where it ended without one (out of memory, killed)."""
    _write(apart.ask, CODEC.dumps(request).encode() + b"\n")
    os.close(apart.ask)
    data = b""
    while chunk := os.read(apart.answers, 1 << 20):
        data += chunk
    os.close(apart.answers)
    try:
        os.waitpid(apart.pid, 0)
    except ChildProcessError:
        pass
    if not data.endswith(b"\n"):
        why = Failure("the lowering process ended without an answer (out of memory, or killed)")
        return tuple(Answer(t, failure=why) for t in request.targets)
    return tuple(CODEC.loads(data))


def _serve(handoff: Path, work: Path, asked: int, answer: int) -> None:
    from .compiled import lower_all, unloaded

    os.environ["TMPDIR"] = tempfile.tempdir = str(work)
    confine_files(handoff, [work])  # where Landlock is not available it runs as the job would
    data = b""
    while chunk := os.read(asked, 1 << 20):
        data += chunk
    if not data.endswith(b"\n"):
        return  # the job ended, or had nothing to lower
    request = CODEC.loads(data)
    try:
        ep, probes = load(handoff)
    except Exception as exc:
        answers = unloaded(exc, request)
    else:
        answers = lower_all(ep, probes, request, work)
    _write(answer, CODEC.dumps(answers).encode() + b"\n")


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
