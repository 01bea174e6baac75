"""A 20,000-line Python file in the editor: does the server stay responsive and give its
memory back?

Drives `exportlens serve` over raw stdio (exportOn = manual: no exports, only parsing):
opens the file, edits it 20 times, closes it, and meanwhile asks for a hover on a small
file every 5 ms. Prints the server's RSS before opening, after the edits and after the
close (goal: after the close ≤ 1.5× before), and the longest wait for a hover answer
while the big file is parsed (goal ≤ 100 ms).

    python bench/bench_large_file.py
    python bench/bench_large_file.py --quick   # 2,000 lines, 2 edits, short pauses: that it runs (CI)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LINES = 20_000
EDITS = 20

SMALL = "from torch import nn\n\n\nclass Small(nn.Module):\n    def forward(self, x):\n        return x\n"


def big_file(lines: int = LINES) -> str:
    """Modules of 50 lines each, as a generated model zoo looks."""
    parts = ["import torch\nfrom torch import nn\n"]
    for i in range(lines // 50):
        body = "".join(f"        x = x * {j} + self.w{i}\n" for j in range(44))
        parts.append(f"\n\nclass Block{i}(nn.Module):\n    def forward(self, x):\n{body}        return x\n")
    return "".join(parts)


class Client:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "exportlens.cli", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=root,
        )
        self.lock = threading.Lock()
        self.replies: dict[int, float] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        with self.lock:
            self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            size = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            message = json.loads(out.read(size))
            if "id" in message and "method" not in message:
                self.replies[message["id"]] = time.perf_counter()

    def request(self, msg_id: int, method: str, params: dict) -> float:
        """Seconds until the answer."""
        sent = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while msg_id not in self.replies:
            time.sleep(0.001)
        return self.replies[msg_id] - sent

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 lines, 2 edits, a tenth of the pauses (CI)")
    quick = parser.parse_args().quick
    lines, edits, pause = (2_000, 2, 0.1) if quick else (LINES, EDITS, 1.0)  # pause: a factor on each wait
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "small.py").write_text(SMALL)
        text = big_file(lines)
        big = root / "big.py"
        big.write_text(text)
        client = Client(root)
        options = {"exportOn": "manual"}
        client.request(
            1, "initialize", {"capabilities": {}, "rootUri": root.as_uri(), "initializationOptions": options}
        )
        client.notify("initialized", {})
        small = {"uri": (root / "small.py").as_uri(), "languageId": "python", "version": 1, "text": SMALL}
        client.notify("textDocument/didOpen", {"textDocument": small})
        hover = {"textDocument": {"uri": small["uri"]}, "position": {"line": 3, "character": 7}}
        ids = iter(range(10, 10**9))
        client.request(next(ids), "textDocument/hover", hover)
        time.sleep(3 * pause)  # the workspace scan (of the big file too) is done
        before = client.rss()

        waits: list[float] = []
        stop = threading.Event()

        def hovers() -> None:
            while not stop.is_set():
                waits.append(client.request(next(ids), "textDocument/hover", hover))
                time.sleep(0.005)

        asker = threading.Thread(target=hovers)
        asker.start()
        uri = big.as_uri()
        client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        for version in range(2, edits + 2):
            text = text.replace(f"x * {version}", f"x * {version + 100}", 1)
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
            )
            time.sleep(0.5 * pause)  # typing pauses: each edit is rescanned
        time.sleep(2 * pause)
        edited = client.rss()
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        time.sleep(3 * pause)
        stop.set()
        asker.join()
        closed = client.rss()
        client.request(next(ids), "shutdown", {})
        client.notify("exit", {})
        client.proc.wait(10)

    mib = 1 << 20
    print(f"{lines}-line file, {edits} edits, hovers every 5 ms meanwhile ({len(waits)} answered)")
    print(f"server RSS before opening   {before / mib:7.1f} MiB")
    print(f"server RSS after the edits  {edited / mib:7.1f} MiB  ({edited / before:.2f}x)")
    print(f"server RSS after closing    {closed / mib:7.1f} MiB  ({closed / before:.2f}x, goal <= 1.5x)")
    print(
        f"longest hover wait          {max(waits) * 1000:7.1f} ms"
        f"   (median {sorted(waits)[len(waits) // 2] * 1000:.1f} ms, goal <= 100 ms)"
    )


if __name__ == "__main__":
    main()
