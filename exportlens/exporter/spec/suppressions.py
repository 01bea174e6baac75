"""Findings a team has accepted: ``# exportlens: ignore[EL204]`` comments and a module
table's ``ignore = ["EL204"]`` (standard library tokenizer; no torch).

A comment at the end of a line hides the findings on that line; on a module's ``class``
line, every finding of that module; ``ignore`` in its pyproject table, the same. Without
``[...]`` every code. A suppression that hides nothing is itself reported (EL008), but
only where a module was exported this run: a module not checked proves nothing unused.
Only the exact forms suppress: a comment that starts like one (``ignore [EL204]``,
``ignore: EL204``) would otherwise hide every code on its line, so it hides nothing and
is reported (EL008) wherever its module is in the report.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import codes
from ..core.report import Edit, Finding, Kind, ModuleReport, Report, Status
from ..core.targets import ModuleClass, Span
from ..find.prefilter import MARKER
from .module_spec import ignore_problem
from .plan import Plan
from .pyproject import PYPROJECT, Pyproject, read

START = re.compile(r"#\s*exportlens:\s*ignore")  # what starts like a suppression
# what may follow it: nothing, or ``[EL204, EL101]``; then the comment's end or another comment
EXACT = re.compile(r"(?:\[(?P<codes>\s*EL\d{3}\s*(?:,\s*EL\d{3}\s*)*)\])?(?=\s*(?:#|$))")
EXACT_FORMS = "`# exportlens: ignore` or `# exportlens: ignore[EL204]`"
# an export that ran to its verdict: every line its module reaches was traced
_TRACED = frozenset({Kind.DATA_DEPENDENT_GUARD, Kind.CONSTRAINT_VIOLATION, Kind.SPECIALIZATION})


@dataclass(frozen=True)
class Ignore:
    """One suppression: a comment (``target`` None) or an entry of a module's ``ignore``."""

    path: str
    span: Span  # the comment's ``exportlens: ignore[...]``, or the entry's string
    codes: tuple[str, ...]  # empty: every code
    target: str | None = None
    understood: bool = True  # False: it starts like a suppression but is none of the exact forms

    def hides(self, code: str) -> bool:
        return self.understood and (not self.codes or code in self.codes)


@dataclass(frozen=True)
class Mark:
    """Where a suppression is written in one comment (0-based offsets in its text)."""

    start: int
    end: int  # past the exact form, or past the comment where it is not one
    codes: tuple[str, ...]
    understood: bool


def mark_in(comment: str) -> Mark | None:
    """The suppression ``comment`` holds, exact or not; None where nothing starts like one."""
    start = START.search(comment)
    if start is None:
        return None
    exact = EXACT.match(comment, start.end())
    if exact is None:
        return Mark(start.start(), len(comment.rstrip()), (), False)
    return Mark(start.start(), exact.end(), _codes(exact.group("codes")), True)


def comments(text: str, path: str) -> dict[int, Ignore]:
    """The suppression comment on each line of a Python file, read with Python's own
    tokenizer (so ``"# exportlens: ignore"`` inside a string is no comment); a file that
    does not tokenize to its end keeps the comments before the problem."""
    found: dict[int, Ignore] = {}
    if MARKER not in text:
        return found  # most files: no tokenizing at all
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and (m := mark_in(tok.string)):
                line, col = tok.start
                span = Span(line, col + m.start + 1, line, col + m.end + 1)
                found[line] = Ignore(path, span, m.codes, understood=m.understood)
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _codes(text: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.strip() for c in text.split(","))) if text else ()


def table_ignores(target: str, table: Any, tree: Pyproject) -> list[Ignore]:
    """A module table's ``ignore`` entries, each where its string is written in pyproject.toml
    (its quotes included): a variant's own entries, else its class's."""
    value = table.get("ignore") if isinstance(table, dict) else None
    if value is None or ignore_problem(value):
        return []
    written = next((items for t in tree.module_tables(target) if (items := tree.items((*t, "ignore")))), [])
    home = tree.where(tree.module_tables(target)[-1]).span
    out = []
    for code in dict.fromkeys(value):
        node = next((n for n in written if n.value == code), None)
        s = node.span if node else None
        span = Span(s.line, s.column - 1, s.end_line, (s.end_column or 1) + 1) if s else Span(home.line)
        out.append(Ignore(PYPROJECT, span, (code,), target))
    return out


