"""Ranks at scale: `postmortem build --format json` of a logs-only MindFormers job against the plain scan.

    python bench/ranks_generate.py                    # the inputs (bench/data/ranks/)
    python bench/ranks.py [--sizes 64,1024,8192] [--repeat 1] [--json bench/data/ranks.json] [--base DIR]
    python bench/ranks.py --plain DIR                 # the plain scan alone (what is timed)
    python bench/ranks.py --plain-profiler DIR        # the plain polars read of a profiler cluster

Each measurement is a fresh process under /usr/bin/time -v (wall time, peak RSS). The plain
approach reads each rank's info.log, runs one regex for step, loss and per-step time, and takes a
median per rank: the floor of what any reader of these files does. The build and its plain scan
of the same folder alternate in the same run, so the ratio holds on a loaded machine. After each
build its metrics.json is read: the slow ranks it names must be the slow node (8-15).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data" / "ranks"
SLOW = set(range(8, 16))

MONITOR = re.compile(rb"step:\[\s*(\d+)/\s*\d+\], loss: ([-\d.naife+]+), per_step_time: (\d+)ms")


def plain_scan(root: Path) -> dict[int, float]:
    """Median per_step_time (ms) per rank, steps after the first."""
    out = {}
    for path in sorted(root.glob("output/log/rank_*/info.log")):
        rank = int(path.parent.name.removeprefix("rank_"))
        times = [int(m[2]) for m in MONITOR.findall(path.read_bytes()) if m[0] != b"1"]
        out[rank] = statistics.median(times) if times else float("nan")
    return out


def plain_profiler(root: Path) -> int:
    """The profiler cluster read plainly with polars: every step_trace_time.csv into one frame,
    every communication.json's operators' time info, a median per rank."""
    import polars as pl

    steps = pl.concat([pl.read_csv(p).with_columns(pl.lit(int(p.parts[-3].removeprefix("rank").split("_")[0])).alias("rank"))
                       for p in sorted(root.glob("rank*_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"))])
    rows = []
    for p in sorted(root.glob("rank*_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json")):
        rank = int(p.parts[-3].removeprefix("rank").split("_")[0])
        for step, groups in json.loads(p.read_bytes()).items():
            for op, info in groups.get("collective", {}).items():
                t = info["Communication Time Info"]
                rows.append((rank, step, op, t["Elapse Time(ms)"], t["Wait Time(ms)"], t["Transit Time(ms)"]))
    comm = pl.DataFrame(rows, schema=["rank", "step", "op", "elapse_ms", "wait_ms", "transit_ms"], orient="row")
    per_rank = steps.group_by("rank").agg(pl.col("Computing").median()).join(
        comm.group_by("rank").agg(pl.col("wait_ms").sum()), on="rank")
    return per_rank.height


def timed(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """Wall seconds and peak RSS (MB) of a fresh process, its stdout."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", "-o", t.name, *cmd], capture_output=True, text=True, env=env, cwd=cwd)
        wall = time.perf_counter() - start
        stats = t.read()
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stats)[1]) / 1024
    cpu = sum(float(re.search(rf"{what} time \(seconds\): ([\d.]+)", stats)[1]) for what in ("User", "System"))
    return {"s": round(wall, 3), "cpu_s": round(cpu, 2), "rss_mb": round(rss, 1), "stdout": done.stdout}


def slow_named(out: Path) -> dict:
    """What the report's metrics.json says about the ranks: the slow ones, and the verdict's first line."""
    metrics = json.loads(next(out.rglob("metrics.json")).read_text())
    ranks = metrics.get("ranks") or {}
    slow = ranks.get("slow_ranks") or ranks.get("slow") or []
    named = sorted(int(r["rank"]) if isinstance(r, dict) else int(r) for r in slow)
    verdict = metrics.get("verdict") or {}
    return {"slow_ranks": named, "right": set(named) == SLOW, "verdict": (verdict.get("headline") or verdict.get("title")
                                                                           or str(verdict)[:160])}


