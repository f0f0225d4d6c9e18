"""Generate a MindFormers job that left logs only, at 64, 1,024 and 8,192 ranks, into bench/data/ranks/.

    python bench/ranks_generate.py                     # every size missing
    python bench/ranks_generate.py --sizes 64,1024 --force

``ranks{N}/output/log/rank_{i}/info.log``: what MindFormers' ``MFLossMonitor`` prints on every rank
of a job (~160 KB a rank): a few start-up lines, then per step the monitor line and its progress
line, in the exact shapes of real files (generate.py's ``_MF`` / ``_MF_PROGRESS``, copied from
/work/shared/conformance/mf-docs-llama2-13b-log and tests/fixtures/logcorpus/b/logs/b-kahsolt-mf-*).
One node of 8 ranks (ranks 8-15) is ~15 % slower: its per_step_time and its wall clock both.

``profiler1024/rank{i}_ascend_pt/``: 1,024 ranks of Ascend profiler output as torch_npu writes it
(``profiler_info_{i}.json``, ``ASCEND_PROFILER_OUTPUT/step_trace_time.csv`` and
``communication.json``), copied from the real level1 rank 0 profile of
tests/fixtures/conformance/msinsight-torchnpu-imagenet-2025 with 20 steps and per-rank times;
ranks 8-15 compute ~15 % longer.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import _MF, _MF_PROGRESS, DATA, STAMP, _clock, _g

OUT = DATA / "ranks"
SIZES = (64, 1024, 8192)
STEPS = 330  # monitor + progress line a step: ~160 KB a rank
STEP_MS = 1752.0  # the real llama2-13b log's steady step
SLOW = range(8, 16)  # one node of 8
SLOWER = 1.15
REAL_PROF = (Path(__file__).resolve().parent.parent
             / "tests/fixtures/conformance/msinsight-torchnpu-imagenet-2025/level1/rank0_ascend_pt")
PROF_STEPS = 20

_HEADER = (
    "{date} {hms},{ms:03d} - [mindformers/tools/utils.py:171] - INFO - set output path to '/job/output'",
    ("{date} {hms},{ms:03d} - [mindformers/core/context/build_context.py:168] - INFO - "
     "initial parallel_config from dict: {{'data_parallel': {dp}, 'model_parallel': 8, 'pipeline_stage': 1, "
     "'optimizer_shard': True, 'micro_batch_num': 1, 'vocab_emb_dp': True, 'gradient_aggregation_group': 4}}"),
    "{date} {hms},{ms:03d} - [mindformers/trainer/base_trainer.py:1084] - INFO - .........Starting Training Model..........",
)


def rank_log(rank: int, ranks: int) -> str:
    """One rank's info.log."""
    slow = SLOWER if rank in SLOW else 1.0
    wall = float(STAMP) + 60.0
    date, hms, ms = _clock(wall)
    out = [h.format(date=date, hms=hms, ms=ms, dp=max(1, ranks // 8)) for h in _HEADER]
    for step in range(1, STEPS + 1):
        step_ms = STEP_MS * slow * (1 + 0.01 * abs(_g(step, rank * 7 + 6)))
        if step == 1:
            step_ms = 103328.0  # compile (the real log's first step)
        wall += step_ms / 1000.0
        date, hms, ms = _clock(wall)
        loss = 2.1 + 8.5 * math.exp(-step / 40.0) + 0.01 * _g(step, rank)
        lr = 1e-5 * min(1.0, step / 20) * (0.5 * (1 + math.cos(math.pi * step / STEPS)))
        out.append(_MF.format(date=date, hms=hms, ms=ms, ep=1, eps=1, sie=step, spe=STEPS, loss=loss, step_ms=step_ms,
                              lr=lr, gn=1.0 + 0.1 * abs(_g(step, rank + 3)), tf=170.7 / slow))
        pct = 100.0 * step / STEPS
        out.append(_MF_PROGRESS.format(date=date, hms=hms, ms=ms, pct=pct, bar="\u2588" * int(pct / 2),
                                       sps=1000.0 / step_ms, eta="0:11:40"))
    return "\n".join(out) + "\n"


def _write_ranks(job: tuple[str, int, int, int]) -> None:
    root, first, last, ranks = Path(job[0]), job[1], job[2], job[3]
    for r in range(first, last):
        folder = root / "output" / "log" / f"rank_{r}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "info.log").write_text(rank_log(r, ranks), encoding="utf-8")


def gen_logs(ranks: int, force: bool) -> Path:
    root = OUT / f"ranks{ranks}"
    if root.exists() and not force:
        return root
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    chunk = max(1, ranks // 16)
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_write_ranks, [(str(tmp), a, min(ranks, a + chunk), ranks) for a in range(0, ranks, chunk)]))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root


# --------------------------------------------------------------------------- profiler folders


def _prof_templates() -> tuple[dict, dict, str, str]:
    out = REAL_PROF / "ASCEND_PROFILER_OUTPUT"
    header, row = (out / "step_trace_time.csv").read_text().splitlines()[:2]
    comm = json.loads((out / "communication.json").read_text())
    info = json.loads((REAL_PROF / "profiler_info_0.json").read_text())
    return comm, info, header, row


def _write_prof(job: tuple[str, int, int]) -> None:
    root, first, last = Path(job[0]), job[1], job[2]
    comm, info, header, row = _prof_templates()
    (step_key, template), = comm.items()
    first_step = int(step_key.removeprefix("step"))
    values = [float(v) for v in row.split(",")[1:]]
    for r in range(first, last):
        slow = SLOWER if r in SLOW else 1.0
        folder = root / f"rank{r}_ascend_pt"
        (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True, exist_ok=True)
        mine = copy.deepcopy(info)
        mine["rank_id"] = r
        (folder / f"profiler_info_{r}.json").write_text(json.dumps(mine, indent=4))
        rows, steps = [header], {}
        for i in range(PROF_STEPS):
            step = first_step + i
            jitter = 1 + 0.01 * abs(_g(step, r))
            v = list(values)
            v[0] *= slow * jitter  # Computing
            v[5] = v[0] + v[1] + v[4]  # Stage = computing + communication not overlapped + free
            rows.append(",".join([str(step)] + [repr(x) for x in v]))
            shift = i * v[5] / 1000.0 * 1000.0  # us
            ops = {}
            for name, op in template["collective"].items():
                op = copy.deepcopy(op)
                t = op["Communication Time Info"]
                if "Start Timestamp(us)" in t:  # "Total Op Info" has none
                    t["Start Timestamp(us)"] += shift
                t["Wait Time(ms)"] *= jitter
                ops[name] = op
            steps[f"step{step}"] = {"p2p": {}, "collective": ops}
        (folder / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv").write_text("\n".join(rows) + "\n")
        (folder / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text(json.dumps(steps))


def gen_profiler(ranks: int, force: bool) -> Path:
    root = OUT / f"profiler{ranks}"
    if root.exists() and not force:
        return root
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    chunk = max(1, ranks // 16)
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_write_prof, [(str(tmp), a, min(ranks, a + chunk)) for a in range(0, ranks, chunk)]))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    return root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--profiler", type=int, default=1024, help="profiler ranks (0: none)")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    for n in [int(s) for s in args.sizes.split(",") if s]:
        t = time.perf_counter()
        root = gen_logs(n, args.force)
        print(f"{root}: {time.perf_counter() - t:.1f} s", flush=True)
    if args.profiler:
        t = time.perf_counter()
        root = gen_profiler(args.profiler, args.force)
        print(f"{root}: {time.perf_counter() - t:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
