"""Generate Ascend profiler inputs at cluster scale into bench/data/profiler/ (git-ignored).

    python bench/profiler_generate.py                 # everything missing (~2 min on 2 loaded cores)
    python bench/profiler_generate.py --force
    python bench/profiler_generate.py --only kd1g,ranks64,trace2g

Every file is made from a real torch_npu profile in the conformance fixtures
(tests/fixtures/conformance/msinsight-torchnpu-imagenet-2025, level1 rank 0): its header (the
2025 kernel_details column set, 46 columns) and its rows are the templates; only step ids, kernel
names (a layer suffix: 12,224 distinct names per step, as MindSpore's per-layer scope names are), task
ids, start times and durations change.

* ``kd1g/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv``: 2.9 M kernels (237 steps), 1.0 GB.
* ``ranks64/rank{i}_ascend_pt/...``: 64 ranks, a ~100 MB kernel_details.csv each (other seeds),
  with their real ``profiler_info_{i}.json``-shaped rank file; a run folder for ``load_run``.
* ``trace2g/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json``: the real trace's events
  (Python, CANN, Ascend Hardware, HCCL, Overlap Analysis, ...) repeated once per step with
  shifted times and ``ProfilerStep#N`` renamed, ~2 GB; its metadata (``M``) events once.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data" / "profiler"
REAL = REPO / "tests/fixtures/conformance/msinsight-torchnpu-imagenet-2025/level1/rank0_ascend_pt"
KERNELS = REAL / "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
TRACE = REAL / "ASCEND_PROFILER_OUTPUT/trace_view.json"
LAYERS = 64  # name suffixes per template kernel: 12,224 kernels (distinct names) per step
STEP_US = 200_000.0  # a step's span in generated start times


def kernel_rows(template: pl.DataFrame, first: int, n: int, seed: int) -> pl.DataFrame:
    """Kernels first .. first + n - 1 of a rank: the template's rows in order, LAYERS times per
    step (one name suffix each), with new step ids, task ids, start times and durations."""
    rng = np.random.default_rng(seed)
    row = first + np.arange(n)
    per_step = template.height * LAYERS
    idx = row % template.height
    step = 1 + row // per_step
    base = template.select(pl.all().gather(idx))
    dur = template["Duration(us)"].cast(pl.Float64).to_numpy()[idx] * rng.lognormal(0.0, 0.2, n)
    start = 1736408883704643.212 + (step - 1) * STEP_US + (row % per_step) * (STEP_US / per_step)
    layer = (row // template.height) % LAYERS
    return base.with_columns(
        pl.Series("Step Id", step.astype(str)),
        (base["Name"] + "_l" + pl.Series(layer.astype(str))).alias("Name"),
        pl.Series("Task ID", (row % 65536).astype(str)),
        pl.Series("Start Time(us)", np.char.add(np.char.mod("%.3f", start), "\t")),
        pl.Series("Duration(us)", np.char.mod("%.3f", dur)),
    )


def write_rank(folder: Path, rank: int, n: int, seed: int) -> Path:
    out = folder / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    info = json.loads((REAL / "profiler_info_0.json").read_text())
    info["rank_id"] = rank
    (out.parent / f"profiler_info_{rank}.json").write_text(json.dumps(info, indent=4))
    template = pl.read_csv(KERNELS, infer_schema=False)
    path = out / "kernel_details.csv"
    chunk = 500_000  # rows per write: bounds the generator's memory
    with open(path, "wb") as fh:
        for i, first in enumerate(range(0, n, chunk)):
            part = kernel_rows(template, first, min(chunk, n - first), seed * 1000 + i)
            part.write_csv(fh, include_header=first == 0, quote_style="necessary")
    return path


def gen_kd1g(force: bool) -> None:
    path = DATA / "kd1g/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    if path.exists() and not force:
        return
    t = time.time()
    write_rank(DATA / "kd1g", 0, 2_900_000, seed=1)
    print(f"kd1g: {path.stat().st_size / 1e9:.2f} GB in {time.time() - t:.0f} s")


def gen_ranks64(force: bool) -> None:
    folder = DATA / "ranks64"
    if (folder / "rank63_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv").exists() and not force:
        return
    shutil.rmtree(folder, ignore_errors=True)
    t = time.time()
    for rank in range(64):
        write_rank(folder, rank, 290_000, seed=100 + rank)
    size = sum(p.stat().st_size for p in folder.rglob("*.csv"))
    print(f"ranks64: {size / 1e9:.2f} GB in {time.time() - t:.0f} s")


_TS = re.compile(r'("ts": ")(\d+)\.(\d+)(")')


def gen_trace2g(force: bool, target: int = 2_000_000_000) -> None:
    path = DATA / "trace2g/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    if path.exists() and not force:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent.parent / "profiler_info_0.json").write_text((REAL / "profiler_info_0.json").read_text())
    t = time.time()
    events = json.loads(TRACE.read_text())
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    step0 = next(e for e in body if str(e.get("name", "")).startswith("ProfilerStep#"))
    t0 = int(str(step0["ts"]).split(".")[0])
    span = max(float(e["ts"]) + float(e.get("dur") or 0) for e in body) - min(float(e["ts"]) for e in body)
    period = int(span) + 1000  # µs between copies: steps do not overlap
    text = ", ".join(json.dumps(e) for e in body)
    # The template split around each ts value: copies only re-format the numbers.
    pieces, stamps, last = [], [], 0
    for m in _TS.finditer(text):
        pieces.append(text[last:m.start(2)])
        stamps.append((int(m.group(2)) - t0, m.group(3)))
        last = m.end(3)
    tail = text[last:]
    offsets = np.array([s for s, _ in stamps], dtype=np.int64)
    fracs = [f for _, f in stamps]
    with open(path, "w") as fh:
        fh.write("[" + ", ".join(json.dumps(e) for e in meta))
        k = 0
        while fh.tell() < target:
            ints = (offsets + t0 + k * period).astype(str)
            parts = [None] * (2 * len(pieces))
            parts[0::2] = pieces
            parts[1::2] = [f"{i}.{f}" for i, f in zip(ints, fracs)]
            copy = "".join(parts) + tail
            fh.write(", " + copy.replace('"ProfilerStep#50"', f'"ProfilerStep#{k + 1}"'))
            k += 1
        fh.write("]")
    print(f"trace2g: {path.stat().st_size / 1e9:.2f} GB, {k} steps in {time.time() - t:.0f} s")


GROUPS = {"kd1g": gen_kd1g, "ranks64": gen_ranks64, "trace2g": gen_trace2g}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--only", default=",".join(GROUPS))
    args = ap.parse_args(argv)
    for name in args.only.split(","):
        GROUPS[name](args.force)


if __name__ == "__main__":
    sys.exit(main())
