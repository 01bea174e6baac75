"""What a failed export raised, read once into records (torch side).

With ``violations`` (constraint violations) and ``mismatch`` (size mismatches that
are constraints), this is the only module that looks inside torch's exceptions and
draft export's failure reports. ``explain`` turns the records into findings and
``fixes`` makes edits for them; neither reads torch's text again.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, replace
from typing import Any

import sympy
import torch

from ...core.causes import Cause
from ...core.sources import Sources
from ...edit.at_line import item_operand
from ...edit.branch_mutations import branch_mutation
from ..compat import messages as forms
from ..compat.internals import (
    GuardOnDataDependentSymNode,
    Unsupported,
    UserError,
    intern_filenames,
    is_fake_tensor_error,
    is_invalid_input,
    pytree,
    solver_lacks_max,
    uncaptured_account,
)
from ..compat.messages import search
from ..inputs import Built
from ..library import in_traceback, library_frame
from ..locate import Frame, GuardLog, deepest_in_summary, deepest_in_text, deepest_in_traceback
from ..naming.guard_ranges import finite
from ..naming.symbols import SYMBOL, SymbolNames, from_shape_env, rename_sources
from .causes import cause_of
from .mismatch import read_mismatch
from .violations import Constraint, first_line, is_constraint_violation, read_violations

# -- the records -------------------------------------------------------------------


@dataclass(frozen=True)
class DataDependent:
    """A branch on a value only known when the model runs: ``if n > 3`` with ``n = x.sum().item()``."""

    condition: Any  # what torch could not decide: sympy, over its symbols (u0, s77)
    names: SymbolNames  # those symbols in the user's names
    frame: Frame | None  # the user's line that branches
    detail: str
    example: tuple[bool | None, ...] = ()  # whether each torch_check_candidates holds there on the example inputs
    tensors: frozenset[str] = frozenset()  # the names holding tensors on that line there (a torch.cond's operands)
    library: Frame | None = None  # the installed package's line below ``frame`` that needed the value

    @property
    def asks_number(self) -> bool:
        """Whether torch was asked for the value itself (``int(...)``, ``float(...)``), not a truth."""
        return isinstance(self.condition, sympy.Expr)

    def __str__(self) -> str:
        return f"data-dependent: {self.names.say(self.condition)}"


@dataclass(frozen=True)
class SpecRejected:
    """torch refused the spec itself: dynamic_shapes that do not fit the inputs."""

    message: str  # torch's own

    def __str__(self) -> str:
        return f"spec rejected: {first_line(self.message)}"


@dataclass(frozen=True)
class OutputType:
    """forward returns an object export cannot flatten into tensors."""

    qualified: str  # its class, ``transformers.cache_utils.DynamicCache``
    detail: str

    def __str__(self) -> str:
        return f"output type {self.qualified}"


@dataclass(frozen=True)
class FakeKernel:
    """A custom op without a fake kernel (or with one that disagrees with the real kernel)."""

    op: str
    frame: Frame | None
    detail: str
    register: str = ""  # how torch's error says to add one; "" from draft export, which does not say
    mismatched: bool = False

    def __str__(self) -> str:
        return f"{'mismatched' if self.mismatched else 'missing'} fake kernel: {self.op}"


@dataclass(frozen=True)
class Untraceable:
    """Something torch.export cannot trace (``.numpy()``, an op with no fake implementation, ...)."""

    text: str  # torch's first line, in the user's names
    frame: Frame | None
    detail: str
    fake_kernel: bool  # the cause is a missing fake or meta implementation

    def __str__(self) -> str:
        return f"untraceable: {self.text}"


@dataclass(frozen=True)
class Raised:
    """Any other exception while exporting."""

    error: str  # its type's name
    text: str  # its first line, in the user's names
    frame: Frame | None  # the deepest line of the project it passed through
    detail: str
    by_forward: bool  # raised by the user's code, not by torch.export about the export
    eager: str | None = None  # forward run eagerly on the same inputs: "" it ran, else what it raised; None untried
    cause: Cause = Cause.NONE  # what it was, where the owner says it apart (an allocation refused)

    def __str__(self) -> str:
        return f"{self.error}: {self.text}"


Record = Constraint | DataDependent | SpecRejected | OutputType | FakeKernel | Untraceable | Raised


# -- the plain export's exception ----------------------------------------------------


def read_failure(exc: BaseException, log: GuardLog, built: Built) -> tuple[Record, ...]:
    """What ``torch.export.export`` raised: a record per violated constraint, else one record."""
    if is_constraint_violation(exc):
        return read_violations(exc.msg, log, built)
    if is_invalid_input(exc):
        return (SpecRejected(exc.msg),)
    if (unbounded := _derived_without_max(exc, built)) is not None:
        return (unbounded,)
    dde = _in_chain(exc, GuardOnDataDependentSymNode)
    if dde is not None:
        # non-strict: the user's frame is live in the traceback; strict: dynamo keeps it in real_stack
        frame = deepest_in_traceback(log.files, dde.__traceback__) or deepest_in_summary(
            log.files, getattr(exc, "real_stack", None)
        )
        found = data_dependent(dde, frame, log, built, str(exc))
        return (replace(found, library=library_frame(log.files, in_traceback(dde.__traceback__))),)
    return (_read_other(exc, log, built),)


def data_dependent(
    dde: GuardOnDataDependentSymNode, frame: Frame | None, log: GuardLog, built: Built, text: str
) -> DataDependent:
    """The record of a data-dependent guard met on ``frame``'s line, its symbols named from
    the frame's locals and the spec (``text``: torch's own account, for the detail)."""
    names = from_locals(frame.locals if frame else None, from_shape_env(log.shape_env, built.names))
    return DataDependent(dde.cond, _inline_value(names, dde.cond, frame), frame, text)


def _derived_without_max(exc: BaseException, built: Built) -> SpecRejected | None:
    """torch 2.13's solver fails (``KeyError: 'max'``) on a relation between derived dims
    whose root has no max: said as what the user can do about it."""
    if not solver_lacks_max(exc):
        return None
    leaves = pytree.tree_leaves(built.dynamic_shapes)
    roots = sorted({d.root.__name__ for d in leaves if hasattr(d, "root") and not finite(d.root.max)})
    named = ", ".join(f"`{n}`" for n in roots) or "the root dims"
    return SpecRejected(
        f"the derived sizes of {named} need a max, as torch's solver fails without one (KeyError 'max'): declare "
        + ("one" if len(roots) == 1 else "one for each")
        + " in dims"
    )


def _read_other(exc: BaseException, log: GuardLog, built: Built) -> Record:
    said = uncaptured_account(exc)
    detail = said[-4000:]
    if m := search(forms.OUTPUT, said):
        return OutputType(m["type"], detail)
    # strict mode: the user's frames are dynamo's record of the code it traced, not live ones
    frame = deepest_in_traceback(log.files, exc.__traceback__) or deepest_in_summary(
        log.files, getattr(exc, "real_stack", None)
    )
    if m := search(forms.NO_FAKE, said):
        how = search(forms.REGISTER, said)
        return FakeKernel(
            m["op"], frame, detail, register=f"`@{how['how']}.register_fake`" if how else "torch.library.register_fake"
        )
    names = from_shape_env(log.shape_env, built.names)
    if (
        not isinstance(exc, UserError)
        and (tied := read_mismatch(said, names, built.names.roots, frame, detail)) is not None
    ):
        return tied  # a size mismatch between declared dims: a constraint in disguise
    text = rename_sources(names.text(first_line(getattr(exc, "msg", None) or said)), built.names)
    if search(forms.SOLVER_SYMBOL, said):  # (said as what it is: torch's symbol names nothing of the user's)
        text = (
            "torch's constraint solver (2.10 and older) fails on a condition over a float read from a tensor;"
            " torch 2.13 exports it"
        )
    if isinstance(exc, Unsupported) or _is_unsupported(exc) or forms.UNCAPTURED in said:
        found = _in_branch(said, frame, detail) or _in_hop(said, log, detail)
        return found or Untraceable(_explained(text, said), frame, detail, fake_kernel=_is_missing_fake(said))
    by_forward = frame is not None and not isinstance(exc, UserError)
    return Raised(type(exc).__name__, text, frame, detail, by_forward, cause=cause_of(exc))


def _in_branch(said: str, frame: Frame | None, detail: str) -> Untraceable | None:
    """A ``torch.cond`` (map, scan, while_loop) branch that changes module state: torch's
    trace names only its own files and the op's line, so the statement is found in the
    branch functions handed to the call on that line (edit.branch_mutations)."""
    op = search(forms.HOP, said)
    if op is None or forms.MUTATION not in said or frame is None:
        return None
    owner = forms.MUTATED.search(said)
    found = branch_mutation("".join(linecache.getlines(frame.filename)), frame.line, owner[1] if owner else None)
    if found is None:
        return None
    text = (
        f"a torch.{op['op'].lower()} branch may not change the module's state:"
        f" `{found.code}` in `{found.function}` changes "
        f"`self.{found.attribute}`; return the new value from the branch and assign it after torch.{op['op'].lower()}"
    )
    return Untraceable(text, Frame(frame.filename, found.line, found.function), detail, fake_kernel=False)


def _in_hop(said: str, log: GuardLog, detail: str) -> Untraceable | None:
    """A graph break inside a torch.cond (map, scan, ...) branch: torch's "from user code"
    trace ends on the user's line in the branch; said as torch titles the break."""
    op, found = search(forms.HOP, said), search(forms.BREAK, said)
    frame = deepest_in_text(log.files, said.split(forms.USER_CODE, 1)[-1])
    if op is None or found is None or frame is None:
        return None
    title, why = found["title"].strip(), found["why"].strip()
    text = f"inside a torch.{op['op'].lower()} branch, {title[:1].lower() + title[1:]} ({why.rstrip('.')})"
    return Untraceable(text, frame, detail, fake_kernel=False)


