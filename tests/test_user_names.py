"""Only the user's names reach the user: every message, fix title and related text of every
finding, and every hover and inlay hint, for the whole corpus (tests/corpus) and the
examples, holds none of torch's symbols (``s77``, ``u0``, ``zuf0``), sources (``L['x']``),
node names (``on node 'le_11'``), infinities (``IntInfinity()``, ``int_oo``) or reprs
(``FakeTensor(``, ``Sym(``).

Hover and inlay texts are made by the server's own functions (features/hover.py,
features/inlay.py) from the reports of real exports, as the server makes them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from corpus_cases import check, copy_corpus

from exportlens.exporter.core.report import ModuleReport
from exportlens.server.features.hover import assigned, label, line_hover, verdict

pytestmark = pytest.mark.slow  # the corpus and the examples, exported

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TORCH_WORDS = re.compile(r"\b[suz]uf?\d+\b|\bs\d+\b|L\[|on node '|IntInfinity|int_oo|FakeTensor\(|Sym\(")


def texts(report: ModuleReport, root: Path) -> list[tuple[str, str]]:
    """(where, text) for everything a user reads of ``report``: in the editor and on the terminal."""
    out = []
    for f in report.findings:
        out.append((f"{f.path}:{f.line} {f.code} message", f.message))
        out += [(f"{f.path}:{f.line} {f.code} fix", fix.title) for fix in f.fixes]
        out += [(f"{f.path}:{f.line} {f.code} related", r.message) for r in f.related]
    out += [(f"{report.target} hover", "\n".join(verdict(report)))]
    for shapes in report.summary.line_shapes if report.summary else ():
        code = (root / shapes.path).read_text(encoding="utf-8").splitlines()[shapes.line - 1]
        out.append((f"{shapes.path}:{shapes.line} hover", line_hover(shapes, code)))
        if (target := assigned(code)) is not None:
            out.append((f"{shapes.path}:{shapes.line} inlay", label(shapes.shapes[-1], target)))
    return out


def _in_torch_words(roots: list[Path]) -> list[str]:
    found = []
    for root in roots:
        for report in check(root).values():
            found += [f"{report.target}: {where}: {text}" for where, text in texts(report, root) if TORCH_WORDS.search(text)]
    return found


def test_no_torch_names_in_anything_shown_for_the_corpus_and_the_examples(tmp_path: Path):
    corpus = copy_corpus(tmp_path / "corpus")
    examples = Path(shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__", ".exportlens*")))
    found = _in_torch_words([corpus, examples])
    assert not found, "torch's names reach the user:\n" + "\n".join(found)


def test_a_value_read_from_data_is_named_by_its_line(tmp_path: Path):
    """``n = k.item()`` then ``torch._check(n <= x.shape[0])``: the line's hint is ``int``
    (torch's last value there is ``Sym(u0 <= 8)``, the check), the range is ``n``'s."""
    root = copy_corpus(tmp_path / "corpus")
    report = check(root, only="clean_checked_item.py:Case")["clean_checked_item.py:Case"]
    said = dict(texts(report, root))
    assert said["clean_checked_item.py:17 inlay"] == "int"
    assert "n ∈ [0, 8]" in said["clean_checked_item.py:Case hover"]
    assert said["clean_checked_item.py:20 hover"].startswith("```python\nf32[4]")


def test_sizes_read_from_data_are_named_by_their_variable(tmp_path: Path):
    root = copy_corpus(tmp_path / "corpus")
    masked = check(root, only="clean_masked_view.py:Case")["clean_masked_view.py:Case"]
    split = check(root, only="clean_split_sizes.py:Case")["clean_split_sizes.py:Case"]
    shapes = {ls.line: ls.shapes for ls in masked.summary.line_shapes}
    assert shapes[18][0] == "f32[picked.shape[0]]", shapes  # ``picked = x[mask]``
    assert dict(texts(masked, root))["clean_masked_view.py:18 inlay"] == "f32[picked.shape[0]]"
    assert shapes[19] == ("f32[4, (picked.shape[0]//4)]",), shapes
    parts = {ls.line: ls.shapes for ls in split.summary.line_shapes}[18]
    assert "(f32[sizes.tolist()[0], 4], f32[sizes.tolist()[1], 4])" in parts, parts
