"""A module's exported contract: what a deployment relies on of its program, read from a
``check --format json`` report alone (``exportlens diff``). Standard library only."""

from __future__ import annotations

from dataclasses import dataclass

from .guards import Guard, GuardKind
from .report import ModuleReport, Range, Report, Severity, Status


@dataclass(frozen=True)
class Failure:
    """Why a module does not export: its first error, on its line."""

    code: str
    message: str
    path: str
    line: int


@dataclass(frozen=True)
class Contract:
    """One module's contract. ``guards`` are those made on a line (the declared ranges are
    ``ranges``); ``ops`` is None where the report is older than the operator set (schema 2.3)."""

    target: str
    status: Status
    signature: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    ranges: tuple[Range, ...] = ()
    equalities: tuple[str, ...] = ()
    guards: tuple[Guard, ...] = ()
    ops: tuple[str, ...] | None = None
    lowerings: tuple[tuple[str, str], ...] = ()  # (deployment target, its status), by target
    failure: Failure | None = None

    @property
    def specializations(self) -> tuple[Guard, ...]:
        return tuple(g for g in self.guards if g.kind is GuardKind.SPECIALIZATION)

    @property
    def path(self) -> str:
        """The module's file, relative to the project root."""
        return self.target.partition(":")[0]


def contract_of(module: ModuleReport) -> Contract:
    errors = [f for f in module.findings if f.severity is Severity.ERROR]
    failure = Failure(errors[0].code, errors[0].message, errors[0].path, errors[0].line) if errors else None
    lowerings = tuple(sorted((lowering.target, lowering.status) for lowering in module.lowerings))
    s = module.summary
    if module.status is not Status.EXPORTED or s is None:
        return Contract(module.target, module.status, lowerings=lowerings, failure=failure)
    return Contract(
        module.target,
        module.status,
        signature=s.signature,
        inputs=s.inputs,
        outputs=s.outputs,
        ranges=tuple(sorted(s.range_constraints, key=lambda r: r.name)),
        equalities=tuple(sorted(map(str, s.equalities))),
        guards=tuple(g for g in s.guards if g.path is not None or g.kind is not GuardKind.RANGE),
        ops=s.ops,
        lowerings=lowerings,
        failure=failure,
    )


def contracts(report: Report) -> dict[str, Contract]:
    """Each module's contract, by target."""
    return {m.target: contract_of(m) for m in report.modules}
