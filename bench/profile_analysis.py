"""The profiler analysis at cluster scale: ``analysis.profile.profile`` (step breakdown, per rank,
stragglers, operator TopN, communication), the triage, and the report's profiler section.

    python bench/profile_analysis.py [--ranks 512] [--steps 50] [--ops 3000] [--comm 120] [--repeat 3]

The tables are made in memory (no files, no readers): PROFILE_STEPS with a slow pipeline stage,
PROFILE_OPS as a reader leaves them (per rank the named operators plus "(other)" rows),
PROFILE_COMM one row per (rank, step, op). Run it pinned to one core (taskset -c 0) for the
single-core figure; bench/README.md "Profiler analysis" has the results.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone

import numpy as np
import polars as pl

import postmortem  # noqa: F401  (allocator setting before polars work)
from postmortem.analysis.profile import profile
from postmortem.analysis.triage import triage
from postmortem.model import PROFILE_COMM, PROFILE_OPS, PROFILE_STEPS, TABLES, Run, empty


def tables(ranks: int, steps: int, ops: int, comm: int, seed: int = 0) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    r = np.repeat(np.arange(ranks, dtype=np.int32), steps)
    s = np.tile(np.arange(1, steps + 1), ranks)
    slow = r >= ranks // 2  # the second half computes longer: the first half waits
    compute = np.where(slow, 0.12, 0.05) * rng.uniform(0.97, 1.03, r.size)
    total = np.full(r.size, 0.18)
    exposed = 0.6 * (total - compute)
    bubble = total - compute - exposed
    out = {k: empty(v) for k, v in TABLES.items()}
    out["profile_steps"] = pl.DataFrame({
        "rank": r, "step": s, "computing_s": compute, "comm_not_overlapped_s": exposed, "bubble_s": bubble,
        "total_s": total, "source": "step_trace_time",
    }).select([pl.col(c).cast(t) if c in ("rank", "step", "computing_s", "comm_not_overlapped_s", "bubble_s", "total_s", "source")
               else pl.lit(None, t).alias(c) for c, t in PROFILE_STEPS.items()])
    types = np.array([f"Type{i % 150}" for i in range(ops)] + ["hcom_allReduce_"])
    ro = np.repeat(np.arange(ranks, dtype=np.int32), ops + 1)
    ti = np.tile(np.arange(ops + 1), ranks)
    out["profile_ops"] = pl.DataFrame({
        "rank": ro, "type": types[ti], "name": np.where(ti < 200, np.char.add("op", ti.astype(str)), "(other)"),
        "core": np.where(ti == ops, "HCCL", "AI_CORE"), "calls": np.full(ro.size, steps),
        "total_s": rng.exponential(0.001, ro.size) * steps, "source": "kernel_details",
    }).select([pl.col(c).cast(t) if c in ("rank", "type", "name", "core", "calls", "total_s", "source")
               else pl.lit(None, t).alias(c) for c, t in PROFILE_OPS.items()])
    rc = np.repeat(np.arange(ranks, dtype=np.int32), steps * comm)
    sc = np.tile(np.repeat(np.arange(1, steps + 1), comm), ranks)
    oc = np.tile(np.arange(comm), ranks * steps)
    names = np.array([f"stream_{i}_0_{'Receive' if i % 10 == 0 else 'AllReduce'}-op{i}" for i in range(comm)])
    out["profile_comm"] = pl.DataFrame({
        "rank": rc, "step": sc, "op": names[oc], "kind": np.where(oc % 10 == 0, "p2p", "collective"),
        "elapse_s": rng.exponential(0.0005, rc.size), "source": "step_trace_raw",
    }).select([pl.col(c).cast(t) if c in ("rank", "step", "op", "kind", "elapse_s", "source")
               else pl.lit(None, t).alias(c) for c, t in PROFILE_COMM.items()])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=512)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--ops", type=int, default=3000)
    ap.add_argument("--comm", type=int, default=120)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    t = tables(a.ranks, a.steps, a.ops, a.comm)
    rows = {k: v.height for k, v in t.items() if v.height}
    run = Run("/bench", "bench", t, {}, (), (), tuple(range(a.ranks)), ())
    best: dict[str, float] = {}
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        prof, ranks, strag = profile(run, None)
        t1 = time.perf_counter()
        tri = triage(prof, strag, None, {})
        t2 = time.perf_counter()
        for k, v in (("profile", t1 - t0), ("triage", t2 - t1)):
            best[k] = min(best.get(k, v), v)
    from postmortem.analysis import analyze
    from postmortem.report.viewmodel import build_view
    full = analyze(run)
    t3 = time.perf_counter()
    build_view(full, lang="en", generated_at=datetime(2026, 1, 1, tzinfo=timezone.utc), version="bench")
    best["view (whole report)"] = time.perf_counter() - t3
    print(f"rows: {rows}")
    print(f"verdict: {tri.verdict} / {tri.reason}; awaited {len(strag.awaited) if strag else 0} of {len(ranks)} ranks")
    for k, v in best.items():
        print(f"{k}: {v * 1000:.0f} ms")


if __name__ == "__main__":
    main()
