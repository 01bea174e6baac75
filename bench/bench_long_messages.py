"""Long messages: modules whose forward raises an exception with a one-line text of about a
megabyte (plain, ``*a `` repeated, ``File "`` repeated), in `exportlens serve`.

A generated project holds one module file per text. A real LSP client opens them all and,
until every file's error is published, asks ``exportlens/status`` back to back, one request
at a time; then it hovers each class ``--hovers`` times, a status request beside each
hover. Printed, each measured in this one run:

- **status latency** while the exports land and their diagnostics are published (and the
  server logs their verdicts), and while the classes are hovered: p50, p99 and max of each
  ``exportlens/status`` round trip. Goal: ≤ 100 ms (max).
- **hover latency**: p50 and max of each hover's round trip, and the length of its text.

    python bench/bench_long_messages.py                      # a plain-text client (eglot's)
    python bench/bench_long_messages.py --format markdown    # VS Code's
    python bench/bench_long_messages.py --quick              # 1 round of hovers, 2 s to settle (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SERVER = [sys.executable, "-m", "exportlens.cli", "serve"]
TEXTS = {  # class -> the expression its forward raises RuntimeError with: each about a megabyte
    "Plain": '"x" * 1_000_000',
    "Stars": '"*a " * 333_333',
    "Frames": "'File \"' * 166_666",
}
MODULE = """\
import torch


class {name}(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        raise RuntimeError({text})
"""


def project(tmp: Path) -> Path:
    root = tmp / "long"
    (root / "models").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "long"\n')
    for name, text in TEXTS.items():
        (root / "models" / f"{name.lower()}.py").write_text(MODULE.format(name=name, text=text))
    return root


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def status(client: LanguageClient) -> float:
    start = time.perf_counter()
    await client.protocol.send_request_async("exportlens/status", {})
    return time.perf_counter() - start


async def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    client = LanguageClient("exportlens-bench-long", "0")
    errors: dict[str, bool] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(ls, params: types.PublishDiagnosticsParams) -> None:
        errors[params.uri] = any(d.severity == types.DiagnosticSeverity.Error for d in params.diagnostics)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    @client.feature("exportlens/exports")
    def _ignored(ls, params: Any) -> None:  # the log and the status bar's counts: not measured here
        pass

    await client.start_io(*SERVER, cwd=str(root))
    stderr = asyncio.create_task(_drain(client._server.stderr))  # pygls pipes it and never reads it
    kind = types.MarkupKind.PlainText if args.format == "plaintext" else types.MarkupKind.Markdown
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[kind]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        )
    )
    uri = root.as_uri()
    await client.initialize_async(
        types.InitializeParams(capabilities=caps, root_uri=uri, workspace_folders=[types.WorkspaceFolder(uri, "long")])
    )
    client.initialized(types.InitializedParams())
    await asyncio.sleep(args.settle)  # indexed, torch imported in the warm worker
    uris = {name: (root / "models" / f"{name.lower()}.py").as_uri() for name in TEXTS}
    for name, u in uris.items():
        text = Path(root / "models" / f"{name.lower()}.py").read_text()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(u, "python", 1, text)))
    landing, start = [], time.perf_counter()
    while not all(errors.get(u) for u in uris.values()):
        if time.perf_counter() - start > args.timeout:
            raise SystemExit(f"not every error was published within {args.timeout} s: {errors}")
        landing.append(await status(client))
    hovering, hovers, lengths = [], [], []
    for _ in range(args.hovers):
        for u in uris.values():
            params = types.HoverParams(types.TextDocumentIdentifier(u), types.Position(3, 8))
            began = time.perf_counter()
            hover, took = await asyncio.gather(client.text_document_hover_async(params), status(client))
            hovers.append(time.perf_counter() - began)
            hovering.append(took)
            lengths.append(len(hover.contents.value) if hover else 0)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    stderr.cancel()
    return {"landing": landing, "hovering": hovering, "hovers": hovers, "lengths": lengths}


async def _drain(stream) -> None:
    while await stream.read(65536):
        pass


def report(args: argparse.Namespace, out: dict[str, Any]) -> None:
    ms = lambda v: f"{v * 1000:8.1f} ms"  # noqa: E731
    print(f"{len(TEXTS)} modules, one-line messages of about a megabyte; {args.format} hover")
    print(f"{'':44s}{'n':>6s} {'p50':>11s} {'p99':>11s} {'max':>11s}")
    for label, key in (("status while exports land and publish", "landing"), ("status beside each hover", "hovering")):
        v = out[key]
        print(f"{label:44s}{len(v):6d} {ms(pct(v, 0.5))} {ms(pct(v, 0.99))} {ms(max(v))}")
    v = out["hovers"]
    print(f"{'hover round trip':44s}{len(v):6d} {ms(pct(v, 0.5))} {ms(pct(v, 0.99))} {ms(max(v))}")
    print(f"hover text: {min(out['lengths'])}-{max(out['lengths'])} characters. Goal: status max <= 100 ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", choices=("plaintext", "markdown"), default="plaintext")
    parser.add_argument("--hovers", type=int, default=20, help="rounds of hovering every class")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds for the index and the warm worker")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--quick", action="store_true", help="1 round of hovers, 2 s to settle (CI)")
    args = parser.parse_args()
    if args.quick:
        args.hovers, args.settle = 1, 2.0
    with tempfile.TemporaryDirectory() as tmp:
        report(args, asyncio.run(run(args, project(Path(tmp)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
