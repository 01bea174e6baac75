"""The torch matrix: does a checkout of exportlens hold on every torch release it supports?

For each torch version: a virtual environment of its own (created, or reused when it already
holds that torch), torch installed there with pip under a constraints file of its own
(``torch==VERSION``, so nothing installed after it can move it), then the checkout
(``pip install -e REPO[test]`` under the same constraint) when the environment has no
exportlens yet. Every run sets ``PYTHONPATH=REPO``, so an environment another checkout was
installed into tests this one. Then, in that environment:

- **examples block**: ``exportlens check examples/`` on a fresh copy of ``examples/`` (no
  cache), its output compared with the README's block, as
  ``tests/test_cli.py::test_the_readme_shows_what_checking_the_examples_prints`` does;
- **corpus**: ``pytest tests/test_corpus.py``;
- **not-slow** (``--not-slow``, long): ``pytest -m "not slow"``.

Prints one row per version (pass/fail counts and seconds) and exits 1 when any is red.
See bench/README.md for the commands and docs/ci.md for the CI step."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# the releases the supported range is tested on (pyproject.toml's torch floor and up)
VERSIONS = ["2.8.0", "2.9.1", "2.10.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]
REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
VENVS = str(CACHE / "exportlens" / "torch-{version}")
COUNTED = re.compile(r"(\d+) (passed|failed|errors?|xfailed|xpassed|skipped|deselected)")


@dataclass
class Row:
    version: str
    install: str = ""
    cells: dict[str, str] = field(default_factory=dict)
    red: list[str] = field(default_factory=list)

    def mark(self, step: str, cell: str, ok: bool) -> None:
        self.cells[step] = cell if ok else f"**{cell}**"
        if not ok:
            self.red.append(step)


def run(
    command: list[str], log: Path, env: dict[str, str], cwd: Path, timeout: float | None = None
) -> tuple[int, str, float]:
    """Runs ``command``, its stdout and stderr appended to ``log``; returns (code, stdout, seconds)."""
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = 124, _text(e.stdout), _text(e.stderr) + f"\ntimed out after {timeout} s\n"
    seconds = time.monotonic() - started
    with log.open("a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(command)}  (in {cwd}, exit {code}, {seconds:.0f} s)\n{out}{err}\n")
    return code, out, seconds


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def venv_env(venv: Path, repo: Path, constraint: Path | None = None) -> dict[str, str]:
    """The environment of a command in ``venv``: its ``bin`` first, ``repo`` on the path, and
    pip held to the version's own constraint (which replaces any global constraints file)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(repo))
    if constraint is not None:
        env["PIP_CONSTRAINT"] = str(constraint)
    return env


def torch_in(python: Path) -> str | None:
    """The torch version installed for ``python`` (without its ``+cpu`` local part), or None."""
    if not python.exists():
        return None
    probe = "import importlib.metadata as m; print(m.version('torch'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd="/")
    return done.stdout.strip().split("+")[0] if done.returncode == 0 else None


def has_exportlens(python: Path) -> bool:
    probe = "import importlib.metadata as m; m.version('exportlens'); m.version('pytest')"
    return subprocess.run([str(python), "-c", probe], capture_output=True, cwd="/").returncode == 0


def prepare(version: str, venv: Path, repo: Path, log: Path, reinstall: bool) -> tuple[str | None, str]:
    """Makes ``venv`` hold torch ``version`` and the checkout; returns (error, what it took)."""
    python = venv / "bin" / "python"
    took = []
    if torch_in(python) != version:
        if venv.exists() and not (venv / "pyvenv.cfg").exists():
            return f"{venv} exists and is not a virtual environment", "not touched"
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    constraint = venv / "torch-constraint.txt"
    constraint.write_text(f"torch=={version}\n")
    env = venv_env(venv, repo, constraint)
    pip = [str(python), "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check"]
    if torch_in(python) != version:
        code, _, seconds = run([*pip, f"torch=={version}"], log, env, venv)
        if code != 0:
            return f"pip install torch=={version} failed (exit {code})", f"torch failed after {seconds:.0f} s"
        took.append(f"torch {seconds:.0f} s")
    if reinstall or not has_exportlens(python):
        code, _, seconds = run([*pip, "-e", f"{repo}[test]"], log, env, venv)
        if code != 0:
            return f"pip install -e {repo}[test] failed (exit {code})", f"exportlens failed after {seconds:.0f} s"
        took.append(f"exportlens {seconds:.0f} s")
    if torch_in(python) != version:  # the constraint should make this impossible
        return f"torch is {torch_in(python)} after installing exportlens", " + ".join(took)
    return None, " + ".join(took) or "reused"


def readme_block(repo: Path) -> str:
    """The README's output of ``exportlens check examples/``, as tests/test_cli.py reads it."""
    text = (repo / "README.md").read_text(encoding="utf-8")
    return text.split("$ exportlens check examples/\n", 1)[1].split("```", 1)[0]


