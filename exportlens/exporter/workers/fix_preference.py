"""What a proof's probes say of a fix, and which fix that makes preferred (owner side, no torch).

A remedy of a data-dependent branch (runtime/fixing/remedies.py) is proven on probe inputs: the
module as the user wrote it and the program exported with the fix applied are run on
each (runtime/proving/probes.py). A fix whose program answers otherwise than eager somewhere
changes what the model computes, and is not offered; one whose program rejects some of
them (a ``torch._check`` of one side) is offered as what it is, never preferred.

Of a finding's proven fixes (remedies: those that agree on every probe), the preferred one
leaves no problem where another leaves some, then lowers for each of the spec's targets where
another does not, then narrows least (``Narrowing``: a rewrite,
the example's size, a relation, a range, an assumption, a static size), then came first
(remedies come best first). Of remedies where none was proven and agrees, none is preferred.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.lowering import lowers
from ..core.report import Finding, Fix, ModuleReport, Verified


def with_probes(fix: Fix | None, after: ModuleReport) -> Fix | None:
    """``fix`` (judged by its proof) with the probes the proof compared; None where its
    program answers otherwise than eager on one: it does not keep the model's meaning."""
    if fix is None or not fix.probes or not after.probes:
        return fix
    probes = after.probes
    if any(p.agrees is False and not p.rejected for p in probes):
        return None
    rejected = [p for p in probes if p.rejected]
    if not rejected:
        return replace(fix, probes=probes)
    # what its proof reached is beside the point: it is an assumption, and its title says so (Fix.title)
    return replace(fix, probes=probes, preferred=False)


def ranked(finding: Finding) -> Finding:
    """``finding`` with its preferred fix chosen among those its proofs reached: one that leaves
    no problem over one that leaves some, then the least narrowing (``Fix.rank``), then the
    first offered. A remedy is a candidate only where it agrees with eager on every probe;
    where no fix was proven, the worker's choice stands (``settled`` clears it), but of
    remedies, none is preferred."""
    proven = [i for i, f in enumerate(finding.fixes) if f.verified != Verified.UNVERIFIED and f.passes_probes]
    if not proven and not any(f.probes for f in finding.fixes):
        return finding
    best = min(proven, key=lambda i: _keeps(finding.fixes[i]) + (i,), default=None)
    fixes = tuple(replace(f, preferred=i == best) for i, f in enumerate(finding.fixes))
    return replace(finding, fixes=fixes) if fixes != finding.fixes else finding


def _keeps(fix: Fix) -> tuple[bool, bool, int]:
    """What a proven fix gives up, least first: problems it leaves, then a deployment target
    it does not lower for, then how much it narrows."""
    return fix.verified is Verified.PARTIAL, not lowers(fix.lowerings), fix.rank.order
