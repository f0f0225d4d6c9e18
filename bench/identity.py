"""Byte-identity of the outputs across code versions: the same builds, then every file compared.

    python bench/identity.py build OUT [--code DIR] [--only samples,bench] [--cases NAME,...]
    python bench/identity.py compare OUT_A OUT_B

`build` runs `python -m postmortem build` for every case (the samples and the bench inputs, in
English and Chinese, HTML + PDF + JSON + Markdown) with SOURCE_DATE_EPOCH=0, each into its own
archive OUT/<case>/. `--code DIR` runs another checkout of postmortem (its folder goes first on
PYTHONPATH; copy the built C extensions into it). `compare` lists every file that differs or
exists on one side only, and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
DATA = REPO / "bench" / "data"
FIXTURES = REPO / "tests" / "fixtures"

# name -> (group, run folder, baseline folder or None, lang)
CASES = {
    "sample-lr2x-en": ("samples", SAMPLES / "gpt-tiny-lr2x", SAMPLES / "gpt-tiny-base", "en"),
    "sample-lr2x-zh": ("samples", SAMPLES / "gpt-tiny-lr2x", SAMPLES / "gpt-tiny-base", "zh"),
    "sample-base-en": ("samples", SAMPLES / "gpt-tiny-base", None, "en"),
    "sample-profiler-zh": ("samples", SAMPLES / "profiler-cpu", None, "zh"),
    "fixture-callback-en": ("samples", FIXTURES / "callback" / "run", None, "en"),
    "fixture-callback-zh": ("samples", FIXTURES / "callback" / "run", None, "zh"),
    "bench-build250k-en": ("bench", DATA / "build" / "run250k", DATA / "build" / "base250k", "en"),
    "bench-build250k-zh": ("bench", DATA / "build" / "run250k", DATA / "build" / "base250k", "zh"),
    "bench-ranks8-en": ("bench", DATA / "ranks8", None, "en"),
    "bench-ranks64-zh": ("bench", DATA / "ranks64", None, "zh"),
    "bench-summary250k-en": ("bench", DATA / "summary" / "big", None, "en"),
    "bench-tb250k-en": ("bench", DATA / "tb" / "big", None, "en"),
    "bench-log-en": ("bench", DATA / "log", None, "en"),
}


def build(out: Path, code: Path | None, wanted: list[str]) -> int:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    failed = 0
    for name, (group, run, baseline, lang) in CASES.items():
        if wanted and name not in wanted and group not in wanted:
            continue
        if not run.exists() or (baseline is not None and not baseline.exists()):
            print(f"  {name}: input missing (python bench/generate.py), skipped")
            continue
        cmd = [sys.executable, "-m", "postmortem", "build", str(run), "--out", str(out / name), "--experiment", "identity",
               "--format", "html,pdf,json,md", "--lang", lang]
        if baseline is not None:
            cmd += ["--baseline", str(baseline)]
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=out.parent, capture_output=True, text=True)
        status = "ok" if proc.returncode in (0, 1) else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        failed += status != "ok"
        print(f"  {name}: {time.perf_counter() - t:.1f} s {status}", flush=True)
    return 1 if failed else 0


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


def compare(a: Path, b: Path) -> int:
    da, db = _digests(a), _digests(b)
    differ = sorted(k for k in da.keys() & db.keys() if da[k] != db[k])
    only_a, only_b = sorted(da.keys() - db.keys()), sorted(db.keys() - da.keys())
    for k in differ:
        print(f"differs: {k}")
    for k in only_a:
        print(f"only in {a}: {k}")
    for k in only_b:
        print(f"only in {b}: {k}")
    print(f"{len(da.keys() & db.keys())} files in both, {len(differ)} differ, {len(only_a)} + {len(only_b)} on one side only")
    return 1 if differ or only_a or only_b else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("out")
    b.add_argument("--code", help="a checkout of postmortem to run instead of this one")
    b.add_argument("--only", default="", help="groups (samples, bench) or case names")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    if args.command == "compare":
        return compare(Path(args.a), Path(args.b))
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    return build(out, Path(args.code).resolve() if args.code else None, [w for w in args.only.split(",") if w])


if __name__ == "__main__":
    sys.exit(main())
