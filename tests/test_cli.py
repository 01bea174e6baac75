"""The CLI as a user runs it: a real subprocess on a copy of the bundled examples.

The copy is shared by the tests of this file: the first check keeps its verdicts in the
copy's ``.exportlens/cache``, and the checks after it answer from there, as a user's
second run does. Exports run under a ``python`` that notes each start of a worker
process before it becomes the real interpreter, so a test can tell that none started."""

from __future__ import annotations

import json
import locale
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from exportlens.exporter.core.report import SCHEMA

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


HERE = Path()  # the folder the CLI runs in, holding ``examples/`` and ``python`` (set below)
PYTHON = sys.executable  # the workers' interpreter: on macOS and Linux, ``python`` in HERE (set below)
# a `#!/bin/sh` script is a program on macOS and Linux, not on Windows: there the workers run the
# interpreter itself, and the tests that count their starts skip
counts_workers = pytest.mark.skipif(sys.platform == "win32", reason="counts worker starts with a #!/bin/sh python")


@pytest.fixture(scope="module", autouse=True)
def here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    global HERE, PYTHON
    HERE = tmp_path_factory.mktemp("cli")
    shutil.copytree(EXAMPLES, HERE / "examples", ignore=shutil.ignore_patterns("__pycache__", ".exportlens"))
    if sys.platform != "win32":
        python = HERE / "python"
        python.write_text(f'#!/bin/sh\necho "$@" >> "{HERE}/workers.log"\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        PYTHON = str(python)
    return HERE


def exportlens(*args: str, cwd: Path | None = None, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), **env_vars)
    if args and args[0] in ("check", "export", "show") and "--python" not in args:
        args = (args[0], "--python", PYTHON, *args[1:])
    command = [sys.executable, "-m", "exportlens.cli", *args]
    encoding = console(env)
    return subprocess.run(command, cwd=cwd or HERE, env=env, capture_output=True, encoding=encoding, timeout=300)


def console(env: dict[str, str] | None = None) -> str:
    """The encoding of the CLI's output: PYTHONIOENCODING where set (.ci/run runs these tests
    again with cp1252), else the locale's (cp1252 on a Windows runner)."""
    return ((env or os.environ).get("PYTHONIOENCODING") or locale.getpreferredencoding(False)).split(":")[0]


def shown(text: str) -> str:
    """``text`` as the CLI prints it on that console: what its encoding lacks, as an escape."""
    return text.encode(console(), "backslashreplace").decode(console())


def workers_started() -> int:
    """How many worker processes the runs so far started (not the probe of what is installed)."""
    log = HERE / "workers.log"
    return sum("exportlens" in line for line in log.read_text().splitlines()) if log.exists() else 0


