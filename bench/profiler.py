"""Benchmark the Ascend profiler readers at cluster scale against a plain polars query and msprof-analyze.

    python bench/profiler_generate.py                     # inputs first (bench/data/profiler/)
    python bench/profiler.py [--repeat 3] [--only kd1g,ranks64,trace2g] [--json bench/data/profiler/results.json]
    python bench/profiler.py --msprof                     # also msprof-analyze (minutes, ~11 GB of memory)

Every measurement runs in a fresh process (``--measure NAME``), `--repeat` times; the report
gives the best and the spread (min–max) of the wall times and the largest peak RSS: ``ru_maxrss``
of the process plus that of its largest child (load_run's worker), an upper bound of their peak
together; both include the interpreter and polars. Inputs are
in the page cache after the first repetition: figures are CPU cost. Nothing is pinned: polars and
load_run use both cores, as a user's run would.

* ``kd1g``: the 1.01 GB kernel_details.csv through ``profiler.READER.read`` (operator table per
  step, type, core and name) / ``plain``: ``pl.scan_csv(f).group_by("Type").agg(pl.col("Duration(us)").sum())``.
* ``ranks64``: ``load_run`` of the 64-rank folder (64 x 100 MB kernel_details.csv; ranks read in
  worker processes) / ``plain``: the same query over the 64 files.
* ``trace2g``: the 2 GB trace_view.json through ``profiler.READER.read`` (counts by phase and the
  per-step Overlap Analysis sums) / ``floor``: one pass counting ``"ph"`` keys with ``bytes.count``.
* ``--msprof``: ``msprof-analyze compare`` (the kd1g folder against itself) and ``advisor computation``
  on the kd1g folder, once each, with /usr/bin/time.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data" / "profiler"
KD1G = DATA / "kd1g" / "rank0_ascend_pt"
RANKS64 = DATA / "ranks64"
TRACE2G = DATA / "trace2g" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"


def _read_file(path: Path):
    from postmortem.model import Artifact
    from postmortem.readers import profiler

    rel = path.relative_to(DATA).as_posix()
    return profiler.READER.read(Artifact(str(path), rel, path.stat().st_size, 0.0))


def m_kd1g() -> str:
    r = _read_file(KD1G / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    ops = r.tables["profile_ops"]
    return f"{ops.height} rows, {ops['calls'].sum()} kernels"


def m_kd1g_plain() -> str:
    import polars as pl

    f = KD1G / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    return f"{pl.scan_csv(f).group_by('Type').agg(pl.col('Duration(us)').sum()).collect().height} types"


def m_ranks64() -> str:
    from postmortem.load import load_run

    run = load_run(RANKS64)
    ops = run.tables["profile_ops"]
    return f"{len(run.ranks)} ranks, {ops.height} rows, {ops['calls'].sum()} kernels"


def m_ranks64_plain() -> str:
    import polars as pl

    files = sorted(RANKS64.glob("*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    return f"{pl.scan_csv(files).group_by('Type').agg(pl.col('Duration(us)').sum()).collect().height} types"


def m_trace2g() -> str:
    r = _read_file(TRACE2G)
    steps = r.tables.get("profile_steps")
    return f"{steps.height if steps is not None else 0} steps; " + next(
        d.message for d in r.diagnostics if d.slug == "profiler-trace-events")


def m_trace2g_floor() -> str:
    n = 0
    with open(TRACE2G, "rb") as fh:
        tail = b""
        while block := fh.read(8 << 20):
            n += (tail + block).count(b'"ph"')
            tail = block[-3:]
    return f"{n} events"


MEASURES = {"kd1g": m_kd1g, "kd1g-plain": m_kd1g_plain, "ranks64": m_ranks64, "ranks64-plain": m_ranks64_plain,
            "trace2g": m_trace2g, "trace2g-floor": m_trace2g_floor}
GROUPS = {"kd1g": ("kd1g", "kd1g-plain"), "ranks64": ("ranks64", "ranks64-plain"),
          "trace2g": ("trace2g", "trace2g-floor")}


def measure(name: str) -> None:
    """In a fresh process: run one measurement once, print wall time and peak RSS as JSON."""
    t = time.perf_counter()
    what = MEASURES[name]()
    wall = time.perf_counter() - t
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker's
    # peak_mb: this process plus its largest worker, an upper bound of the two at once
    print(json.dumps({"wall_s": wall, "peak_mb": own + child, "own_mb": own, "worker_mb": child, "what": what}))


def run_fresh(name: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", name], capture_output=True, text=True, cwd=REPO,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def msprof(results: dict) -> None:
    exe = shutil.which("msprof-analyze") or str(Path(sys.executable).with_name("msprof-analyze"))
    real = REPO / "tests/fixtures/conformance/msinsight-torchnpu-imagenet-2025/level1/rank0_ascend_pt"
    trace = real / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    shutil.copy(trace, KD1G / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")  # compare needs a timeline
    out = DATA / "msprof-out"
    for name, args in {
        "msprof-compare": [exe, "compare", "-d", str(KD1G), "-bp", str(KD1G), "-o", str(out / "compare")],
        "msprof-advisor-computation": [exe, "advisor", "computation", "-d", str(KD1G), "-o", str(out / "advisor")],
    }.items():
        t = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True)
        wall = time.perf_counter() - t
        peak = int(proc.stderr.strip().splitlines()[-1]) / 1024
        results[name] = {"best_s": wall, "spread_s": [wall, wall], "peak_mb": peak, "what": f"exit {proc.returncode}"}
        print(f"{name:28s} {wall:7.2f} s {peak:8.0f} MB  exit {proc.returncode}", flush=True)
    (KD1G / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--only", default=",".join(GROUPS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--msprof", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.measure:
        return measure(args.measure)
    results: dict[str, dict] = {}
    with open("/proc/loadavg") as fh:
        print("load average before:", fh.read().split()[:3])
    for group in filter(None, args.only.split(",")):
        for name in GROUPS[group]:
            runs = [run_fresh(name) for _ in range(args.repeat)]
            walls = [r["wall_s"] for r in runs]
            results[name] = {"best_s": min(walls), "median_s": statistics.median(walls),
                             "spread_s": [min(walls), max(walls)], "peak_mb": max(r["peak_mb"] for r in runs),
                             "what": runs[-1]["what"]}
            print(f"{name:16s} best {min(walls):6.2f} s  (runs {', '.join(f'{w:.2f}' for w in walls)})  "
                  f"peak {results[name]['peak_mb']:6.0f} MB  {runs[-1]['what']}", flush=True)
        mine, peer = GROUPS[group]
        print(f"  ratio {mine} / {peer}: {results[mine]['best_s'] / results[peer]['best_s']:.2f}x (best), "
              f"{results[mine]['median_s'] / results[peer]['median_s']:.2f}x (median)", flush=True)
    if args.msprof:
        msprof(results)
    with open("/proc/loadavg") as fh:
        print("load average after:", fh.read().split()[:3])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
