"""torch's private modules, attributes and patch points that exportlens uses (compat, torch side).

Each says the torch versions it was checked on ("2.8–2.15": the corpus and the examples
run with the standard wheels of 2.8.0, 2.9.1, 2.10.0 and 2.13.0; the source of 2.14.1 and
2.15.0 read for the same forms) and what exportlens does without it. What is said of 2.7 is
not run here: 2.7 is below the floor (versions.py), and those entries only keep a reading
from raising where a module gets that far.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeGuard

import torch
import torch.export
import torch.utils._pytree as pytree  # 2.7–2.15: tree_flatten_with_path, tree_map, tree_leaves; torch imports it too
import torch.utils.deterministic as deterministic  # 2.1–2.15
from torch._dynamo.exc import Unsupported, UserError, UserErrorType  # 2.7–2.15
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

from . import messages as forms

__all__ = ["GuardOnDataDependentSymNode", "ShapeEnv", "Unsupported", "UserError", "pytree"]

# -- torch.export's API as it differs between versions ----------------------------------

# 2.8–2.15: Dim is a class, a derived dim an instance of a subclass; 2.7: Dim is a function
# making instances of the metaclass dynamic_shapes._Dim (isinstance(d, Dim) raises there)
_DIM_TYPES: tuple[type, ...] = (
    (torch.export.Dim,)
    if isinstance(torch.export.Dim, type)
    else tuple(t for t in (getattr(torch.export.dynamic_shapes, "_Dim", None),) if t)
)


def is_dim(value: Any) -> bool:
    """Whether ``value`` is a torch Dim (a root or a derived one; not AUTO, STATIC, DYNAMIC)."""
    return bool(_DIM_TYPES) and isinstance(value, _DIM_TYPES)


def flat_input_source(index: int) -> str:
    """Strict mode's name of the flattened input leaf ``index`` (2.8–2.15)."""
    return f"L['flat_args'][{index}]"


def positional_input_source(index: int) -> str:
    """2.7's non-strict name of forward's positional argument ``index`` (2.8+ names it by
    its parameter, ``L['x']``)."""
    return f"L['args'][0][{index}]"


def draft_export(model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any) -> list[Any]:
    """Draft export's failures (``ep._report.failures``; public ``torch.export.draft_export``
    from 2.8, ``torch.export._draft_export.draft_export`` in 2.7). Raises where draft export
    is absent or fails: the caller then takes each data-dependent guard provisionally."""
    run = getattr(torch.export, "draft_export", None)
    if run is None:
        from torch.export._draft_export import draft_export as private

        run = private
    with filled_memory():
        ep: Any = run(model, args, kwargs, dynamic_shapes=dynamic_shapes)  # draft export adds ``_report``, undeclared
    return list(ep._report.failures)  # 2.8–2.15


_FILL = "fill_uninitialized_memory"  # a property of torch's module object, which mypy cannot see