def traced(report: ModuleReport) -> bool:
    """Whether the module's export ran to a verdict, so that what it did not report on a
    line of its class is known not to be there."""
    if report.status is Status.EXPORTED:
        return True
    return report.status is Status.FAILED and all(f.kind in _TRACED for f in report.findings)


def class_target(target: str) -> str:
    """``path.py:Class`` of a report's target, without a variant's ``[name]``."""
    return re.sub(r"\[[^\]]*\]$", "", target)


@dataclass
class Suppressor:
    """What can hide findings in one project, with the text of each file as it is now."""

    text: Callable[[str], str]  # a project-relative path's text
    modules: Mapping[str, ModuleClass]  # by class target
    tables: Mapping[str, tuple[Any, Any]]  # ProjectSpecs.tables: target -> (raw table, Location)
    pyproject: str = ""  # its text, where ``ignore`` entries are written
    used: dict[Ignore, set[str]] = field(default_factory=dict)  # what each suppression hid
    unmarked: frozenset[str] = frozenset()  # paths whose text is known to hold no comment: not read
    _comments: dict[str, dict[int, Ignore]] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: Plan) -> Suppressor:
        modules = {m.target: m.module for m in plan.modules}
        return cls(
            plan.sources.text, modules, plan.project.tables, plan.project.text, unmarked=frozenset(plan.unmarked)
        )

    def comments_in(self, path: str) -> dict[int, Ignore]:
        if path not in self._comments:
            wanted = path.endswith(".py") and path not in self.unmarked
            self._comments[path] = comments(self.text(path), path) if wanted else {}
        return self._comments[path]

    def holds_none(self, report: Report) -> bool:
        """Whether nothing can hide a finding of ``report``: no table has an ``ignore``, and every
        file its findings and modules are in is known to hold no comment (a check of a tree
        that suppresses nothing matches no finding one by one)."""
        if any(isinstance(table, dict) and "ignore" in table for table, _ in self.tables.values()):
            return False
        paths = {f.path for m in report.modules for f in m.findings} | {f.path for f in report.findings}
        paths |= {module.path for module in self.modules.values()}
        return all(not p.endswith(".py") or p in self.unmarked for p in paths)

    def match(self, target: str | None, f: Finding) -> Ignore | None:
        """The suppression that hides ``f`` (of module ``target``), noted as used; None: shown."""
        for ignore in self._candidates(target, f):
            if ignore.hides(f.code):
                self.used.setdefault(ignore, set()).add(f.code)
                return ignore
        return None

    def _candidates(self, target: str | None, f: Finding) -> Iterable[Ignore]:
        line = self.comments_in(f.path).get(f.line)
        if line is not None:
            yield line
        if target is None or f.code == codes.UNUSED_SUPPRESSION.code:
            return
        module = self.modules.get(class_target(target))
        if module is not None and (on_class := self.comments_in(module.path).get(module.name_span.line)):
            yield on_class
        yield from self.entries(target)

    def entries(self, target: str) -> list[Ignore]:
        entry = self.tables.get(target) or self.tables.get(class_target(target))
        return table_ignores(target, entry[0], read(self.pyproject)) if entry else []

    def unused(self, judged: Iterable[str], seen: Iterable[str] = ()) -> list[tuple[str, Finding]]:
        """EL008 for each suppression in the class (or the table) of a ``judged`` module
        that hid nothing this run, and for each comment not understood in the class of a
        module judged or ``seen`` (that needs no export), with the module it is reported for."""
        out: dict[tuple[str, int, int], tuple[str, Finding]] = {}
        judged = list(judged)
        for target in dict.fromkeys([*judged, *seen]):
            module = self.modules.get(class_target(target))
            if module is None:
                continue
            inside = [
                c
                for n, c in self.comments_in(module.path).items()
                if module.span.line <= n <= (module.span.end_line or n)
            ]
            if target not in judged:
                inside = [c for c in inside if not c.understood]
            for ignore in [*inside, *(self.entries(target) if target in judged else ())]:
                finding = self._unused_finding(ignore, module)
                if finding is not None:
                    out.setdefault((finding.path, finding.line, finding.column), (target, finding))
        return list(out.values())

    def _unused_finding(self, ignore: Ignore, module: ModuleClass) -> Finding | None:
        if not ignore.understood:
            message = f"this comment is not a suppression exportlens reads ({EXACT_FORMS}): it hides nothing"
            return codes.finding_at(codes.UNUSED_SUPPRESSION, message, ignore.path, ignore.span)
        hid = self.used.get(ignore, set())
        idle = [c for c in ignore.codes if c not in hid] if ignore.codes else ([] if hid else ["any"])
        if not idle:
            return None
        what = "finding" if idle == ["any"] else " or ".join(idle)
        if ignore.target is not None:
            message = f"`ignore` entry {idle[0]!r} hides nothing: {module.name} reports no {idle[0]}; remove it"
        elif ignore.span.line == module.name_span.line:
            message = f"this suppression hides nothing: {module.name} reports no {what}; remove it"
        else:
            message = f"this suppression hides nothing: no {what} is reported on this line; remove it"
        return codes.finding_at(codes.UNUSED_SUPPRESSION, message, ignore.path, ignore.span)


