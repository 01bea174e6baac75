"""Suppressions as a user meets them: `# exportlens: ignore[...]` on a line or on the class
line, and `ignore` in a module's table, each hiding a real finding (a hard-coded view that
pins a dynamic batch: EL204); one that hides nothing is reported on its own line (EL008);
and `--format github` prints each as a GitHub Actions annotation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from exportlens.exporter.core.report import Finding, Fix, Kind, Severity
from exportlens.exporter.spec.suppressions import comments, ignore_edit
from exportlens.github import command

REPO = Path(__file__).resolve().parent.parent
HEAD = (REPO / "examples" / "models" / "head.py").read_text()
SPEC = """
[tool.exportlens.modules."models/{name}.py:{cls}"]
init = {{ hidden = 16, classes = 10 }}
inputs = {{ x = "f32[batch, 16]" }}
dims = {{ batch = {{ min = 1, max = 256, example = 4 }} }}
"""
VIEW = "        flat = logits.view(4, self.classes)"
CLASS = "class ClassifierHead(nn.Module):"


def exportlens(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "exportlens.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suppressed")
    (root / "models").mkdir()
    heads = {
        # on the line, and an unused one on the line before it
        "line": HEAD.replace(VIEW, VIEW + "  # exportlens: ignore[EL204]").replace(
            "logits = self.proj(x)", "logits = self.proj(x)  # exportlens: ignore[EL101]"
        ),
        "whole": HEAD.replace(CLASS, CLASS + "  # exportlens: ignore[EL204]"),  # the class line: the whole module
        "table": HEAD,  # ignore = [...] in its table
        # no spec: skipped, so its suppression is not judged unused (and its EL007 is suppressed)
        "unchecked": HEAD.replace(CLASS, CLASS + "  # exportlens: ignore[EL007]").replace(
            VIEW, VIEW + "  # exportlens: ignore[EL101]"
        ),
    }
    tables = ""
    for name, text in heads.items():
        cls = name.capitalize() + "Head"
        (root / "models" / f"{name}.py").write_text(text.replace("ClassifierHead", cls))
        tables += SPEC.format(name=name, cls=cls) if name != "unchecked" else ""
    (root / "pyproject.toml").write_text(tables + 'ignore = ["EL204", "EL101"]\n')  # the last table's: TableHead's
    return root


@pytest.mark.slow  # a whole CLI run that exports (three modules)
def test_each_suppression_hides_its_finding_and_an_unused_one_is_reported_on_its_line(project):
    done = exportlens("check", ".", cwd=project)
    assert done.stdout.splitlines() == [
        "models/line.py:14:32: EL008 this suppression hides nothing: no EL101 is reported on this line; remove it",
        "pyproject.toml:16:20: EL008 `ignore` entry 'EL101' hides nothing: TableHead reports no EL101; remove it",
        "4 modules: 0 exported, 3 failed, 1 skipped; 2 findings, 4 suppressed",
    ], done.stderr
    assert done.returncode == 0  # what is left is warnings


@pytest.mark.slow  # whole CLI runs (answered from the first's cache)
def test_format_github_prints_workflow_commands(project, tmp_path):
    done = exportlens("check", ".", "--format", "github", cwd=project)
    expected = [
        "::warning file=models/line.py,line=14,col=32,endLine=14,endColumn=59,title=EL008::"
        "this suppression hides nothing: no EL101 is reported on this line; remove it",
        "::warning file=pyproject.toml,line=16,col=20,endLine=16,endColumn=27,title=EL008::"
        "`ignore` entry 'EL101' hides nothing: TableHead reports no EL101; remove it",
    ]
    lines = done.stdout.splitlines()  # the second run answers from the first's cache, and says so
    assert lines[:2] == expected and lines[2].startswith(
        "4 modules: 0 exported, 3 failed, 1 skipped; 2 findings, 4 suppressed"
    )
    report = tmp_path / "report.json"
    report.write_text(exportlens("check", ".", "--format", "json", cwd=project).stdout)
    merged = exportlens("merge", str(report), "--format", "github", cwd=project)
    lines = merged.stdout.splitlines()
    assert lines[:2] == expected and lines[2].startswith("4 modules: 0 exported, 3 failed, 1 skipped; 2 findings (")


def test_github_escapes_what_would_end_a_property_or_the_message():
    fix = Fix("Write `x.shape[0]`", ())
    f = Finding("EL204", Kind.SPECIALIZATION, "100% sure:\r\nline two", "a,b:c.py", 3, 5, 3, 9, Severity.ERROR, (fix,))
    assert command(f, "dir/a,b:c.py") == (
        "::error file=dir/a%2Cb%3Ac.py,line=3,col=5,endLine=3,endColumn=9,title=EL204::"
        "100%25 sure:%0D%0Aline two%0Afix: Write `x.shape[0]`"
    )
    across = Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "m", "a.py", 3, 5, 4, 2, Severity.INFO)
    assert command(across, "a.py") == "::notice file=a.py,line=3,endLine=4,title=EL101::m"  # no columns across lines


def test_a_marker_inside_a_string_is_no_suppression_and_the_edit_merges_codes():
    text = 'a = "# exportlens: ignore[EL204]"\nb = f(a)  # why  # exportlens: ignore[EL101]\nc = 1  # note\n'
    assert list(comments(text, "m.py")) == [2]
    merged = ignore_edit(text, 2, "EL204", "m.py")
    assert (merged.line, merged.column, merged.new_text) == (2, 18, "# exportlens: ignore[EL101, EL204]")
    kept = ignore_edit(text, 3, "EL204", "m.py")
    assert (kept.column, kept.new_text) == (14, "  # exportlens: ignore[EL204]")  # after the comment already there
    assert ignore_edit('s = """a\nb"""\n', 1, "EL204", "m.py") is None  # the line ends inside a string


MISREAD = ("ignore [EL204]", "ignore(EL204)", "ignore: EL204", "ignore=EL204", "ignore-EL204", "ignore EL204")


@pytest.mark.slow  # a whole CLI run that exports (one module per form)
def test_a_comment_that_only_starts_like_a_suppression_hides_nothing_and_is_reported(tmp_path):
    (tmp_path / "models").mkdir()
    tables = ""
    for i, form in enumerate(MISREAD):
        cls = f"Head{i}"
        text = HEAD.replace("ClassifierHead", cls).replace(VIEW, f"{VIEW}  # exportlens: {form}")
        (tmp_path / "models" / f"h{i}.py").write_text(text)
        tables += SPEC.format(name=f"h{i}", cls=cls)
    (tmp_path / "pyproject.toml").write_text(tables)
    done = exportlens("check", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # each EL204 is still shown
    for i, form in enumerate(MISREAD):
        mine = [line for line in done.stdout.splitlines() if line.startswith(f"models/h{i}.py:15:")]
        assert any(": EL204 " in line for line in mine), (form, done.stdout)
        assert (
            f"models/h{i}.py:15:{len(VIEW) + 3}: EL008 this comment is not a suppression exportlens reads"
            " (`# exportlens: ignore` or `# exportlens: ignore[EL204]`): it hides nothing" in mine
        ), (form, done.stdout)


def test_only_the_exact_forms_are_read_as_suppressions():
    forms = {
        "# exportlens: ignore": (),
        "#exportlens:ignore[EL204, EL101]": ("EL204", "EL101"),
        "# exportlens: ignore[EL204]  # the batch is fixed here": ("EL204",),
        "# exportlens: ignore  # why": (),
        "# note  # exportlens: ignore[EL101]": ("EL101",),
    }
    for comment, expected in forms.items():
        (found,) = comments(f"x = 1  {comment}\n", "m.py").values()
        assert (found.codes, found.understood) == (expected, True), comment
    for form in (*MISREAD, "ignore[]", "ignore[EL204", "ignore[el204]", "ignored", "ignore[EL204] EL101"):
        (found,) = comments(f"x = 1  # exportlens: {form}\n", "m.py").values()
        assert not found.understood and not found.hides("EL204"), form
        assert found.span.column == 8, form  # where the comment starts
    # the quick fix writes the exact form in place of the one not understood
    edit = ignore_edit("x = 1  # exportlens: ignore EL204\n", 1, "EL204", "m.py")
    assert (edit.column, edit.end_column, edit.new_text) == (8, 34, "# exportlens: ignore[EL204]")
