"""What ``exportlens diff`` prints: text for a person, JSON, GitHub annotations, SARIF.
Standard library and core only."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from itertools import groupby
from pathlib import Path
from typing import Any

from . import __version__
from .exporter.core import codes
from .exporter.core.contract_diff import Change, ChangeKind, Diff
from .exporter.core.escapes import github_data, github_property, terminal_line, uri_path
from .printed import relative

DIFF_SCHEMA = "1.0"  # of ``diff --format json``'s object, versioned as check's is (docs/json.md)


def rendered(d: Diff, format: str, root: Path, failing: Collection[ChangeKind]) -> str:
    """``root``: the project root the reports' paths are relative to."""
    if format == "json":
        return json.dumps(diff_json(d), ensure_ascii=False, indent=2)
    if format == "github":
        lines = [_annotation(c, lambda path: relative(root, path), c.kind in failing) for c in d.changes]
        return "\n".join([*lines, terminal_line(_total(d))])
    if format == "sarif":
        return json.dumps(_sarif(d, failing, root.resolve().as_uri()), ensure_ascii=False, indent=2)
    return _text(d, lambda path: relative(root, path))


def diff_json(d: Diff) -> dict[str, Any]:
    changes = [
        {"target": c.target, "kind": c.kind.value, "message": c.message, "path": c.path, "line": c.line}
        for c in d.changes
    ]
    return {"schema": DIFF_SCHEMA, "compared": d.compared, "changes": changes, "ops_unknown": list(d.ops_unknown)}


def _text(d: Diff, where: Callable[[str], str]) -> str:
    out = []
    for target, changes in groupby(d.changes, key=lambda c: c.target):
        out.append(terminal_line(target))
        for c in changes:
            at = "" if c.path is None else f"{where(c.path)}:{c.line}: " if c.line else f"{where(c.path)}: "
            out.append(terminal_line(f"  {at}{c.kind}: {c.message}"))
    out.append(terminal_line(_total(d)))
    return "\n".join(out)


def _total(d: Diff) -> str:
    modules = len({c.target for c in d.changes})
    said = (
        f"{len(d.changes)} change{'s' if len(d.changes) != 1 else ''} in {modules} of {d.compared} modules compared"
        if d.changes
        else f"no change in {d.compared} module{'s' if d.compared != 1 else ''} compared"
    )
    if d.ops_unknown:  # an older report: said, never taken for every operator removed
        said += f"; the operator set of {len(d.ops_unknown)} is not known (a report before schema 2.3)"
    return said


def _annotation(c: Change, where: Callable[[str], str], fails: bool) -> str:
    """One GitHub workflow command, on the line that caused the change where one did."""
    props = [("file", where(c.path))] if c.path else []
    props += [("line", str(c.line))] if c.path and c.line else []
    props.append(("title", f"exportlens diff: {c.kind} in {c.target}"))
    head = ",".join(f"{k}={github_property(v)}" for k, v in props)
    return f"::{'error' if fails else 'warning'} {head}::{github_data(c.message)}"


def _sarif(d: Diff, failing: Collection[ChangeKind], root_uri: str) -> dict[str, Any]:
    rules = [
        {"id": f"diff/{k.value}", "name": k.name.lower(), "shortDescription": {"text": k.value}} for k in ChangeKind
    ]
    results = [
        {
            "ruleId": f"diff/{c.kind.value}",
            "level": "error" if c.kind in failing else "warning",
            "message": {"text": f"{c.target}: {c.message}"},
            **({"locations": [_location(c)]} if c.path else {}),
        }
        for c in d.changes
    ]
    driver = {"name": "exportlens diff", "version": __version__, "informationUri": codes.DOCS_URL, "rules": rules}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri.rstrip("/") + "/"}},
                "results": results,
            }
        ],
    }


def _location(c: Change) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri_path(c.path or ""), "uriBaseId": "%SRCROOT%"}}
    if c.line:
        physical["region"] = {"startLine": c.line}
    return {"physicalLocation": physical}
