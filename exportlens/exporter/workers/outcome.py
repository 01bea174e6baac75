"""How a job ended, as a ModuleReport the user reads (owner side, no torch): the
export's own report, or a finding on the class that says how its process ended."""

from __future__ import annotations

import os
import re
import signal
from dataclasses import replace
from pathlib import Path

from ..core import codes
from ..core.causes import Cause
from ..core.homes import holds_a_home
from ..core.report import Finding, Kind, ModuleReport, Status
from ..core.tree import SubmoduleTree
from ..find.packages import package_base
from ..spec.variants import named
from .platform import SIGKILL
from .protocol import RESULT_MAX, Died, Done, Exited, Internal, Job, Lost, OutOfMemory, Reported, TreeReported
from .validate import Refused, accepted


def outcome(
    job: Job, end: Done | Lost, why_killed: str | None, seconds: float
) -> tuple[ModuleReport | SubmoduleTree, bool]:
    """The report for ``job`` (a ``Task.TREE`` job's tree, where it made one); the flag says
    whether it may be cached: only a report the export itself wrote, under no limit it ran
    into, that the owner accepts (validate.py)."""
    if isinstance(end, Done):
        try:
            end = accepted(job, end)
        except Refused as e:
            message = (
                f"exportlens refused the report of the export process: {e}; the module's own code runs in that process"
            )
            return ModuleReport(
                job.target,
                Status.FAILED,
                named([_on_class(job, codes.REFUSED, message, "")], job.target),
                seconds=seconds,
            ), False
        if isinstance(end.end, TreeReported) and why_killed is None:
            return end.end.tree, False
    return _ended(job, end, why_killed, seconds)


def too_wide_root(root: Path) -> bool:
    """Whether the folder a project's modules import from is ``/``, a home or above one
    (EL505 here; ``exportlens init`` writes no pyproject.toml there)."""
    return holds_a_home(package_base(root.resolve()))


def too_wide(job: Job) -> ModuleReport | None:
    """A sandboxed job whose project folder is ``/``, a home or above one is not run: the
    sandbox reads the whole project, and that would be ``~/.ssh`` (a model file checked
    alone in the home folder, with no pyproject.toml of its own)."""
    if not job.sandbox or not too_wide_root(Path(job.root)):
        return None
    message = (
        f"not exported: its project folder is {job.root}, which holds your home folder, and a sandboxed export may read"
        " all of its project (your ~/.ssh too); put the model in a folder of its own with a pyproject.toml,"
        " or set `sandbox = false` for it"
    )
    return ModuleReport(job.target, Status.FAILED, named([_on_class(job, codes.TOO_WIDE, message, "")], job.target))


def _ended(job: Job, end: Done | Lost, why_killed: str | None, seconds: float) -> tuple[ModuleReport, bool]:
    """``outcome`` of an end the owner accepted."""
    output = tail(end.output) if isinstance(end, Done) else ""
    fault = end.fault if isinstance(end, Done) else ""
    shown = f"; it printed: {output.splitlines()[-1][:200]}" if output.strip() else ""

    def failed(code: codes.Code, message: str, detail: str = "") -> tuple[ModuleReport, bool]:
        parts = [
            detail,
            f"last output:\n{output}" if output else "",
            f"Python stack at the crash:\n{fault}" if fault else "",
        ]
        return ModuleReport(
            job.target,
            Status.FAILED,
            named([_on_class(job, code, message, "\n\n".join(p for p in parts if p))], job.target),
            seconds=seconds,
        ), False

    if why_killed == "timeout":
        return failed(codes.TIMEOUT, f"export did not finish within {job.timeout:g} s and was stopped{shown}")
    if isinstance(end, Lost):
        return failed(*_lost(end))
    e = end.end
    if isinstance(e, Reported):
        report, converted = _memory_findings(e.report, job)
        return _sandbox_hint(report, job), not converted and not e.replanned
    if isinstance(e, OutOfMemory):
        return failed(
            codes.MEMORY,
            f"export needed more than the memory limit of {_human(job.memory_limit)}{_meta_hint(job)}{shown}",
        )
    if isinstance(e, Exited):
        return failed(codes.CRASH, f"the module {e.message} while exporting{shown}")
    if isinstance(e, Internal):
        return failed(codes.INTERNAL, f"exportlens failed: {e.trace.strip().splitlines()[-1]}", e.trace)
    # (accepted() lets no undecoded end through, and a tree comes here only stopped by its timeout)
    return failed(codes.CRASH, _death(e if isinstance(e, Died) else Died(), _crash_site(fault, job.root)) + shown)


