"""Work-done progress for a batch of exports (LSP ``window/workDoneProgress``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..exporter.core.report import ModuleReport

if TYPE_CHECKING:
    from .base import ExportLensServer


class Progress:
    """One batch of exports, with a cancel button that kills them; where the client
    does not support progress, every method does nothing."""

    def __init__(self, ls: ExportLensServer, root: Path, targets: list[str]) -> None:
        self.ls, self.root, self.targets = ls, root, targets
        self.token: str | None = None
        self.done = 0

    async def create(self) -> None:
        caps = self.ls.client_capabilities.window
        if not (caps and caps.work_done_progress):
            return
        token = f"exportlens-{self.ls.session.next_number()}"
        try:
            await asyncio.shield(self.ls.work_done_progress.create_async(token))
        except Exception:
            return
        self.token = token
        self.ls.work_done_progress.tokens[token].add_done_callback(self._cancelled)

    def _cancelled(self, future: asyncio.Future) -> None:
        if future.cancelled():
            self.ls.exports.cancel(self.root, self.targets)

    def begin(self) -> None:
        if self.token:
            names = ", ".join(t.rsplit(":", 1)[1] for t in self.targets)
            self.ls.work_done_progress.begin(
                self.token, types.WorkDoneProgressBegin(title="exportlens", message=f"exporting {names}", cancellable=True, percentage=0)
            )

    def step(self, report: ModuleReport) -> None:
        self.done += 1
        if self.token:
            self.ls.work_done_progress.report(
                self.token,
                types.WorkDoneProgressReport(
                    message=f"{report.target}: {report.status.value}", percentage=int(100 * self.done / max(len(self.targets), 1))
                ),
            )

    def end(self) -> None:
        if self.token:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))
            self.ls.work_done_progress.tokens.pop(self.token, None)  # pygls never forgets them
