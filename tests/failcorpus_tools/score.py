"""Score the failure judge on the failure corpus: each case folder read as a run, judged, and
compared with its hand labels (tests/fixtures/failcorpus/README.md).

    PYTHONPATH=. python tests/failcorpus_tools/score.py              # the scores only (a cold score)
    PYTHONPATH=. python tests/failcorpus_tools/score.py --details    # and each miss

A case is right when its kind, error code, first failing rank and last step all match; the cause is
a consequence when the judge's quoted line is one its own rules call a consequence. A negative
case is right when no failure is judged.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "failcorpus"
FIELDS = ("kind", "error_code", "first_failing_rank", "last_step")


@dataclass
class Scored:
    id: str
    folder: Path
    expected: dict
    got: dict | None  # None: no failure judged
    wrong: tuple[str, ...]


def corpora(root: Path = ROOT) -> list[tuple[str, Path, Path]]:
    """(name, corpus.tsv, cases folder) of every corpus under the root (real/, made/, f/, ...)."""
    out = []
    for tsv in sorted(root.glob("*/corpus.tsv")):
        out.append((tsv.parent.name, tsv, tsv.parent / "cases"))
    return out


def rows(tsv: Path) -> list[dict]:
    with tsv.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def judged(folder: Path) -> dict | None:
    from postmortem.analysis.failure import judge
    from postmortem.load import load_run

    f = judge(load_run(folder).tables)
    if f is None:
        return None
    code = f.error_code or (str(f.runtime_code) if f.runtime_code is not None else None)
    return {"kind": str(f.kind), "error_code": code, "first_failing_rank": f.first_failing_rank,
            "last_step": f.last_step, "message": f.message, "failed_at": str(f.failed_at) if f.failed_at else None,
            "exception": f.exception}


def _expected(row: dict) -> dict:
    def num(x: str):
        return int(x) if x.strip() else None

    return {"kind": row["kind"], "error_code": row["error_code"] or None,
            "first_failing_rank": num(row["first_failing_rank"]), "last_step": num(row["last_step"]),
            "message": row["message"], "failed_at": row.get("failed_at") or None, "exception": row.get("exception") or None}


def score_failures(tsv: Path, cases: Path) -> list[Scored]:
    out = []
    for row in rows(tsv):
        exp = _expected(row)
        got = judged(cases / row["id"])
        wrong = tuple(FIELDS) if got is None else tuple(k for k in FIELDS if got[k] != exp[k])
        out.append(Scored(row["id"], cases / row["id"], exp, got, wrong))
    return out


def score_negatives(tsv: Path, cases: Path) -> list[Scored]:
    out = []
    for row in rows(tsv):
        got = judged(cases / row["id"])
        out.append(Scored(row["id"], cases / row["id"], {}, got, ("failure",) if got is not None else ()))
    return out


def main(argv: list[str]) -> int:
    details = "--details" in argv
    total_right = total = 0
    for name, tsv, cases in corpora():
        scored = score_negatives(tsv, cases) if name == "negative" else score_failures(tsv, cases)
        right = sum(1 for s in scored if not s.wrong)
        total_right, total = total_right + right, total + len(scored)
        per = {k: sum(1 for s in scored if k not in s.wrong) for k in (("failure",) if name == "negative" else FIELDS)}
        quoted = sum(1 for s in scored if s.got and s.expected.get("message") and s.got["message"] == s.expected["message"].strip())
        print(f"{name}: {right}/{len(scored)} right  " + "  ".join(f"{k} {v}/{len(scored)}" for k, v in per.items())
              + (f"  message {quoted}/{len(scored)}" if name != "negative" else ""))
        if details:
            for s in scored:
                if s.wrong:
                    print(f"  {s.id}: wrong {', '.join(s.wrong)}")
                    print(f"    expected {s.expected}")
                    print(f"    got      {s.got}")
    print(f"all: {total_right}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
