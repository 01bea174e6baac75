"""``exportlens merge``: the JSON reports of ``check --shard K/N --format json`` as one
report, equal to the unsharded check's. Standard library and core only: the job that
merges needs neither torch nor libcst."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .exporter.core.report import SCHEMA, Finding, ModuleReport, Report, from_dict


class MergeError(ValueError):
    """A report that cannot be read or merged: a usage error (exit 2)."""


def read_report(path: Path) -> Report:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise MergeError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:  # not UTF-8, or not JSON
        raise MergeError(f"{path} is not JSON: {e}") from None
    if isinstance(data, dict) and "modules" in data:
        _readable(path, data.pop("schema", None))
    try:
        if not isinstance(data, dict) or "modules" not in data:
            raise ValueError('no "modules"')
        return from_dict(Report, data)
    except ValueError as e:
        raise MergeError(f"{path} is not a report of `exportlens check --format json`: {e}") from None


def _readable(path: Path, schema: object) -> None:
    """Refuse a report whose schema's major version this exportlens does not read: its fields
    may mean something else (a minor version only adds fields, which ``from_dict`` names)."""
    major = SCHEMA.partition(".")[0]
    given = schema.partition(".")[0] if isinstance(schema, str) else None
    if given != major:
        said = f"schema {schema}" if isinstance(schema, str) else "no schema version (exportlens before 2.0)"
        raise MergeError(
            f"{path} is a report of {said}; this exportlens reads schema {major}.x:"
            " run `exportlens check --format json` again with this version"
        )


def in_target_order(report: Report) -> Report:
    """Modules sorted by target: the one order a check and a merge of its shards share."""
    # the string form is the order Target defines (a report's targets are written in it)
    return replace(report, modules=tuple(sorted(report.modules, key=lambda m: m.target)))


def merge(reports: Iterable[tuple[str, Report]]) -> Report:
    """``(name, report)`` pairs as one report. A module in two reports must be the same in
    both (a shard merged twice); top-level findings (files that do not parse, pyproject
    problems) are the project's, in every shard's report: each is kept once, in the order
    first seen."""
    modules: dict[str, tuple[str, ModuleReport]] = {}
    findings: dict[Finding, None] = {}
    for name, report in reports:
        for module in report.modules:
            first, seen = modules.setdefault(module.target, (name, module))
            if seen != module:
                raise MergeError(
                    f"{module.target} is in {first} and in {name} with different results: reports of different runs?"
                )
        findings.update(dict.fromkeys(report.findings))
    return in_target_order(Report(tuple(m for _, m in modules.values()), tuple(findings)))
