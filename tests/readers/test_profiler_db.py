"""Profiler database exports (readers/profiler/db.py).

No real ascend_mindspore_profiler / ascend_pytorch_profiler / msprof_*.db could be had (none in
msprof-analyze's, mstt's, MindInsight's or MindSpore's repositories, none attached to a thread
found), and none is fabricated: these tests cover damaged input made from real files (a real
JSON file under a .db name; a real file truncated to nothing), and that nothing is ever written
beside the database."""

from __future__ import annotations

import shutil
from pathlib import Path

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
    assert d.slug == "profiler-db-tables" and "COMPUTE_TASK_INFO" in d.params["detail"] and "STEP_TIME" in d.params["detail"]
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
