"""A job's report is untrusted input: the module being exported runs in the process that
writes it, and can write it itself. Each module here replaces that process's encoder
(``child.encode``, the last thing a job calls) with one that says what the module wants;
``exportlens check`` runs for real, in a subprocess, with a HOME of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[4]" }\n'
BASHRC = "# the user's own\n"

# net.py: a module whose import puts ``FORGED`` (the body of ``forged(end)``) in place of
# the encoder its export's result goes through
MODULE = """
import os

from torch import nn

from exportlens.exporter.core.report import Edit, Finding, Fix, Kind, ModuleReport, Status
from exportlens.exporter.workers import child, protocol


def forged(end):
{body}


child.encode = forged


class Net(nn.Module):
    def forward(self, x):
        return x * 2
"""

OUTSIDE = """
    bashrc = os.path.expanduser("~/.bashrc")
    edit = Edit(bashrc, 1, 1, 1, 1, "echo forged >> ~/.forged\\n")
    fix = Fix("Declare `n` (module then exports)", (edit,), preferred=True, verified="exports")
    finding = Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "forged", "net.py", 13, fixes=(fix,))
    return protocol.encode(protocol.Reported(ModuleReport("net.py:Net", Status.FAILED, (finding,))))
"""

# inside the project, but through a link that leads to ~/.bashrc
LINKED = """
    edit = Edit("shell.py", 1, 1, 1, 1, "echo forged\\n")
    fix = Fix("Write `x.shape[0]`", (edit,), preferred=True, verified="exports")
    finding = Finding("EL204", Kind.SPECIALIZATION, "forged", "net.py", 13, fixes=(fix,))
    return protocol.encode(protocol.Reported(ModuleReport("net.py:Net", Status.FAILED, (finding,))))
"""

OTHER_TARGET = """
    return protocol.encode(protocol.Reported(ModuleReport("other.py:Other", Status.EXPORTED)))
"""

# decodes (the codec builds what a line names), but a status of 7 is no status
GARBAGE = """
    return b'{"$type":"Reported","report":{"$type":"ModuleReport","target":"net.py:Net","status":7}}\\n'
"""

HUGE = """
    finding = Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "x" * (4 << 20), "net.py", 13)
    return protocol.encode(protocol.Reported(ModuleReport("net.py:Net", Status.FAILED, (finding,))))
"""

# a guard of the guard record (issue 39) said to be made on a line of a file outside the project
GUARD_OUTSIDE = """
    from exportlens.exporter.core.guards import Guard, GuardKind
    from exportlens.exporter.core.report import Summary

    guard = Guard(GuardKind.RANGE, "n <= 4", "../elsewhere.py", 3)
    summary = Summary("(x: f32[4]) -> f32[4]", (), (), (), (), guards=(guard,))
    return protocol.encode(protocol.Reported(ModuleReport("net.py:Net", Status.EXPORTED, summary=summary)))
"""

# a fix in the project, preferred and claiming a proof it never had, on a file the owner
# cannot apply it to: not tried, so neither verified nor preferred
UNPROVEN = """
    edit = Edit("gone.py", 1, 1, 1, 1, "import torch\\n")
    fix = Fix("Import torch", (edit,), preferred=True, verified="exports")
    finding = Finding("EL204", Kind.SPECIALIZATION, "forged", "net.py", 13, fixes=(fix,))
    return protocol.encode(protocol.Reported(ModuleReport("net.py:Net", Status.FAILED, (finding,))))
"""


def project(tmp_path: Path, body: str) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    (home / ".bashrc").write_text(BASHRC)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "net.py").write_text(MODULE.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")))
    (root / "shell.py").symlink_to(home / ".bashrc")
    return root, home


def check(root: Path, home: Path) -> tuple[dict, subprocess.CompletedProcess[str]]:
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "exportlens.cli", "check", "--format", "json", "--jobs", "1", str(root)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=240)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return json.loads(done.stdout), done


def fixes(out: dict) -> list[dict]:
    return [fix for module in out["modules"] for finding in module["findings"] for fix in finding["fixes"]]


def class_line(root: Path) -> int:
    return (root / "net.py").read_text().splitlines().index("class Net(nn.Module):") + 1


def refusal(out: dict, root: Path) -> dict:
    (module,) = out["modules"]
    assert module["target"] == "net.py:Net" and module["status"] == "failed" and not module["cached"]
    (finding,) = module["findings"]
    assert (finding["code"], finding["path"], finding["line"], finding["fixes"]) == (
        "EL504",
        "net.py",
        class_line(root),
        [],
    )
    return finding


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "why"),
    [
        (OUTSIDE, "/home/.bashrc', which is not a file of the project"),
        (LINKED, "'shell.py', which is not a file of the project"),
        (OTHER_TARGET, "it reports on 'other.py:Other', not on 'net.py:Net'"),
        (HUGE, "it holds a text of 4194304 characters"),
        (GARBAGE, "it does not fit the protocol: report.status: 7 is not one of exported, failed, skipped"),
        (GUARD_OUTSIDE, "'../elsewhere.py', which is not a file of the project"),
    ],
    ids=["edit-outside", "edit-through-a-link", "another-target", "huge", "garbage", "guard-outside"],
)
def test_a_forged_report_is_refused_on_the_class_and_never_cached(tmp_path, body, why):
    root, home = project(tmp_path, body)
    for _ in range(2):  # the second check runs the module again: nothing of the first was kept
        out, done = check(root, home)
        assert done.returncode == 1
        finding = refusal(out, root)
        assert finding["message"].startswith("exportlens refused the report of the export process: ")
        assert why in finding["message"]
        assert not (root / ".exportlens" / "cache" / "verdicts").exists() or not any(
            (root / ".exportlens/cache/verdicts").iterdir()
        )
    assert (home / ".bashrc").read_text() == BASHRC
    assert not (home / ".forged").exists()


# a result line nested past any parser's depth: no report (EL502), and no traceback in the
# warm parent that reads it, whose other jobs would go with it
DEEP = """
    return b'{"$type":"Reported","report":' + b"[" * 200000 + b"]" * 200000 + b"}\\n"
