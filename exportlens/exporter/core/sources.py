"""A project's files as the user sees them: the editor's unsaved buffers over the disk
(standard library only).

Every layer names files two ways: reports and jobs say ``models/net.py`` (relative to the
project root, POSIX), the file system wants an absolute path. ``Sources`` is the one
place that converts, the one place that reads a file's text, and the one that says which
files are the user's (``owns``: where an export's stack is placed on the user's line).
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .regular_files import read_regular

_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # exportlens's exporter: never the user's


class Resolved(dict):
    """Buffers keyed by paths already resolved (absolute, no link, no ``..``): ``Sources.of``
    takes them as they are."""


@dataclass(frozen=True)
class Sources:
    root: Path  # resolved
    buffers: dict[Path, str] = field(default_factory=dict)  # unsaved text by resolved absolute path

    @classmethod
    def of(cls, root: Path, buffers: Sources | Mapping[Path, str] | Mapping[str, str] | None = None) -> Sources:
        """``buffers`` keyed by absolute paths, or by names relative to ``root``."""
        root = Path(root).resolve()
        texts: Mapping[Path, str] | Mapping[str, str] = (
            buffers.buffers if isinstance(buffers, Sources) else buffers if buffers is not None else {}
        )
        if isinstance(texts, Resolved):
            return cls(root, dict(texts))  # no path to resolve: the server's open documents, many times a second
        return cls(root, {resolved(root / p): text for p, text in texts.items()})

    def path(self, name: Path | str) -> Path:
        """The absolute path of a project-relative name (an absolute one stays as it is)."""
        return self.root / name  # an absolute name replaces the root

    def rel(self, path: Path | str) -> str:
        """The name reports use: relative to the root, POSIX; absolute outside the project."""
        return relative(self.root, path)

    def owns(self, filename: str) -> bool:
        """Whether ``filename`` (as a code object or a traceback names it) is one of the user's
        files: under the root, outside site-packages and exportlens."""
        if not filename or filename.startswith("<"):
            return False
        path = os.path.abspath(filename)
        return path.startswith(str(self.root) + os.sep) and "site-packages" not in path and not path.startswith(_OWN)

    def exists(self, path: Path | str) -> bool:
        path = self.path(path)
        return path in self.buffers or path.is_file()

    def bytes(self, path: Path | str) -> bytes | None:
        """The file's content (a buffer as UTF-8, a lone surrogate as its invalid bytes); None when it cannot be
        read."""
        path = self.path(path)
        if path in self.buffers:
            return self.buffers[path].encode("utf-8", "surrogatepass")
        try:
            return read_regular(path)
        except OSError:
            return None

    def decode(self, path: Path | str) -> str:
        """The file's text; raises OSError or a UnicodeDecodeError / SyntaxError naming the
        problem. Python files are decoded as Python does (a BOM or a ``# coding:`` line)."""
        path = self.path(path)
        if path in self.buffers:
            return _unicode(self.buffers[path])
        return decode(read_regular(path), python=path.suffix == ".py")  # (a FIFO or a device named net.py: OSError)

    def text(self, path: Path | str) -> str:
        """The file's text; "" when it cannot be read or decoded."""
        try:
            return self.decode(path)
        except (OSError, UnicodeDecodeError, SyntaxError):
            return ""

    def relative(self) -> dict[str, str]:
        """The buffers inside the project, by project-relative name (what a job carries)."""
        return {self.rel(p): text for p, text in self.buffers.items() if self.root in p.parents}


def decode(data: bytes, *, python: bool) -> str:
    """Bytes as text: Python source by its BOM or coding cookie (PEP 263), else UTF-8."""
    if not python:
        return data.decode("utf-8-sig")
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    head = data if second < 0 else data[:second]  # the lines a cookie may be on
    if head.isascii() and b"coding" not in head:  # no BOM, no cookie: UTF-8, as detect_encoding says, but faster
        return data.decode("utf-8")
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)  # SyntaxError for an unknown coding
    return data.decode("utf-8-sig" if encoding == "utf-8-sig" else encoding)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(text: str) -> str:
    """An editor's buffer, refused as a file on disk would be where it holds a lone surrogate:
    JSON can carry one (``"\\udc80"``), UTF-8 cannot, so no file could hold that text."""
    found = None if text.isascii() else _SURROGATE.search(text)
    if found is not None:
        data = text.encode("utf-8", "surrogatepass")
        start = len(text[: found.start()].encode("utf-8", "surrogatepass"))
        reason = f"a lone surrogate, U+{ord(found.group()):04X}, half of a UTF-16 pair"
        raise UnicodeDecodeError("utf-8", data, start, start + 3, reason)
    return text


def relative(root: Path, path: Path | str) -> str:
    """``path`` as reports name it: relative to ``root``, POSIX; absolute outside the project."""
    path = root / path  # an absolute path replaces the root
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def resolved(path: Path) -> Path:
    """``path.resolve()``, or the absolute path where links loop (RuntimeError before Python 3.13)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def read_text(path: Path) -> str:
    """A file's text for display and parsing; "" when it cannot be read or decoded."""
    return Sources(path.parent.resolve()).text(path)
