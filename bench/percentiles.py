"""The percentile the LSP benches report (bench_lsp.py, bench_storm.py through storm_report.py)."""

from __future__ import annotations


def pct(values: list[float], q: float) -> float:
    """Percentile by linear interpolation between closest ranks (numpy's default)."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)
