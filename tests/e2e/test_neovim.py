"""A real editor: headless Neovim starts `exportlens serve` through its own LSP client,
opens an example file and shows exportlens's diagnostics; when Neovim stops the server,
nothing exportlens started is left running.

Needs `nvim` 0.7 or later on PATH (Debian: `apt-get install neovim`, 0.7.2); skipped
without it. The Lua side is tests/e2e/nvim_diagnostics.lua.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SCRIPT = Path(__file__).with_name("nvim_diagnostics.lua")
NVIM = shutil.which("nvim")
MARK = "EXPORTLENS_E2E_MARK"  # in the server's environment, inherited by everything it starts
# Neovim probes for Python, Ruby, Node and Perl hosts when a Python buffer's plugins load (through
# pyenv shims that can take seconds); exportlens needs none of them.
NO_PROVIDERS = (
    "let g:loaded_python3_provider = 0 | let g:loaded_python_provider = 0 | let g:loaded_ruby_provider = 0 | "
    "let g:loaded_node_provider = 0 | let g:loaded_perl_provider = 0"
)
WAIT_MS = 60_000  # for the verdict: the first export of a session waits for torch to import


def _nvim_version() -> tuple[int, ...] | None:
    if NVIM is None:
        return None
    try:
        first = subprocess.run(
            [NVIM, "--version"], check=False, capture_output=True, text=True, timeout=30
        ).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None
    m = re.search(r"v(\d+)\.(\d+)", first)
    return tuple(map(int, m.groups())) if m else None


VERSION = _nvim_version()
pytestmark = [
    pytest.mark.slow,  # a real editor: minutes; CI runs it, `-m "not slow"` skips it
    pytest.mark.skipif(
        NVIM is None, reason="Neovim is not installed (`nvim` not on PATH; Debian: apt-get install neovim)"
    ),
    pytest.mark.skipif(
        NVIM is not None and (VERSION or (0, 0)) < (0, 7),
        reason=f"Neovim {VERSION} is older than 0.7 (vim.diagnostic, vim.lsp.start_client with on_exit)",
    ),
    pytest.mark.timeout(240),
]


def server_command() -> list[str]:
    """`exportlens serve` from this interpreter's environment (not a shim that may pick another)."""
    script = Path(sys.executable).parent / "exportlens"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "serve"]
    return [sys.executable, "-m", "exportlens.cli", "serve"]


def marked(token: str) -> dict[int, str]:
    """Live processes (pid → command line) carrying ``MARK=token`` in their environment."""
    needle = f"{MARK}={token}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = next((ln for ln in (entry / "status").read_text().splitlines() if ln.startswith("State:")), "")
            if "Z" in state.split()[1:2]:
                continue  # a zombie holds no resources; its parent has yet to reap it
            found[int(entry.name)] = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            )
        except (OSError, IndexError):
            continue  # gone, or not ours to read
    return found


