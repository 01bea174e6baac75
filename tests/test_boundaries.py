"""The torch boundary is in the folders: the language server and the static side import
neither torch nor the runtime package, checked in a fresh interpreter."""

from __future__ import annotations

import ast
import functools
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import exportlens
import exportlens.exporter.edit as edit
import exportlens.exporter.find as find
import exportlens.exporter.spec as spec
from exportlens.exporter.core.report import SCHEMA

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m == "torch" \
or m.startswith(("torch.", "exportlens.exporter.runtime")))))
"""


def imported_by(*modules: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def test_the_server_and_the_static_side_never_import_torch():
    statics = [f"{pkg.__name__}.{m.name}" for pkg in (find, spec, edit) for m in pkgutil.iter_modules(pkg.__path__)]
    assert statics, "no static modules found"
    server = [
        "exportlens.server.app",
        "exportlens.server.index.scanner",
        "exportlens.exporter.workers.pool",
        "exportlens.exporter.workers.batch",
    ]
    assert (
        imported_by(
            *server,
            *statics,
            "exportlens.exporter.core.report",
            "exportlens.cli",
            "exportlens.merge",
            "exportlens.sarif",
        )
        == []
    )


MERGE = """
import json, sys
from exportlens.cli import main
code = main(sys.argv[1:])
print(code, json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"torch", "libcst", "tomlkit", "sympy"})))
"""


def test_merging_reports_imports_neither_torch_nor_libcst(tmp_path):
    """The CI job that merges shards' reports needs only exportlens and the standard library."""
    report = tmp_path / "shard.json"
    report.write_text(
        json.dumps(
            {"schema": SCHEMA, "modules": [{"target": "m.py:M", "status": "exported", "findings": []}], "findings": []}
        )
    )
    args = ["merge", str(report), str(report), "--format", "sarif", "-o", str(tmp_path / "out.sarif")]
    done = subprocess.run([sys.executable, "-c", MERGE, *args], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr
    assert json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"] == []


def _workers_modules(*modules: str) -> set[str]:
    probe = (
        "import importlib, json, sys\nfor n in sys.argv[1:]: importlib.import_module(n)\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('exportlens.exporter.workers.')]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *modules], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout))


def test_the_protocol_and_the_platform_layer_are_the_only_modules_both_sides_of_the_worker_boundary_import():
    """(The platform layer: how either side starts, kills and measures processes, one path per system.)"""
    owner = _workers_modules("exportlens.exporter.workers.pool", "exportlens.exporter.workers.batch")
    worker = _workers_modules("exportlens.exporter.workers.worker")
    assert owner & worker == {"exportlens.exporter.workers.protocol", "exportlens.exporter.workers.platform"}, (
        owner,
        worker,
    )


def test_nothing_is_pickled():
    sources = [
        p
        for p in Path(exportlens.__file__).parent.rglob("*.py")
        if re.search(r"^\s*(import|from)\s+pickle\b", p.read_text(), re.M)
    ]
    assert not sources


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every module of the package, parsed once for the tests that read the trees (none changes one)."""
    root = Path(exportlens.__file__).parent
    return {
        ".".join(("exportlens", *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): ast.parse(
            p.read_text()
        )
        for p in root.rglob("*.py")
    }


def test_small_functions_and_files():
    root = Path(exportlens.__file__).parent
    long_files = [(str(p), n) for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 400]
    long_functions = [
        (name, node.name, node.end_lineno - node.lineno + 1)
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 40
    ]
    assert not long_files and not long_functions, (long_files, long_functions)


def _module_level_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """Imports a module runs when loaded, and those under ``if TYPE_CHECKING:``: a type
    checker follows those too, so a circle through one is a circle (imports inside
    functions are deliberate and late)."""
    found = []
    for node in tree.body:
        body = node.body if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING") else [node]
        found += [n for n in body if isinstance(n, ast.ImportFrom)]
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, tree in modules.items():
        package = (
            name
            if f"{name}.__init__" in modules or any(m.startswith(f"{name}.") for m in modules)
            else name.rpartition(".")[0]
        )
        for node in _module_level_imports(tree):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            graph.setdefault(name, set()).update(
                t for t in (target, *(f"{target}.{a.name}" for a in node.names)) if t in modules
            )
    return graph


def test_no_import_cycles():
    graph = _import_graph()
    assert sum(map(len, graph.values())) > 100, "the import graph was not read"
    seen: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            assert seen.get(nxt) != 1, f"import cycle: {' -> '.join([*path, node, nxt])}"
            if nxt not in seen:
                visit(nxt, [*path, node])
        seen[node] = 2

    for name in sorted(graph):
        if name not in seen:
            visit(name, [])


# Each folder of the exporter imports only the folders before it (core first).
LAYERS = ["core", "find", "spec", "edit", "workers", "runtime"]


def test_the_exporter_folders_import_only_the_folders_before_them():
    rank = {f"exportlens.exporter.{layer}": i for i, layer in enumerate(LAYERS)}

    def layer(module: str) -> str | None:
        return next((f for f in rank if module == f or module.startswith(f"{f}.")), None)

    upward = sorted(
        f"{name} -> {target}"
        for name, targets in _import_graph().items()
        if (own := layer(name))
        for target in targets
        if (other := layer(target)) and rank[other] > rank[own]
    )
    assert not upward, upward


# a kind is declared where a thing is made (an enum, a code, a field), never read back from the text a
# person reads: the words may change, the kind may not
PROSE = {"title", "action", "message", "detail"}
PROSE_ALLOWED = {
    # ``Names.message`` maps torch's symbols to the user's dim names: a dict's keys, not text
    ("exportlens.exporter.runtime.naming.explain", "s not in record.names.message"),
    ("exportlens.exporter.runtime.reading.failures", "s not in names.message"),
    ("exportlens.exporter.runtime.naming.symbols", "s not in self.message"),
}


def _prose(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in PROSE


def _literal(node: ast.AST) -> bool:
    """A string, or a tuple, list or set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(map(_literal, node.elts))
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _enum_as_text(node: ast.AST) -> bool:
    """``x.kind.value == "spec-error"``: an enum compared by its text rather than as itself."""
    return isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.value, ast.Attribute)


def _reads_prose(node: ast.AST) -> bool:
    """A prefix, suffix, substring, pattern or literal test of a title, action, message or detail,
    or an enum's value tested against text."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("startswith", "endswith", "find", "index", "count") and _prose(node.func.value):
            return True
        return node.func.attr in ("search", "match", "fullmatch", "findall", "finditer") and any(map(_prose, node.args))
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        kinds = [s for s in sides if _enum_as_text(s) and getattr(s.value, "attr", "") == "kind"]
        if kinds and any(map(_literal, sides)):
            return True
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(map(_prose, node.comparators)):
            return True
        literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
        return literal and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops) and any(map(_prose, sides))
    return False


def test_no_kind_is_read_back_from_a_title_or_a_message():
    read = sorted(
        (name, ast.unparse(node))
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if _reads_prose(node) and (name, ast.unparse(node)) not in PROSE_ALLOWED
    )
    assert not read, read


# a finding is named by its id, made where the finding is made (``Finding.id``), never found again by what it
# says: a client may rewrap a message it shows, and the words may change where the finding does not
MATCHED_ALLOWED = {
    # whether a fix's export still has the problem it fixes: the fix's edits move lines, so the problem's place
    # (and its id) change, while what it says does not
    (
        "exportlens.exporter.workers.proofs",
        "(f.code, f.path, f.message) == (finding.code, finding.path, finding.message)",
    ),
}


def _names_prose(node: ast.AST) -> bool:
    """A title, action, message or detail: an attribute, a key read from a mapping, or one in a tuple."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(map(_names_prose, node.elts))
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in PROSE
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        return isinstance(node.args[0], ast.Constant) and node.args[0].value in PROSE
    return _prose(node)


def _matches_prose(node: ast.AST) -> bool:
    """An equality test of a message (a title, ...) with another value: one thing found again by its words."""
    if not isinstance(node, ast.Compare) or not any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
        return False
    return any(map(_names_prose, [node.left, *node.comparators]))


def matched_by_prose(modules: dict[str, ast.Module]) -> list[tuple[str, str]]:
    return sorted(
        (name, ast.unparse(node))
        for name, tree in modules.items()
        for node in ast.walk(tree)
        if _matches_prose(node) and (name, ast.unparse(node)) not in MATCHED_ALLOWED
    )


def test_no_finding_is_matched_by_its_message():
    assert not (matched := matched_by_prose(_modules())), matched
    # what it catches: a code action that found its diagnostic's finding by the message the client showed
    before = "item = next((i for i in found if (i.finding.code, i.finding.message) == said and i.finding.line == line))"
    said = [("actions", "(i.finding.code, i.finding.message) == said")]
    assert matched_by_prose({"actions": ast.parse(before)}) == said
    assert matched_by_prose({"actions": ast.parse('found = d.data.get("message") == f.message')})
