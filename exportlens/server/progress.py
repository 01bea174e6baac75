"""Work-done progress for a batch of exports, or a lowering (LSP ``window/workDoneProgress``)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..exporter.core.report import ModuleReport
from ..exporter.core.targets import Target
from . import compat
from .outbox import Latest, Stated
from .outgoing import stated


class Progress:
    """One batch of exports, with a cancel button that calls ``on_cancel``; where the
    client does not support progress, every method does nothing."""

    def __init__(
        self,
        server: LanguageServer,
        token: str,
        targets: list[Target],
        on_cancel: Callable[[], object],  # what it returns is not read
        doing: str = "exporting {}",  # what the work is, with the modules' names: "compiling {} for onnx"
    ) -> None:
        self.server, self.targets, self.on_cancel, self.doing = server, targets, on_cancel, doing
        self.wanted = token
        self.token: str | None = None  # set once the client accepted it
        self.done = 0

    async def create(self) -> None:
        caps = self.server.client_capabilities.window
        if not (caps and caps.work_done_progress):
            return
        try:
            await compat.client_reply(self.server.work_done_progress.create_async(self.wanted))
        except Exception:
            return
        self.token = self.wanted
        compat.on_progress_cancel(self.server, self.token, self.on_cancel)

    def begin(self) -> None:
        if self.token:
            names = ", ".join(t.name for t in self.targets)
            self.server.work_done_progress.begin(
                self.token,
                types.WorkDoneProgressBegin(
                    title="exportlens", message=self.doing.format(names), cancellable=True, percentage=0
                ),
            )

    def step(self, report: ModuleReport) -> None:
        self.done += 1
        if self.token:
            percentage = int(100 * self.done / max(len(self.targets), 1))
            with stated(self.server, Latest(Stated.PROGRESS, self.token)):  # a newer report says all this one did
                self.server.work_done_progress.report(
                    self.token,
                    types.WorkDoneProgressReport(
                        message=f"{report.target}: {report.status.value}", percentage=percentage
                    ),
                )

    def end(self) -> None:
        if self.token:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))
            compat.forget_progress(self.server, self.token)
