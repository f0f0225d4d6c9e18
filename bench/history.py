"""What the history costs a build: reading an experiment's archived runs for what is normal
(pastruns.py + analysis/history.py), against the straightforward way (re-analysing each archived
run from its tables, as a rebuild does), on an archive of the sample run built N times.

    PYTHONPATH=. python bench/history.py [--runs 10] [--archive DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--archive", default=None)
    args = ap.parse_args()
    from postmortem import archive
    from postmortem.analysis import analyze
    from postmortem.config import BuildSettings
    from postmortem.load import load_run
    from postmortem.pastruns import past_runs
    from postmortem.pipeline import build_report

    root = Path(args.archive or tempfile.mkdtemp(prefix="bench-history-"))
    have = {r.run_id for r in archive.list_runs(root, "tiny")}
    for i in range(args.runs):
        if f"r{i}" not in have:
            build_report(str(REPO / "samples" / "gpt-tiny-base"),
                         replace(BuildSettings(out=str(root), experiment="tiny", run_id=f"r{i}", formats=("json",))))
    current = analyze(load_run(str(REPO / "samples" / "gpt-tiny-lr2x")))
    from postmortem.analysis.history import history

    t0 = time.perf_counter()
    past = past_runs(root, "tiny", "current", None, args.runs)
    h = history(current, past, {}, args.runs)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r in archive.list_runs(root, "tiny")[: args.runs]:
        run, _ = archive.load_archived_run(r.path)
        analyze(run)
    straightforward = time.perf_counter() - t0
    print(f"{len(past)} archived runs, {len(h.figures)} figures: history {ours * 1000:.0f} ms, "
          f"re-analysing each run {straightforward * 1000:.0f} ms, ratio {straightforward / ours:.1f}x")


if __name__ == "__main__":
    main()
