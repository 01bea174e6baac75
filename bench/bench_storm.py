"""An open storm: a real LSP client opens 200 small module files at once in `exportlens serve`.

A generated project holds ``--files`` module files (``mods/m<i>.py``, one class each, a
pyproject.toml table each); every fourth one hard-codes its batch size (EL204), the others
export. The client opens them all in one burst (didOpen back to back, as an editor that
restores a session does) and, while the server works, asks ``exportlens/status`` every
``--ping`` seconds, one request at a time. Printed, each measured in this one run:

- **time until every verdict is right**: from the first didOpen until every module's
  "<target>: exported|failed in X s" log line has come and every failing file's last
  published diagnostics hold its EL204 (and no exported file's hold any); beside it, the
  sum of the exports' own times (the X s of each log line) divided by the jobs, the time
  the exports alone would take on the pool. Goal: ≤ 1.2× that.
- **diagnostic pushes per file**: publishDiagnostics per file from the first didOpen until
  ``--quiet`` seconds after the last verdict was right and the last failing module's fixes were
  proven (its "proved" log line), and when each push came to a file pushed more than twice, with
  its codes. Goal: ≤ 2.
- **status latency** during the storm: p50, p99 and max of each ``exportlens/status``
  round trip. Goal: ≤ 100 ms (p99).
- the server process's CPU seconds over the storm (from /proc), for contrast.

Then, on the same server, ``--edits`` keystrokes typed into a ``--edit-lines``-line file
(incremental didChange, back to back): status latency meanwhile, and when the server answers
a status request sent after the last one. Goal: p99 ≤ 100 ms.

    python bench/bench_storm.py                  # 200 files, jobs 2: about 1-2 minutes on 2 cores
    python bench/bench_storm.py --files 50 --jobs 1 --edits 0
    python bench/bench_storm.py --quick          # 8 files, 50 keystrokes into 2,000 lines (CI)
    python bench/bench_storm.py --hogs 2         # the same with two busy processes beside it (a loaded machine)
    python bench/bench_storm.py --server "py-spy record -f raw -o storm.txt -- python -m exportlens.cli serve"
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from storm_report import report

SERVER = [sys.executable, "-m", "exportlens.cli", "serve"]

GOOD = """\
import torch
from torch import nn


class M{i}(nn.Module):
    def __init__(self, hidden: int = 8):
        super().__init__()
        self.fc = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) + {i}
"""

BAD = """\
import torch
from torch import nn


class M{i}(nn.Module):
    def __init__(self, hidden: int = 8):
        super().__init__()
        self.fc = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).view(4, -1) + {i}
"""

TABLE = """
[tool.exportlens.modules."mods/m{i}.py:M{i}"]
inputs = {{ x = "f32[batch, 8]" }}
dims = {{ batch = {{ min = 2, max = 64, example = 4 }} }}
"""

LANDED = re.compile(r"exportlens: (mods/m(\d+)\.py:M\d+): (exported|failed) in ([\d.]+) s")
PROVED = re.compile(r"exportlens: mods/m(\d+)\.py:M\d+: proved ")


def failing(i: int) -> bool:
    return i % 4 == 3


def project(tmp: Path, files: int) -> Path:
    root = tmp / "storm"
    (root / "mods").mkdir(parents=True)
    (root / "mods" / "__init__.py").write_text("")
    spec = '[project]\nname = "storm"\nversion = "0"\n\n[tool.exportlens]\ndevice = "cpu"\n'
    for i in range(files):
        (root / "mods" / f"m{i}.py").write_text((BAD if failing(i) else GOOD).format(i=i))
        spec += TABLE.format(i=i)
    (root / "pyproject.toml").write_text(spec)
    return root


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process."""
    return sum(cpu_times(pid)[:2])


