"""Where pyproject.toml writes each module table's dims and targets, in the forms TOML allows
(dotted keys, sub-tables, quoted keys, variants), and what a half-typed text leaves open."""

from __future__ import annotations

from exportlens.exporter.spec.spec_text import MODULES, context_at, family, scan, use_at, uses

TEXT = """\
[tool.exportlens.modules."m.py:Net"]
inputs.x = { shape = "f32[n, 2*n + 1]" }   # a comment [not, a, shape]
inputs.pair = ["i64[n, k]", 'f16[k]']

[tool.exportlens.modules."m.py:Net".dims]
n = { max = 4 }
"k" = {}

[[tool.exportlens.modules."m.py:Net".variants]]
name = "small"
inputs = { y = \"\"\"f32[n, m]\"\"\" }

[tool.exportlens.modules."other.py:Other"]
inputs = { x = "f32[n]" }
"""


def test_every_dim_of_a_table_is_found_where_it_is_written():
    net = family(scan(TEXT), "m.py:Net")
    found = [(u.name, u.input, u.axis, u.size, TEXT[u.start : u.end]) for u in uses(net)]
    assert found == [
        ("n", "x", 0, "n", "n"),
        ("n", "x", 1, "2*n + 1", "n"),
        ("n", "pair", 0, "n", "n"),
        ("k", "pair", 1, "k", "k"),
        ("k", "pair", 0, "k", "k"),  # another string of the same input
        ("n", None, None, None, "n"),
        ("k", None, None, None, "k"),  # inside its quotes
        ("n", "y", 0, "n", "n"),
        ("m", "y", 1, "m", "m"),
    ]
    (other,) = family(scan(TEXT), "other.py:Other")
    assert [u.name for u in other.dim_uses()] == ["n"]  # another table's n is another dim


def test_the_dim_under_the_cursor():
    tables = family(scan(TEXT), "m.py:Net")
    at = TEXT.index("2*n") + 2
    assert use_at(tables, at).size == "2*n + 1"
    assert use_at(tables, TEXT.index("max = 4")) is None


def test_a_half_typed_text_says_what_is_open():
    header = '[tool.exportlens.modules."m.py:N'
    ctx = context_at(header, len(header))
    assert (ctx.kind, ctx.path, ctx.text) == ("header", MODULES, '"m.py:N')
    typing = '[tool.exportlens.modules."m.py:Net"]\ninputs = { x = "f32[batch, s'
    ctx = context_at(typing, len(typing))
    assert (ctx.kind, ctx.path[-2:], ctx.text) == ("string", ("inputs", "x"), "f32[batch, s")
    key = '[tool.exportlens.modules."m.py:Net"]\ndims = { batch = { max = 4 }, s'
    ctx = context_at(key, len(key))
    assert (ctx.kind, ctx.path[-1], ctx.text, ctx.in_table) == ("key", "dims", "s", True)


def test_a_string_with_escapes_is_left_alone():
    text = '[tool.exportlens.modules."m.py:Net"]\ninputs = { x = "f32[\\u0062, n]" }\n'
    assert [u.name for u in uses(scan(text))] == []
