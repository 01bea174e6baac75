"""An export confined by the sandbox (Linux Landlock): the hostile module of the hardening
issue tries to read a key outside the project, copy it in, delete a project file and write
into its owner's stdout through /proc; each attempt is refused, and the module says so in
the finding it raises. Where the kernel has no Landlock, the test is skipped, not faked."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from exportlens.exporter.core.options import Options
from exportlens.exporter.core.report import Status
from exportlens.exporter.core.settings import Overrides
from exportlens.exporter.spec.plan import make_plan
from exportlens.exporter.workers.batch import job_for
from exportlens.exporter.workers.pool import Pool
from exportlens.exporter.workers.sandbox import available

pytestmark = pytest.mark.skipif(not available().startswith("landlock"), reason=f"no sandbox here: {available()}")

HOSTILE = """
import os
import tempfile
from pathlib import Path

import torch

SECRET = Path({secret!r})
HERE = Path(__file__).parent


def attempt(name, action):
    try:
        action()
        return f"{{name}}: done"
    except OSError as e:
        return f"{{name}}: {{type(e).__name__}}"


def owner_stdout():
    owner = int(Path(f"/proc/{{os.getppid()}}/stat").read_text().rsplit(")", 1)[1].split()[1])  \
# the warm parent's parent
    with open(f"/proc/{{owner}}/fd/1", "a"):  # opened is enough: a forged message could be written next
        pass


class Hostile(torch.nn.Module):
    @staticmethod
    def example_inputs():
        return (torch.randn(2, 3),)

    def forward(self, x):
        said = [
            attempt("read secret", SECRET.read_text),
            attempt("copy in", lambda: (HERE / "stolen.txt").write_text("key")),
            attempt("delete", (HERE / "victim.py").unlink),
            attempt("owner stdout", owner_stdout),
            attempt("scratch", lambda: Path(tempfile.mkstemp()[1]).write_text("fine")),
        ]
        raise RuntimeError("; ".join(said))
"""


def run(tmp_path: Path, sandbox: bool) -> str:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = home / ".ssh" / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    project = tmp_path / "project"
    project.mkdir()
    (project / "hostile.py").write_text(textwrap.dedent(HOSTILE.format(secret=str(secret))))
    (project / "victim.py").write_text("# the user's work\n")
    plan = make_plan([project])
    (planned,) = plan.modules
    with Pool(jobs=1) as pool:
        report = pool.run(job_for(plan, planned, Options(overrides=Overrides(sandbox=sandbox))))
    assert report.status is Status.FAILED
    (finding,) = report.findings
    return finding.message


@pytest.mark.slow
def test_the_sandbox_refuses_reading_outside_writing_deleting_and_the_owner_s_stdout(tmp_path: Path):
    message = run(tmp_path, sandbox=True)
    assert "read secret: PermissionError" in message
    assert "copy in: PermissionError" in message
    assert "delete: PermissionError" in message
    assert "owner stdout: PermissionError" in message
    assert "scratch: done" in message  # its own scratch folder is writable
    assert message.endswith("`sandbox = false` in this module's table runs it unconfined)")  # why, and how to lift it
    assert not (tmp_path / "project" / "stolen.txt").exists()
    assert (tmp_path / "project" / "victim.py").read_text() == "# the user's work\n"


@pytest.mark.slow  # the control of the sandbox test, starting torch again
def test_without_the_sandbox_the_same_module_can_do_what_its_user_can(tmp_path: Path):
    """The control: the refusals above are the sandbox's, not the test's."""
    message = run(tmp_path, sandbox=False)
    assert "read secret: done" in message and "delete: done" in message
    assert "sandbox" not in message
