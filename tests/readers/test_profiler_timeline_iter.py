"""Older CANN per-iteration timeline exports (device_N/timeline/<kind>_<dev>_<model>_<iter>.json),
on the real two-device PROF folders of MindInsight's tests (tests/fixtures/profcorpus/
mi-prof-2dev-timeline; values by hand in its README)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from postmortem.model import Artifact
from postmortem.readers import profiler

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "profcorpus" / "mi-prof-2dev-timeline"
DEV0 = ROOT / "profiler" / "PROF_000001_20230818142704322_COJGGGCANRMICFBC" / "device_0"
TL = DEV0 / "timeline"


def read(path: Path, root: Path = ROOT):
    return profiler.READER.read(Artifact(path=str(path), rel=path.relative_to(root).as_posix(),
                                         size=path.stat().st_size, mtime=0.0))


def test_repeated_step_trace_files_are_read_once():
    # msprof wrote the whole capture's 10 iterations into each of the 10 step_trace files
    first = read(TL / "step_trace_0_2_1.json")
    assert [d.slug for d in first.diagnostics] == ["profiler-covered"]  # msprof_*.json carries the steps
    for i in range(2, 11):
        r = read(TL / f"step_trace_0_2_{i}.json")
        assert not r.tables
        assert [(d.slug, d.params.get("target")) for d in r.diagnostics] == [("profiler-repeated", "step_trace_0_2_1.json")]


def test_step_trace_json_gives_the_steps_without_a_msprof_timeline(tmp_path: Path):
    dst = tmp_path / "PROF_1" / "device_0" / "timeline"
    dst.mkdir(parents=True)
    shutil.copy(DEV0 / "info.json.0", dst.parent / "info.json.0")
    for i in (1, 2):
        shutil.copy(TL / f"step_trace_0_2_{i}.json", dst / f"step_trace_0_2_{i}.json")
    r = read(dst / "step_trace_0_2_1.json", tmp_path)
    steps = r.tables["profile_steps"].sort("step")
    assert steps["step"].to_list() == list(range(1, 11)) and set(steps["rank"]) == {0}
    one = steps.row(0, named=True)
    # Iteration 1: ts 56635864652.49, dur 47587.81, FP Start 56635864658.62, Iteration End 56635912240.3 (µs)
    assert one["total_s"] == pytest.approx(47587.81e-6)
    assert one["data_wait_s"] == pytest.approx(6.13e-6, abs=1e-9)  # ts is stored as 56635864652.490005
    assert one["computing_s"] == pytest.approx((56635912240.3 - 56635864658.62) * 1e-6)
    assert [d.slug for d in read(dst / "step_trace_0_2_2.json", tmp_path).diagnostics] == ["profiler-repeated"]


def test_hccl_json_gives_the_allreduce_of_its_iteration():
    r = read(TL / "hccl_0_2_1.json")
    comm = r.tables["profile_comm"].filter(r.tables["profile_comm"]["source"] == "msprof_hccl")
    assert comm.height == 1
    row = comm.row(0, named=True)
    assert (row["rank"], row["step"], row["op"], row["kind"]) == (0, 1, "Default/AllReduce-op534_0", "collective")
    assert row["elapse_s"] == pytest.approx(41534.3e-6)  # its Communication Kernel span
    # by hand over the Plane threads: Memcpy / Reduce_Inline over SDMA off the chip, HCCS 42 tasks
    # 294968576 B in 20042.92 µs, PCIE 14 tasks 98323456 B in 6840.5 µs; Notify_Wait on Plane 0 34209.51 µs
    assert row["transport"] == "HCCS+PCIE"
    assert row["bytes"] == 294968576 + 98323456
    assert row["bandwidth_gbps"] == pytest.approx((294968576 + 98323456) / 1e9 / ((20042.92 + 6840.5) * 1e-6))
    assert row["wait_s"] == pytest.approx(34209.51e-6)
    assert row["wait_s"] + row["transit_s"] <= row["elapse_s"]
    # per link: rank 0 to 1, 2, 3 over HCCS and to 4 over PCIE, each 98.3 MB, the sum the operator's bytes
    links = r.tables["profile_comm"].filter(r.tables["profile_comm"]["source"] == "msprof_hccl_link").sort("dst_rank")
    assert links.select("src_rank", "dst_rank", "transport").rows() == [(0, 1, "HCCS"), (0, 2, "HCCS"), (0, 3, "HCCS"), (0, 4, "PCIE")]
    assert links["bytes"].sum() == row["bytes"]


def test_task_time_gives_compute_operators_and_says_what_it_left():
    r = read(TL / "task_time_0_2_1.json")
    ops = r.tables["profile_ops"]
    assert set(ops["core"]) == {"AI_CORE", "AI_CPU"} and set(ops["step"]) == {1}
    assert ops["calls"].sum() == 139  # 137 AI_CORE + 2 AI_CPU tasks
    conv = ops.filter(ops["name"] == "Default/network-WithLossCell/_backbone-AlexNet/conv1-Conv2d/Conv2D-op8").row(0, named=True)
    assert conv["type"] == "Conv2D" and conv["total_s"] == pytest.approx(264.15e-6)
    note = next(d for d in r.diagnostics if d.slug == "profiler-task-types")
    assert note.params["n"] == 351 and "NOTIFY_WAIT" in note.params["kinds"]


def test_every_file_of_the_folder_says_something():
    from postmortem.load import load_run
    run = load_run(ROOT)
    assert not [d for d in run.diagnostics if d.slug == "profiler-nothing-read"]
    steps = run.tables["profile_steps"]
    assert steps.group_by("rank").len().sort("rank").rows() == [(0, 10), (1, 10)]
    assert set(run.tables["profile_comm"]["step"]) == set(range(1, 11))


def test_a_damaged_info_json_is_warned_and_the_device_id_stands(tmp_path: Path):
    dev = tmp_path / "PROF_1" / "device_0"
    (dev / "timeline").mkdir(parents=True)
    (dev / "info.json.0").write_bytes((DEV0 / "info.json.0").read_bytes()[:200])  # a real file, cut
    shutil.copy(TL / "hccl_0_2_1.json", dev / "timeline" / "hccl_0_2_1.json")
    (d,) = read(dev / "info.json.0", tmp_path).diagnostics
    assert d.slug == "profiler-unreadable" and d.severity.name == "WARNING"
    assert set(read(dev / "timeline" / "hccl_0_2_1.json", tmp_path).tables["profile_comm"]["rank"]) == {0}
