"""msprof-analyze cluster outputs: the real files from msprof-analyze's own tests, values by hand.

tests/fixtures/conformance/mstt-cluster-analysis-output/PROVENANCE.md says where they come from.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from postmortem.model import PROFILE_COMM, PROFILE_STEPS, Artifact
from postmortem.readers import profiler

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "conformance" / "mstt-cluster-analysis-output"
OUT = ROOT / "cluster_analysis_output"


def art(path: Path, root: Path = ROOT) -> Artifact:
    return Artifact(path=str(path), rel=path.relative_to(root).as_posix(), size=path.stat().st_size, mtime=0.0)


def read(path: Path, root: Path = ROOT):
    return profiler.READER.read(art(path, root))


def test_step_trace_rank_rows_in_seconds_with_the_partition_adding_up():
    r = read(OUT / "cluster_step_trace_time.csv")
    df = r.tables["profile_steps"]
    assert df.schema == PROFILE_STEPS
    assert df["rank"].to_list() == list(range(8))  # the stage row "(0, ..., 7)" is not a rank
    assert df["step"].null_count() == 8  # msprof input: no steps, one row per rank
    assert set(df["source"]) == {"cluster_step_trace_time"}
    r0 = df.row(0, named=True)
    # rank 0, µs in the file: Computing 80309.68717187493, Communication(Not Overlapped) 683731.2897031249,
    # Overlapped 5524.544625000097, Communication 689255.834328125, Free 990605.1042031233, Bubble 0
    assert r0["computing_s"] == pytest.approx(80309.68717187493e-6)
    assert r0["comm_not_overlapped_s"] == pytest.approx(683731.2897031249e-6)  # the Exclude Receive column
    assert r0["bubble_s"] == 0.0
    assert r0["overlapped_s"] == pytest.approx(5524.544625000097e-6)
    assert r0["communication_s"] == pytest.approx(689255.834328125e-6)
    assert r0["free_s"] == pytest.approx(990605.1042031233e-6)
    # 80309.687 + 683731.290 + 990605.104 = 1754646.081 µs; the file's Stage (e2e - bubble) is 1754645.75
    assert r0["total_s"] == pytest.approx(1.754646081)
    assert abs(r0["total_s"] - 1754645.75e-6) < 1e-6
    for row in df.iter_rows(named=True):  # the invariant, on every row
        parts = row["computing_s"] + row["comm_not_overlapped_s"] + row["bubble_s"] + row["free_s"]
        assert row["total_s"] == pytest.approx(parts, rel=1e-12)
        assert row["overlapped_s"] == pytest.approx(row["communication_s"] - row["comm_not_overlapped_s"], abs=1e-9)
    assert [d.slug for d in r.diagnostics] == ["profiler-cluster-stage-rows"]


def test_step_trace_names_the_rank_the_others_wait_for():
    df = read(OUT / "cluster_step_trace_time.csv").tables["profile_steps"]
    most = df.sort("comm_not_overlapped_s").row(-1, named=True)
    least = df.sort("comm_not_overlapped_s").row(0, named=True)
    # msprof-analyze's "communication max difference 622 ms": 756374.86 - 133385.97745312497 µs
    assert (most["rank"], least["rank"]) == (5, 1)
    assert (most["comm_not_overlapped_s"] - least["comm_not_overlapped_s"]) * 1e3 == pytest.approx(622.98888, abs=1e-4)
    # The rank with the least exposed communication has the most Free time: the others wait for it.
    assert df.sort("free_s").row(-1, named=True)["rank"] == 1
    assert df.filter(df["rank"] == 1)["free_s"][0] == pytest.approx(1488610.0587500026e-6)


def test_communication_rows_per_rank_from_the_file():
    r = read(OUT / "cluster_communication.json")
    df = r.tables["profile_comm"]
    assert df.schema == PROFILE_COMM
    assert df.height == 4 and sorted(df["rank"].to_list()) == [0, 0, 1, 1]
    assert set(df["group"]) == {"6297232067196334501"} and set(df["kind"]) == {"collective"}
    assert df["step"].null_count() == 4  # the step key is "step", without a number
    row = df.filter((df["rank"] == 0) & df["op"].str.starts_with("hcom_broadcast__501_0")).row(0, named=True)
    assert row["elapse_s"] == pytest.approx(121.73694384375e-3)
    assert row["wait_s"] == pytest.approx(115.96064153125e-3)
    assert row["transit_s"] == pytest.approx(0.0080599375e-3)
    assert row["synchronization_s"] == pytest.approx(102.699834e-3)
    # SDMA 0.085312 MB = HCCS 0.063936 + PCIE 0.021376; msprof's MB is 1e6 bytes; RDMA 0
    assert row["bytes"] == pytest.approx(85312.0)
    assert row["transport"] == "HCCS+PCIE"
    # (0.085312 MB / 1000) / (0.035169671875 ms / 1000) = 2.4257 GB/s, the file's SDMA bandwidth
    assert row["bandwidth_gbps"] == pytest.approx(2.4257, abs=1e-4)
    r1 = df.filter((df["rank"] == 1) & df["op"].str.starts_with("hcom_broadcast__501_1")).row(0, named=True)
    assert r1["bytes"] == pytest.approx(184.0) and r1["transport"] == "HCCS"  # 0.000184 MB
    assert not r.diagnostics


def test_cluster_files_beside_their_per_rank_inputs_are_not_counted_twice(tmp_path: Path):
    out = tmp_path / "cluster_analysis_output"
    shutil.copytree(OUT, out)
    (tmp_path / "node0_1234_20240101000000000_ascend_pt").mkdir()
    for name in ("cluster_step_trace_time.csv", "cluster_communication.json"):
        r = read(out / name, tmp_path)
        assert not r.tables
        assert [d.slug for d in r.diagnostics] == ["profiler-cluster-derived"]
        assert "node0_1234_20240101000000000_ascend_pt" in r.diagnostics[0].message


def test_damaged_cluster_files_say_why(tmp_path: Path):
    out = tmp_path / "cluster_analysis_output"
    out.mkdir()
    cut = out / "cluster_communication.json"
    cut.write_bytes((OUT / "cluster_communication.json").read_bytes()[:2000])  # a killed write
    r = read(cut, tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-json"]
    st = out / "cluster_step_trace_time.csv"
    lines = (OUT / "cluster_step_trace_time.csv").read_text().splitlines()
    st.write_text("\n".join([lines[0], lines[1], lines[2][:40]]) + "\n")  # cut in the middle of rank 1
    r = read(st, tmp_path)
    assert r.tables["profile_steps"]["rank"].to_list() == [0]
    assert [d.slug for d in r.diagnostics] == ["profiler-row"] and r.diagnostics[0].offset == 3
    st.write_bytes(b"\xff\xfe garbage\n1,2\n")
    r = read(st, tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-utf8", "profiler-columns"]


def test_other_cluster_output_files_are_claimed_with_a_note(tmp_path: Path):
    out = tmp_path / "cluster_analysis_output"
    out.mkdir()
    other = out / "communication_group.json"
    shutil.copy(OUT / "cluster_communication.json", other)  # any content: the name decides
    a = art(other, tmp_path)
    assert profiler.READER.claims(a)
    r = profiler.READER.read(a)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-not-read"]
