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

from postmortem.load import load_run

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "profcorpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def figures(path: Path) -> dict:
    run = load_run(path)
    st, ops, comm = (run.tables[k] for k in ("profile_steps", "profile_ops", "profile_comm"))
    ranks = set()
    for df in (st, ops, comm):
        ranks |= set(df["rank"].drop_nulls().to_list())
    out: dict = {"ranks": sorted(ranks),
                 "steps": {str(r): n for r, n in sorted(st.group_by("rank").agg(pl.col("step").n_unique()).iter_rows())},
                 "step_ms": round(st["total_s"].median() * 1e3, 3) if st.height else None}
    if ops.height:
        t = ops.group_by("type").agg(pl.col("total_s").sum()).sort("total_s", descending=True).row(0)
        out["top_type"] = [t[0], round(t[1] * 1e3, 3)]
        named = ops.filter(pl.col("name").is_not_null() & (pl.col("name") != "(other)"))
        if named.height:
            n = named.group_by("name").agg(pl.col("total_s").sum()).sort("total_s", descending=True).row(0)
            out["top_name"] = [n[0], round(n[1] * 1e3, 3)]
    if comm.height:
        out["comm_ops"] = sorted(set(comm["op"].to_list()))
        out["comm_ms"] = round(comm["elapse_s"].sum() * 1e3, 3)
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
                    f"top_type={got.get('top_type')} comm_ops={len(got.get('comm_ops', []))} cno={got.get('cno_share')}")
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
