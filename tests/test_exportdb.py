"""torch's own ExportDB (``torch._export.db.examples``) through exportlens, as a user's files.

Each example is written into one throwaway project twice:

- ``written/<name>.py``: the example's source, copied as the user's own file,
  then ``class Case(<Example>)`` whose ``example_inputs()`` and
  ``dynamic_shapes()`` return the file's own ``example_args`` /
  ``example_kwargs`` / ``dynamic_shapes``. forward is the user's code here, so
  a failure must land on its lines.
- ``subclassed/<name>.py``: ``class Case(<Example imported from torch>, torch.nn.Module)``
  whose inputs come from torch's case object at call time. forward lives in
  site-packages: nothing of it is the user's, so findings must still land on a
  line of the project. (The extra ``torch.nn.Module`` base is what makes the
  class a module to discovery, which follows only ``torch.nn`` and project
  classes statically.)

Every SUPPORTED example must export with no finding; the NOT_SUPPORTED_YET one
(``dynamic_shape_round``) must fail with a finding on a real line of the
project, in the user's names.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import re
import traceback
from pathlib import Path

import pytest

from exportlens.exporter.core.report import Kind, ModuleReport, Status
from exportlens.exporter.spec.loading import SpecSource
from exportlens.exporter.spec.plan import Plan, make_plan


def _example_files() -> dict[str, str]:
    """name -> text of torch's ExportDB example files, read without importing torch: collecting
    the suite (in every xdist process) then costs no torch import; ``test_exportdb_is_there``
    checks this reading against torch's own list."""
    torch_folder = Path(importlib.util.find_spec("torch").submodule_search_locations[0])
    files = sorted((torch_folder / "_export" / "db" / "examples").glob("*.py"))
    return {p.stem: p.read_text(encoding="utf-8") for p in files if p.stem != "__init__"}


FILES = _example_files()
NOT_SUPPORTED = sorted(n for n, text in FILES.items() if "SupportLevel.NOT_SUPPORTED_YET" in text)
SUPPORTED = sorted(set(FILES) - set(NOT_SUPPORTED))
VARIANTS = ("written", "subclassed")
# where an older torch's own export differs from its ExportDB's label: (the first torch that
# agrees with the label, what the older ones give), checked with 2.9.1 and 2.10.0
LABEL_DIFFERS = {
    "unsupported_operator": ((2, 11), "exported"),  # labelled NOT_SUPPORTED_YET; 2.9 and 2.10 export it
    "optional_input": ((2, 10), "exported"),  # likewise in 2.9
    "assume_constant_result": ((2, 10), "failed"),  # labelled SUPPORTED; 2.9 refuses the branch on the assumed constant
}


def _label_differs(name: str) -> str | None:
    """What the installed torch's export gives ``name`` where it differs from the label."""
    import torch

    from exportlens.exporter.runtime.compat.versions import installed

    first, gives = LABEL_DIFFERS.get(name, ((0, 0), None))
    return gives if installed(torch.__version__) < first else None


@functools.cache
def examples() -> dict:
    """torch's own ExportDB cases (imports torch: when a test first needs them)."""
    from torch._export.db.examples import all_examples

    return all_examples()


# torch's names the user never wrote: backed/unbacked symbols, guard sources, its sympy functions
TORCH_SYMBOL = re.compile(r"\b[su]\d+\b")
TORCH_SOURCE = re.compile(r"L\[['\"]")
TORCH_SYMPY_FUNCTION = re.compile(
    r"\b(RoundToInt|IntTrueDiv|FloatTrueDiv|FloorToInt|CeilToInt|TruncToInt|RoundDecimal"
    r"|ToFloat|CleanDiv|FloorDiv|PythonMod|OpaqueUnaryFn_\w+)\b"
)


# -- the project ------------------------------------------------------------------------


def _example_module(name: str):
    case = examples()[name]
    module = inspect.getmodule(type(case.model))
    cls = type(case.model).__name__
    assert module is not None and getattr(module, cls, None) is type(case.model), (
        f"{name}: {cls} is not top-level in its file"
    )
    return module, cls