def _explained(text: str, said: str) -> str:
    """A graph break's title with its explanation's first sentence ("Attempted to call function
    marked as skipped: Dynamo does not know how to trace the builtin `time.perf_counter_ns`")."""
    why = forms.EXPLANATION.search(said)
    if why is None and (inner := forms.INNER.search(text)) is not None:  # (2.9–2.10: the cause on the first line)
        return f"{text.split(': ', 1)[0]}: {' '.join(inner['inner'].split()).rstrip('.')}"
    if why is None or not said.startswith(text.split(":")[0]):
        return _whole(text, said)
    inner = forms.INNER.search(why[1])  # "Dynamo failed to run FX node ...: got RuntimeError("the real cause")"
    if inner is not None:
        return f"{text.rstrip(':')}: {' '.join(inner['inner'].split()).rstrip('.')}"
    first = forms.SENTENCE_END.split(why[1].strip(), maxsplit=1)[0].rstrip(".")
    return f"{text.rstrip(':')}: {first}"


def _whole(text: str, said: str) -> str:
    """torch's first line, and the next where it ends on a colon (never cut mid-sentence)."""
    if not text.rstrip().endswith(":"):
        return text
    rest = [line.strip() for line in said.splitlines()[1:] if line.strip()]
    return f"{text.rstrip()} {rest[0]}" if rest else text.rstrip().rstrip(":")


