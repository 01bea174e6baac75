"""What explaining and fixing one module's export needs to know about the user's project."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..core.report import Related
from ..core.sources import Sources
from ..core.targets import ModuleClass
from ..spec.loading import ExportSpec
from .inputs import Built

T = TypeVar("T")
U = TypeVar("U")
_log = logging.getLogger("exportlens.fixes")


@dataclass(frozen=True)
class Context:
    root: Path
    module: ModuleClass
    spec: ExportSpec
    built: Built
    sources: Sources  # the files as the user sees them: findings and fixes quote these texts
    dropped: list[str] = field(default_factory=list)  # fixes given up on exportlens's own errors (``fix_or``)
    model: Any = None  # the module as built: its buffers and parameters name the sizes they give

    def read(self, path: str) -> str:
        """A project file's text as the user sees it ("" if unreadable)."""
        return self.sources.text(path)

    def fix_or(self, what: str, build: Callable[[], T], instead: U) -> T | U:
        """``build()`` (a fix, or what one is made of), or ``instead`` where exportlens fails
        at it: a fix is dropped, logged and counted, never the finding it is for. (Logged
        at info: the count is in the report, ``ModuleReport.fixes_dropped``.)"""
        try:
            return build()
        except Exception as exc:
            _log.info(
                "dropped a fix for %s (%s): %s: %s", self.module.name, what, type(exc).__name__, exc, exc_info=True
            )
            self.dropped.append(f"{what}: {type(exc).__name__}: {exc}")
            return instead

    def spec_related(self, key: str | None = None) -> Related:
        """The spec (or one of its keys, ``dims.seq``) as a finding's related location."""
        loc = self.spec.where(key) if key else self.spec.location
        return Related(loc.path, loc.line, f"the export spec for {self.module.name}")