@contextmanager
def filled_memory() -> Iterator[None]:
    """Every new tensor filled (NaN, or an integer type's largest value) rather than left as
    the allocator found it: draft export runs the real ops beside the fake ones, where an
    ``empty`` one's leftover bytes would choose which branch it meets, and the same module
    would give different problems from one process to the next (``torch.utils.deterministic``, 2.1–2.15;
    ``warn_only``: an op with no deterministic kernel still runs)."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = getattr(deterministic, _FILL)
    torch.use_deterministic_algorithms(True, warn_only=True)
    setattr(deterministic, _FILL, True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "... does not have a deterministic implementation"
            yield
    finally:
        setattr(deterministic, _FILL, fill)
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def intern_filenames() -> dict[Any, str]:
    """Draft export's file ids -> file names (``torch._logging.structured.INTERN_TABLE``,
    2.8–2.15); empty where it is absent: draft findings then land on the class line."""
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:
        return {}
    return {i: name for name, i in dict(INTERN_TABLE).items()}


def tracing_stack() -> list[Any]:
    """Strict mode's user frames (dynamo's ``TracingContext.extract_stack()``, 2.8–2.15); none
    where it is absent or fails: the guard is recorded without a line."""
    try:
        from torch._guards import TracingContext

        return list(TracingContext.extract_stack())
    except Exception:
        return []


def is_constraint_violation(exc: BaseException | None) -> TypeGuard[UserError]:
    return isinstance(exc, UserError) and exc.error_type == UserErrorType.CONSTRAINT_VIOLATION


def is_invalid_input(exc: BaseException | None) -> TypeGuard[UserError]:
    return isinstance(exc, UserError) and exc.error_type == UserErrorType.INVALID_INPUT


def uncaptured_account(exc: BaseException) -> str:
    """A failed ``torch.cond`` (map, scan, ...) error's text with its graph break written in:
    2.9–2.15 write it there; 2.8 says "Scroll up ..." and chains dynamo's ``Unsupported``
    (its title and explanation, the user's frames in ``real_stack``), written in as 2.9 does."""
    said = str(exc)
    cause = exc.__cause__ or exc.__context__
    if forms.SCROLL_UP not in said or cause is None:
        return said
    stack = "".join(traceback.format_list(getattr(cause, "real_stack", None) or []))
    return f"{said.split(forms.SCROLL_UP, 1)[0]}Got {str(cause).strip()}\n\n{forms.USER_CODE}\n{stack}"


def solver_lacks_max(exc: BaseException) -> bool:
    """torch's solver failing (``KeyError: 'max'`` in ``_process_derived_dim_roots``, 2.13) on
    a relation between derived dims whose root has no max."""
    tb, where = exc.__traceback__, set()
    while tb is not None:
        where.add(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return isinstance(exc, KeyError) and "_process_derived_dim_roots" in where


def is_fake_tensor_error(exc: BaseException) -> bool:
    """The fake tensor's own refusals (torch._subclasses.fake_tensor, 2.8–2.15)."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
        UnsupportedOperatorException,
    )

    return isinstance(exc, (UnsupportedOperatorException, DynamicOutputShapeException, DataDependentOutputException))


# -- patches ------------------------------------------------------------------------------


@contextmanager
def silenced_trace_print() -> Iterator[None]:
    """export's error wrapper ``print()``s the partial graph to stderr: shadow ``print`` in
    ``torch.export._trace`` only (2.8–2.15); where that module is absent, nothing is shadowed."""
    try:
        import torch.export._trace as trace
    except ImportError:
        yield
        return
    # through the module's namespace: ``print`` is a global lookup there, not an attribute torch declares
    shadowed = trace.__dict__.get("print")
    trace.__dict__["print"] = lambda *args, **kwargs: None
    try:
        yield
    finally:
        if shadowed is None:
            del trace.__dict__["print"]
        else:
            trace.__dict__["print"] = shadowed


OnEvent = Callable[[Any, str, Any], None]  # (shape env, "guard" | "replace", guard / (symbol, replacement))


@contextmanager
def shape_env_events(on_event: OnEvent) -> Iterator[None]:
    """Call ``on_event`` for each guard the shape env adds (``ShapeEnv._log_guard``) and each
    symbol it replaces (``_set_replacement``), and with every new shape env ("env"), while
    inside (2.8–2.15; signatures ``(prefix, g, forcing_spec)`` and ``(a, tgt, msg)``). Where
    torch lacks them, nothing is recorded: findings then sit on the module's class line."""
    if not all(callable(getattr(ShapeEnv, n, None)) for n in ("_log_guard", "_set_replacement")):
        yield
        return
    init, log_guard, set_replacement = ShapeEnv.__init__, ShapeEnv._log_guard, ShapeEnv._set_replacement

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        on_event(self, "env", None)

    def _log_guard(self, prefix, g, forcing_spec):
        on_event(self, "guard", g)
        return log_guard(self, prefix, g, forcing_spec)

    def _set_replacement(self, a, tgt, msg):
        if tgt != self.replacements.get(a) and a not in getattr(tgt, "free_symbols", ()):
            on_event(self, "replace", (a, tgt))
        else:
            on_event(self, "env", None)
        return set_replacement(self, a, tgt, msg)

    # replacing torch's methods is the point of a patch (mypy refuses any assignment to a method)
    ShapeEnv.__init__, ShapeEnv._log_guard, ShapeEnv._set_replacement = __init__, _log_guard, _set_replacement  # type: ignore[method-assign]
    try:
        yield
    finally:
        ShapeEnv.__init__, ShapeEnv._log_guard, ShapeEnv._set_replacement = init, log_guard, set_replacement  # type: ignore[method-assign]


OnGuard = Callable[[GuardOnDataDependentSymNode, FrameType | None], bool]


@contextmanager
def data_dependent_as_false(on_guard: OnGuard) -> Iterator[None]:
    """``ShapeEnv.evaluate_expr`` answering a data-dependent guard with false (torch's own
    ``fallback_value``, the 4th argument after the expression, as ``guard_or_false`` does;
    2.8–2.15) where ``on_guard(error, caller's frame)`` says to; else it raises as torch does."""
    evaluate = ShapeEnv.evaluate_expr

    def evaluate_expr(self: ShapeEnv, orig_expr: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return evaluate(self, orig_expr, *args, **kwargs)
        except GuardOnDataDependentSymNode as dde:
            given = args[3] if len(args) > 3 else kwargs.get("fallback_value")
            if given is not None or not on_guard(dde, sys._getframe(1)):
                raise
            return evaluate(self, orig_expr, *args[:3], **{**kwargs, "fallback_value": False})

    ShapeEnv.evaluate_expr = evaluate_expr  # type: ignore[method-assign]  # (a patch, as above)
    try:
        yield
    finally:
        ShapeEnv.evaluate_expr = evaluate  # type: ignore[method-assign]
