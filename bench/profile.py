"""Where the time goes: pyinstrument profiles of each reader on the big inputs and of the full build.

    pip install pyinstrument        # once
    python bench/profile.py          # all targets; text profiles into bench/data/profiles/
    python bench/profile.py --only summary,build

Each target runs in its own process. For each, two renderings are written: the call tree
(``NAME.tree.txt``) and a flat list of self time as a percentage of the total (``NAME.flat.txt``);
the top of the flat list is printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import generate as gen  # noqa: E402

OUT = gen.DATA / "profiles"
TARGETS = ("summary", "tb", "log", "ckpt", "ranks", "build")


def _work(target: str):
    from run import _artifact  # bench/run.py

    if target in ("summary", "tb", "log", "ckpt"):
        module = {"summary": "mindspore_summary", "tb": "tensorboard", "log": "textlog", "ckpt": "checkpoints"}[target]
        import importlib

        mod = importlib.import_module(f"postmortem.readers.{module}")
        art = _artifact(gen.INPUTS[target][0])
        return lambda: mod.READER.read(art)
    if target == "ranks":
        from postmortem.load import load_run

        return lambda: load_run(gen.INPUTS["ranks"][0], workers=1)
    if target == "build":
        from postmortem.cli import main

        run, base = gen.INPUTS["build"]

        def build():
            out = tempfile.mkdtemp(prefix="pm-bench-prof-")
            try:
                main(["build", str(run), "--baseline", str(base), "--out", out, "--experiment", "bench",
                      "--format", "html,pdf,json"])
            except SystemExit:
                pass
            finally:
                shutil.rmtree(out, ignore_errors=True)

        return build
    raise SystemExit(f"unknown target {target}")


def profile_one(target: str) -> None:
    from pyinstrument import Profiler
    from pyinstrument.renderers import ConsoleRenderer

    fn = _work(target)
    profiler = Profiler(interval=0.0005)
    profiler.start()
    fn()
    profiler.stop()
    session = profiler.last_session
    OUT.mkdir(parents=True, exist_ok=True)
    tree = ConsoleRenderer(unicode=False, color=False, time="percent_of_total", show_all=False).render(session)
    flat = ConsoleRenderer(unicode=False, color=False, flat=True, time="percent_of_total", show_all=True).render(session)
    (OUT / f"{target}.tree.txt").write_text(tree)
    (OUT / f"{target}.flat.txt").write_text(flat)
    print(f"== {target}: {session.duration:.2f} s (profiled, {OUT / (target + '.tree.txt')})")
    body = [ln for ln in flat.splitlines() if ln.strip() and "%" in ln][:12]
    print("\n".join("   " + ln.strip() for ln in body))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--target", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.target:
        profile_one(args.target)
        return 0
    if gen.missing():
        gen.main([])
    for t in [t for t in args.only.split(",") if t] or TARGETS:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--target", t], cwd=REPO, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