def suppress(report: Report, suppressor: Suppressor, *, judge: bool) -> tuple[Report, int]:
    """The report without what is suppressed, and how many findings that hid; with
    ``judge`` (an export that collected every problem), EL008 on each unused suppression
    of a module that was exported, in that module's report."""
    if suppressor.holds_none(report):
        return report, 0
    modules, hidden = [], 0
    for m in report.modules:
        kept = tuple(f for f in m.findings if suppressor.match(m.target, f) is None)
        hidden += len(m.findings) - len(kept)
        modules.append(replace(m, findings=kept) if len(kept) < len(m.findings) else m)
    others = tuple(f for f in report.findings if suppressor.match(None, f) is None)
    hidden += len(report.findings) - len(others)
    judged = [m.target for m in report.modules if traced(m)] if judge else []
    unused: dict[str, list[Finding]] = {}
    for target, finding in suppressor.unused(judged, seen=[m.target for m in report.modules]):
        unused.setdefault(target, []).append(finding)
    modules = [replace(m, findings=m.findings + tuple(unused[m.target])) if m.target in unused else m for m in modules]
    return Report(tuple(modules), others), hidden


def ignore_edit(text: str, line: int, code: str, path: str) -> Edit | None:
    """The edit that adds ``# exportlens: ignore[code]`` at the end of ``line``, after any
    comment there, or merges ``code`` into the suppression already there. None where the
    line cannot end in a comment (it ends inside a string, or continues with a backslash),
    where ``code`` is already suppressed, or where the file does not tokenize."""
    lines = text.splitlines()
    if not 0 < line <= len(lines) or lines[line - 1].rstrip().endswith("\\"):
        return None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if any(t.start[0] <= line < t.end[0] for t in tokens if t.type != tokenize.NL and t.type != tokenize.NEWLINE):
        return None  # a string (or bracket-free token) goes on past this line's end
    comment = next((t for t in tokens if t.type == tokenize.COMMENT and t.start[0] == line), None)
    mark = mark_in(comment.string) if comment else None
    if comment is not None and mark is not None:
        # one not understood is replaced by the exact form: it hid nothing
        codes_now = mark.codes if mark.understood else ()
        if mark.understood and (not codes_now or code in codes_now):
            return None
        start = comment.start[1] + mark.start + 1
        merged = f"# exportlens: ignore[{', '.join((*codes_now, code))}]"
        return Edit(path, line, start, line, comment.start[1] + mark.end + 1, merged)
    end = len(lines[line - 1].rstrip()) + 1
    return Edit(path, line, end, line, len(lines[line - 1]) + 1, f"  # exportlens: ignore[{code}]")
