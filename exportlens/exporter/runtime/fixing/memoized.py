"""A line that calls a memoized function: ``functools.lru_cache`` hashes its arguments, and
a size torch.export traces is symbolic and cannot be hashed. The fix takes the decorator
off (edit.memo_decorators): the program runs the body once per call anyway."""

from __future__ import annotations

from ...core.report import Fix, Narrowing, Probe
from ...edit.memo_decorators import uncached
from ...edit.text_edits import edit_between
from ..compat import messages as forms
from ..reading.failures import Raised


def memoized(record: Raised, path: str, text: str) -> tuple[str, Fix] | None:
    """The message and fix where hashing a traced size raised on this line's call of a function
    of this file under a cache decorator; None for any other failure."""
    if record.frame is None or record.error != "TypeError" or forms.UNHASHABLE not in record.text:
        return None
    found = uncached(text, record.frame.line)
    edit = edit_between(path, text, found.text) if found else None
    if found is None or edit is None:
        return None
    message = (
        f"`{found.function}` is memoized with `@{found.decorator}`, which hashes its arguments: while exporting,"
        f" a size passed to it is symbolic and cannot be hashed, so this call raises {record.error}"
    )
    title = f"Remove `@{found.decorator}` from `{found.function}`: the exported program runs it once per call anyway"
    return message, Fix(title, (edit,), preferred=True, probes=(Probe("example inputs"),), rank=Narrowing.REWRITE)
