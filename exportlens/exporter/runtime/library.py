"""A failure raised in code the user did not write: an installed package's line.

The finding stays on the user's line that called into the package (the only line
they can change), and says the package's line in its message and as related
information, so the user sees where, below their call, the value was needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from types import TracebackType

from ..core.report import Finding, Related
from ..core.sources import Sources
from .locate import Frame, is_package, source_line


def library_frame(files: Sources, stack: Iterable[tuple[str, int, str]]) -> Frame | None:
    """The deepest frame of ``stack`` (outermost first) below the user's last one that is an
    installed package's."""
    found = None
    for filename, line, name in stack:
        if files.owns(filename):
            found = None  # only what lies below the user's deepest line
        elif is_package(filename):
            found = Frame(filename, line, name)
    return found


def in_traceback(tb: TracebackType | None) -> Iterator[tuple[str, int, str]]:
    while tb is not None:
        yield tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name
        tb = tb.tb_next


def short_path(filename: str) -> str:
    """The file as its package names it (``torchvision/ops/boxes.py``): relative to its sys.path entry."""
    roots = [p for p in sys.path if p and filename.startswith(os.path.join(os.path.abspath(p), ""))]
    root = max(roots, key=len, default=os.path.dirname(os.path.dirname(filename)))
    return os.path.relpath(filename, root).replace(os.sep, "/")


def in_library(finding: Finding, library: Frame | None) -> Finding:
    """A data-dependent finding whose guard lies in a package: said as the package's line,
    reached from the user's, with that line as related information."""
    if library is None:
        return finding
    where = f"{short_path(library.filename)}:{library.line}"
    written = source_line(library.filename, library.line)
    message = (
        f"inside `{where}`, reached from line {finding.line}: `{written}` needs a size or value that depends"
        " on the values inside a tensor (only known when the model runs), so export cannot decide it"
    )
    if not finding.fixes:
        message += "; give this call sizes that do not depend on tensor values, or the package's export-ready variant"
    related = Related(library.filename, library.line, f"`{written}` in {library.name}, where export needed the value")
    return replace(finding, message=message, related=(*finding.related, related))
