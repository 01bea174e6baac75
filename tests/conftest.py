"""Shared helpers: real projects on disk, real exports, fixes applied as a user would."""

from __future__ import annotations

import compileall
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exportlens.exporter.core.report import Finding, Fix, ModuleReport, Report
from exportlens.exporter.edit.text_edits import apply_edits
from exportlens.exporter.spec.plan import make_plan

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Compiled code is kept, whatever PYTHONDONTWRITEBYTECODE says (it is set on some machines):
    - pytest keeps each test module's rewritten asserts beside it only where this process may
      write bytecode; else every worker rewrites all of them on every run (about 5 s each);
    - exportlens is compiled once, before the workers start: the suite starts hundreds of
      servers, warm workers and CLIs, each of which would compile every changed module
      again (about 0.2 s of each start)."""
    sys.dont_write_bytecode = False
    if not hasattr(config, "workerinput"):  # the controller, once (xdist's workers have it)
        compileall.compile_dir(REPO / "exportlens", quiet=1)


class Project:
    """A throwaway project folder: files, a pyproject.toml, and checks run on it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, path: str, text: str) -> Path:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return file

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def check(self, *, collect_all: bool = True) -> Report:
        from exportlens.exporter.runtime.in_process import export_plan  # torch: only the tests that export pay for it
        from exportlens.exporter.runtime.run import Options

        return export_plan(make_plan([self.root]), Options(collect_all=collect_all))

    def module(self, target: str, **kwargs) -> ModuleReport:
        report = self.check(**kwargs)
        matches = [m for m in report.modules if m.target == target or m.target.endswith(f":{target}")]
        assert matches, f"{target} not found in {[m.target for m in report.modules]}; findings: {report.findings}"
        return matches[0]

    def apply(self, fix: Fix) -> None:
        """Apply a fix's edits the way an editor does: to the named files, positions from before."""
        for path in {e.path for e in fix.edits}:
            edits = [e for e in fix.edits if e.path == path]
            (self.root / path).write_text(apply_edits(self.read(path), edits), encoding="utf-8")


@pytest.fixture(scope="module")
def pool(request: pytest.FixtureRequest):
    """A worker pool for a test module's real exports: its ``POOL_JOBS`` workers, else 2."""
    from exportlens.exporter.workers.pool import Pool

    with Pool(jobs=getattr(request.module, "POOL_JOBS", 2)) as pool:
        yield pool


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def line_of(project: Project, path: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    for i, line in enumerate(project.read(path).splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def only(findings: tuple[Finding, ...] | list[Finding], code: str) -> Finding:
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, f"expected one {code}, got {[str(f) for f in findings]}"
    return hits[0]


@pytest.fixture(autouse=True, scope="session")
def _index_cache(tmp_path_factory: pytest.TempPathFactory):
    """The index cache of every server and indexer the tests start: theirs, not the user's."""
    import os

    os.environ["EXPORTLENS_INDEX_CACHE"] = str(tmp_path_factory.mktemp("index-cache"))
    yield


def checked(root: Path, *flags: str) -> list[dict]:
    """``exportlens check . --no-cache --format json`` run in ``root`` as a user runs it: the
    report's modules, as the documented JSON has them."""
    exportlens = str(Path(sys.executable).with_name("exportlens"))
    command = [exportlens, "check", ".", "--no-cache", "--format", "json", *flags]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["modules"]