def check_examples(row: Row, venv: Path, repo: Path, logs: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="torch-matrix-examples-") as tmp:
        here = Path(tmp)
        shutil.copytree(
            repo / "examples", here / "examples", ignore=shutil.ignore_patterns("__pycache__", ".exportlens")
        )
        command = [str(venv / "bin" / "python"), "-m", "exportlens.cli", "check", "examples"]
        code, out, seconds = run(command, logs / f"{row.version}-examples.log", venv_env(venv, repo), here, timeout=900)
    expected = readme_block(repo)
    if out == expected:
        row.mark("examples", f"identical ({seconds:.0f} s)", True)
        return
    diff = list(
        difflib.unified_diff(expected.splitlines(), out.splitlines(), "README.md", f"torch {row.version}", lineterm="")
    )
    (logs / f"{row.version}-examples.diff").write_text("\n".join(diff) + "\n", encoding="utf-8")
    changed = sum(1 for line in diff[2:] if line.startswith("-"))
    row.mark("examples", f"{changed} of {len(expected.splitlines())} lines differ (exit {code})", False)


def pytest_counts(out: str) -> str:
    """The counts of pytest's last summary line, e.g. ``5 failed, 52 passed``."""
    for line in reversed(out.splitlines()):
        counts = COUNTED.findall(line)
        if counts and (" in " in line or line.startswith("=")):
            return ", ".join(f"{n} {what}" for n, what in counts)
    return "no summary"


def check_pytest(row: Row, step: str, args: list[str], venv: Path, repo: Path, logs: Path, jobs: int) -> None:
    command = [str(venv / "bin" / "python"), "-m", "pytest", *args, "-q", "-n", str(jobs), "-p", "no:cacheprovider"]
    code, out, seconds = run(command, logs / f"{row.version}-{step}.log", venv_env(venv, repo), repo)
    row.mark(step, f"{pytest_counts(out)} ({seconds:.0f} s)", code == 0)


def newest_torch() -> str:
    """The newest torch release on the index pip reads (ignoring any constraints file)."""
    env = dict(os.environ, PIP_CONSTRAINT="")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "torch"], capture_output=True, text=True, env=env
    )
    found = re.search(r"^torch \(([^)+]+)", done.stdout, re.M)
    if done.returncode != 0 or not found:
        raise SystemExit(f"torch_matrix: cannot tell the newest torch: {done.stderr.strip() or done.stdout.strip()}")
    return found.group(1)


def table(rows: list[Row], steps: list[str]) -> str:
    names = {"examples": "examples block", "corpus": "corpus", "not-slow": "not-slow"}
    lines = [
        "| " + " | ".join(["torch", "install", *(names[s] for s in steps)]) + " |",
        "|---" * (2 + len(steps)) + "|",
    ]
    for row in rows:
        lines.append(
            "| " + " | ".join([row.version, row.install, *(row.cells.get(s, "not run") for s in steps)]) + " |"
        )
    return "\n".join(lines)


def matrix_row(version: str, args: argparse.Namespace, steps: list[str]) -> Row:
    row = Row(version)
    venv = Path(
        args.venvs.format(version=version) if "{version}" in args.venvs else Path(args.venvs) / version
    ).expanduser()
    error, row.install = prepare(version, venv, args.repo, args.logs / f"{version}-install.log", args.reinstall)
    if error:
        row.red.append("install")
        row.install = f"**{error}**"
        return row
    if "examples" in steps:
        check_examples(row, venv, args.repo, args.logs)
    if "corpus" in steps:
        check_pytest(row, "corpus", ["tests/test_corpus.py"], venv, args.repo, args.logs, args.jobs)
    if "not-slow" in steps:
        check_pytest(row, "not-slow", ["-m", "not slow"], venv, args.repo, args.logs, args.jobs)
    return row


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("versions", nargs="*", help=f"torch versions (default: {' '.join(VERSIONS)})")
    parser.add_argument(
        "--newest", action="store_true", help="the newest torch release on the index (instead of versions)"
    )
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout under test (default: this one)")
    parser.add_argument(
        "--venvs", default=VENVS, help="where the environments are: a folder (FOLDER/VERSION) or a path with {version}"
    )
    parser.add_argument(
        "--logs", type=Path, help="folder for each step's output and the examples' diffs (default: a new temporary one)"
    )
    parser.add_argument("--not-slow", action="store_true", help='also run pytest -m "not slow" (long)')
    parser.add_argument("--no-examples", action="store_true", help="leave out the examples block")
    parser.add_argument("--no-corpus", action="store_true", help="leave out the corpus")
    parser.add_argument("--install-only", action="store_true", help="only create or complete the environments")
    parser.add_argument(
        "--reinstall", action="store_true", help="pip install -e the checkout even where exportlens is installed"
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=2, help="pytest-xdist workers for the pytest steps (0: in process; default 2)"
    )
    args = parser.parse_args(argv)
    args.repo = args.repo.resolve()
    args.versions = [newest_torch()] if args.newest else args.versions or VERSIONS
    args.logs = (args.logs or Path(tempfile.mkdtemp(prefix="torch-matrix-"))).resolve()
    args.logs.mkdir(parents=True, exist_ok=True)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    steps = [] if args.install_only else [s for s in ("examples", "corpus") if not getattr(args, f"no_{s}")]
    steps += ["not-slow"] if args.not_slow and not args.install_only else []
    print(f"torch matrix of {args.repo} on torch {', '.join(args.versions)}; logs in {args.logs}", flush=True)
    rows = []
    for version in args.versions:
        rows.append(matrix_row(version, args, steps))
        red = ", ".join(rows[-1].red) or "green"
        print(f"torch {version}: {red} ({rows[-1].install})", flush=True)
    print(table(rows, steps))
    return 1 if any(row.red for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
