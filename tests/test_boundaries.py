"""The torch boundary is in the folders: the language server and the static side import
neither torch nor the runtime package, checked in a fresh interpreter."""

from __future__ import annotations

import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import exportlens
import exportlens.exporter.static as static

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m == "torch" or m.startswith(("torch.", "exportlens.exporter.runtime")))))
"""


def imported_by(*modules: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_server_and_the_static_side_never_import_torch():
    statics = [f"exportlens.exporter.static.{m.name}" for m in pkgutil.iter_modules(static.__path__)]
    assert statics, "no static modules found"
    server = ["exportlens.server.app", "exportlens.server.indexer", "exportlens.exporter.workers.pool", "exportlens.exporter.workers.batch"]
    assert imported_by(*server, *statics, "exportlens.exporter.core.report", "exportlens.cli") == []


def _workers_modules(*modules: str) -> set[str]:
    probe = "import importlib, json, sys\nfor n in sys.argv[1:]: importlib.import_module(n)\nprint(json.dumps([m for m in sys.modules if m.startswith('exportlens.exporter.workers.')]))"
    done = subprocess.run([sys.executable, "-c", probe, *modules], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout))


def test_the_protocol_is_the_only_module_both_sides_of_the_worker_boundary_import():
    owner = _workers_modules("exportlens.exporter.workers.pool", "exportlens.exporter.workers.batch")
    worker = _workers_modules("exportlens.exporter.workers.worker")
    assert owner & worker == {"exportlens.exporter.workers.protocol"}, (owner, worker)


def test_nothing_is_pickled():
    sources = [p for p in Path(exportlens.__file__).parent.rglob("*.py") if re.search(r"^\s*(import|from)\s+pickle\b", p.read_text(), re.M)]
    assert not sources
