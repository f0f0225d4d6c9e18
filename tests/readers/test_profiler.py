"""profiler reader: the dispatch, real MindSpore 2.10 CPU profiler output
(tests/fixtures/profiler/make_cpu_profile.py) and a MindInsight-era step trace. The Ascend
(MindSpore 2.x / torch_npu) files are tested in test_profiler_ascend.py."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from postmortem.model import MEMORY, Artifact
from postmortem.readers import profiler

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "profiler"
CPU = next((FIX / "cpu").glob("*_ascend_ms"))
MI_RUN2 = Path(__file__).resolve().parents[1] / "fixtures" / "conformance" / "mi-run2-ascend-profiler"


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

    events = json.loads(path.read_text())
    (d,) = [d for d in r.diagnostics if d.slug == "profiler-trace-events"]
    assert d.message == f"{len(events)} trace events (X 73, M 9)."
    assert sum(e["ph"] == "X" for e in events) == 73  # a CPU trace: no Overlap Analysis, so no steps


def test_other_cpu_files_say_why_they_are_not_read():
    for name in ("FRAMEWORK/cpu_op_detail_info_0.csv", "FRAMEWORK/cpu_framework_0.txt", "logs"):
        path = CPU / name if name != "logs" else next((CPU / "logs").glob("*.log"))
        r = profiler.READER.read(art(path, FIX))
        assert r.rows() == 0 and [(d.severity, d.slug) for d in r.diagnostics] == [("warning", "profiler-not-read")]


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
    st = tmp_path / "rank_2" / "PROF_x" / "step_trace_time.csv"
    st.parent.mkdir(parents=True)
    st.write_bytes(b"\xff\xfe garbage,\n1,2\n")
    r = profiler.READER.read(art(st, tmp_path))
    assert "profile_steps" not in r.tables
    assert [d.slug for d in r.diagnostics] == ["profiler-utf8", "profiler-columns"]  # the 2 bytes that are not UTF-8
    assert r.diagnostics[0].params["n"] == 2
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
