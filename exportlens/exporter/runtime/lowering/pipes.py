"""The lowering job's processes and the pipes between them: a process forked to serve one
request line and answer one line (the lowering process, AOTInductor's compiler), and reading
and writing those lines whole (torch side only by where it is imported: no torch here)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ...workers.platform import die_with_parent

FAILED = 70  # the forked process's exit status where serving raised


@dataclass(frozen=True)
class Served:
    """A forked process seen from the one that forked it."""

    pid: int
    ask: int  # the request pipe's write end
    answers: int  # the answer pipe's read end


def fork_serving(serve: Callable[[int, int], None]) -> Served:
    """Fork a process that runs ``serve(asked, answer)`` (the request pipe's read end, the
    answer pipe's write end), dies with this one, and exits; call it with one thread."""
    asked, ask = os.pipe()
    answers, answer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = FAILED
        try:
            os.close(ask)
            os.close(answers)
            die_with_parent(parent)
            serve(asked, answer)
            code = 0
        finally:
            os._exit(code)
    os.close(asked)
    os.close(answer)
    return Served(pid, ask, answers)


def read_all(fd: int) -> bytes:
    """Everything until the other end closes; ``fd`` closed after."""
    data = b""
    while chunk := os.read(fd, 1 << 20):
        data += chunk
    os.close(fd)
    return data


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
