"""The failure reader's cost per rank, against the text-log reader on the same files and against the
straightforward way (every line decoded and matched by one regex).

    PYTHONPATH=. python bench/failure_scan.py [--ranks 256] [--repeat 5]

The rank logs (~160 KB each, bench/data/failure/, made once) are bench/logfields.py's rank logs
(MindFormers monitor lines, a fifth of the lines of the families read by their fields); one rank
in 64 ends with a real failure of the failure corpus (the EI0002 case). Per rank and repeat, in this process, alternately:

* ``failure``: readers/failure's read (a bytes find per anchor, the lines around the hits);
* ``per_line``: the straightforward reader: decode every line, one regex of the same anchors;
* ``textlog``: readers/textlog's read of the same file (what loading already pays per log).

The machine is shared: figures are medians of the repeats, and the ratios (taken in the same run)
are what compares.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data" / "failure"
SIZE = 160 * 1024
FAILED_EVERY = 64
_PER_LINE = re.compile(r"RROR|rror|CRITICAL|XCEPTION|xception|Traceback|Killed|egmentation")


def make(ranks: int) -> list[Path]:
    import sys

    sys.path.insert(0, str(HERE))
    from logfields import (
        write_rank_logs,  # the ranks bench's 160 KB MindFormers rank logs
    )

    tail = (ROOT / "tests" / "fixtures" / "failcorpus" / "real" / "cases" / "msdoc-cann-ei0002-notify" / "train.log").read_bytes()
    write_rank_logs(DATA, ranks, SIZE)
    out = []
    for r in range(ranks):
        p = DATA / f"rank_{r}" / "train.log"
        if r % FAILED_EVERY == 0 and not p.read_bytes().endswith(tail):
            with p.open("ab") as fh:
                fh.write(tail)
        out.append(p)
    return out


def per_line(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        for raw in fh:
            if _PER_LINE.search(raw.decode("utf-8", errors="replace")):
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from postmortem.model import Artifact
    from postmortem.readers import failure, textlog
    from postmortem.readers.base import rank_from_path

    paths = make(args.ranks)
    arts = [Artifact(str(p), str(p.relative_to(DATA)), p.stat().st_size, 0.0, rank_from_path(str(p.relative_to(DATA))))
            for p in paths]
    for a in arts[:4]:  # warm: imports, the page cache
        failure.read(a), textlog.read(a), per_line(Path(a.path))
    times: dict[str, list[float]] = {"failure": [], "per_line": [], "textlog": []}
    for _ in range(args.repeat):
        for name, fn in (("failure", lambda a: failure.read(a)), ("per_line", lambda a: per_line(Path(a.path))),
                         ("textlog", lambda a: textlog.read(a))):
            t0 = time.perf_counter()
            for a in arts:
                fn(a)
            times[name].append((time.perf_counter() - t0) / len(arts))
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "ranks": args.ranks, "bytes_per_rank": arts[0].size, "repeat": args.repeat,
        "per_rank_us": {k: round(v * 1e6, 1) for k, v in med.items()},
        "at_8192_ranks_s": {k: round(v * 8192, 2) for k, v in med.items()},
        "failure_vs_per_line": round(med["per_line"] / med["failure"], 1),
        "failure_share_of_textlog": round(med["failure"] / med["textlog"], 3),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
