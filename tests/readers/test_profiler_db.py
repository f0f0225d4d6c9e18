"""Profiler database exports (readers/profiler/db.py), on the real databases of the corpus
(tests/fixtures/profcorpus/msinsight-pt-db-level1: torch_npu's own export) and on damaged copies of real
files.

No MindSpore ascend_mindspore_profiler_*.db could be had (it is msprof's msprof_*.db renamed, and
that schema is covered by torch_npu's export and the corpus's msprof_0.db); none is fabricated:
the damaged inputs are real files (a real JSON file under a .db name; a real file truncated to
nothing, a FIFO). Every test checks that nothing is written beside the database."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from postmortem.model import Artifact
from postmortem.readers import profiler

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
REAL = CONF / "mi-run2-ascend-profiler" / "profiler" / "ascend_timeline_summary_1.json"


def read(path: Path, root: Path):
    return profiler.READER.read(Artifact(path=str(path), rel=path.relative_to(root).as_posix(),
                                         size=path.stat().st_size, mtime=0.0))


def test_not_a_database_is_one_warning_and_nothing_written(tmp_path: Path):
    out = tmp_path / "r_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    db = out / "ascend_mindspore_profiler_3.db"
    shutil.copy(REAL, db)
    r = read(db, tmp_path)
    assert not r.tables
    assert [(d.slug, d.severity.name) for d in r.diagnostics] == [("profiler-unreadable", "WARNING")]
    assert sorted(p.name for p in out.iterdir()) == ["ascend_mindspore_profiler_3.db"]  # no -journal, no -wal


def test_an_empty_database_names_the_missing_tables(tmp_path: Path):
    prof = tmp_path / "PROF_000001_20230101000000000_ABC"
    prof.mkdir()
    db = prof / "msprof_20230101000000.db"
    db.write_bytes(REAL.read_bytes()[:0])  # a real file truncated to nothing
    r = read(db, tmp_path)
    assert not r.tables
    (d,) = r.diagnostics
    assert d.slug == "profiler-db-tables" and "COMPUTE_TASK_INFO" in d.params["detail"] and "COMMUNICATION_OP" in d.params["detail"]
    assert sorted(p.name for p in prof.iterdir()) == [db.name]


def test_a_database_beside_its_text_export_is_not_read_twice(tmp_path: Path):
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copy(CONF / "mstt-torchnpu-kd-traceview-2023" / "worker0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv",
                out / "kernel_details.csv")
    db = out / "ascend_pytorch_profiler_0.db"
    shutil.copy(REAL, db)
    r = read(db, tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-db-export"]


def test_a_fifo_named_like_a_database_does_not_block(tmp_path: Path):
    import os
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    fifo = out / "ascend_pytorch_profiler_0.db"
    os.mkfifo(fifo)
    art = Artifact(path=str(fifo), rel=fifo.relative_to(tmp_path).as_posix(), size=0, mtime=0.0)
    r = profiler.READER.read(art)  # returns: the open is refused before sqlite sees the FIFO
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-unreadable"]


REAL_DB = Path(__file__).resolve().parents[1] / "fixtures" / "profcorpus" / "msinsight-pt-db-level1"


def test_real_torch_npu_database_equals_its_own_analysis(tmp_path: Path):
    # torch_npu's analysis.db StepTraceTime of the same capture (µs): rank 0 has OVERLAP_ANALYSIS,
    # rank 1 not (its figures come from the task and operator unions)
    want = {0: (8903.431, 98071.947, 4036.153, 25258.144, 18055.693),
            1: (8915.634, 94556.05, 4034.14, 25840.499, 17512.827)}
    for rank, (comp, cno, over, free, prep) in want.items():
        db = REAL_DB / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db"
        r = read(db, REAL_DB)
        row = r.tables["profile_steps"].row(0, named=True)
        assert (row["rank"], row["step"]) == (rank, 50)
        got = tuple(round(row[k] * 1e6, 3) for k in ("computing_s", "comm_not_overlapped_s", "overlapped_s", "free_s", "preparing_s"))
        assert got == (comp, cno, over, free, prep)
        assert row["total_s"] * 1e6 == pytest.approx(comp + cno + free + prep)
        ops = r.tables["profile_ops"]
        assert ops["calls"].sum() == 187 and set(ops["step"]) == {50}
        comm = r.tables["profile_comm"]
        assert sorted(comm["op"]) == [f"hcom_allReduce__210_{i}_1" for i in range(4)]
    assert sorted(p.name for p in (REAL_DB / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT").iterdir()) == [
        "analysis.db", "ascend_pytorch_profiler_0.db"]  # nothing written beside them


def test_analysis_db_gives_figured_operators_and_links():
    db = REAL_DB / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db"
    r = read(db, REAL_DB)
    comm = r.tables["profile_comm"]
    ops = comm.filter(comm["source"] == "analysis_db").sort("op")
    first = ops.row(0, named=True)
    # CommAnalyzerTime: elapse 88.75099321875 ms, wait 3.56889128125 ms; Bandwidth: HCCS 28.647232 MB, 15.7239 GB/s
    assert first["op"] == "hcom_allReduce__210_0_1" and first["step"] == 50 and first["rank"] == 0
    assert first["elapse_s"] == pytest.approx(88.75099321875e-3) and first["wait_s"] == pytest.approx(3.56889128125e-3)
    assert first["transport"] == "HCCS" and first["bytes"] == pytest.approx(28.647232e6)
    assert first["bandwidth_gbps"] == pytest.approx(15.7239, rel=1e-4)
    links = comm.filter(comm["source"] == "analysis_db_matrix")
    assert links.height > 0 and links["src_rank"].null_count() == 0 and set(links["op"]) == {"allreduce-total"}


def test_tasks_ending_before_they_start_are_counted_out(tmp_path: Path):
    import sqlite3

    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    db = out / "ascend_pytorch_profiler_0.db"
    shutil.copy(REAL_DB / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / db.name, db)
    con = sqlite3.connect(db)  # damaging the copy (tmp_path), never a fixture
    con.execute("UPDATE TASK SET endNs = startNs - 5 WHERE globalTaskId IN "
                "(SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 7)")
    con.commit()
    con.close()
    r = read(db, tmp_path)
    (d,) = [x for x in r.diagnostics if x.slug == "profiler-row"]
    assert d.severity.name == "WARNING" and (d.params["n"], d.params["of"]) == (7, 187)
    assert r.tables["profile_ops"]["calls"].sum() == 180


def test_analysis_db_beside_communication_json_is_not_read_twice(tmp_path: Path):
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copy(REAL_DB / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db", out / "analysis.db")
    text = Path(__file__).resolve().parents[1] / "fixtures" / "profcorpus" / "msinsight-pt-text-level2"
    shutil.copy(text / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json", out / "communication.json")
    r = read(out / "analysis.db", tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-db-export"]
