"""The text-log reader before / after a change, interleaved, each read in a fresh process.

    python bench/logfields.py --base /tmp/base [--repeat 5]        # worktree of the commit before

Three measurements, each run alternately with the base tree's code and this tree's (PYTHONPATH):

* ``log-1M``: bench/data/log/mixed_1m.log (bench/generate.py), the hot shapes the C scanner parses;
* ``fields-50k``: a log of the families read by their fields (written here, real line shapes of
  the mined corpus tests/fixtures/logcorpus, numbers varied), 50,000 lines, one family a block;
* ``ranks``: load_run of a folder of 64 and of 1,024 small rank logs (~160 KB each, MindFormers
  monitor lines of the hot shapes with a fifth of the lines of the families read by their
  fields), one worker: the cost per rank.

The base tree reads the families' lines as nothing (it did not know them): its figure for
``fields-50k`` is what dropping them costs, not a like-for-like time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"

# Real line shapes of the corpus (tests/fixtures/logcorpus), one writer per block of lines.
FAMILIES = (
    "epoch: {e}, step: {s}, loss is loss:{loss:.6f}, epoch time: {et:.3f}ms, per step time: {st:.3f}ms",
    "2023-02-28 11:19:{sec:02d},452 - INFO - EPOCH: {e0} ITER: {s}.0/692.2578125 EPS: 4765.57 LOSS: {loss:.4f} METRIC: 0.0000",
    "2021-12-04 14:29:{sec:02d},504:INFO:epoch[{e0}], iter[{g}], loss:{loss:.6f}, 482.50 imgs/sec, lr:2.4e-08, per step time:{st:.4f}ms",
    "  Epoch[{e}] [{s}/1250] step cost: {st:.2f} ms, G_loss: {loss:.2f}, D_loss: 0.13, G_vgg_loss: 2.27, G_gan_loss: 0.61",
    "Epoch {e}:  45%|####5     | {s}/1000 [00:10<00:12, 44.1it/s, loss={loss:.3f}]",
    "loss: {loss:.6f}  [{s:>4d}/938]",
    "ms per step:{st:.2f}   epoch:{e}/100  step:{s}/25  Dloss:{loss:.4f}  Gloss:38.1245",
    "[{e0}/1200][{s}/937][23] Loss_D: -{loss:.6f} Loss_G: -33.761238",
)
_MF = ("2025-04-07 15:34:{sec:02d},308 - [mindformers/core/callback/callback.py:529] - INFO - {{ Epoch:[{e:3d}/  2], "
       "step:[{s:5d}/ 6500], loss: {loss:.3f}, per_step_time: {st:.0f}ms, lr: 9.981987e-06, overflow cond: False, "
       "loss_scale: 1.0, global_norm: [10.579812], train_throughput_per_npu: 170.523T")


def _line(fmt: str, i: int) -> str:
    loss = 5.0 * math.exp(-i / 50000) + 0.01 * (i % 7)
    e = i // 1000 + 1
    return fmt.format(e=e, e0=e - 1, s=i % 1000, g=i, loss=loss, st=500.0 + i % 13, et=250000.0 + i % 17, sec=i % 60)


def write_fields_log(path: Path, lines: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    block = lines // len(FAMILIES)
    with open(path, "w", encoding="utf-8") as f:
        for k, fmt in enumerate(FAMILIES):
            f.write("\n".join(_line(fmt, i) for i in range(k * block, (k + 1) * block)))
            f.write("\n")


def write_rank_logs(root: Path, ranks: int, size: int = 160_000) -> None:
    for r in range(ranks):
        p = root / f"rank_{r}" / "train.log"
        if p.exists():
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        out, n, i = [], 0, 0
        while n < size:
            i += 1
            line = _line(FAMILIES[r % len(FAMILIES)], i) if i % 5 == 0 else _line(_MF, i)
            out.append(line)
            n += len(line) + 1
        p.write_text("\n".join(out) + "\n", encoding="utf-8")


_CHILD = r"""
import sys, time, json
from pathlib import Path
kind, path = sys.argv[1], sys.argv[2]
if kind == "read":
    from postmortem.model import Artifact
    from postmortem.readers import textlog
    st = Path(path).stat()
    art = Artifact(path=path, rel=Path(path).name, size=st.st_size, mtime=st.st_mtime, rank=None)
    import tempfile, os
    with open(path, "rb") as fh:
        head = b"".join(fh.readline() for _ in range(200))
    tmp = tempfile.NamedTemporaryFile(suffix=".log", delete=False); tmp.write(head); tmp.close()
    textlog.READER.read(Artifact(path=tmp.name, rel="w.log", size=len(head), mtime=0.0, rank=None))  # imports, first calls
    os.unlink(tmp.name)
    t = time.perf_counter(); r = textlog.READER.read(art); dt = time.perf_counter() - t
    print(json.dumps({"s": dt, "rows": r.rows()}))