def leftovers(token: str, grace: float = 10.0) -> dict[int, str]:
    """What is still running after ``grace`` seconds (killing is asynchronous)."""
    deadline = time.monotonic() + grace
    while (left := marked(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def run_nvim(tmp_path: Path, root: Path, rel: str, code: str, quit_on: str | None = None) -> dict:
    token = uuid.uuid4().hex
    home = tmp_path / "nvim-home"
    out = tmp_path / "nvim-result.json"
    env = {
        **os.environ,
        MARK: token,
        **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("CONFIG", "DATA", "STATE", "CACHE")},
        "EXPORTLENS_NVIM_CMD": json.dumps(server_command()),
        "EXPORTLENS_NVIM_ROOT": str(root),
        "EXPORTLENS_NVIM_FILE": rel,
        "EXPORTLENS_NVIM_CODE": code,
        "EXPORTLENS_NVIM_TIMEOUT": str(WAIT_MS),
        "EXPORTLENS_NVIM_OUT": str(out),
        "EXPORTLENS_NVIM_QUIT_ON": quit_on or "",
    }
    env.pop("NVIM", None)  # not a child of another Neovim
    env.pop("NVIM_LISTEN_ADDRESS", None)
    seen: dict[int, str] = {}  # every process the server started, seen while Neovim ran
    stdout, stderr = tmp_path / "nvim-stdout.txt", tmp_path / "nvim-stderr.txt"
    with stdout.open("w") as o, stderr.open("w") as e:  # files, not pipes: nothing blocks on a full pipe
        proc = subprocess.Popen(
            [NVIM, "--headless", "--clean", "-n", "--cmd", NO_PROVIDERS, "-c", f"luafile {SCRIPT}"],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=o,
            stderr=e,
        )
    try:
        deadline = time.monotonic() + WAIT_MS / 1000 + 60
        while proc.poll() is None and time.monotonic() < deadline:
            seen.update((pid, cmd) for pid, cmd in marked(token).items() if pid != proc.pid)
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        left = leftovers(token)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in marked(token):  # ours, by our token: never leave them to the next test
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    lsp_log = next(home.rglob("lsp.log"), None)
    context = (
        f"nvim exit {proc.returncode}\nstdout:\n{stdout.read_text()}\nstderr:\n{stderr.read_text()[-4000:]}\n"
        f"lsp.log (tail):\n{lsp_log.read_text()[-4000:] if lsp_log else '(none)'}"
    )
    assert out.is_file(), f"the Lua script wrote no result\n{context}"
    result = json.loads(out.read_text())
    result["context"] = context + "\nserver log:\n" + "\n".join(result.get("logs", []))
    result["leftovers"] = left
    result["seen"] = seen
    return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    return root.resolve()


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines()):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def test_neovim_shows_the_data_dependent_branch_on_its_line(tmp_path, root):
    result = run_nvim(tmp_path, root, "models/router.py", "EL101")
    ctx = result["context"]
    assert result.get("error") is None and result["found"], (
        f"{result.get('error')}; diagnostics: {result['diagnostics']}\n{ctx}"
    )

    [d] = [d for d in result["diagnostics"] if d["code"] == "EL101"]
    line = line_of(root / "models/router.py", "if routed > 0")
    assert d["lnum"] == line, (d, ctx)
    assert d["source"] == "exportlens" and d["severity"] == "ERROR"
    assert "routed" in d["message"], d
    text = (root / "models/router.py").read_text().splitlines()[line]
    end = d["end_col"] if d["end_lnum"] == line else len(text)
    assert "routed" in text[d["col"] : end], (d, text)  # Neovim's byte columns cover the user's name

    status = result["status"]
    assert status, f"exportlens/status failed: {result.get('status_error')}"
    assert status["torch_imported"] is False, status  # torch lives in the workers only
    # Neovim's stop (shutdown, then exit) ended the server by itself, cleanly
    assert result["exit"] == {"code": 0, "signal": 0}, (result["exit"], ctx)
    assert not result["leftovers"], f"processes left after Neovim stopped the server: {result['leftovers']}\n{ctx}"


def test_quitting_neovim_mid_export_leaves_nothing_running(tmp_path, root):
    """`:qa` while the first export waits for torch: Neovim sends shutdown and exit, gives the
    server 500 ms, then SIGTERM. The server, its warm worker and its indexer all go."""
    result = run_nvim(tmp_path, root, "models/encoder.py", "", quit_on="exporting ")
    assert result.get("error") is None, f"{result.get('error')}\n{result['context']}"
    started = {pid: cmd for pid, cmd in result["seen"].items() if "exportlens" in cmd and " serve" not in cmd}
    assert started, f"the server had started nothing to stop: {result['seen']}"  # its warm worker, its indexer
    assert not result["leftovers"], f"processes left after Neovim quit: {result['leftovers']}\n{result['context']}"
