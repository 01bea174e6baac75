"""The failure corpus in tests/corpus/: what each case expects, and how exportlens did on it.

Each case is one file holding one module, ``Case``. The line that must break carries
``# expect: EL201`` (in the case's file, or in its table in pyproject.toml) (with
``, fix exports`` when the preferred fix must make the module export); a negative control
says ``Expect: clean.`` in its docstring instead. Shared by tests/test_corpus.py (each case)
and bench/bench_corpus.py (the figures).

A case written from a user's report also says, in its docstring, where the report is
(``From: pytorch/pytorch#113002``), the remedy that keeps the model's meaning
(``Remedy:``), the inputs that take every side of each data-dependent branch (``Probes:``,
built by the module's ``probe_inputs()``), and, where exportlens does not yet give the
expected line and code, why (``Known gap:``; tests/test_corpus.py holds it as a strict xfail).

Where an older torch's own behaviour differs (its export refuses the clean module, or
still fails once the fix is made), the case says what that torch gives, and why, in a
field per version: ``Before torch 2.10: EL101 on line 31, its fix does not export (...)``
or ``Before torch 2.10: clean``. The installed torch is held to the nearest such field
above it, so the difference is expected, never hidden. A case that a later torch exports
as it should says from which release (``Fixed in torch: 2.15``): on that torch and newer it
is held as a negative control.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from exportlens.exporter.core.codes import BY_CODE
from exportlens.exporter.core.report import Finding, ModuleReport, Status
from exportlens.exporter.edit.text_edits import apply_edits

CORPUS = Path(__file__).resolve().parent / "corpus"
# torch's symbols (s77, u0, zuf0), sources (L['x']), node names, infinities and reprs: never the user's words
TORCH_WORDS = re.compile(r"\b[suz]uf?\d+\b|\bs\d+\b|L\[|on node '|IntInfinity|int_oo|FakeTensor\(|Sym\(")
MARK = re.compile(r"#\s*expect:\s*(EL\d{3})(,\s*fix exports)?")
TABLE = re.compile(r'^\[tool\.exportlens\.modules\."([^"]+)"\]')
REPORT = re.compile(r"\b[\w.-]+/[\w.-]+#\d+\b")  # owner/repo#123
FIELD = re.compile(r"^(From|Expect|Remedy|Probes|Known gap|Fixed in torch|Before torch \d+\.\d+):\s*", re.M)
OLDER = re.compile(r"^(?:(?P<clean>clean)|(?P<code>EL\d{3}) on line (?P<line>\d+))(?P<nofix>.*fix does not export)?")


@dataclass(frozen=True)
class Case:
    path: str  # relative to the corpus
    line: int | None  # None: a negative control
    code: str | None
    fix_exports: bool
    where: str = ""  # the file the line is in, when not the case's own (pyproject.toml)
    reports: tuple[str, ...] = ()  # the users' reports it was written from ("owner/repo#123")
    remedy: str = ""  # the fix that keeps the model's meaning, in words
    probes: str = ""  # the inputs that take every side of each data-dependent branch, in words
    gap: str = ""  # why exportlens does not yet give the expected line and code ("": it does)
    older: str = ""  # what the installed torch gives instead, where it is older (``Before torch X.Y:``)
    fixed_in: str = ""  # the torch release that exports it as it should (from then on, a negative control)

    @property
    def target(self) -> str:
        return f"{self.path}:Case"


@dataclass(frozen=True)
class Outcome:
    case: Case
    first: Finding | None  # the first finding the user sees
    line_ok: bool
    kind_ok: bool
    fix_ok: bool | None  # None: no fix promised


def cases() -> list[Case]:
    marks = _marks_in_spec()
    found = []
    for file in sorted(CORPUS.glob("*.py")):
        text = file.read_text(encoding="utf-8")
        here = [(file.name, i, m) for i, line in enumerate(text.splitlines(), 1) if (m := MARK.search(line))]
        here += marks.get(file.name, [])
        about, older = _about(text), _about_torch(text)
        if not here:
            assert "Expect: clean" in text, f"{file.name}: no `# expect:` line and not a negative control"
            found.append(_for_installed_torch(Case(file.name, None, None, False, **about), older))
            continue
        assert len(here) == 1, f"{file.name}: one `# expect:` line per case"
        ((path, line, m),) = here
        found.append(_for_installed_torch(Case(file.name, line, m.group(1), bool(m.group(2)), path, **about), older))
    return found


def _about_torch(text: str) -> dict[tuple[int, int], str]:
    """The ``Before torch X.Y:`` fields: (X, Y) -> what that older torch gives."""
    doc = ast.get_docstring(ast.parse(text)) or ""
    parts = FIELD.split(doc)[1:]
    return {
        tuple(int(n) for n in name.split()[-1].split(".")): " ".join(body.split())
        for name, body in zip(parts[::2], parts[1::2])
        if name.startswith("Before torch")
    }


def _for_installed_torch(case: Case, older: dict[tuple[int, int], str]) -> Case:
    """The case as the installed torch is held to it: a control from the release that fixed
    it (``Fixed in torch``); else the nearest ``Before torch`` above it."""
    import torch

    from exportlens.exporter.runtime.compat.versions import installed

    if case.fixed_in and installed(torch.__version__) >= installed(case.fixed_in):
        return replace(case, line=None, code=None, fix_exports=False, gap="")  # torch's own fix: it exports, and agrees

    above = sorted(v for v in older if installed(torch.__version__) < v)
    if not above:
        return case
    said = older[above[0]]
    m = OLDER.match(said)
    assert m, f"{case.path}: `Before torch {above[0]}:` says neither `clean` nor `ELnnn on line N`: {said}"
    if m["clean"]:
        return replace(case, line=None, code=None, fix_exports=False, gap="", older=said)
    fix_exports = case.fix_exports and not m["nofix"]
    return replace(
        case, line=int(m["line"]), code=m["code"], fix_exports=fix_exports, where=case.path, gap="", older=said
    )


def _about(text: str) -> dict:
    """The docstring's fields: the reports cited in ``From:``, ``Remedy:``, ``Probes:``, ``Known gap:``."""
    doc = ast.get_docstring(ast.parse(text)) or ""
    parts = FIELD.split(doc)[1:]  # name, body, name, body ...
    fields = {name: " ".join(body.split()) for name, body in zip(parts[::2], parts[1::2])}
    return {
        "reports": tuple(REPORT.findall(fields.get("From", ""))),
        "remedy": fields.get("Remedy", ""),
        "probes": fields.get("Probes", ""),
        "gap": fields.get("Known gap", ""),
        "fixed_in": fields.get("Fixed in torch", "").split(" ")[0],
    }


