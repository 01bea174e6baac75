"""Every problem of a failing module past the first, in one more run (torch side).

The plain export stops at the first data-dependent branch. Draft export goes on past each
(several times slower), or where it fails, one export takes each branch provisionally
(provisional.py); constraints the spec breaks further on (a loop that pins a dim) are then
placed on their lines too, so a module with three problems shows three findings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from ..core.report import Finding, Kind
from .compat.internals import draft_export
from .context import Context
from .fixing.fixes import torch_check_candidates
from .fixing.remedies import asked
from .inputs import Built
from .naming.explain import explain
from .quiet import quiet
from .reading.branch import tensors_at, truth_at
from .reading.failures import DataDependent, Record, read_draft
from .reading.provisional import provisional_records
from .reading.violations import Constraint


def with_example_branch(records: tuple[Record, ...], model: torch.nn.Module, ctx: Context) -> tuple[Record, ...]:
    """Each data-dependent branch with which way the example inputs take it (branch.py)."""
    out = []
    for r in records:
        if isinstance(r, DataDependent) and r.frame is not None:
            candidates = torch_check_candidates(r, ctx)
            converted = (
                (asked_for.argument,) if (asked_for := asked(r, ctx)) else ()
            )  # is ``int(...)``'s argument a tensor?
            tensors = tensors_at(model, ctx.built, r.frame, converted)
            r = replace(r, example=truth_at(model, ctx.built, r.frame, candidates), tensors=tensors)
        out.append(r)
    return tuple(out)


def more_problems(model: torch.nn.Module, built: Built, ctx: Context, known: list[Finding]) -> list[Finding]:
    """Further data-dependent and fake-kernel problems, from one draft export (several times
    slower), or where that fails, one export taking each data-dependent guard provisionally
    (provisional.py); run only when the plain export stopped on a problem of that kind."""
    if not any(f.kind in (Kind.DATA_DEPENDENT_GUARD, Kind.UNSUPPORTED) for f in known):
        return []
    try:
        with quiet():
            failures = draft_export(model, built.args, built.kwargs, built.dynamic_shapes)
        records = read_draft(failures, ctx.sources) + _past_the_branches(failures, model, built, ctx)
    except Exception:  # draft export itself failed: each data-dependent guard taken provisionally
        try:
            with quiet():
                records = provisional_records(model, built, ctx.sources)
        except Exception:
            return []
    index = {(f.path, f.line, f.code): i for i, f in enumerate(known)}
    class_line = (ctx.module.path, ctx.module.name_span.line)
    extra = []
    for f in explain(with_example_branch(records, model, ctx), ctx):
        key = (f.path, f.line, f.code)
        if (f.path, f.line) == class_line and any(k.code == f.code for k in known):
            continue  # draft found no user line for what the plain export already placed
        if key not in index:
            index[key] = -1
            extra.append(f)
        elif index[key] >= 0 and len(f.fixes) >= len(known[index[key]].fixes):
            # the same problem on the same line: draft export keeps the frame's variable names
            # (strict mode loses them), so its account names them; the plain one's fixes stay
            # where draft's has none
            known[index[key]] = _kept(f, known[index[key]])
    return extra


def _kept(draft: Finding, plain: Finding) -> Finding:
    """Draft export's account of a problem the plain export placed too: the plain one's fixes
    where draft's has none, and its message and related places where it named an installed
    package's line that draft's lost (its stack names files by ids a long-lived process's
    table may no longer hold)."""
    kept = replace(draft, fixes=draft.fixes or plain.fixes)
    if len(plain.related) > len(draft.related):
        kept = replace(kept, message=plain.message, related=plain.related)
    return kept


def _past_the_branches(failures: list[Any], model: torch.nn.Module, built: Built, ctx: Context) -> tuple[Record, ...]:
    """The constraints the spec breaks past the data-dependent branches (draft export met one and
    went on with torch's own ranges): placed on their lines by one export taking each branch
    provisionally, as the plain export would once the branches are fixed."""
    if not any(getattr(f.failure_type, "name", "") == "GUARD_ADDED" for f in failures):  # torch's FailureType, 2.8–2.15
        return ()
    try:
        with quiet():
            return tuple(r for r in provisional_records(model, built, ctx.sources) if isinstance(r, Constraint))
    except Exception:
        return ()
