"""What ``bench_storm.py`` prints: each figure of the storm beside its goal."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from percentiles import pct


def report(args: argparse.Namespace, root: Path, out: dict[str, Any], failing: int) -> None:
    """``failing``: how many of the modules fail (each has its fixes proven after its verdict)."""
    storm = out["storm"]  # bench_storm.Storm
    own = sum(seconds for _, seconds in storm.verdicts.values())
    ideal = own / args.jobs
    right = storm.right_at
    uris = [(root / "mods" / f"m{i}.py").as_uri() for i in range(args.files)]
    pushes = [storm.pushes[u] for u in uris]
    lat = out["latencies"]
    print(f"{args.files} files opened at once, jobs {args.jobs}; {len(storm.verdicts)} verdicts logged")
    print(f"  time until every verdict is right   {'never (timed out)' if right is None else f'{right:.2f} s'}")
    print(f"  exports' own time / jobs            {ideal:.2f} s  ({own:.2f} s over {len(storm.verdicts)} exports)")
    last = "" if storm.proved_at is None else f", the last at {storm.proved_at:.2f} s"
    print(f"  failing modules with fixes proven   {len(storm.proved)} of {failing}{last}")
    print(
        f"  diagnostic pushes per file          mean {sum(pushes) / len(pushes):.2f},"
        f" max {max(pushes)}, total {sum(pushes)}"
    )
    for uri in [u for u in uris if storm.pushes[u] > 2][:3]:  # which files were pushed more than twice, with what
        print(f"    {Path(uri).name}: " + "; ".join(f"{t:.2f} s {codes}" for t, codes in storm.seen[uri]))
    print(
        f"  exportlens/status latency           p50 {pct(lat, 50) * 1000:.1f} ms, p99 {pct(lat, 99) * 1000:.1f} ms, "
        f"max {max(lat, default=float('nan')) * 1000:.1f} ms ({len(lat)} requests)"
    )
    print(f"  server CPU over the storm           {out['cpu']:.1f} s in {out['elapsed']:.1f} s")
    parent_user, parent_sys, jobs_user, jobs_sys = out["pool"]
    print(
        f"  the pool's CPU                      export processes {jobs_user + jobs_sys:.1f} s"
        f" (kernel {jobs_sys:.1f} s), warm parent {parent_user + parent_sys:.1f} s"
        f" (kernel {parent_sys:.1f} s: forking), against {own:.1f} s of exports' own time"
    )
    edits = out["edits"]
    if edits:
        e = edits["latencies"]
        print(f"\n{args.edits} keystrokes into a {edits['lines']}-line file (incremental didChange)")
        print(
            f"  sent in {edits['sent']:.2f} s;"
            f" the server answered a status request sent after the last at {edits['caught_up']:.2f} s"
        )
        print(
            f"  exportlens/status latency           p50 {pct(e, 50) * 1000:.1f} ms, p99 {pct(e, 99) * 1000:.1f} ms, "
            f"max {max(e, default=float('nan')) * 1000:.1f} ms ({len(e)} requests)"
        )
    ratio = right / ideal if right is not None and ideal else float("inf")
    rows = [
        ("time until every verdict is right", "≤ 1.2× own/jobs", f"{ratio:.2f}×", ratio <= 1.2),
        ("diagnostic pushes per file (max)", "≤ 2", f"{max(pushes)}", max(pushes) <= 2),
        ("exportlens/status p99", "≤ 100 ms", f"{pct(lat, 99) * 1000:.1f} ms", pct(lat, 99) <= 0.100),
    ]
    if edits:
        p99 = pct(edits["latencies"], 99)
        rows.append(("status p99 while typing", "≤ 100 ms", f"{p99 * 1000:.1f} ms", p99 <= 0.100))
    print("\ngoal                                  target            measured     met")
    for name, target, measured, met in rows:
        print(f"{name:<37} {target:<17} {measured:<12} {'yes' if met else 'NO'}")