def _marks_in_spec() -> dict[str, list[tuple[str, int, re.Match]]]:
    """``# expect:`` lines inside a module's table of pyproject.toml (a finding on the spec)."""
    out: dict[str, list[tuple[str, int, re.Match]]] = {}
    table = None
    for i, line in enumerate((CORPUS / "pyproject.toml").read_text(encoding="utf-8").splitlines(), 1):
        if header := TABLE.match(line):
            table = header.group(1).split(":")[0]
        elif (m := MARK.search(line)) and table:
            out.setdefault(table, []).append(("pyproject.toml", i, m))
    return out


def copy_corpus(dest: Path) -> Path:
    shutil.copytree(CORPUS, dest, ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    return dest


def check(root: Path, only: str | None = None) -> dict[str, ModuleReport]:
    """Every module of the corpus at ``root`` (or the one ``only`` names), in this process."""
    from exportlens.exporter.spec.plan import make_plan

    plan = make_plan([root])
    if only is not None:
        plan = replace(plan, modules=[p for p in plan.modules if p.target == only])
    return {p.target: _checked(plan, p) for p in plan.modules}


def _checked(plan, planned) -> ModuleReport:
    """``export_planned``, where exportlens's own error is what the CLI shows for it (an EL901 on
    the class line, see workers/outcome.py), so one module's error does not end the run."""
    from exportlens.exporter.core import codes
    from exportlens.exporter.runtime.in_process import export_planned
    from exportlens.exporter.runtime.run import Options

    try:
        return export_planned(plan, planned, Options(collect_all=True))
    except Exception as e:  # counted by the bench as a finding lost to an internal error
        name = planned.module.name_span
        lost = codes.finding(
            codes.INTERNAL,
            f"exportlens failed: {type(e).__name__}: {e}",
            planned.module.path,
            name.line,
            column=name.column,
        )
        return ModuleReport(planned.target, Status.FAILED, (lost,))


def judge(case: Case, report: ModuleReport, scratch: Path) -> Outcome:
    """How exportlens did on ``case``; a promised fix is applied in a copy under ``scratch`` and checked."""
    errors = [f for f in report.findings if f.code != "EL007"]
    first = errors[0] if errors else None
    if case.line is None:
        clean = report.status is Status.EXPORTED and first is None
        return Outcome(case, first, clean, clean, None)
    line_ok = first is not None and first.path == (case.where or case.path) and first.line == case.line
    kind_ok = first is not None and first.kind is BY_CODE[case.code].kind
    fix_ok = _fix_exports(case, first, scratch) if case.fix_exports else None
    return Outcome(case, first, line_ok, kind_ok, fix_ok)


def _fix_exports(case: Case, first: Finding | None, scratch: Path) -> bool:
    preferred = [f for f in (first.fixes if first else ()) if f.preferred]
    if not preferred:
        return False
    root = copy_corpus(scratch / case.path.removesuffix(".py"))
    for path in {e.path for e in preferred[0].edits}:
        file = root / path
        file.write_text(
            apply_edits(file.read_text(encoding="utf-8"), [e for e in preferred[0].edits if e.path == path])
        )
    after = check(root, only=case.target)[case.target]
    return after.status is Status.EXPORTED


def shown(report: ModuleReport, root: Path) -> list[tuple[str, str]]:
    """(where, text) for everything a user reads of ``report``: each finding's message, fix
    titles and related texts, and the hovers and inlay hints the server makes of it (its
    own functions, features/hover.py), on the files under ``root``."""
    from exportlens.server.features.hover import assigned, label, line_hover, verdict

    out = []
    for f in report.findings:
        out.append((f"{f.path}:{f.line} {f.code} message", f.message))
        out += [(f"{f.path}:{f.line} {f.code} fix", fix.title) for fix in f.fixes]
        out += [(f"{f.path}:{f.line} {f.code} related", r.message) for r in f.related]
    out.append((f"{report.target} hover", "\n".join(verdict(report))))
    for shapes in report.summary.line_shapes if report.summary else ():
        code = (root / shapes.path).read_text(encoding="utf-8").splitlines()[shapes.line - 1]
        out.append((f"{shapes.path}:{shapes.line} hover", line_hover(shapes, code)))
        if (target := assigned(code)) is not None:
            out.append((f"{shapes.path}:{shapes.line} inlay", label(shapes.shapes[-1], target)))
    return out


def in_torch_words(report: ModuleReport, root: Path) -> list[str]:
    """What of ``report`` speaks in torch's names (``shown``), each as ``target: where: text``."""
    return [f"{report.target}: {where}: {text}" for where, text in shown(report, root) if TORCH_WORDS.search(text)]