def _inline_value(names: SymbolNames, cond: Any, frame: Frame | None) -> SymbolNames:
    """A value read inline (``if probs.max().item() > t:``) that no variable holds, named in
    messages as the line writes it rather than as torch's ``zuf0``."""
    unnamed = [
        s for s in cond.free_symbols if s not in names.message and s not in names.code and not str(s).startswith("s")
    ]
    if len(unnamed) != 1 or frame is None:
        return names
    written = item_operand("".join(linecache.getlines(frame.filename)), frame.line)
    if written is not None:
        names.message[unnamed[0]] = written
    return names


def _in_chain(exc: BaseException | None, kind: type) -> Any:
    """The first exception of type ``kind`` among ``exc`` and its causes and contexts."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _is_unsupported(exc: BaseException) -> bool:
    if is_fake_tensor_error(exc):
        return True
    text = str(exc)
    return any(s in text for s in forms.UNSUPPORTED)


def _is_missing_fake(text: str) -> bool:
    return any(s in text for s in forms.MISSING_FAKE)


def from_locals(frame_locals: dict[str, Any] | None, out: SymbolNames) -> SymbolNames:
    """Symbols that live in the user's frame: ``n = x.item()`` names ``u0`` n; ``x.shape[0]`` names ``s77``."""
    for var, value in (frame_locals or {}).items():
        if var.startswith("__") or var == "self":
            continue
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            expr = value.node.expr
            if isinstance(expr, sympy.Symbol):
                out.code.setdefault(expr, var)
        elif isinstance(value, torch.Tensor):
            for axis, size in enumerate(value.shape):
                if isinstance(size, torch.SymInt) and isinstance(size.node.expr, sympy.Symbol):
                    out.code.setdefault(size.node.expr, f"{var}.shape[{axis}]")
    return out