def example_line(path: str, needle: str) -> int:
    for i, line in enumerate((EXAMPLES / path).read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


@pytest.fixture(scope="module")
def check_examples() -> subprocess.CompletedProcess[str]:
    return exportlens("check", "examples")


@pytest.mark.slow
def test_check_examples_prints_each_finding_on_its_line(check_examples):
    out = check_examples.stdout
    assert check_examples.returncode == 1, check_examples.stderr
    expected = [
        f"examples/models/fusion.py:{example_line('models/fusion.py', 'torch.cat')}:9: EL202"
        " `image_len` and `text_len` are declared as independent dims, but this line needs them equal",
        f"examples/models/head.py:{example_line('models/head.py', 'view(4')}:9: EL204"
        " `batch` was declared dynamic but was specialized to 4",
        f"examples/models/positional.py:{example_line('models/positional.py', 'if seq > self.max_len')}:9: EL201"
        " `seq` is declared as [2, 1024], but this line requires `seq <= 128`",
        f"examples/models/router.py:{example_line('models/router.py', 'if routed > 0')}:12: EL101"
        " `routed > 0` depends on the values inside a tensor",
    ]
    lines = out.splitlines()
    for want in expected:
        assert any(line.startswith(want) for line in lines), f"{want!r} not in:\n{out}"
    # (its title then says what exporting with it gave: tests/test_docs_examples.py shows those)
    assert any(line.startswith("    fix: Set `seq` to Dim('seq', max=128)") for line in lines), out
    assert lines[-1] == "5 modules: 1 exported, 4 failed, 0 skipped; 4 findings"
    assert "s77" not in out and "u0" not in out


def test_the_readme_shows_what_checking_the_examples_prints(check_examples):
    """The README's first block is this command's output, fixes proven and all: regenerate it
    by running ``exportlens check examples/`` when the output changes."""
    block = (
        (REPO / "README.md")
        .read_text(encoding="utf-8")
        .split("$ exportlens check examples/\n", 1)[1]
        .split("```", 1)[0]
    )
    assert check_examples.stdout == block


def test_the_readme_opens_with_its_two_commands_and_ci_runs_its_test_command_exactly():
    """The first makes a virtual environment (nothing installs into the system's Python) and
    ends checking the examples; the second is the last thing ``.ci/run`` runs."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# exportlens\n\n```sh\n")
    install, tests = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert install.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
    assert install.endswith(" && exportlens check examples/")
    ran = [line for line in (REPO / ".ci/run").read_text().splitlines() if line and not line.startswith("#")]
    assert ran[-1] == tests


@counts_workers
def test_a_second_check_of_an_unchanged_project_answers_from_the_cache_without_a_worker(check_examples):
    started = workers_started()
    again = exportlens("check", "examples")
    assert again.returncode == 1, again.stderr
    first, second = check_examples.stdout.splitlines(), again.stdout.splitlines()
    assert second[:-1] == first[:-1]  # the same findings and fixes
    assert second[-1] == first[-1] + " (5 unchanged since an earlier run: from its cache)"
    assert workers_started() == started  # no worker, so no torch
    assert (HERE / "examples/.exportlens/.gitignore").read_text().endswith("*\n")


@pytest.mark.slow  # four whole CLI runs, each starting torch
def test_an_edit_exports_again_only_what_it_changes_and_no_cache_ignores_the_cache(check_examples):
    router = HERE / "examples/models/router.py"
    text = router.read_text()
    router.write_text(text + "\n# edited\n")
    try:
        edited = exportlens("check", "examples", "--format", "json")
        modules = {m["target"]: m["cached"] for m in json.loads(edited.stdout)["modules"]}
        assert modules.pop("models/router.py:TokenRouter") is False and all(modules.values())
        fresh = exportlens("check", "examples/models/encoder.py", "--no-cache")
        assert fresh.stdout.strip() == "1 module: 1 exported, 0 failed, 0 skipped", fresh.stdout + fresh.stderr
    finally:
        router.write_text(text)


def test_the_clean_example_alone_exits_0():
    result = exportlens("check", "examples/models/encoder.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        result.stdout.strip()
        == "1 module: 1 exported, 0 failed, 0 skipped (1 unchanged since an earlier run: from its cache)"
    )


def test_json_follows_the_contract():
    result = exportlens("check", "examples", "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    by_target = {m["target"]: m for m in data["modules"]}
    assert by_target["models/encoder.py:TinyEncoder"]["status"] == "exported"
    assert (
        by_target["models/encoder.py:TinyEncoder"]["summary"]["signature"] == "(ids: i64[batch, seq]) -> f32[batch, 32]"
    )
    (finding,) = by_target["models/positional.py:LearnedPositions"]["findings"]
    assert finding["kind"] == "constraint-violation" and finding["path"] == "models/positional.py"
    assert {"code", "kind", "severity", "message", "path", "line", "column", "end_line", "end_column", "fixes"} <= set(
        finding
    )
    (edit,) = finding["fixes"][0]["edits"]
    assert edit["path"] == "pyproject.toml" and set(edit) == {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "new_text",
    }


def test_sarif_lists_results_with_fixes():
    result = exportlens("check", "examples", "--format", "sarif")
    sarif = json.loads(result.stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "exportlens"
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    results = run["results"]
    assert {r["ruleId"] for r in results} == {"EL101", "EL201", "EL202", "EL204"} and {
        r["ruleId"] for r in results
    } <= rules
    positional = next(r for r in results if r["ruleId"] == "EL201")
    assert positional["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "models/positional.py"
    assert positional["fixes"][0]["artifactChanges"][0]["artifactLocation"]["uri"] == "pyproject.toml"


@pytest.mark.slow  # run alone, its first check exports every example; the shards then answer from the cache
@counts_workers
def test_three_shards_merged_are_the_unsharded_check(check_examples, tmp_path):
    whole = exportlens("check", "examples", "--format", "json")
    started = workers_started()
    reports = []
    for k in (1, 2, 3):
        shard = exportlens("check", "examples", "--shard", f"{k}/3", "--format", "json")
        assert shard.returncode in (0, 1), shard.stderr
        reports.append(tmp_path / f"shard-{k}.json")
        reports[-1].write_text(shard.stdout)
    shards = [[m["target"] for m in json.loads(r.read_text())["modules"]] for r in reports]
    assert sorted(t for s in shards for t in s) == sorted(m["target"] for m in json.loads(whole.stdout)["modules"])
    assert all(shards), shards  # the five examples fall 2, 2, 1: every shard has work
    assert workers_started() == started  # each module was checked before: no shard started torch

    merged = exportlens("merge", *map(str, reports))
    assert merged.returncode == whole.returncode == 1, merged.stderr
    assert json.loads(merged.stdout) == json.loads(whole.stdout)  # modules, statuses, findings, fixes, in one order

    sarif = tmp_path / "exportlens.sarif"
    written = exportlens(
        "merge", *map(str, reversed(reports)), "--format", "sarif", "--root", "examples", "-o", str(sarif)
    )
    assert written.returncode == 1, written.stderr
    assert written.stdout == (
        f"{sarif}: 5 modules: 1 exported, 4 failed, 0 skipped; 4 findings"
        " (5 unchanged since an earlier run: from its cache)\n"
    )
    unsharded = json.loads(exportlens("check", "examples", "--format", "sarif").stdout)
    assert len(json.loads(sarif.read_text())["runs"][0]["results"]) == len(unsharded["runs"][0]["results"]) == 4
    assert json.loads(sarif.read_text()) == unsharded


def test_a_shard_says_which_it_is(check_examples):
    result = exportlens("check", "examples", "--shard", "3/3")  # models/head.py:ClassifierHead alone
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("examples/models/head.py:")
    assert result.stdout.splitlines()[-1].startswith(
        "1 of 5 modules (shard 3/3): 0 exported, 1 failed, 0 skipped; 1 finding"
    )


@pytest.mark.slow  # a whole CLI run that starts torch (the lens test saves a .pt2 too)
def test_export_writes_a_pt2(tmp_path):
    out = tmp_path / "enc.pt2"
    result = exportlens("export", "examples/models/encoder.py:TinyEncoder", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.is_file() and out.stat().st_size > 0
    assert "(ids: i64[batch, seq]) -> f32[batch, 32]" in result.stdout


@pytest.mark.slow  # a whole CLI run that starts torch
def test_export_on_meta_saves_no_weightless_program_unless_asked(tmp_path):
    out = tmp_path / "enc.pt2"
    refused = exportlens("export", "examples/models/encoder.py:TinyEncoder", "--device", "meta", "-o", str(out))
    assert refused.returncode == 2 and not out.exists()
    assert "is exported on meta, which holds no weights" in refused.stderr and "--device cpu" in refused.stderr
    assert "Traceback" not in refused.stderr
    allowed = exportlens(
        "export", "examples/models/encoder.py:TinyEncoder", "--device", "meta", "--allow-meta-weights", "-o", str(out)
    )
    assert allowed.returncode == 0, allowed.stderr
    assert out.is_file()


@pytest.mark.slow  # a whole CLI run that starts torch
def test_export_of_a_failing_module_exits_1_with_its_finding(tmp_path):
    result = exportlens("export", "examples/models/head.py", "-o", str(tmp_path / "x.pt2"))
    assert result.returncode == 1
    assert "EL204" in result.stderr and not (tmp_path / "x.pt2").exists()


def test_show_prints_signature_ranges_and_shapes_by_line():
    result = exportlens("show", "examples/models/encoder.py:TinyEncoder", "--no-graph")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "signature: (ids: i64[batch, seq]) -> f32[batch, 32]" in out
    assert shown("batch ∈ [1, 64]") in out and shown("seq ∈ [2, 512]") in out
    line = example_line("models/encoder.py", "h = self.embed(ids)")
    assert f"models/encoder.py:{line}  h = self.embed(ids)\n        -> f32[batch, seq, 32]" in out


def test_show_and_check_print_on_a_cp1252_console(check_examples):
    """A Windows console's code page cannot encode `∈`: what it cannot encode is written as
    an escape, and nothing else changes (a traceback here once lost the whole output)."""
    show = exportlens("show", "examples/models/encoder.py:TinyEncoder", "--no-graph", PYTHONIOENCODING="cp1252")
    assert show.returncode == 0, show.stderr
    assert "batch \\u2208 [1, 64]" in show.stdout and "seq \\u2208 [2, 512]" in show.stdout
    assert "Traceback" not in show.stderr
    check = exportlens("check", "examples", PYTHONIOENCODING="cp1252")
    assert check.returncode == 1, check.stderr
    assert check.stdout.splitlines()[:-1] == check_examples.stdout.splitlines()[:-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("check", "no/such/folder"), "no such file or folder"),
        (
            ("check", "examples", "--device", "tpu"),
            "argument --device: 'tpu' is not one of cpu, cuda, cuda:N, mps, meta",
        ),
        (("check", "examples", "--timeout", "-1"), "argument --timeout: '-1' is not a number of seconds above 0"),
        (("check", "examples", "--memory-limit", "lots"), "argument --memory-limit: 'lots' is not a size like 8GiB"),
        (
            ("show", "examples/models/encoder.py", "--ir", "onnx"),
            "argument --ir: 'onnx' is not one of training, core-aten",
        ),
        (("export", "examples/models/encoder.py:Nope"), "no nn.Module 'Nope'"),
        (("bogus",), "invalid choice"),
        (
            ("check", "examples", "--timeout", "inf"),
            "argument --timeout: 'inf' is not a number of seconds above 0 and at most 604800",
        ),
        (("check", "examples", "--timeout", "nan"), "argument --timeout: 'nan' is not a number of seconds above 0"),
        (("check", "examples", "--jobs", "0"), "argument --jobs/-j: '0' is not a whole number ≥ 1"),
        (("check", "examples", "--jobs", "-3"), "argument --jobs/-j: '-3' is not a whole number ≥ 1"),
        (
            ("check", "examples", "--memory-limit", "1B"),
            "argument --memory-limit: '1B' is not a size like 8GiB, at least 256MiB",
        ),
        (
            ("check", "examples", "--memory-limit", "17TiB"),
            "argument --memory-limit: '17TiB' is not a size like 8GiB, at least 256MiB and at most 16TiB",
        ),
        (
            ("check", "examples", "--device", "cuda:1024"),
            "argument --device: 'cuda:1024' is not one of cpu, cuda, cuda:N, mps, meta (N at most 1023)",
        ),
        (
            ("check", "examples", "--python", "/nonexistent"),
            "argument --python: '/nonexistent' is not an interpreter: no such file",
        ),
        (
            ("check", "examples", "--module", "Nope"),
            "--module Nope names no nn.Module here (found: models/encoder.py:TinyEncoder",
        ),
        (("check", "examples", "--shard", "0/3"), "argument --shard: '0/3' is not K/N with 1 ≤ K ≤ N, like 2/3"),
        (("check", "examples", "--shard", "4/3"), "argument --shard: '4/3' is not K/N with 1 ≤ K ≤ N, like 2/3"),
        (("check", "examples", "--shard", "a/b"), "argument --shard: 'a/b' is not K/N with 1 ≤ K ≤ N, like 2/3"),
        (("check", "examples", "--shard", "3"), "argument --shard: '3' is not K/N with 1 ≤ K ≤ N, like 2/3"),
        (("merge",), "the following arguments are required: REPORT.json"),
        (("merge", "no/such.json"), "cannot read no/such.json: No such file or directory"),
    ],
)
@pytest.mark.slow
def test_usage_errors_exit_2(args, message):
    result = exportlens(*args)
    assert result.returncode == 2
    assert shown(message) in result.stderr
    assert "Traceback" not in result.stderr


def test_merge_refuses_what_is_not_a_report_or_disagrees(tmp_path):
    module = {"target": "models/a.py:A", "status": "exported", "findings": [], "seconds": 0.5}
    files = {
        "text.json": "models/head.py:15:9: EL204 `batch` was declared dynamic",
        "list.json": "[]",
        "typo.json": json.dumps({"schema": SCHEMA, "modules": [{**module, "status": "exportd"}]}),
        "one.json": json.dumps({"schema": SCHEMA, "modules": [module], "findings": []}),
        "other.json": json.dumps({"schema": SCHEMA, "modules": [{**module, "seconds": 2.0}], "findings": []}),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    expected = {
        ("text.json",): "text.json is not JSON: Expecting value: line 1 column 1 (char 0)",
        ("list.json",): 'list.json is not a report of `exportlens check --format json`: no "modules"',
        ("typo.json",): (
            "typo.json is not a report of `exportlens check --format json`:"
            " modules[0].status: 'exportd' is not one of exported, failed, skipped"
        ),
        (
            "one.json",
            "other.json",
        ): "models/a.py:A is in one.json and in other.json with different results: reports of different runs?",
    }
    for names, message in expected.items():
        result = exportlens("merge", *names, cwd=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), result.stdout
        assert result.stderr == f"exportlens: {message}\n"
    again = exportlens("merge", "one.json", "one.json", cwd=tmp_path)  # the same shard twice: nothing disagrees
    assert again.returncode == 0 and [m["target"] for m in json.loads(again.stdout)["modules"]] == ["models/a.py:A"]
    assert json.loads(again.stdout)["schema"] == SCHEMA


def test_merge_refuses_a_report_of_another_major_schema(tmp_path):
    """A report whose schema's major version this exportlens does not know (a later one, or
    one before versions) is refused with what to do, not read as if its fields meant the same."""
    module = {"target": "models/a.py:A", "status": "exported", "findings": [], "seconds": 0.5}
    major = int(SCHEMA.split(".")[0])
    (tmp_path / "later.json").write_text(json.dumps({"schema": f"{major + 1}.0", "modules": [module], "findings": []}))
    (tmp_path / "older.json").write_text(json.dumps({"modules": [module], "findings": []}))
    (tmp_path / "minor.json").write_text(json.dumps({"schema": f"{major}.0", "modules": [module], "findings": []}))
    later = exportlens("merge", "later.json", cwd=tmp_path)
    assert (later.returncode, later.stdout) == (2, "") and "Traceback" not in later.stderr
    assert later.stderr == (
        f"exportlens: later.json is a report of schema {major + 1}.0; this exportlens reads schema {major}.x:"
        " run `exportlens check --format json` again with this version\n"
    )
    older = exportlens("merge", "older.json", cwd=tmp_path)
    assert older.returncode == 2 and "older.json is a report of no schema version" in older.stderr
    assert exportlens("merge", "minor.json", cwd=tmp_path).returncode == 0


def test_broken_pyproject_is_a_configuration_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.exportlens\n")
    (tmp_path / "m.py").write_text(
        "from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    result = exportlens("check", str(tmp_path))
    assert result.returncode == 2
    assert "EL006 pyproject.toml does not parse" in result.stderr


@pytest.mark.parametrize(
    ("pyproject", "where", "key"),
    [
        ('[tool.exportlens]\ndevice = "cpu"\nstrict = false\ndevice = "meta"\n', "4:1", "device"),
        ('[tool.exportlens.modules."m.py:M"]\ninputs = { x = "f32[4]", x = "f32[8]" }\n', "2:26", "x"),
        ("[tool.exportlens]\nsandbox.x = 1\nsandbox.x = 2\n", "3:9", "x"),
    ],
    ids=["table", "inline-table", "dotted"],
)
def test_a_key_written_twice_is_el006_on_its_second_line(tmp_path, pyproject, where, key):
    """tomlkit raises no ParseError for these (KeyAlreadyPresent, with no place): it was a traceback."""
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "m.py").write_text(
        "from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    for fmt in ("text", "json"):
        result = exportlens("check", "--format", fmt, str(tmp_path))
        assert result.returncode == 2 and result.stdout == ""
        message = (
            f"pyproject.toml:{where}: EL006 pyproject.toml does not parse:"
            f' Key "{key}" already exists at line {where.replace(":", " col ")}'
        )
        assert result.stderr.splitlines()[-1].endswith(message), result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_module_of_a_package_without_pyproject_imports_as_its_package_chain_names_it(tmp_path):
    """Opened below the package's top, with no pyproject.toml: ``models/net.py`` is
    ``pkg.models.net``, so its ``from ..base import Base`` works."""
    (tmp_path / "pkg" / "models").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "models" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(
        "from torch import nn\n\n\nclass Base(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
    )
    (tmp_path / "pkg" / "models" / "net.py").write_text(
        "import torch\n\nfrom ..base import Base\n\n\n"
        "class Net(Base):\n    def forward(self, x):\n        return self.proj(x).relu()\n\n"
        "    @staticmethod\n    def example_inputs():\n        return (torch.randn(2, 4),)\n"
    )
    done = exportlens("check", "--no-cache", "--format", "json", str(tmp_path / "pkg" / "models"))
    (module,) = json.loads(done.stdout)["modules"]
    assert (module["target"], module["status"]) == ("net.py:Net", "exported"), module["findings"]


FRESH = {
    "block.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class Block(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
    ),
    "head.py": (
        "from torch import nn\n\n\nclass Head(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 2)\n\n"
        "    def forward(self, x):\n        return self.proj(x)\n"
    ),
}


@pytest.mark.parametrize(
    ("args", "status"),
    [
        ((), 0),
        (("--fail-on-empty",), 2),
        (("--format", "github"), 2),
        (("--format", "sarif"), 2),
        (("--format", "json"), 0),
        (("--format", "github", "--shard", "1/2"), 0),  # a shard may hold nothing; its merge says
    ],
)
def test_a_check_that_checked_nothing_says_so_and_fails_in_ci(tmp_path, args, status):
    """Issue 24: fresh model files with no spec are every one skipped; the last line says
    nothing was checked, and CI's formats (or --fail-on-empty) make that exit 2, not a green
    check that checked nothing. No worker starts: there is nothing to export."""
    for name, text in FRESH.items():
        (tmp_path / name).write_text(text)
    result = exportlens("check", str(tmp_path), *args)
    assert result.returncode == status, result.stdout + result.stderr
    if "--shard" in args:
        assert result.stdout.splitlines()[-1] == "0 of 2 modules (shard 1/2): none falls in this shard"
    elif args in ((), ("--fail-on-empty",), ("--format", "github")):
        assert result.stdout.splitlines()[-1].endswith(
            "0 exported, 0 failed, 2 skipped; 2 findings; nothing was checked: no module here has example inputs"
            " (`exportlens init` writes them)"
        ), result.stdout
    if status == 2:
        assert "Traceback" not in result.stderr and "nothing was checked" in result.stderr


def test_a_check_of_a_folder_without_modules_says_it_found_none(tmp_path):
    (tmp_path / "util.py").write_text("def helper():\n    return 1\n")
    result = exportlens("check", str(tmp_path))
    assert result.stdout.splitlines()[-1] == "0 modules: nothing was checked (no nn.Module under the paths given)"
    assert exportlens("check", str(tmp_path), "--format", "github").returncode == 2


def test_a_pyproject_that_is_not_utf8_is_a_configuration_error_on_its_byte(tmp_path):
    """TOML is UTF-8: a byte that is not is EL006 on its place and exit 2, as any pyproject.toml
    that does not parse, not a list of modules "without example inputs"."""
    (tmp_path / "head.py").write_text((EXAMPLES / "models" / "head.py").read_text())
    (tmp_path / "pyproject.toml").write_bytes(
        b'[tool.exportlens.modules."head.py:ClassifierHead"]\ninputs = { x = "f32[b, 16]\xff" }\n'
    )
    result = exportlens("check", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.endswith(
        "pyproject.toml:2:27: EL006 file is not valid UTF-8: invalid start byte (byte 0xff)\n"
    )
    assert "EL007" not in result.stdout + result.stderr
