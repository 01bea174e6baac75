"""What the server does to a text a module (or a client) controls takes time linear in its
length: the plain-text hover's emphasis, the outgoing writer's frame cutting, the reader's scan
of a frame too deep to parse, the dim name completed in a shape string. Each says what the
regular expression it replaced said, on every short text; on the long texts that took that
expression minutes, it answers (no timed assert: the figures are in
bench/bench_long_messages.py)."""

from __future__ import annotations

import json
import random
import re

import pytest

from exportlens.server.features.markup import plain, unemphasized
from exportlens.server.features.spec_complete import typed_dim
from exportlens.server.frames import _top_level
from exportlens.server.outgoing import Outgoing, without_frames

# the expressions replaced: the reference on short texts, where backtracking costs nothing
EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")
HEADER = re.compile(r"Traceback \(most recent call last\):\s*")
DIM = re.compile(r"\[[^\]]*[\[,*+\-]\s*([A-Za-z_]\w*)?$|\[\s*([A-Za-z_]\w*)?$")
FRAME = re.compile(r'(?:^[ \t]+)?File "[^\n]*", line \d+[^\n]*\n?(?:[ \t]{4,}[^\n]*\n?)*', re.MULTILINE)

MEGABYTE = 1 << 20
LONG = {
    "stars": "*a " * (MEGABYTE // 3),
    "strong": "**a " * (MEGABYTE // 4),
    "frames": 'File "' * (MEGABYTE // 6),
    "located": '  File "x", line 1\n    a = b\n' * (MEGABYTE // 30),
    "brackets": "[{(" * (MEGABYTE // 6) + ")}]" * (MEGABYTE // 6),
    "backslashes": "\\" * MEGABYTE,
    "unicode": "é𝄞\u2028\x85\r*" * (MEGABYTE // 6),
}


def pieces(seed: int, alphabet: list[str], count: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14))) for _ in range(count)]


def test_emphasis_is_unwrapped_as_the_regular_expression_did():
    for text in pieces(1, ["*", "**", "***", " ", "\t", "a", "é", "\x1c", "\u2028", "`"], 50_000):
        assert unemphasized(text) == EMPHASIS.sub(r"\2", text), repr(text)


def test_frames_are_cut_as_the_regular_expressions_did():
    alphabet = ['File "', '", line ', "1", "٣", " ", "    ", "\t", "\n", "x", '"', "Traceback (most recent call last):"]
    for text in pieces(2, alphabet, 50_000):
        assert without_frames(text) == FRAME.sub("", HEADER.sub("", text)), repr(text)


def test_the_dim_being_typed_is_found_as_the_regular_expression_found_it():
    for text in pieces(3, ["[", "]", ",", "*", "+", "-", " ", "\t", "a", "B", "_", "9", "é", "٣", "x1"], 50_000):
        m = DIM.search(text)
        assert typed_dim(text) == (None if m is None else m.group(1) or m.group(2) or ""), repr(text)


def test_a_long_shape_string_is_completed_in_one_pass():
    # a pyproject.toml line of brackets: each `[` was tried to the end of the line
    assert typed_dim("[" * MEGABYTE + "ba") == "ba"
    assert typed_dim("[," * MEGABYTE + " 9") is None


@pytest.mark.parametrize("name", LONG)
def test_a_megabyte_of_any_text_is_made_plain_and_cut_of_frames(name):
    text = LONG[name]
    assert len(plain(text)) <= len(text)
    kept = without_frames(text)
    assert 'File "x", line 1' not in kept
    assert kept == text or name == "located"


@pytest.mark.parametrize("name", LONG)
def test_the_writer_passes_a_megabyte_of_any_text_on(name):
    written = []

    class Stdout:
        def write(self, data: bytes) -> None:
            written.append(data)

        def flush(self) -> None:
            pass

    # a message holding the marks of a frame is read and cut whole; "located"'s frames go
    text = LONG[name] + ' File "/x.py", line 3, in f'
    Outgoing(Stdout()).message({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": text}})
    header, _, body = b"".join(written).partition(b"\r\n\r\n")
    assert header == f"Content-Length: {len(body)}".encode()
    assert 'File "/x.py", line 3' not in json.loads(body)["params"]["message"]


def test_a_frame_too_deep_to_parse_is_scanned_once_whatever_its_strings_hold():
    # an escaped quote after an unclosed string: each quote was tried to the end again
    body = b'{"id": 7, "params": ' + b"[" * 2000 + b'"' + b'\\"' * (MEGABYTE // 2 - 2000)
    assert _top_level(body) is None  # no JSON object: not answerable, and not waited on
    closed = b'{"id": 7, "method": "m", "params": ' + b"[" * 2000 + b'"\\""' + b"]" * 2000 + b"}"
    assert _top_level(closed) == {"id": 7, "method": "m", "params": None}


TARGET = re.compile(r"(?P<path>.+):(?P<name>[^\W\d][\w.]*)(?:\[(?P<variant>.*)\])?", re.DOTALL)


def test_a_target_is_taken_apart_as_the_regular_expression_did():
    from exportlens.exporter.core.targets import _named

    for text in pieces(4, [":", "a", "B", "9", ".", "[", "]", "\\", "/", "é", " ", "\n", "py"], 50_000):
        m = TARGET.fullmatch(text)
        got = _named(text)
        want = None if m is None else (m["path"], m["name"], m["variant"])
        assert (got and (got.path, got.name, got.variant)) == want, repr(text)


def test_a_long_target_is_taken_apart():
    from exportlens.exporter.core.targets import Target

    assert Target.parse(":a[" * 100_000) == Target(":a[" * 99_999, "a")
    assert Target.parse("net.py" + ":a[" * 100_000 + ":Net[x]") == Target("net.py" + ":a[" * 100_000, "Net", "x")
