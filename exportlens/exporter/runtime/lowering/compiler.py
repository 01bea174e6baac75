"""AOTInductor's compiler, in a process of its own (torch side). Building a package changes
files' modes (the C++ linker marks what it links executable, Inductor sets its outputs'), so
this one step cannot take the seccomp filter that refuses it. It is forked by the lowering
process before that confines itself, and is confined by Landlock alone: it reads what the job
handed over and writes its own folder. It runs nothing the module wrote: it loads the program
as data (handoff.py), compiles it with the module's text kept to string literals
(literals.py), says where the package is, and exits; it never loads what it built. The
lowering process loads and runs the package, confined as the job is (docs/workers.md)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ...workers.platform import limit_memory
from ...workers.sandbox import confine_files
from .handoff import CODEC, Built, Failure, load_program
from .pipes import Served, fork_serving, read_all, reap, write_all

GO = b"build\n"


Compiler = Served  # write GO on its ``ask`` to start the build, close it to end the compiler unasked


class CompileFailed(RuntimeError):
    """The compiler's answer where it built nothing: its Failure, places included."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.text)
        self.failure = failure


def start(handoff: Path, folder: Path, memory_limit: int | None) -> Compiler:
    """Fork the compiler, which waits for ``build`` to ask; in a process with one thread."""
    return fork_serving(lambda asked, answer: _serve(handoff, folder, memory_limit, asked, answer))


def build(compiler: Compiler) -> Path:
    """The package's path, once the compiler built it; raises CompileFailed where it did not."""
    os.write(compiler.ask, GO)
    os.close(compiler.ask)
    data = read_all(compiler.answers)
    reap(compiler.pid)
    if not data.endswith(b"\n"):
        raise CompileFailed(Failure("AOTInductor's compiler ended without an answer (out of memory, or killed)"))
    built = CODEC.loads(data)
    if built.failure is not None:
        raise CompileFailed(built.failure)
    return Path(built.path)


def stop(compiler: Compiler) -> None:
    """The compiler, never asked to ``build``, ends: it reads the end of its pipe."""
    os.close(compiler.ask)
    os.close(compiler.answers)
    reap(compiler.pid)


def _serve(handoff: Path, folder: Path, memory_limit: int | None, asked: int, answer: int) -> None:
    from .aoti import build_aoti
    from .where import failure_of

    os.environ["TMPDIR"] = tempfile.tempdir = str(folder)
    limit_memory(memory_limit)
    confine_files([handoff], [folder])  # where Landlock is not available it runs as the job would
    if read_all(asked) != GO:
        return
    ep = None
    try:
        ep = load_program(handoff)
        built = Built(str(build_aoti(ep, folder)))
    except Exception as exc:
        built = Built(failure=failure_of(exc, ep))
    write_all(answer, CODEC.dumps(built).encode() + b"\n")