# -- draft export's failure report ---------------------------------------------------


def read_draft(failures: list[Any], files: Sources) -> tuple[Record, ...]:
    """Draft export's failures (``ep._report.failures``) that exportlens explains: data-dependent
    guards and fake kernels; any other kind, or an expression sympy cannot read, is skipped."""
    filenames = intern_filenames()  # the report names files by intern id
    out: list[Record] = []
    for failure in failures:
        data = failure.data
        kind = getattr(failure.failure_type, "name", str(failure.failure_type))
        frame = _draft_frame(data, filenames, files)
        if kind == "DATA_DEPENDENT_ERROR":
            record = _draft_data_dependent(data, frame)
            out += [replace(record, library=_draft_library(data, filenames, files))] if record is not None else []
        elif kind in ("MISSING_FAKE_KERNEL", "MISMATCHED_FAKE_KERNEL"):
            op = data.get("op", "a custom op")
            out.append(FakeKernel(op, frame, str(data)[:2000], mismatched=kind == "MISMATCHED_FAKE_KERNEL"))
    return tuple(out)


def _draft_frame(data: dict[str, Any], filenames: dict[Any, str], files: Sources) -> Frame | None:
    """The deepest frame of the failure's user stack that is in a project file."""
    for entry in reversed(data.get("user_stack") or []):
        fname = filenames.get(entry.get("filename"), entry.get("filename"))
        if isinstance(fname, str) and files.owns(fname):
            return Frame(fname, entry.get("line", 1), entry.get("name", ""))
    return None


def _draft_library(data: dict[str, Any], filenames: dict[Any, str], files: Sources) -> Frame | None:
    stack = data.get("user_stack") or []
    named = ((filenames.get(e.get("filename"), e.get("filename")), e.get("line", 1), e.get("name", "")) for e in stack)
    return library_frame(files, ((f, n, name) for f, n, name in named if isinstance(f, str)))


def _draft_data_dependent(data: dict[str, Any], frame: Frame | None) -> DataDependent | None:
    try:
        expr = data.get("expr", "")
        ints = [s for s in SYMBOL.findall(expr) if not s.startswith("zuf")]  # (zuf0: a float)
        cond = sympy.sympify(expr, locals={s: sympy.Symbol(s, integer=True) for s in ints})
    except (sympy.SympifyError, SyntaxError, TypeError):
        return None
    # draft export names each symbol by the variable that held it ({'locals': {'n': ['u0']}})
    # ({'probs': [None]} for a local that holds no symbol)
    held = {
        sym: var
        for var, syms in (data.get("frame_locals") or {}).get("locals", {}).items()
        for sym in syms or ()
        if isinstance(sym, str)
    }
    names = SymbolNames()
    for sym, var in held.items():
        names.code.setdefault(sympy.Symbol(sym, integer=True), var)
        names.code.setdefault(sympy.Symbol(sym), var)
    return DataDependent(cond, _inline_value(names, cond, frame), frame, str(data.get("expr")))
