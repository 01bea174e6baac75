"""pyproject.toml as it is while it is typed, and broken on purpose: the texts the editor
test (tests/server/test_spec_typing.py) and the CLI test (tests/test_cli_broken_spec.py)
feed exportlens. A lone surrogate is a text JSON can carry and UTF-8 cannot."""

from __future__ import annotations

import re

HEADER = '[tool.exportlens.modules."models/router.py:TokenRouter"]'
BROKEN = {  # what replaces the first match of each pattern
    "a key twice": ("strict = false\n", "strict = false\nstrict = true\n"),
    "a key twice in an inline table": ("init = { hidden = 16 }", "init = { hidden = 16, hidden = 8 }"),
    "a table twice": (HEADER, f'{HEADER}\ndevice = "cpu"\n{HEADER}'),
    "[tool.exportlens] twice": ("[tool.exportlens]\n", "[tool.exportlens]\n[tool.exportlens]\n"),
    "inputs a number": ('inputs = { x = "f32[tokens, 16]" }', "inputs = 3"),
    "dims a string": ("dims = { tokens = { min = 2, max = 1024 } }", 'dims = "tokens"'),
    "a dim a number": ("dims = { tokens = { min = 2, max = 1024 } }", "dims = { tokens = 3 }"),
    "a bound a string": ("min = 2, max = 1024", 'min = "two", max = []'),
    "a bound past any machine": ("max = 1024", "max = 1e400, example = 99999999999999999999999"),
    "init an array": ("init = { hidden = 16 }", "init = [16, { a = 1 }]"),
    "an input a table of the wrong types": ('x = "f32[tokens, 16]"', "x = { shape = 5, low = 'a' }"),
    "modules a number": ('[tool.exportlens]\ndevice = "cpu"', '[tool.exportlens]\nmodules = 5\ndevice = "cpu"'),
    "tool a string": ('[project]\nname = "exportlens-examples"', 'tool = "x"\n[project]\nname = "exportlens-examples"'),
    "variants a number": ("init = { hidden = 16 }", "init = { hidden = 16 }\nvariants = 3"),
    "a variant of no name": (HEADER, f"[[{HEADER[1:-1]}.variants]]\nname = 3\ndims = {{ seq = 1 }}\n{HEADER}"),
    "a settings value of the wrong type": ("strict = false", 'strict = "yes"\ntimeout = "soon"\ndevice = 5'),
    "a string left open": ('x = "f32[tokens, 16]" }', 'x = "f32[tokens, 16 }'),
    "a multi-line string left open": ('x = "f32[tokens, 16]"', "x = '''f32[tokens"),
    "a header left open": (HEADER, '[tool.exportlens.modules."models/router.py:Tok'),
    "a header with no key": (HEADER, "[tool.exportlens.modules.]"),
    "a header with an open quote": (HEADER, '[tool.exportlens.modules."]'),
    "a header of an empty key": (HEADER, '[tool.exportlens.modules.""]'),
    "a target of no file": (HEADER, '[tool.exportlens.modules."router"]'),
    "a target of no class": (HEADER, '[tool.exportlens.modules."models/none.py:Nothing"]'),
    "a lone surrogate in a shape": ("f32[tokens, 16]", "f32[tok\udc80ens, 16]"),
    "a lone surrogate in a header": ("router.py:TokenRouter", "rou\ud800ter.py:TokenRouter"),
    "a lone surrogate in a key": ("tokens = {", "tok\udfffens = {"),
    "a NUL": ("strict = false", "strict = \x00false"),
    "a byte-order mark": ("# Example", "\ufeff# Example"),
    "CR line ends": ("\n", "\r"),
    "CRLF line ends": ("\n", "\r\n"),
    "an emoji dim": ("tokens", "tøk🚀ns"),
    "a date for a bound": ("min = 2", "min = 1979-05-27T07:32:00Z"),
}


def texts(spec: str) -> list[tuple[str, bool]]:
    """The spec cut at every character; each broken one whole, then cut at every line end.
    With each, whether to ask in its middle too (not only at its end, where the user types)."""
    out = [(spec[:i], False) for i in range(len(spec) + 1)]
    for old, new in BROKEN.values():
        assert old in spec, old
        broken = spec.replace(old, new, 1) if old != "\n" else spec.replace(old, new)
        out += [(broken, True)] + [(broken[: m.start()], True) for m in re.finditer("\n", broken)]
    return out