def cpu_times(pid: int | None) -> tuple[float, float, float, float]:
    """A live process's user and system CPU seconds, then its reaped children's (the warm
    worker's children are the exports' processes); zeros where there is no such process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return (0.0, 0.0, 0.0, 0.0)
    tick = os.sysconf("SC_CLK_TCK")
    return tuple(int(fields[i]) / tick for i in (11, 12, 13, 14))


@dataclass
class Storm:
    """What the client saw: pushes, verdicts and the diagnostics each file shows."""

    files: int
    pushes: Counter = field(default_factory=Counter)  # uri -> publishDiagnostics
    seen: dict[str, list[tuple[float, list[Any]]]] = field(default_factory=dict)  # uri -> (when, its codes) per push
    verdicts: dict[int, tuple[str, float]] = field(default_factory=dict)  # module number -> (status, its own seconds)
    right_at: float | None = None
    proved: set[int] = field(default_factory=set)  # failing modules whose fixes' proofs landed
    proved_at: float | None = None  # when the last of them did
    tick: asyncio.Event = field(default_factory=asyncio.Event)

    def right(self, root: Path) -> bool:
        if len(self.verdicts) < self.files:
            return False
        for i in range(self.files):
            status, _ = self.verdicts[i]
            codes = self.seen.get((root / "mods" / f"m{i}.py").as_uri(), [(0.0, [])])[-1][1]  # its last push's
            if status != ("failed" if failing(i) else "exported") or (("EL204" in codes) != failing(i)):
                return False
        return True


async def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    storm = Storm(args.files)
    client = LanguageClient("exportlens-bench-storm", "0")
    t0 = 0.0

    def changed() -> None:
        if storm.right_at is None and storm.right(root):
            storm.right_at = time.perf_counter() - t0
        storm.tick.set()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(ls, params: types.PublishDiagnosticsParams) -> None:
        storm.pushes[params.uri] += 1
        storm.seen.setdefault(params.uri, []).append((time.perf_counter() - t0, [d.code for d in params.diagnostics]))
        changed()

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(ls, params: types.LogMessageParams) -> None:
        m = LANDED.search(params.message)
        if m and "earlier session" not in params.message:
            storm.verdicts[int(m.group(2))] = (m.group(3), float(m.group(4)))
            changed()
        if p := PROVED.search(params.message):
            storm.proved.add(int(p.group(1)))
            storm.proved_at = time.perf_counter() - t0
            storm.tick.set()

    @client.feature("exportlens/exports")
    def _counts(ls, params: Any) -> None:  # the status bar's: not measured here
        pass

    await client.start_io(*SERVER, cwd=str(root))
    stderr = asyncio.create_task(_drain(client._server.stderr))  # pygls pipes it and never reads it
    uri = root.as_uri()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                text_document=types.TextDocumentClientCapabilities(
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
                ),
                workspace=types.WorkspaceClientCapabilities(workspace_folders=True),
            ),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=root.name)],
            initialization_options={"jobs": args.jobs},
        )
    )
    client.initialized(types.InitializedParams())
    status = await client.protocol.send_request_async("exportlens/status", {})
    pid = status["pid"] if isinstance(status, dict) else status.pid
    await asyncio.sleep(args.settle)  # the workspace indexed, torch imported in the warm worker

    status = await client.protocol.send_request_async("exportlens/status", {})
    worker = status.get("worker_pid") if isinstance(status, dict) else getattr(status, "worker_pid", None)
    pinger = Pinger(client, args.ping)
    cpu0, pool0 = cpu_seconds(pid), cpu_times(worker)
    t0 = time.perf_counter()
    for i in range(args.files):
        rel = f"mods/m{i}.py"
        text = (root / rel).read_text()
        item = types.TextDocumentItem(uri=(root / rel).as_uri(), language_id="python", version=1, text=text)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    pinger.start()
    try:  # until every verdict is right and every failing module's fixes are proven: pushes count until then
        while storm.right_at is None or len(storm.proved) < sum(map(failing, range(args.files))):
            if time.perf_counter() - t0 > args.timeout:
                break
            storm.tick.clear()
            try:
                await asyncio.wait_for(storm.tick.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
        await asyncio.sleep(args.quiet)  # pushes that come after the verdicts are right count too
    finally:
        latencies = await pinger.stop()
    cpu = cpu_seconds(pid) - cpu0
    pool = tuple(
        b - a for a, b in zip(pool0, cpu_times(worker))
    )  # (parent user, parent system, jobs user, jobs system)
    elapsed = time.perf_counter() - t0
    edits = await edit_storm(client, root, args) if args.edits else None
    try:
        await asyncio.wait_for(client.shutdown_async(None), 20)
        client.exit(None)
        await asyncio.wait_for(client._server.wait(), 20)
    except (asyncio.TimeoutError, RuntimeError, ConnectionError):
        client._server.kill()
    await client.stop()
    stderr.cancel()
    return {"storm": storm, "latencies": latencies, "cpu": cpu, "pool": pool, "elapsed": elapsed, "edits": edits}


class Pinger:
    """``exportlens/status`` every ``every`` seconds, one at a time, each round trip timed."""

    def __init__(self, client: LanguageClient, every: float) -> None:
        self.client, self.every = client, every
        self.latencies: list[float] = []
        self.running = False

    def start(self) -> None:
        self.running = True
        self.task = asyncio.create_task(self._run())

    async def stop(self) -> list[float]:
        self.running = False  # not cancelled: pygls trips on the reply to a cancelled request
        await self.task
        return self.latencies

    async def _run(self) -> None:
        while self.running:
            t = time.perf_counter()
            await self.client.protocol.send_request_async("exportlens/status", {})
            self.latencies.append(time.perf_counter() - t)
            await asyncio.sleep(self.every)


async def edit_storm(client: LanguageClient, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``--edits`` keystrokes sent back to back into a ``--edit-lines``-line file, as
    incremental didChange, each typing one character at the end of the file's last line."""
    big = root / "big.py"
    lines = [f"def f{i}(x):\n    return x + {i}\n" for i in range(args.edit_lines // 2)]
    text = "".join(lines) + "# typing here: "
    big.write_text(text)
    uri = big.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await client.protocol.send_request_async("exportlens/status", {})
    last, column = text.count("\n"), len("# typing here: ")
    pinger = Pinger(client, args.ping)
    pinger.start()
    t0 = time.perf_counter()
    for n in range(args.edits):
        at = types.Position(line=last, character=column + n)
        change = types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="x")
        identifier = types.VersionedTextDocumentIdentifier(uri=uri, version=n + 2)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=identifier, content_changes=[change])
        )
        if n % 50 == 49:
            await asyncio.sleep(0.01)  # a fast typist, not one write of the whole storm
    sent = time.perf_counter() - t0
    await client.protocol.send_request_async("exportlens/status", {})
    caught_up = time.perf_counter() - t0
    return {"lines": text.count("\n") + 1, "sent": sent, "caught_up": caught_up, "latencies": await pinger.stop()}