"""


@pytest.mark.slow
def test_a_result_line_nested_past_any_depth_is_no_report_and_kills_nothing(tmp_path):
    root, home = project(tmp_path, DEEP)
    out, done = check(root, home)
    (module,) = out["modules"]
    (finding,) = module["findings"]
    assert (finding["code"], finding["line"]) == ("EL502", class_line(root))
    assert finding["message"] == "the export process wrote a result that is not a report"
    assert len(finding["detail"]) < 2 << 20


@pytest.mark.slow
def test_a_fix_is_verified_and_preferred_only_by_the_owner_s_own_proof(tmp_path):
    root, home = project(tmp_path, UNPROVEN)
    out, done = check(root, home)
    (module,) = out["modules"]
    (finding,) = module["findings"]
    assert finding["message"] == "forged"
    (fix,) = finding["fixes"]
    assert (fix["title"], fix["preferred"], fix["verified"]) == ("Import torch", False, "unverified")
    assert not (root / "gone.py").exists()


@pytest.mark.slow
def test_a_verdict_on_disk_that_edits_outside_the_project_is_not_used(tmp_path):
    """``.exportlens/cache`` is in the project: an entry there is checked as a job's report is."""
    from exportlens.exporter.core.options import Options
    from exportlens.exporter.core.report import Edit, Finding, Fix, Kind, ModuleReport, Status
    from exportlens.exporter.spec.plan import make_plan
    from exportlens.exporter.workers.batch import export_in_workers, job_for
    from exportlens.exporter.workers.pool import Pool
    from exportlens.exporter.workers.verdicts import Verdicts

    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "net.py").write_text(
        "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    )
    plan = make_plan([root])
    edit = Edit(str(tmp_path / ".bashrc"), 1, 1, 1, 1, "echo forged\n")
    fix = Fix("Declare `n` (module then exports)", (edit,), preferred=True, verified="exports")
    forged = ModuleReport(
        "net.py:Net", Status.FAILED, (Finding("EL101", Kind.DATA_DEPENDENT_GUARD, "forged", "net.py", 6, fixes=(fix,)),)
    )
    with Pool(jobs=1, persist=True) as pool:
        job = job_for(plan, plan.modules[0], Options(), environment=pool.environment, sources=plan.sources.relative())
        Verdicts(root).put(job.key, forged)
        (module,) = export_in_workers(plan, pool, Options()).modules
    assert (module.status, module.cached, module.findings) == (Status.EXPORTED, False, ())


# every descriptor it may hold: with no fork (a spare) the one the protocol goes out on too
IMPOSTOR = """
import os
import time

from torch import nn

from exportlens.exporter.core.report import ModuleReport, Status
from exportlens.exporter.workers import protocol


class Net(nn.Module):
    def forward(self, x):
        lines = [
            protocol.encode(protocol.Started("1", os.getppid())),  # its owner, to be killed at the timeout
            protocol.encode(protocol.Done("2", protocol.Reported(ModuleReport("other.py:Other", Status.EXPORTED)))),
        ]
        for fd in range(3, 64):
            for line in lines:
                try:
                    os.write(fd, line)
                except OSError:
                    pass
        time.sleep(600)
        return x * 2
"""


@pytest.mark.slow
def test_a_module_that_speaks_the_protocol_cannot_have_its_owner_killed_in_its_place(tmp_path):
    """A spare's job runs in the process that speaks for it: a Started it forges, naming the
    CLI as its process, would have the CLI kill itself at the timeout."""
    root, home = project(tmp_path, "    pass")
    (root / "net.py").write_text(IMPOSTOR)
    (root / "pyproject.toml").write_text(PYPROJECT + "timeout = 3\n")
    out, done = check(root, home)
    (module,) = out["modules"]
    assert [f["code"] for f in module["findings"]] == ["EL501"], module["findings"]
