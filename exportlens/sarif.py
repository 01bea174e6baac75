"""SARIF 2.1.0 output for code-scanning tools (GitHub, VS Code's SARIF viewer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import __version__
from .exporter.core import codes
from .exporter.core.escapes import uri_path
from .exporter.core.report import Edit, Finding, Report

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _region(line: int, column: int, end_line: int | None, end_column: int | None) -> dict[str, int]:
    region = {"startLine": line, "startColumn": column}
    if end_line is not None:
        region["endLine"] = end_line
    if end_column is not None:
        region["endColumn"] = end_column
    return region


def _location(path: str) -> dict[str, str]:
    """A report's path as a URI reference, percent-encoded (a space, a ``#``, a newline in a file name);
    an installed package's file (a related place, read only) by its absolute URI."""
    if Path(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": uri_path(path), "uriBaseId": "%SRCROOT%"}


def _replacement(edit: Edit) -> dict[str, Any]:
    return {
        "deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column),
        "insertedContent": {"text": edit.new_text},
    }


def _result(f: Finding) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": _LEVEL[f.severity.value],
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _location(f.path),
                    "region": _region(f.line, f.column, f.end_line, f.end_column),
                }
            }
        ],
    }
    if f.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "message": {"text": r.message},
                "physicalLocation": {"artifactLocation": _location(r.path), "region": {"startLine": r.line}},
            }
            for i, r in enumerate(f.related)
        ]
    if f.fixes:
        result["fixes"] = [
            {
                "description": {"text": fix.title},
                "artifactChanges": [
                    {
                        "artifactLocation": _location(path),
                        "replacements": [_replacement(e) for e in fix.edits if e.path == path],
                    }
                    for path in dict.fromkeys(e.path for e in fix.edits)
                ],
            }
            for fix in f.fixes
        ]
    return result


def to_sarif(report: Report, root_uri: str) -> dict[str, Any]:
    rules = [
        {
            "id": c.code,
            "name": c.title,
            "shortDescription": {"text": c.title},
            "helpUri": codes.docs_url(c.code),
            "properties": {"kind": c.kind.value},
        }
        for c in codes.ALL
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "exportlens",
                        "version": __version__,
                        "informationUri": codes.DOCS_URL,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri.rstrip("/") + "/"}},
                "results": [_result(f) for f in report.all_findings],
            }
        ],
    }
