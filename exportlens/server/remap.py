"""Positions found in one text, carried into a later text of the same file.

An export reports lines of the text it imported; by the time it lands, or is published
again, the user may have typed. A finding is moved by the lines inserted or deleted above
it, and dropped where its own lines changed: the next export speaks for those."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from ..exporter.core.report import Finding


@lru_cache(maxsize=64)
def line_map(old: str, new: str) -> dict[int, int]:
    """1-based lines of ``old`` that ``new`` still has unchanged -> their lines in ``new``."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return {i + k + 1: j + k + 1 for i, j, size in matcher.get_matching_blocks() for k in range(size)}


def lines_now(result_text: str | None, now: str) -> Callable[[int], int | None]:
    """A line of the text an export read -> its line now (None: edited since)."""
    if result_text is None or result_text == now:
        return lambda line: line
    return line_map(result_text, now).get


def remap(finding: Finding, old: str, new: str) -> Finding | None:
    """``finding`` (in ``old``) in ``new``; None where a line it covers was edited."""
    if old == new:
        return finding
    now = lines_now(old, new)
    start = now(finding.line)
    end = now(finding.end_line) if finding.end_line is not None else start
    if start is None or end is None or end - start != (finding.end_line or finding.line) - finding.line:
        return None
    # its fixes stay as made: their edits name the version they were made for, which the editor checks
    return replace(finding, line=start, end_line=end if finding.end_line is not None else None)
