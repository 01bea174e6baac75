"""Plans made once per text (no torch): the server asks for a module's plan when it exports
it, when it publishes each open file's diagnostics and for each code action, and a fix's
proof for the texts with the fix applied; each is made once, from what it reads, keyed by
a digest of that: the module as its file gives it and pyproject.toml's text (settings
included)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from ..core.sources import Sources
from ..core.targets import ModuleClass
from .loading import PYPROJECT, ProjectSpecs, load_project
from .module_spec import resolve
from .plan import Plan, Planned, make_plan, planned_of

T = TypeVar("T")
KEPT = 512  # plans kept: a workspace's modules, each with a few texts of its pyproject


class PlanCache:
    """Plans by a digest of what they read; ``built`` counts those made (the rest were kept).
    Safe to share between threads: a proof's plan is made off the event loop."""

    def __init__(self, kept: int = KEPT) -> None:
        self.built = 0
        self._kept: OrderedDict[tuple, object] = OrderedDict()
        self._size = kept
        self._lock = threading.Lock()

    def planned(self, module: ModuleClass, project: ProjectSpecs) -> list[Planned]:
        """``module`` as it is checked (once per variant, or once): ``plan.planned_of``."""
        return list(self._once(("planned", _digest(project), module), lambda: planned_of(module, project)))

    def resolved(self, module: ModuleClass, project: ProjectSpecs):
        """``module``'s own spec, variants aside: ``module_spec.resolve``, from its plan where it
        has no variants (the two are then the same)."""
        planned = self.planned(module, project)
        if len(planned) == 1 and planned[0].variant is None:
            return planned[0].spec, list(planned[0].findings)
        return self._once(("resolved", _digest(project), module), lambda: resolve(module, project))

    def project(self, files: Sources) -> ProjectSpecs:
        """pyproject.toml as ``files`` has it, read once per text."""
        text = files.bytes(PYPROJECT) or b""
        key = ("project", files.root, hashlib.sha256(text).hexdigest())
        return self._once(key, lambda: load_project(files), count=False)

    def file_plan(self, file: Path, files: Sources, target: str) -> Plan:
        """The plan of the one module ``target`` of ``file``, as ``files`` has the project:
        a text no plan was kept for is discovered again (its positions may have moved)."""
        key = ("file", files.root, target, *(_text_digest(files, p) for p in (files.rel(file), PYPROJECT)))
        return self._once(key, lambda: make_plan([file], root=files.root, only={target}, sources=files))

    def _once(self, key: tuple, make: Callable[[], T], count: bool = True) -> T:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]  # type: ignore[return-value]
        value = make()
        with self._lock:
            self.built += count
            self._kept[key] = value
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value


def _digest(project: ProjectSpecs) -> tuple[Path, str]:
    return project.root, _text_sha(project.text)


@lru_cache(maxsize=16)
def _text_sha(text: str) -> str:
    """Kept per text: each open file's diagnostics plan every module with a table, and hashing
    the whole pyproject.toml for each of two hundred, for each file, would be most of their cost."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _text_digest(files: Sources, path: str) -> str:
    data = files.bytes(path)
    return hashlib.sha256(data if data is not None else b"<missing>").hexdigest()
