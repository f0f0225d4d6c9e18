"""metrics.json of many run folders, before and after a change to loading: the results must not move.

    python bench/ranks_identity.py build OUT [--code DIR]     # one build per case, into OUT/<case>/
    python bench/ranks_identity.py compare OUT_A OUT_B        # exit 1 if any metrics.json differs

The cases are every run folder whose loading has ranks, sources or restarts to join: the samples,
the fixture runs (tests/fixtures/runs/*, the scale fixtures, the conformance folders that hold a
run), the rank-replicated logs of tests/fixtures/scale/replicate_ranks.py, and the bench inputs of
bench/ranks_generate.py that exist. `--format json` with SOURCE_DATE_EPOCH=0; the build's own
timings (`timings` blocks) and the experiment's name (every build's is now "identity"; it was the
run folder's parent's) are dropped before comparing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "tests" / "fixtures"


def cases() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for p in sorted((REPO / "samples").iterdir()):
        if p.is_dir():
            out[f"sample-{p.name}"] = p
    for p in sorted((FIX / "runs").iterdir()):
        if p.is_dir():
            out[f"runs-{p.name}"] = p
    for p in [*sorted((FIX / "scale" / "rank-sources").iterdir()), FIX / "scale" / "model-grown"]:
        if p.is_dir():
            out[f"scale-{p.name}"] = p
    for p in sorted((FIX / "conformance").iterdir()):
        if p.is_dir():
            out[f"conf-{p.name}"] = p
    for p in sorted((FIX / "slowlink").iterdir()) if (FIX / "slowlink").is_dir() else []:
        if p.is_dir():
            out[f"slowlink-{p.name}"] = p
    for name in ("ranks64", "ranks1024", "profiler16", "profiler1024"):
        p = REPO / "bench" / "data" / "ranks" / name
        if p.is_dir():
            out[f"bench-{name}"] = p
    return out


def replicated(tmp: Path) -> dict[str, Path]:
    out = {}
    for case in ("odd", "node") if (FIX / "scale" / "replicate_ranks.py").exists() else ():
        dest = tmp / f"replicated-{case}"
        done = subprocess.run([sys.executable, str(FIX / "scale" / "replicate_ranks.py"), str(dest), "--ranks", "48",
                               "--case", case], capture_output=True, text=True)
        if done.returncode == 0:
            out[f"replicated-{case}"] = dest
    return out


def build(out: Path, code: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(code), "SOURCE_DATE_EPOCH": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in {**cases(), **replicated(Path(tmp))}.items():
            dest = out / name
            done = subprocess.run([sys.executable, "-m", "postmortem", "build", str(run), "--out", str(dest), "--format",
                                   "json", "--run-id", "run", "--experiment", "identity"], capture_output=True, text=True, env=env, cwd=code)
            print(f"{name}: rc={done.returncode}", flush=True)
            (out / f"{name}.stderr").write_text(done.stderr[-4000:])


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in ("timings", "generated_at", "elapsed_s")}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _unnamed(metrics: dict) -> dict:
    """Without the experiment's name (a folder's name: builds made before it was set by `build`)."""
    if isinstance(metrics.get("run"), dict):
        metrics["run"].pop("experiment", None)
    return metrics


def compare(a: Path, b: Path) -> int:
    bad = 0
    names = sorted({p.name for p in a.iterdir() if p.is_dir()} | {p.name for p in b.iterdir() if p.is_dir()})
    for name in names:
        ma, mb = sorted((a / name).rglob("metrics.json")), sorted((b / name).rglob("metrics.json"))
        if len(ma) != len(mb):
            print(f"DIFF {name}: metrics.json files {len(ma)} vs {len(mb)}")
            bad += 1
            continue
        for x, y in zip(ma, mb):
            if _clean(_unnamed(json.loads(x.read_text()))) != _clean(_unnamed(json.loads(y.read_text()))):
                print(f"DIFF {name}: {x.relative_to(a)}")
                bad += 1
        if not ma:
            print(f"none {name} (no metrics.json on either side)")
    print(f"{len(names)} cases, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    b.add_argument("--code", type=Path, default=REPO)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "build":
        build(args.out, args.code)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