def _build(root: Path, code: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    with tempfile.TemporaryDirectory(prefix="pm-ranks-") as out:
        build = timed([sys.executable, "-m", "postmortem", "build", str(root), "--out", out, "--format", "json"], env, code)
        build.update(slow_named(Path(out)))
    return build


def measure(size: int, repeat: int, code: Path, base: Path | None = None) -> dict:
    """The build (and the base checkout's, if given) and the plain scan, one after the other."""
    root = DATA / f"ranks{size}"
    best: dict = {}
    for _ in range(repeat):
        runs = {"build": _build(root, code), "plain": timed([sys.executable, str(HERE / "ranks.py"), "--plain", str(root)])}
        if base is not None:
            runs["base"] = _build(root, base)
        for key, run in runs.items():
            if key not in best or run["s"] < best[key]["s"]:
                best[key] = run
    for part in best.values():
        part.pop("stdout", None)
    best["ratio"] = round(best["build"]["s"] / best["plain"]["s"], 2)
    best["cpu_ratio"] = round(best["build"]["cpu_s"] / best["plain"]["cpu_s"], 2)
    if base is not None:
        best["base_ratio"] = round(best["base"]["s"] / best["plain"]["s"], 2)
    best["per_rank_ms"] = round(1000 * best["build"]["s"] / size, 2)
    return best


def measure_profiler(root: Path, repeat: int, code: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    best: dict = {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="pm-prof-") as out:
            build = timed([sys.executable, "-m", "postmortem", "build", str(root), "--out", out, "--format", "json"], env, code)
        plain = timed([sys.executable, str(HERE / "ranks.py"), "--plain-profiler", str(root)])
        for k, v in (("build", build), ("plain", plain)):
            v.pop("stdout", None)
            if k not in best or v["s"] < best[k]["s"]:
                best[k] = v
    best["ratio"] = round(best["build"]["s"] / best["plain"]["s"], 2)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,1024,8192")
    ap.add_argument("--profiler", type=int, default=1024, help="profiler cluster ranks (0: skip)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout measured")
    ap.add_argument("--base", type=Path, help="an earlier checkout measured in the same run (C extensions built)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--plain", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--plain-profiler", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.plain:
        medians = plain_scan(args.plain)
        overall = statistics.median(medians.values())
        print(json.dumps(sorted(r for r, m in medians.items() if m > 1.1 * overall)))
        return 0
    if args.plain_profiler:
        print(plain_profiler(args.plain_profiler))
        return 0
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": os.getloadavg(), "sizes": {}}
    for size in [int(s) for s in args.sizes.split(",") if s]:
        r = results["sizes"][size] = measure(size, args.repeat, args.code, args.base)
        b = r["build"]
        print(f"ranks {size:>5}: build {b['s']:7.2f} s ({b['cpu_s']:.1f} s cpu) {b['rss_mb']:7.0f} MB  "
              f"plain {r['plain']['s']:6.2f} s ({r['plain']['cpu_s']:.1f} s cpu)  "
              f"{r['ratio']:5.1f}x  {r['per_rank_ms']:.2f} ms/rank  slow {b['slow_ranks']} right={b['right']}", flush=True)
        if args.base:
            print(f"      base: build {r['base']['s']:7.2f} s ({r['base']['cpu_s']:.1f} s cpu) {r['base']['rss_mb']:7.0f} MB  "
                  f"{r['base_ratio']:5.1f}x  "
                  f"slow right={r['base']['right']}", flush=True)
    if args.profiler:
        r = results["profiler"] = measure_profiler(DATA / f"profiler{args.profiler}", args.repeat, args.code)
        print(f"profiler {args.profiler}: build {r['build']['s']:.2f} s ({r['build']['cpu_s']:.1f} s cpu) "
              f"{r['build']['rss_mb']:.0f} MB  plain polars {r['plain']['s']:.2f} s ({r['plain']['cpu_s']:.1f} s cpu)  "
              f"{r['ratio']:.1f}x", flush=True)
    results["load_after"] = os.getloadavg()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
