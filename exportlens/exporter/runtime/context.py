"""What explaining and fixing one module's export needs to know about the user's project."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.report import Related
from ..core.sources import Sources
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
    sources: Sources  # the files as the user sees them: findings and fixes quote these texts

    def read(self, path: str) -> str:
        """A project file's text as the user sees it ("" if unreadable)."""
        return self.sources.text(path)

    def spec_related(self, key: str | None = None) -> Related:
        """The spec (or one of its keys, ``dims.seq``) as a finding's related location."""
        loc = self.spec.where(key) if key else self.spec.location
        return Related(loc.path, loc.line, f"the export spec for {self.module.name}")