def written_source(name: str) -> str:
    """The example's own file, then the class that tells exportlens how to call it."""
    module, cls = _example_module(name)
    source = inspect.getsource(module).rstrip() + "\n"
    kwargs = "example_kwargs" if hasattr(module, "example_kwargs") else "{}"
    header = (
        f"# The ExportDB example {name!r} (torch/_export/db/examples/{name}.py), written out as a user's file.\n"
        "import torch\n"
        "\n"
        "torch.manual_seed(0)  # the example draws its inputs at import: the same ones every run\n"
        "\n"
    )
    case = (
        f"\n\nclass Case({cls}):\n    @staticmethod\n    def example_inputs():\n        return example_args, {kwargs}\n"
    )
    if getattr(module, "dynamic_shapes", None) is not None:
        case += "\n    @staticmethod\n    def dynamic_shapes():\n        return dynamic_shapes\n"
    return header + source + case


def subclassed_source(name: str) -> str:
    """A user's subclass of torch's example class; inputs read from torch's case at call time."""
    module, cls = _example_module(name)
    text = (
        f"# Subclasses the ExportDB example {name!r}; its inputs come from torch's case object.\n"
        "import copy\n"
        "\n"
        "import torch\n"
        "from torch._export.db.examples import all_examples\n"
        f"from {module.__name__} import {cls} as _Example\n"
        "\n"
        "\n"
        "class Case(_Example, torch.nn.Module):\n"
        "    @staticmethod\n"
        "    def example_inputs():\n"
        f"        case = all_examples()[{name!r}]\n"
        "        return copy.deepcopy((case.example_args, case.example_kwargs))\n"
    )
    if examples()[name].dynamic_shapes is not None:
        text += (
            f"\n    @staticmethod\n    def dynamic_shapes():\n        return all_examples()[{name!r}].dynamic_shapes\n"
        )
    return text


SOURCES = {"written": written_source, "subclassed": subclassed_source}