else:
    from postmortem.load import load_run
    t = time.perf_counter(); run = load_run(path); dt = time.perf_counter() - t
    print(json.dumps({"s": dt, "rows": run.tables["scalars"].height}))
"""


def _child(tree: Path, kind: str, path: Path) -> dict:
    # cwd is the tree too: "python -c" puts the cwd first on sys.path, before PYTHONPATH
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", _CHILD + f"\nimport postmortem; assert postmortem.__file__.startswith({str(tree)!r})",
                          kind, str(path)], env=env, cwd=str(tree), capture_output=True, text=True, check=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path, help="a worktree of the commit before (built: build_ext --inplace)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="log-1M,fields-50k,ranks")
    args = ap.parse_args(argv)
    only = args.only.split(",")
    trees = {"base": args.base.resolve(), "new": ROOT}
    results: dict[str, dict[str, list]] = {}
    jobs = []
    if "log-1M" in only:
        jobs.append(("log-1M", "read", DATA / "log" / "mixed_1m.log"))
    if "fields-50k" in only:
        p = DATA / "log" / "fields_50k.log"
        if not p.exists():
            write_fields_log(p, 50_000)
        jobs.append(("fields-50k", "read", p))
    if "ranks" in only:
        for n in (64, 1024):
            root = DATA / f"ranks_small{n}"
            write_rank_logs(root, n)
            jobs.append((f"ranks{n}", "load", root))
    for name, kind, path in jobs:
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
        repeat = max(1, args.repeat if name == "log-1M" else min(args.repeat, 2 if name == "ranks1024" else 3))
        for i in range(repeat):
            for tag in (("base", "new") if i % 2 == 0 else ("new", "base")):  # interleaved, alternating first
                r = _child(trees[tag], kind, path)
                results.setdefault(name, {}).setdefault(tag, []).append(r)
                print(f"{name:12s} {tag:4s} round {i + 1}: {r['s']:.3f} s, {r['rows']} rows", flush=True)
        for tag in ("base", "new"):
            best = min(x["s"] for x in results[name][tag])
            results[name][tag + "_best"] = best
            results[name][tag + "_mbps"] = size / best / 1e6
        print(f"{name}: base best {results[name]['base_best']:.3f} s, new best {results[name]['new_best']:.3f} s "
              f"({results[name]['new_best'] / results[name]['base_best']:.3f}x), {size / 1e6:.1f} MB", flush=True)
    if "ranks64" in results and "ranks1024" in results:
        for tag in ("base", "new"):
            per64 = results["ranks64"][tag + "_best"] / 64
            per1024 = results["ranks1024"][tag + "_best"] / 1024
            print(f"ranks {tag}: {per64 * 1e3:.2f} ms/rank at 64, {per1024 * 1e3:.2f} ms/rank at 1024 ({per1024 / per64:.2f}x)")
    out = DATA / "results-logfields.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
