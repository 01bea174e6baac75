"""Text a module or a file name controls, escaped for where it goes: one function per
destination (standard library only).

A module's exception message, its submodules' and classes' names and the project's file
names are the user's code speaking: written raw, an ESC starts a terminal escape (OSC 52
sets the clipboard, OSC 0 the window title, CSI 2J clears the screen), and a newline
starts a line that a CI runner may read as a workflow command (``::add-mask::``).

- a terminal or a CI log (``check`` and ``tree`` as text): ``terminal_line``
- a GitHub Actions workflow command: ``github_data``, ``github_property``
- a SARIF or file URI: ``uri_path``
- a file name shown where it cannot be written as it is (not UTF-8): ``visible``
"""

from __future__ import annotations

import re
from urllib.parse import quote

# C0, DEL and C1 controls; the bidirectional marks and overrides (a name read in another order
# than it runs); the line and paragraph separators; lone surrogates (a file name's undecodable bytes)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode: the byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as Python writes it in a string
    (``\\x1b``, ``\\n``), and a file name's undecodable byte as that byte (``\\xff``)."""
    return text if text.isprintable() else _UNSAFE.sub(_escaped, text)


def terminal_line(line: str) -> str:
    """One line for a terminal or a CI log: ``visible``, and never beginning with ``::``
    (GitHub's runner reads a line whose first non-blank characters are ``::`` as a
    workflow command): its first colon is then written ``\\x3a``."""
    line = visible(line)
    start = len(line) - len(line.lstrip())
    return line[:start] + "\\x3a" + line[start + 1 :] if line.startswith("::", start) else line


def github_data(text: str) -> str:
    """A workflow command's message as GitHub's runner reads it back: ``%``, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value: the message's escapes, and ``:`` and ``,``, which end one."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def uri_path(path: str) -> str:
    """A relative POSIX path as a URI reference (RFC 3986): every byte but the unreserved
    characters and ``/`` percent-encoded (a space, ``%``, ``#``, ``?``, a newline)."""
    return quote(path, safe="/", errors="surrogateescape")
