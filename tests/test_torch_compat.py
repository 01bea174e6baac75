"""What exportlens relies on of torch beyond its documented API is in one package,
runtime/compat/, each touchpoint with the versions it was checked on; below the supported
range a module is refused with EL506 naming the installed torch and the range."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import torch

import exportlens
from exportlens.exporter.core import codes
from exportlens.exporter.runtime import run
from exportlens.exporter.runtime.compat import messages, versions

PACKAGE = Path(exportlens.__file__).parent
COMPAT = PACKAGE / "exporter" / "runtime" / "compat"
# receivers whose private attributes are exportlens's own or the standard library's
OWN = {"self", "cls", "sys", "os", "super"}
# runtime modules that match their own renderings or the user's code, not torch's text
READ_OWN_TEXT = {
    "changes.py",  # a Change's value ("dy - 6"), written by exportlens
    "explain.py",  # the user's line and exportlens's requirement text
    "fixes.py",  # exportlens's requirement text and the user's conditions
    "refused.py",  # the user's line (``x.view(...)``)
    "specialized.py",  # the user's line (a ``for`` over ``range(...)``)
    "sized_lookups.py",  # the user's line (``x.shape[1]`` as a dict's key)
    "unbacked.py",  # the user's assignments and ``.tolist()`` calls
}
REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


@functools.cache
def _modules() -> dict[Path, ast.Module]:
    """The package's modules outside compat/, parsed once for the tests that read the trees (none changes one)."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py") if COMPAT not in p.parents}


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _receiver(node: ast.Attribute) -> str:
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    return value.id if isinstance(value, ast.Name) else ""


def _private_torch_uses(tree: ast.Module, attributes: bool) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "torch" and _private(a.name)]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found += [f"{node.module}.{a.name}" for a in node.names if _private(f"{node.module}.{a.name}")]
        elif attributes and isinstance(node, ast.Attribute) and _private(node.attr) and _receiver(node) not in OWN:
            found.append(f"{ast.unparse(node)} (line {node.lineno})")
    return found


def _torch_side(path: Path, tree: ast.Module) -> bool:
    """runtime/, and any other module that imports torch."""
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return "runtime" in path.relative_to(PACKAGE).parts or "torch" in imports


def test_no_module_outside_compat_uses_a_private_torch_name():
    """``torch._dynamo``, ``torch.utils._pytree``, ``ShapeEnv._log_guard``, ``ep._report``:
    only runtime/compat/ names them. On the torch side an attribute with a leading underscore
    is one, unless it is exportlens's own (on ``self``, ``cls``, ``super()``) or the standard
    library's (``sys._getframe``, ``os._exit``)."""
    found = {}
    for path, tree in _modules().items():
        uses = _private_torch_uses(tree, attributes=_torch_side(path, tree))
        if uses:
            found[str(path.relative_to(PACKAGE))] = uses
    assert found == {}


def _regex_calls(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "re":
            found += [a.name for a in node.names if a.name in REGEX_CALLS]
        elif isinstance(node, ast.Attribute) and node.attr in REGEX_CALLS and _receiver(node) == "re":
            found.append(f"re.{node.attr} (line {node.lineno})")
    return found


def test_no_module_outside_compat_matches_torchs_text():
    """torch's messages are read through compat/messages.py's tables of forms; the rest of
    runtime/ (where torch's exceptions and programs are read) matches only exportlens's own
    text or the user's code."""
    torch_side = {p: t for p, t in _modules().items() if "runtime" in p.relative_to(PACKAGE).parts}
    found = {p.name: calls for p, t in torch_side.items() if p.name not in READ_OWN_TEXT and (calls := _regex_calls(t))}
    assert found == {}


def test_each_message_form_says_the_torch_versions_it_was_checked_on():
    tables = [v for v in vars(messages).values() if isinstance(v, tuple) and v and isinstance(v[0], messages.Form)]
    assert len(tables) >= 10
    for form in (f for table in tables for f in table):
        assert re.fullmatch(r"2\.\d+(?:–2\.\d+)?", form.checked), form


def test_the_specialization_reads_as_every_checked_torch_writes_it():
    older = (
        "Not all values of batch = L['x'].size()[0] in the specified range batch <= 64"
        " are valid because batch was inferred to be a constant (4)."
    )
    newer = (
        "You marked batch as dynamic but your code specialized it to be a constant (4)."
        " If you're using mark_dynamic, either remove it or use maybe_mark_dynamic."
    )
    for said in (older, newer):
        m = messages.search(messages.SPECIALIZED, said)
        assert (m["dim"], m["value"]) == ("batch", "4")


def test_the_installed_torch_is_in_the_range_and_pyproject_says_the_floor():
    assert versions.unsupported() is None, torch.__version__
    pyproject = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"torch>={versions.FLOOR[0]}.{versions.FLOOR[1]}"' in pyproject


def test_below_the_floor_the_module_is_refused_with_the_version_and_the_range(project, monkeypatch):
    """A torch older than the range is not run (its texts would put findings on wrong lines):
    EL506 on the class, naming the installed torch and the supported range."""
    project.write("pyproject.toml", '[tool.exportlens.modules."net.py:Net"]\ninputs = { x = "f32[4, 8]" }\n')
    project.write(
        "net.py", "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
    )
    monkeypatch.setattr(run, "unsupported", lambda: versions.unsupported("2.7.1+cpu"))
    report = project.module("Net", collect_all=False)
    (finding,) = report.findings
    assert (finding.code, finding.path, finding.line, finding.column) == (codes.TORCH_UNSUPPORTED.code, "net.py", 4, 7)
    assert "the installed torch is 2.7.1+cpu" in finding.message
    assert f"exportlens supports torch {versions.RANGE}" in finding.message
