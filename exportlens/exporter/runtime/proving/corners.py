"""The points of the declared box where the program is run against eager (no torch).

torch's proof covers the graph for every size in the declared ranges, not the model: a
KV cache of 256 positions serves `past_len` up to 255 and `new_len` up to 255 one at a
time, and fails where both are large (`past_len + new_len <= 256`). So the program is run
at each dim's bounds (the others at their examples), then at the corners of the box
where several dims are at a bound together: every combination for up to
``ALL_CORNERS`` dims, else the corners of each pair of dims that a guard names together
(a sum, a product: the relations the program checks).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product

from ...spec.loading import DimSpec
from ..naming.guard_ranges import finite

ALL_CORNERS = 4  # up to this many dims with bounds: all 2^k corners (16 runs); beyond, pairs only

Point = tuple[tuple[str, int], ...]  # dims at a bound (name, size), in spec order; the others at their examples


def written_bounds(
    dims: dict[str, DimSpec], examples: dict[str, int], roots: Iterable[str]
) -> dict[str, tuple[int, ...]]:
    """Each root dim's bounds as the user wrote them (not torch's defaults), max first, that
    differ from its example: the sizes a bound run tries."""
    out = {}
    for name in (n for n in dims if n in set(roots)):
        dim = dims[name]
        sizes = tuple(b for b in (dim.max, dim.min) if b is not None and finite(b) and b != examples[name])
        if sizes:
            out[name] = tuple(dict.fromkeys(sizes))
    return out


def singles(bounds: dict[str, tuple[int, ...]]) -> list[Point]:
    """One dim at each of its bounds, the others at their examples."""
    return [((name, size),) for name, sizes in bounds.items() for size in sizes]


def corners(bounds: dict[str, tuple[int, ...]], pairs: Iterable[tuple[str, str]]) -> list[Point]:
    """The points where two dims or more are at a bound together, most maxima first: all the
    box's corners for up to ``ALL_CORNERS`` dims, else those of each pair in ``pairs``."""
    if len(bounds) < 2:
        return []
    if len(bounds) <= ALL_CORNERS:
        groups = [tuple(bounds)]
    else:
        groups = list(dict.fromkeys(tuple(sorted(p, key=list(bounds).index)) for p in pairs if set(p) <= bounds.keys()))
    out: list[Point] = []
    for names in groups:
        for sizes in product(*(bounds[n] for n in names)):
            point = tuple(zip(names, sizes))
            if point not in out:
                out.append(point)
    # each dim's bounds are max first: the corner of every maximum is tried first, as it fails most
    return sorted(out, key=lambda p: sum(bounds[n].index(s) for n, s in p))


def toward(examples: dict[str, int], point: Point, step: int, steps: int) -> Point:
    """The point ``step`` of ``steps`` along the line from the examples to ``point`` (every dim
    moved in proportion, rounded towards the example: a point short of a failing one)."""
    return tuple((n, examples[n] + int((s - examples[n]) * step / steps)) for n, s in point)


def span(examples: dict[str, int], point: Point) -> int:
    """How many steps the line from the examples to ``point`` has: its longest dim's distance."""
    return max((abs(s - examples[n]) for n, s in point), default=0)


def names_in(text: str) -> set[str]:
    """The names an expression in the user's dim names holds (``past_len + new_len``)."""
    cleaned = "".join(c if c.isalnum() or c == "_" else " " for c in text)
    return {w for w in cleaned.split() if not w[0].isdigit()}
