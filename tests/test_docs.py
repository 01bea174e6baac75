"""Every diagnostic code a user can meet is documented where its link points."""

from __future__ import annotations

from pathlib import Path

from exportlens.exporter.core import codes

DOCS = (Path(__file__).resolve().parent.parent / "docs" / "diagnostics.md").read_text(encoding="utf-8")


def test_every_code_has_a_section_and_a_table_row():
    for code in codes.ALL:
        assert f"\n## {code.code} — {code.title}\n" in DOCS, f"no section for {code.code}"
        assert f"| [{code.code}](#{code.code.lower()}) | {code.kind.value} |" in DOCS, f"no table row for {code.code}"
        assert codes.docs_url(code.code).endswith(f"diagnostics.md#{code.code.lower()}")
