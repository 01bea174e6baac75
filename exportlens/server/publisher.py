"""Pushing diagnostics (``textDocument/publishDiagnostics``) once per change of what a
document shows. A change marks the documents it can touch; one flush per turn of the event
loop computes each marked document's diagnostics once, from one snapshot, and sends only
those that differ from what the client was last sent. Two hundred verdicts landing one
after another then cost one computation each for the files they touch, not one for every
open file, and a file whose diagnostics a verdict leaves as they were is not sent again.
What differs is what the client shows (``Seen``): fixes a diagnostic carries that a proof
has since changed are not worth a push, as code actions take them from the session."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from lsprotocol import types

from .snapshots import DocumentSnapshot, WorkspaceSnapshot

log = logging.getLogger(__name__)

SLICE = 0.02  # seconds of publishing in one turn of the event loop

Compute = Callable[[DocumentSnapshot, WorkspaceSnapshot], list[types.Diagnostic]]
Seen = Callable[[types.Diagnostic], object]  # what of a diagnostic a change of is worth a push


class Publisher:
    def __init__(
        self,
        snapshot: Callable[[], WorkspaceSnapshot],
        compute: Compute,
        send: Callable[[types.PublishDiagnosticsParams], None],
        seen: Seen = lambda d: d,
    ) -> None:
        self.snapshot = snapshot  # the documents open now
        self.compute = compute  # a document's diagnostics
        self.send = send
        self.seen = seen
        self.shown: dict[str, list[object]] = {}  # uri -> what the client was last sent, as ``seen`` has it
        self.closed_with_problems: set[Path] = set()  # files not open whose problems were sent
        self._marked: set[Path] = set()
        self._flush: asyncio.Handle | None = None

    def mark(self, paths: Iterable[Path]) -> None:
        """Publish ``paths`` at the end of this turn of the loop, if what they show changed."""
        before = len(self._marked)
        self._marked.update(paths)
        if len(self._marked) > before and self._flush is None:
            self._flush = asyncio.get_running_loop().call_soon(self.flush)

    def clear(self, uri: str) -> None:
        """The document shows nothing any more (closed, deleted, its folder removed)."""
        if self.shown.get(uri) != []:
            self.shown[uri] = []
            self.send(types.PublishDiagnosticsParams(uri, []))

    def flush(self) -> None:
        """Publish the marked documents, for at most ``SLICE`` seconds; the rest in the next turn
        of the loop, so that a request waits for no more than one slice."""
        self._flush = None
        marked = sorted(self._marked)
        docs = self.snapshot()
        end = time.monotonic() + SLICE
        for path in marked:
            if time.monotonic() > end:
                self._flush = asyncio.get_running_loop().call_soon(self.flush)
                return
            self._marked.discard(path)
            doc = docs.get(path)
            try:
                found = self.compute(doc, docs)
            except Exception:  # one file's bug must not keep the others' diagnostics back
                log.exception("computing the diagnostics of %s failed", path)
                continue
            if doc.version is None and found:
                self.closed_with_problems.add(path)
            else:
                self.closed_with_problems.discard(path)
            seen = [self.seen(d) for d in found]
            if self.shown.get(doc.uri) == seen:
                continue  # the client shows these already
            self.shown[doc.uri] = seen
            self.send(types.PublishDiagnosticsParams(doc.uri, found, doc.version))
