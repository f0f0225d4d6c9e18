"""The mined profiler corpus (tests/fixtures/profcorpus/, provenance and hand-worked values in its
README.md): every folder is loaded as a run and its figures compared with expected.json.

Run with ``-s`` to see the table (folder, ranks, steps per rank, median step, top operator type
and name, communication operators, exposed communication share).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis.operators import comm_timed, operators
from postmortem.analysis.profile import chosen_steps
from postmortem.load import load_run

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "profcorpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def figures(path: Path) -> dict:
    """What the report is built from: each rank's preferred layout, as analysis chooses it."""
    run = load_run(path)
    silent = [d.path for d in run.diagnostics if d.slug == "profiler-nothing-read"]
    assert not silent, f"{path.name}: claimed files that said nothing: {silent[:3]}"
    st = chosen_steps(run.tables["profile_steps"])
    ops = operators(run.tables["profile_ops"])
    timed = comm_timed(run.tables["profile_comm"])
    ranks = set()
    for df in (st, run.tables["profile_ops"], run.tables["profile_comm"]):
        ranks |= set(df["rank"].drop_nulls().to_list())
    out: dict = {"ranks": sorted(ranks),
                 "steps": {str(r): n for r, n in sorted(st.group_by("rank").agg(pl.col("step").n_unique()).iter_rows())},
                 "step_ms": round(st["total_s"].median() * 1e3, 3) if st.height else None}
    if ops:
        first = ops[0]  # the widest scope the run has (device kernels first)
        out["top_type"] = [first.by_type[0].type, round(first.by_type[0].total_s * 1e3, 3)]  # ms per rank
        if first.by_name:
            out["top_name"] = [first.by_name[0].name, round(first.by_name[0].total_s * 1e3, 3)]
    if timed.height:
        out["comm_ops"] = sorted(set(timed["op"].to_list()))
        out["comm_ms"] = round(timed["time_s"].sum() * 1e3 / timed["rank"].n_unique(), 3)  # per rank
    if st.height and st["comm_not_overlapped_s"].drop_nulls().len():
        out["cno_share"] = round(st["comm_not_overlapped_s"].sum() / st["total_s"].sum(), 4)
    return out


def test_every_corpus_folder_has_expectations():
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders == set(EXPECTED)


def test_corpus_reads_right(capsys):
    rows, wrong = [], []
    for name, want in sorted(EXPECTED.items()):
        got = figures(CORPUS / name)
        rows.append(f"{name:32} ranks={got['ranks']} steps={got['steps']} step_ms={got['step_ms']} "
                    f"top_type={got.get('top_type')} top_name={got.get('top_name')} comm_ms={got.get('comm_ms')} comm_ops={len(got.get('comm_ops', []))} cno={got.get('cno_share')}")
        for key, value in want.items():
            g = got.get(key)
            if key == "comm_ops":
                ok = g is not None and set(value) <= set(g)
            elif isinstance(value, float):
                ok = g is not None and g == pytest.approx(value, abs=1e-3)
            elif isinstance(value, list) and len(value) == 2 and isinstance(value[1], float):
                ok = g is not None and g[0] == value[0] and g[1] == pytest.approx(value[1], abs=1e-3)
            else:
                ok = g == value
            if not ok:
                wrong.append(f"{name}.{key}: expected {value!r}, got {g!r}")
    with capsys.disabled():
        print("\n" + "\n".join(rows))
    assert not wrong, "\n".join(wrong)
