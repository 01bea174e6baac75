"""A Python file's syntax and encoding errors, as findings placed where Python puts them
(standard library only)."""

from __future__ import annotations

import ast
import os
import symtable
import warnings

from ..core import codes
from ..core.escapes import visible
from ..core.report import Finding

# What parsing a text Python cannot read raises: SyntaxError; ValueError for null bytes; and where
# its parser or compiler gives up on code nested too deeply (200,000 unary minuses, a sum of
# 100,000 terms: generated files), MemoryError or RecursionError. Every parse of a user's text
# catches them all: a file never stops a scan.
TOO_DEEP = (RecursionError, MemoryError)
UNPARSABLE = (SyntaxError, ValueError, *TOO_DEEP)


def too_deep(error: BaseException) -> SyntaxError:
    """What a parse that gave up on nesting says, as a syntax error (it has no line)."""
    return SyntaxError(f"nested too deeply for Python's parser ({type(error).__name__})")


def python_syntax_error(text: str) -> SyntaxError | None:
    """The error ``ast.parse`` raises for ``text``, if any. Checked first by building the
    symbol table, which parses with the same parser but makes no Python objects of the tree
    (some 0.6 times the cost); it refuses more (``return`` outside a function), so only where
    it refuses does ``ast.parse`` say whether, and where, the text does not parse."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like: not ours to report
        try:
            symtable.symtable(text, "<file>", "exec")
            return None
        except UNPARSABLE:
            pass
        return _ast_error(text)


def _ast_error(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as e:
        return e
    except ValueError:  # null bytes
        return SyntaxError("source code cannot contain null bytes")
    except TOO_DEEP as e:
        return too_deep(e)
    return None


def syntax_finding(rel: str, error: SyntaxError | None) -> Finding:
    """Placed where Python's own parser puts it."""
    line, column, message = 1, 1, "invalid syntax"
    if error:
        line, column, message = error.lineno or line, error.offset or column, error.msg
    return codes.finding(codes.SYNTAX_ERROR, f"syntax error: {message}", rel, max(line, 1), column=max(column, 1))


def decode_finding(error: UnicodeDecodeError, rel: str, code: codes.Code = codes.SYNTAX_ERROR) -> Finding:
    data = error.object
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - data.rfind(b"\n", 0, error.start)  # in bytes, 1-based
    encoding = "UTF-8" if error.encoding.replace("-", "").startswith("utf8") else error.encoding
    message = f"file is not valid {encoding}: {error.reason} (byte {data[error.start]:#04x})"
    return codes.finding(code, message, rel, line, column=column)


def name_finding(rel: str) -> Finding:
    """A file whose name is not UTF-8 (``rel``: as ``os.fsdecode`` gives it, a byte it cannot
    decode a lone surrogate): Python cannot import it by name, and no report, JSON or editor
    can name it as it is, so it is reported on its name as ``visible`` writes it (``bad\\xff.py``)."""
    data = os.fsencode(rel)
    try:
        data.decode("utf-8")
        byte = ""
    except UnicodeDecodeError as e:
        byte = f" (byte {data[e.start]:#04x})"
    message = f"file name is not valid UTF-8{byte}: the file is not read; rename it to check it"
    return codes.finding(codes.SYNTAX_ERROR, message, visible(rel), 1, column=1)
