"""The module's text that AOTInductor pastes into the C++ it generates, made to stay text (torch
side). torch 2.13 writes the message of ``torch._assert_async`` and ``aten._assert_scalar``
between double quotes unescaped (``device_assert_async``, ``AssertScalar.codegen``), and each
parameter's and buffer's name likewise (``original_fqn``): a crafted message was C++ code,
compiled and run. So while the program compiles, each string argument of its graphs is
written as a C++ (or Python) literal reads it back, and a name that would need escaping is
refused: the package keeps names as they are and reads them back at load."""

from __future__ import annotations

import string
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch.fx

# what can stand in a double-quoted C++ literal as itself; `?` would start a trigraph
PLAIN = frozenset(string.ascii_letters + string.digits + " !#$%&'()*+,-./:;<=>@[]^_`{|}~")


def escaped(text: str) -> str:
    """``text`` as the inside of a C++ string literal that reads back as its UTF-8 bytes: every
    other byte an octal escape (three digits: unlike ``\\x``, it never runs on into the next)."""
    return "".join(chr(b) if chr(b) in PLAIN else f"\\{b:03o}" for b in text.encode())


class UnsafeName(ValueError):
    """A parameter's or buffer's name AOTInductor would paste into its C++ as it is."""


@contextmanager
def strings_escaped(ep: Any) -> Iterator[None]:
    """The program's string arguments escaped while the block runs (its graphs and those of its
    control flow's branches), and put back after: another target lowers the same program."""
    unsafe = sorted(name for name in (*ep.state_dict, *ep.constants) if any(c not in PLAIN for c in name))
    if unsafe:
        raise UnsafeName(
            f"the name `{unsafe[0]!r}` of a parameter or buffer holds characters AOTInductor would paste into its"
            " C++ as they are: name it with letters, digits and `_`"
        )
    saved = []
    for module in ep.graph_module.modules():
        for node in module.graph.nodes if isinstance(module, torch.fx.GraphModule) else ():
            args, kwargs = _escaped(node.args), _escaped(node.kwargs)
            if args != node.args or kwargs != node.kwargs:
                saved.append((node, node.args, node.kwargs))
                node.args, node.kwargs = args, kwargs
    try:
        yield
    finally:
        for node, args, kwargs in saved:
            node.args, node.kwargs = args, kwargs


def _escaped(value: Any) -> Any:
    return torch.fx.node.map_aggregate(value, lambda v: escaped(v) if isinstance(v, str) else v)
