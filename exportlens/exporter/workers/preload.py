"""Third-party packages imported once in the warm parent (torch side).

A child forked for a job starts with what its parent had imported. torch is
imported at warm-up; a project's model files also import heavy packages of their
own (transformers, timm), which every job's child would otherwise import again:
seconds each. The owner names them (``find.deps.third_party``: imports outside
the project and the standard library); the parent imports each once, before it
forks the job's child. The user's own files are never imported here: a name that
resolves inside the project, or that fails to import, is left to the child.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.util import find_spec

_refused: set[str] = set()  # failed, or the project's own: never tried again


def preload(names: tuple[str, ...], root: str) -> bool:
    """Import each of ``names`` (``transformers.models.bert``, or ``transformers:BertModel``:
    a name taken from a package, which loads a lazy package's module) not imported yet;
    True when anything was (children forked before then lack it)."""
    before = len(sys.modules)
    for name in names:
        module, _, attribute = name.partition(":")
        if name in _refused or (not attribute and module in sys.modules):
            continue
        if not _outside(module.split(".")[0], root):
            _refused.add(name)
            continue
        try:
            imported = importlib.import_module(module)
            if attribute and not hasattr(imported, attribute):  # a lazy package loads it here
                importlib.import_module(f"{module}.{attribute}")  # else a submodule not imported yet
        except (Exception, SystemExit):
            _refused.add(name)  # the child imports it itself, and reports what goes wrong there
    return len(sys.modules) > before


def _outside(name: str, root: str) -> bool:
    """Whether ``name`` is a package installed outside the project folder."""
    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    if origin is None:
        return False
    return not os.path.realpath(origin).startswith(os.path.join(os.path.realpath(root), ""))