async def _drain(stream) -> None:
    while await stream.read(65536):
        pass


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=200, help="module files opened at once (default 200)")
    p.add_argument("--jobs", type=int, default=2, help="the server's jobs setting (default 2)")
    p.add_argument("--ping", type=float, default=0.05, help="seconds between status requests (default 0.05)")
    p.add_argument(
        "--settle", type=float, default=8.0, help="seconds to wait after initialized, before the storm (default 8)"
    )
    p.add_argument(
        "--quiet", type=float, default=3.0, help="seconds to keep counting pushes after the verdicts are right"
    )
    p.add_argument(
        "--edits", type=int, default=2000, help="keystrokes into a large file after the open storm (0: none)"
    )
    p.add_argument("--edit-lines", type=int, default=50_000, help="lines of that file (default 50,000)")
    p.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    p.add_argument(
        "--server",
        help="the server command (default: this Python's -m exportlens.cli serve), e.g. under a sampling profiler",
    )
    p.add_argument("--hogs", type=int, default=0, help="busy processes that run beside the whole bench (default 0)")
    p.add_argument("--quick", action="store_true", help="8 files, 2 s to settle, 50 keystrokes into 2,000 lines (CI)")
    args = p.parse_args()
    if args.quick:
        args.files, args.settle, args.quiet, args.edits, args.edit_lines = 8, 2.0, 1.0, 50, 2_000
    if args.server:
        SERVER[:] = shlex.split(args.server)
    tmp = Path(tempfile.mkdtemp(prefix="exportlens-bench-storm-"))
    # a loaded machine: each hog spins one core for as long as the bench runs
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        root = project(tmp, args.files)
        print(f"server: {' '.join(SERVER)}; workspace {root}; {args.hogs} CPU hogs beside it")
        report(args, root, asyncio.run(run(args, root)), sum(map(failing, range(args.files))))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
