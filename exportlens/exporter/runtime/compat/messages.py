"""The texts of torch's errors that exportlens reads, as tables of the forms each torch
writes (compat, torch side).

A table is searched in order and the first form that matches is read; each form names
the torch versions it was checked on. Where none matches, the reader says torch's own
first line in the user's names (a finding with less in it, never a wrong line).
Patterns with named groups read the same whichever form matched. A bare pattern (not a
table) is a text every checked torch writes the same way (2.9.1, 2.10.0, 2.13.0 here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    pattern: re.Pattern[str]
    checked: str  # the torch versions whose text it reads


def search(forms: tuple[Form, ...], text: str) -> re.Match[str] | None:
    """The first form of ``forms`` found in ``text``."""
    for form in forms:
        if m := form.pattern.search(text):
            return m
    return None


def _forms(checked: str, *patterns: str, flags: int = 0) -> tuple[Form, ...]:
    return tuple(Form(re.compile(p, flags), checked) for p in patterns)


# -- torch's names for its symbols and sources ---------------------------------------------

SYMBOL = re.compile(r"\b((?:[su]|zuf)\d+)\b")  # backed (s77), unbacked (u0) and float (zuf0) symbols, 2.7–2.15
SOURCE = re.compile(r"L\[[^\]]+\](?:\[[^\]]+\])*(?:\.size\(\)\[\d+\])?")  # an axis, or an int input itself
INFINITY = re.compile(r"\bIntInfinity\(\)|\bint_oo\b")
INPUT_SIZE = re.compile(r"\b(\w+)\.size\(\)\[(\d+)\]")  # a program's guard on an input's size
AXIS = re.compile(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]")  # the source torch names an input's axis by, 2.13–2.15
VALUE_SOURCE = re.compile(r"L\['(\w+)'\]")  # the source of an int input itself, 2.13–2.15

# -- constraint violations (one UserError, a bullet per violation) ----------------------------

SUGGESTED = "Suggested fixes:"  # 2.7–2.15: the line after the bullets
BULLET = re.compile(r"^\s*-\s+(.*)$")
# torch writes its specializations' headline straight after the last bullet, on the same line
HEADLINES = re.compile(r"(?=Specializations unexpectedly required)")
NAMED = re.compile(r"\b(\w+) = L\[")
# a dim is named as the spec writes it: ``seq``, or a derived size ``dy - 6`` (a relation's
# second dim may be one of torch's own new roots: ``_n - 2``)
_SIZE = r"(?:\w+|\w+ [-+] \d+|\d+\*\w+(?: [-+] \d+)?)"
SPECIALIZED = (
    *_forms(
        "2.8–2.15",
        r"You marked (?P<dim>.+?) as dynamic but your code specialized it to be a constant \((?P<value>\d+)\)",
    ),
    *_forms("2.7", rf"are valid because (?P<dim>{_SIZE}) was inferred to be a constant \((?P<value>\d+)\)"),
)
SPECIALIZED_BY_GUARDS = _forms(
    "2.8–2.15",
    rf"solving the guards generated for (?P<dim>{_SIZE}) = \S+ resulted in a specialized value of (?P<value>\d+)",
)
EQUAL = _forms("2.8–2.15", r"The values of (?P<a>\w+) = \S+ and (?P<b>\w+) = \S+ must always be equal")
RELATED = _forms(
    "2.8–2.15",
    rf"The values of (?P<a>{_SIZE}) = .+? must always be related to the values of (?P<b>{_SIZE}) = .+?"
    r" by (?P<by>.+?)\.?$",
)
RANGE = _forms(
    "2.8–2.15",
    rf"Not all values of (?P<dim>{_SIZE}) = \S+ in the specified range(?: (?P<declared>.+?))?"
    r" satisfy the generated guard (?P<guard>.+)$",
)

# -- other failures of export -------------------------------------------------------------

OUTPUT = _forms("2.8–2.15", r"Found <class '(?P<type>[\w.]+)'> in output, which is not a known type")
NO_FAKE = _forms("2.8–2.15", r"no fake impl registered for <CustomOpDef\((?P<op>.+?)\)>")
REGISTER = _forms("2.8–2.15", r"use `(?P<how>\S+)\.register_fake`")
UNSUPPORTED = ("is not supported for tensor subclasses", "fake impl", "Meta implementation", "no fake", "FakeTensor")
MISSING_FAKE = ("fake impl", "register_fake", "Meta implementation")
# a graph break's account: its title, and a line "Explanation: ..." (2.8–2.15; not every
# error has one: 2.9–2.10's fake-tensor errors do not)
EXPLANATION = re.compile(r"^\s*Explanation: (.+)$", re.M)
INNER = re.compile(r"got \w+(?:Error|Exception)\(['\"](?P<inner>.+?)['\"]\)\s*$")
SENTENCE_END = re.compile(r"(?:(?<=\.`)|(?<=[.)]))\s")
# a tensor as torch prints it in a message: ``FakeTensor(..., size=(s85, s85))``
FAKE_TENSOR = re.compile(r"FakeTensor\(\.\.\., (?:device=\S+, )?size=\((?P<size>[^)]*)\)(?:, dtype=[\w.]+)?\)")

# an allocation refused, in the words of what refused it, in a RuntimeError (or an OSError) whose
# type says no more: torch's DefaultCPUAllocator "can't allocate memory" (2.9–2.15), the OS's ENOMEM
# "Cannot allocate memory" beside it, C++'s "std::bad_alloc" through torch's C++ code, a device's
# allocator "out of memory" (CUDA's "CUDA out of memory", torch.OutOfMemoryError)
ALLOCATION_REFUSED = ("can't allocate memory", "Cannot allocate memory", "std::bad_alloc", "out of memory")

# ≤ 2.10: the solver fails on a condition over a float read from a tensor (a float torch._check)
SOLVER_SYMBOL = _forms("2.9–2.10", r"Unknown symbol (?P<symbol>zuf\d+) created by constraints solver")

# -- torch.cond (and map, scan, while_loop) ------------------------------------------------

# The error has three forms: 2.12+ "This higher order operator doesn't work unless ... Got
# graph break/error:\n\n<title>\n  Higher Order Operator: torch.cond\n  Explanation: ...";
# 2.9–2.10 "Cond doesn't work unless ... Got <title>\n  Explanation: ..."; 2.8 "Cond doesn't
# work unless ... Scroll up to find out what causes the graph break." with the graph break
# chained as its cause (internals.uncaptured_account writes that in, as 2.9 does).
HOP = (
    *_forms("2.12–2.15", r"Higher Order Operator: torch\.(?P<op>\w+)"),
    *_forms("2.8–2.10", r"^(?P<op>[A-Z]\w*) doesn't work unless it is captured completely"),  # "Cond": lower-cased
)
MUTATION = "mutation"  # 2.8–2.15: "Encountered input mutation during higher order op tracing"
MUTATED = re.compile(r"_self_(?:buffers|parameters)_(\w+?)_\]")
UNCAPTURED = "doesn't work unless it is captured completely with torch.compile"
SCROLL_UP = "Scroll up to find out what causes the graph break."  # 2.8
BREAK = (
    *_forms(
        "2.12–2.15",
        r"Got graph break/error:\s*\n\s*\n?(?P<title>.+?)\n(?:.*?\n)*?\s*Explanation: (?P<why>.+?)\n",
        flags=re.S,
    ),
    *_forms(
        "2.8–2.10", r"captured completely with torch\.compile\. Got (?P<title>.+?)\n\s*Explanation: (?P<why>.+?)\n"
    ),
)
USER_CODE = "from user code:"

# -- plain exceptions a rewrite answers: Python's own words (3.10–3.13), or torch's where said --
UNHASHABLE = "unhashable type"  # hashing a traced size: a memoized call, a dict looked up by it
SYMINT = "SymInt"  # the type named in it (``unhashable type: 'SymInt'``)
ONE_ARGUMENT_MISSING = "missing 1 required positional"  # builtin ``max(t)`` traced as ``torch.maximum(t)``
MAXIMUM_CALLED = ("maximum()", "minimum()")  # ... whose TypeError starts with the op's name, 2.13–2.15
IS_CAUSAL_NOT_BOOL = "'is_causal' must be bool"  # 2.13–2.15: scaled_dot_product_attention given a SymBool

# -- size mismatches between declared dims ------------------------------------------------

BROADCAST = re.compile(
    r"The size of tensor a \((.+?)\) must match the size of tensor b \((.+?)\) at non-singleton dimension"
)
RESHAPE = re.compile(r"shape '\[(.+?)\]' is invalid for input of size (\S+)")
CAT = re.compile(r"Expected size (\S+) but got size (\S+) for tensor number")
MATMUL = re.compile(r"shapes cannot be multiplied \((\S+?)x(\S+?) and (\S+?)x(\S+?)\)")

# -- what an exported program raises --------------------------------------------------------

ASSERTION = re.compile(r"Runtime assertion failed for expression (?P<expr>.+?) on node '(?P<node>\w+)'")
# a check of an assumption on tensor data: the program's (on u0, zuf0: unbacked symbols),
# or eager's own torch._check
ASSUMED = re.compile(
    r"Runtime assertion failed for expression .*\b(?:u|zuf)\d+\b|Expected cond to be True, but got False"
)
