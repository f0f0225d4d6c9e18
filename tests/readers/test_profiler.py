"""profiler reader: real MindSpore 2.10 CPU profiler output + Ascend files written from the
documented columns (tests/fixtures/profiler/make_ascend_fixtures.py)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from postmortem.model import MEMORY, PROFILE_COMM, PROFILE_STEPS, Artifact
from postmortem.readers import profiler

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "profiler"
CPU = next((FIX / "cpu").glob("*_ascend_ms"))
ASC = FIX / "ascend"


def art(path: Path, root: Path) -> Artifact:
    return Artifact(path=str(path), rel=path.relative_to(root).as_posix(), size=path.stat().st_size, mtime=0.0)


def test_claims_every_file_of_the_cpu_output_and_nothing_else(tmp_path: Path):
    files = [p for p in CPU.rglob("*") if p.is_file()]
    assert len(files) >= 5
    assert all(profiler.READER.claims(art(p, FIX)) for p in files)
    other = tmp_path / "output" / "log" / "rank_0" / "info.log"
    other.parent.mkdir(parents=True)
    other.write_text("x\n")
    assert not profiler.READER.claims(art(other, tmp_path))


def test_cpu_memory_record_real_run():
    path = next(CPU.glob("FRAMEWORK/cpu_ms_memory_record_*.txt"))
    r = profiler.READER.read(art(path, FIX))
    mem = r.tables["memory"]
    assert mem.schema == MEMORY
    with open(path) as fh:
        rows = list(csv.reader(fh))[1:]
    assert mem.height == len(rows) > 0
    # ns -> s and bytes kept: compare with the file itself
    assert mem["time_s"][0] == pytest.approx(int(rows[0][0]) / 1e9)
    assert mem["allocated_bytes"].to_list() == [float(r[1]) for r in rows]
    assert mem["reserved_bytes"][0] == float(rows[0][2])
    assert mem["rank"][0] == 0  # from the _0 in the name
    assert mem["time_s"].min() > 1.5e9  # absolute unix time


def test_trace_view_claimed_and_counted():
    path = CPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    r = profiler.READER.read(art(path, FIX))
    assert r.rows() == 0
    import json

    expected = len(json.loads(path.read_text()))
    (d,) = [d for d in r.diagnostics if d.slug == "profiler-trace-events"]
    assert d.message.startswith(f"{expected} ")


def test_other_cpu_files_have_no_rows_and_no_errors():
    for name in ("FRAMEWORK/cpu_op_detail_info_0.csv", "FRAMEWORK/cpu_framework_0.txt"):
        r = profiler.READER.read(art(CPU / name, FIX))
        assert r.rows() == 0 and not r.diagnostics


def test_step_trace_time_us_to_seconds():
    path = next(ASC.rglob("step_trace_time.csv"))
    r = profiler.READER.read(art(path, ASC))
    df = r.tables["profile_steps"]
    assert df.schema == PROFILE_STEPS
    assert df["step"].to_list() == [1, 2]  # the non-numeric row 3 is reported, not read
    assert df["rank"].to_list() == [1, 1]  # rank_1/ in the path
    row = df.row(1, named=True)
    assert row["computing_s"] == pytest.approx(1.0)
    assert row["comm_not_overlapped_s"] == pytest.approx(0.1)
    assert row["overlapped_s"] == pytest.approx(0.06) and row["communication_s"] == pytest.approx(0.16)
    assert row["free_s"] == pytest.approx(0.025) and row["bubble_s"] == 0.0 and row["preparing_s"] == 0.0
    assert row["total_s"] == pytest.approx(1.125)
    assert [d.slug for d in r.diagnostics] == ["profiler-row"] and r.diagnostics[0].offset == 4


def test_communication_json():
    path = next(ASC.rglob("communication.json"))
    df = profiler.READER.read(art(path, ASC)).tables["profile_comm"]
    assert df.schema == PROFILE_COMM
    assert sorted(df["op"].to_list()) == ["hcom_allReduce__123_0_1@1234567890", "hcom_send__101_0_1@9876"]
    ar = df.filter(df["kind"] == "collective").row(0, named=True)
    assert ar["step"] == 1 and ar["rank"] == 1
    assert ar["elapse_s"] == pytest.approx(0.0125) and ar["wait_s"] == pytest.approx(0.002)
    assert ar["transit_s"] == pytest.approx(0.010)
    assert ar["bytes"] == pytest.approx(64 * 1024 * 1024)  # HCCS and SDMA overlap: not summed
    assert ar["bandwidth_gbps"] == pytest.approx(6.4)
    p2p = df.filter(df["kind"] == "p2p").row(0, named=True)
    assert p2p["bytes"] == pytest.approx(8 * 1024 * 1024) and p2p["elapse_s"] == pytest.approx(0.003)


def test_memory_record_mb_and_kb_layouts():
    new = next(ASC.glob("rank_1/*/ASCEND_PROFILER_OUTPUT/memory_record.csv"))
    df = profiler.READER.read(art(new, ASC)).tables["memory"]
    assert df["allocated_bytes"].to_list() == [1024 * 1000.0, 1.5 * 1024 * 1000]
    assert df["component"].to_list() == ["MindSpore", "GE"]
    assert df["time_s"][0] == pytest.approx(1735689600.0)
    old = ASC / "old_profiler" / "profiler" / "memory_record.csv"
    df = profiler.READER.read(art(old, ASC)).tables["memory"]
    assert df.row(0, named=True)["reserved_bytes"] == 2048 * 1024 and df["time_s"][0] == pytest.approx(1.0)


def test_step_trace_raw_ticks():
    """A real MindInsight-era step trace (more in test_profiler_mindinsight.py)."""
    conf = FIX.parent / "conformance" / "mi-run2-ascend-profiler"
    path = conf / "profiler" / "step_trace_raw_1_detail_time.csv"
    r = profiler.READER.read(art(path, conf))
    df = r.tables["profile_steps"]
    assert df["step"].to_list() == [1]  # the second row, step_num 0, is not a step
    assert df["rank"].to_list() == [1]
    assert df["total_s"][0] == pytest.approx(2370905 * 1e-8)  # 10 ns ticks
    assert df["computing_s"][0] == pytest.approx((2366808 + 4097) * 1e-8)  # fp_and_bp + tail (no comm ops)
    assert df["data_wait_s"][0] == 0.0 and df["preparing_s"][0] is None  # iteration_interval 0


def test_truncated_and_garbage_files_do_not_raise(tmp_path: Path):
    src = next(ASC.rglob("communication.json"))
    bad = tmp_path / "rank_2" / "PROF_x" / "communication.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(src.read_bytes()[:300])  # a killed write
    r = profiler.READER.read(art(bad, tmp_path))
    assert "profile_comm" not in r.tables and r.diagnostics[0].slug == "profiler-json"
    st = tmp_path / "rank_2" / "PROF_x" / "step_trace_time.csv"
    st.write_bytes(b"\xff\xfe garbage,\n1,2\n")
    r = profiler.READER.read(art(st, tmp_path))
    assert "profile_steps" not in r.tables and r.diagnostics[0].slug == "profiler-columns"
    mem = tmp_path / "rank_2" / "PROF_x" / "cpu_ms_memory_record_2.txt"
    real = next(CPU.glob("FRAMEWORK/cpu_ms_memory_record_*.txt")).read_text().splitlines()
    mem.write_text("\n".join(real[:3] + ["12,abc"] + real[3:5]) + "\n")
    r = profiler.READER.read(art(mem, tmp_path))
    assert r.tables["memory"].height == 4 and r.diagnostics[0].slug == "profiler-row"
    assert r.tables["memory"]["rank"][0] == 2


def test_rank_from_profiler_info(tmp_path: Path):
    folder = tmp_path / "prof" / "h_1_2_ascend_ms"
    shutil.copytree(CPU / "FRAMEWORK", folder / "FRAMEWORK")
    (folder / "profiler_info_5.json").write_text("{}")
    f = folder / "FRAMEWORK" / "cpu_op_detail_info_0.csv"
    assert profiler.file_rank(art(f, tmp_path)) == 5