def _lost(end: Lost) -> tuple[codes.Code, str, str]:
    """The worker process itself went away: while starting (a timeout), or later (a crash)."""
    stderr = end.stderr.strip()
    if end.startup:
        why = f"the export worker {end.why} (importing torch and a first export); is the machine very busy?"
        return codes.TIMEOUT, why, stderr
    last = f": {stderr.splitlines()[-1][:200]}" if stderr else ""
    return codes.CRASH, f"the export worker process died ({end.why}){last}", stderr


def _death(e: Died, where: str) -> str:
    if e.overlong:
        return (
            f"the export process wrote a line of more than {RESULT_MAX >> 20} MiB where exportlens reads its"
            f" result, and was stopped{where}"
        )
    if e.signal:
        why = " (out of memory?)" if e.signal == SIGKILL else ""
        return f"the export process was killed by {signal_name(e.signal)}{why}{where}"
    if e.status is None:  # (its line looked like a result, and was none)
        return f"the export process wrote a result that is not a report{where}"
    return f"the export process exited with status {e.status} before reporting{where}"


def _on_class(job: Job, code: codes.Code, message: str, detail: str) -> Finding:
    return codes.finding_at(code, message, job.path, job.name_span, detail=detail)


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)')


def _crash_site(fault: str, root: str) -> str:
    """ " at net.py:6 in forward": the innermost frame of the user's in faulthandler's report."""
    prefix = os.path.join(os.path.realpath(root), "")
    for line in fault.splitlines():  # most recent call first
        m = _FRAME.match(line)
        if m and os.path.realpath(m["file"]).startswith(prefix) and "site-packages" not in m["file"]:
            return f" at {os.path.relpath(os.path.realpath(m['file']), prefix)}:{m['line']} in {m['name']}"
    return ""


def _memory_findings(report: ModuleReport, job: Job) -> tuple[ModuleReport, bool]:
    """An allocation refused under the cap reads as the user's error; say what it is.
    True when a finding was converted (the verdict depends on the cap: not cached)."""
    out: list[Finding] = []
    for f in report.findings:
        if f.kind is not Kind.SPEC_ERROR and f.cause is Cause.OUT_OF_MEMORY:
            said = f.message.rstrip(": ")  # a MemoryError says nothing: "... while exporting: "
            message = (
                f"export needed more than the memory limit of {_human(job.memory_limit)} ({said}){_meta_hint(job)}"
            )
            f = codes.finding_at(codes.MEMORY, message, f.path, f.span, detail=f.detail, cause=f.cause)
        out.append(f)
    converted = tuple(out) != report.findings
    return (replace(report, findings=tuple(out)) if converted else report), converted


def _meta_hint(job: Job) -> str:
    """A model too big for the device can still be checked: its weights are not needed to export."""
    if job.device == "meta":
        return ""
    return (
        '; `device = "meta"` in its table builds the module without allocating its weights, and checks that it exports'
    )


SANDBOX_HINT = (
    " (the export runs sandboxed: it reads only the project, the interpreter and the system's folders, writes"
    " only its scratch folder, changes no file's mode, owner or times, and signals no process outside it;"
    " `sandbox = false` in this module's table runs it unconfined)"
)


def _sandbox_hint(report: ModuleReport, job: Job) -> ModuleReport:
    """A PermissionError under the sandbox is the sandbox's doing: say so, and how to lift it."""
    if not job.sandbox:
        return report
    hinted = tuple(
        replace(f, message=f.message + SANDBOX_HINT) if f.cause is Cause.REFUSED else f for f in report.findings
    )
    return replace(report, findings=hinted) if hinted != report.findings else report


def signal_name(sig: int) -> str:
    return signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _human(n: int | None) -> str:
    if not n:
        return "none"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n}B"