class ExportDB:
    """The project, planned once; each module exported once, on first use (so ``-k`` stays cheap)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "pyproject.toml").write_text('[project]\nname = "exportdb"\nversion = "0"\n', encoding="utf-8")
        for variant, source in SOURCES.items():
            (root / variant).mkdir()
            (root / variant / "__init__.py").write_text("", encoding="utf-8")
            for name in FILES:
                (root / variant / f"{name}.py").write_text(source(name), encoding="utf-8")
        self.plan: Plan = make_plan([root])
        self.planned = {p.target: p for p in self.plan.modules}
        self._done: dict[str, ModuleReport | BaseException] = {}

    def check(self, variant: str, name: str) -> ModuleReport:
        target = f"{variant}/{name}.py:Case"
        if target not in self._done:
            assert target in self.planned, f"{target} not discovered: {sorted(self.planned)[:5]}..."
            try:
                self._done[target] = _check_one(self.plan, self.planned[target])
            except Exception as exc:
                self._done[target] = exc
        done = self._done[target]
        if isinstance(done, BaseException):
            raise AssertionError(
                f"exportlens raised instead of reporting on {target}: {done!r}\n{_trace(done)}"
            ) from done
        return done

    def lines(self, path: str) -> list[str]:
        return (self.root / path).read_text(encoding="utf-8").splitlines()


def _check_one(plan: Plan, planned) -> ModuleReport:
    from exportlens.exporter.runtime.in_process import export_planned  # torch
    from exportlens.exporter.runtime.run import Options

    return export_planned(plan, planned, Options(collect_all=True))


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))[-3000:]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> ExportDB:
    return ExportDB(tmp_path_factory.mktemp("exportdb"))


def _show(report: ModuleReport) -> str:
    return "\n".join(str(f) for f in report.findings) or "(no findings)"


# -- the tests --------------------------------------------------------------------------


def test_exportdb_is_there():
    from torch._export.db.case import SupportLevel

    assert len(FILES) >= 30
    assert "dynamic_shape_round" in NOT_SUPPORTED
    unsupported = sorted(n for n, c in examples().items() if c.support_level != SupportLevel.SUPPORTED)
    assert (sorted(examples()), unsupported) == (sorted(FILES), NOT_SUPPORTED)  # the files read as torch lists them


def test_every_example_is_found_with_its_inputs(db: ExportDB):
    assert db.plan.findings == []
    for variant in VARIANTS:
        for name in FILES:
            planned = db.planned.get(f"{variant}/{name}.py:Case")
            assert planned is not None, f"{variant}/{name}.py:Case not discovered"
            assert planned.spec is not None and planned.spec.source is SpecSource.CODE, planned
            assert planned.spec.example_method == "example_inputs"
            assert planned.module.has_dynamic_shapes == (examples()[name].dynamic_shapes is not None)


def test_written_file_reproduces_torchs_inputs(db: ExportDB):
    """The generated file's example_inputs() builds what torch's case holds (shapes, dtypes, structure)."""
    import torch

    for name in ("fn_with_kwargs", "cond_operands", "list_unpack", "optional_input"):
        spec = importlib.util.spec_from_file_location(f"_exportdb_{name}", db.root / "written" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        args, kwargs = mod.Case.example_inputs()
        case = examples()[name]
        meta = lambda v: torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: (tuple(t.shape), t.dtype), v)  # noqa: E731
        assert meta((args, kwargs)) == meta((case.example_args, case.example_kwargs)), name
        assert str(getattr(mod, "dynamic_shapes", None)) == str(case.dynamic_shapes), name


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", SUPPORTED)
@pytest.mark.slow
def test_supported_example_exports(db: ExportDB, name: str, variant: str):
    report = db.check(variant, name)
    if (gives := _label_differs(name)) is not None:
        assert report.status.value == gives, _show(report)
        return
    assert report.status is Status.EXPORTED, f"{name} ({variant}) did not export:\n{_show(report)}"
    assert report.errors == (), _show(report)
    assert report.findings == (), _show(report)
    assert report.summary is not None and report.summary.signature.startswith("(")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", NOT_SUPPORTED)
def test_not_supported_example_fails_on_a_project_line(db: ExportDB, name: str, variant: str):
    report = db.check(variant, name)
    if (gives := _label_differs(name)) is not None:
        assert report.status.value == gives, _show(report)
        return
    assert report.status is Status.FAILED, _show(report)
    errors = report.errors
    assert errors, _show(report)
    file = f"{variant}/{name}.py"
    for f in errors:
        assert f.path == file, f"finding outside the example's file: {f}"
        assert 1 <= f.line <= len(db.lines(f.path)), str(f)
        assert not TORCH_SYMBOL.search(f.message), f"torch symbol in the message: {f.message}"
        assert not TORCH_SOURCE.search(f.message), f"torch source in the message: {f.message}"
    if (
        variant == "written" and name == "dynamic_shape_round"
    ):  # forward is the user's: the finding is on the line that breaks
        lines = db.lines(file)
        on_forward = [f for f in errors if "round(" in lines[f.line - 1]]
        assert on_forward, f"no finding on the round() line:\n{_show(report)}"
    if name == "dynamic_shape_round":
        assert {f.kind for f in errors} == {Kind.CONSTRAINT_VIOLATION}, _show(report)
        assert all("dim0_x" in f.message for f in errors), _show(report)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", NOT_SUPPORTED)
def test_not_supported_example_is_said_in_users_words(db: ExportDB, name: str, variant: str):
    """What the user wrote, ``round(x.shape[0] / 2)``, not torch's sympy (``RoundToInt(IntTrueDiv(...))``);
    each problem once; quoted code as code."""
    report = db.check(variant, name)
    if (gives := _label_differs(name)) is not None:
        assert report.status.value == gives, _show(report)
        return
    assert report.findings, _show(report)
    for f in report.findings:
        assert not TORCH_SYMPY_FUNCTION.search(f.message), f"torch's sympy function in the message: {f.message}"
        for quoted in re.findall(r"`([^`]+)`", f.message):
            assert not quoted.endswith("."), f"a sentence's period inside quoted code: {f.message}"
    keys = [(f.code, f.path, f.line, f.message) for f in report.findings]
    assert len(keys) == len(set(keys)), f"the same finding twice:\n{_show(report)}"
