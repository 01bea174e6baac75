"""Keystrokes into a large file: each incremental change is applied by cutting the text at
its offsets (``compat.fast_incremental_edits``), giving the text pygls's own way gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

from exportlens.server import compat

compat.fast_incremental_edits()

LINES = st.lists(st.text(alphabet="ab 🚀é\t", max_size=6), min_size=1, max_size=6)
EDIT = st.tuples(
    st.integers(0, 7), st.integers(0, 9), st.integers(0, 7), st.integers(0, 9), st.text(alphabet="xy\n🚀\r", max_size=4)
)


def by_pygls(text: str, change: types.TextDocumentContentChangePartial, encoding: str) -> str:
    """What pygls 2.1.1's own incremental change gives: splitlines, then every line written back."""
    doc = TextDocument("file:///x.py", text, sync_kind=types.TextDocumentSyncKind.Incremental)
    doc._position_codec = PositionCodec(encoding)
    doc._exportlens_plain = False  # pygls's way
    doc.apply_change(change)
    return doc.source


@settings(max_examples=300, deadline=None)
@given(
    lines=LINES, edits=st.lists(EDIT, min_size=1, max_size=8), encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"])
)
def test_a_cut_gives_the_text_pygls_gives(lines, edits, encoding):
    text = "\n".join(lines) + "\n"
    doc = TextDocument("file:///x.py", text, sync_kind=types.TextDocumentSyncKind.Incremental)
    doc._position_codec = PositionCodec(encoding)
    for l1, c1, l2, c2, new in edits:
        (l1, c1), (l2, c2) = sorted([(l1, c1), (l2, c2)])
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(l1, c1), types.Position(l2, c2)), text=new
        )
        expected = by_pygls(doc.source, change, encoding)
        doc.apply_change(change)
        assert doc.source == expected
