"""What explaining and fixing one module's export needs to know about the user's project."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.report import Related
from ..core.targets import ModuleClass
from ..static.spec import ExportSpec
from .inputs import Built
from .locate import ProjectFiles


@dataclass(frozen=True)
class Context:
    root: Path
    files: ProjectFiles
    module: ModuleClass
    spec: ExportSpec
    built: Built
    # absolute path -> text of a buffer the editor has not saved: findings and fixes use it
    sources: Mapping[Path, str] = field(default_factory=dict)

    def read(self, path: str) -> str:
        """A project file's text as the user sees it: the unsaved buffer, else the disk ("" if unreadable)."""
        text = self.sources.get(self.root / path)
        if text is not None:
            return text
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def spec_related(self, key: str | None = None) -> Related:
        """The spec (or one of its keys, ``dims.seq``) as a finding's related location."""
        loc = self.spec.where(key) if key else self.spec.location
        return Related(loc.path, loc.line, f"the export spec for {self.module.name}")
