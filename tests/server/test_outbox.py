"""A client that does not read for a while: the server goes on handling what it sends, then
every reply reaches it, in order, even when the client asked the server to exit meanwhile; a
newer ``exportlens/exports`` drops the one still waiting for the client."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from .raw import Raw, frame

STATUS = "exportlens/status"
FILL = range(100, 500)  # status replies of about 1 kB each: far more than a pipe holds (64 kB)


@pytest.fixture
def raw(tmp_path: Path):
    server = Raw.on_net(tmp_path)
    yield server
    server.stop()


def handled(raw: Raw, mark: int, timeout: float = 30) -> bool:
    """Whether the server handles what was sent so far within ``timeout`` seconds, the client
    reading none of its output: a message refused with ``mark`` in its words comes next, and
    the server's log (read without moving the offset it writes at) says when it came."""
    raw.send(frame({"jsonrpc": "2.0", "method": mark}))
    text, fd, deadline = f"the method {mark} is not a string".encode(), raw.log.fileno(), time.monotonic() + timeout
    while text not in os.pread(fd, os.fstat(fd).st_size, 0):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def replied(raw: Raw) -> list[int | str]:
    """The ids of the responses received, in the order they came."""
    return [m["id"] for m in raw.received if "method" not in m]


def read_to_the_end(raw: Raw, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while raw.read(0.5):
        assert time.monotonic() < deadline, "the server's output never ended"


def test_a_client_that_reads_nothing_for_a_while_holds_up_nothing_then_gets_every_reply_in_order(raw):
    raw.initialize()
    for msg_id in FILL:
        raw.request(msg_id, STATUS)
    assert handled(raw, 5), "the server stopped while its client read nothing"
    raw.request(500, STATUS)
    assert raw.reply(500)["result"]["pid"] == raw.proc.pid
    assert replied(raw) == [1, *FILL, 500]
    assert all(m["result"]["pid"] == raw.proc.pid for m in raw.received if m.get("id") in FILL)


@pytest.mark.slow
def test_every_reply_queued_when_exit_comes_is_written_before_the_server_ends(raw):
    raw.initialize()
    for msg_id in FILL:
        raw.request(msg_id, STATUS)
    raw.request(600, "shutdown")
    raw.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    time.sleep(1)  # the exit is handled while the replies still wait for the client
    read_to_the_end(raw)
    assert replied(raw) == [1, *FILL, 600]
    assert raw.proc.wait(30) == 0


@pytest.mark.slow
def test_a_newer_exports_notification_drops_the_one_still_waiting_for_the_client(raw, tmp_path_factory):
    raw.initialize()
    for msg_id in FILL:
        raw.request(msg_id, STATUS)
    folders = [tmp_path_factory.mktemp("folder").as_uri() for _ in range(8)]
    for before, after in zip([None, *folders], [*folders, None]):  # each folder removed sends the counts again
        event = {
            "added": [{"uri": after, "name": "f"}] if after else [],
            "removed": [{"uri": before, "name": "f"}] if before else [],
        }
        raw.notify("workspace/didChangeWorkspaceFolders", {"event": event})
    assert handled(raw, 6)  # each count sent while the client still reads nothing
    raw.request(700, STATUS)
    raw.reply(700, timeout=60)
    last_fill = max(i for i, m in enumerate(raw.received) if m.get("id") == FILL[-1])
    counts = [m["params"] for m in raw.received[last_fill:] if m.get("method") == "exportlens/exports"]
    assert counts == [{"running": 0, "exporting": [], "exported": 0, "failed": 0, "problems": 0}]


@pytest.mark.slow
def test_a_client_that_closes_its_end_of_the_output_ends_the_server_as_the_end_of_its_input_does(raw):
    raw.initialize()
    raw.proc.stdout.close()
    with contextlib.suppress(BrokenPipeError):  # the server may have ended already
        raw.request(2, STATUS)  # its reply finds the pipe closed, if nothing written before it did
    assert raw.proc.wait(30) == 1  # ended without shutdown: exit code 1
    assert "the client closed the connection" in raw.stop()
