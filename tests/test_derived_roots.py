"""Derived roots end to end: a violation torch words over a derived size (``n - 2``,
``dy - 6``) is a named requirement of its root on the code line, with a spec fix that
exports (the corpus's derived_* cases prove the fixes); never torch's text on the spec line,
never two of torch's messages run together."""

from __future__ import annotations

import pytest
from corpus_cases import check, copy_corpus

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory):
    return check(copy_corpus(tmp_path_factory.mktemp("derived") / "corpus"))


def _first(reports, case: str):
    report = reports[f"{case}.py:Case"]
    assert not [f for f in report.findings if f.code == "EL205"], [str(f) for f in report.findings]
    return report.findings[0]


def test_a_root_used_directly_and_derived_is_said_of_the_root(reports):
    first = _first(reports, "derived_root_and_form")
    assert first.message == "`n` is declared as [3, 64], but this line requires `(4*n - 8) % 8 == 0`, i.e. `n % 2 == 0`"
    (preferred,) = [f for f in first.fixes if f.preferred]
    assert preferred.title == "Declare `n = 2*_n` with `_n >= 3`"  # (n = 4 would view y as one pair: _n >= 3)
    assert 'y = "f32[2*_n - 2, 4]"' in preferred.edits[0].new_text


def test_a_relation_to_a_derived_size_is_a_relation(reports):
    first = _first(reports, "derived_relation_to_form")
    assert (first.code, first.message) == ("EL203", "`n` is declared independent, but this line needs n = m")


def test_a_derived_size_against_its_unbounded_root(reports):
    first = _first(reports, "derived_reshaped_against_root")
    assert first.message == "`dy` is declared as [9, ∞], but this line requires `(4*dy - 24) % 12 == 0`"
    assert "Specializations" not in first.message and "IntInfinity" not in first.message
    assert [f.title for f in first.fixes if f.preferred] == ["Declare `dy = 3*_dy` with `_dy >= 4`"]
    window = _first(reports, "derived_window_of_root")
    assert window.message == "`dy` is declared as [9, ∞], but this line requires `dy - 6 <= 18`, i.e. `dy <= 24`"


def test_the_dim_with_declared_bounds_stays_the_root_whatever_the_order(reports):
    """torch suggests ``dx = dz + 3`` for ``dz`` declared first; ``dx >= 5`` is the user's bound."""
    first = _first(reports, "derived_roots_any_order")
    assert [f.title for f in first.fixes if f.preferred] == ["Declare `dz = dx - 3`"]


def test_torchs_messages_run_together_are_read_apart():
    from exportlens.exporter.runtime.reading.violations import _bullets

    msg = (
        "Constraints violated (dy)!\n"
        "  - Not all values of dy - 6 = L['y'].size()[0] in the specified range satisfy the generated guard "
        "3 <= L['y'].size()[0] and L['y'].size()[0] <= IntInfinity()"
        "Specializations unexpectedly required (dy)! For more.\n"
        "  - solving the guards generated for dy - 6 = L['y'].size()[0] resulted in a specialized value of 3.\n"
    )
    first, second = _bullets(msg)
    assert first.endswith("<= IntInfinity()") and second.startswith("solving the guards generated for dy - 6")
