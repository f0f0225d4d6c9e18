"""CANN msprof PROF_* folders: real exported files, values by hand.

Real files (provenance in each fixture folder's PROVENANCE.md):
- msprof-tilelang-app-prof: op_summary / op_statistic that CANN msprof exported for a one-kernel
  application run (three calls of main_kernel).
- mstt-torchnpu-kd-traceview-2023: torch_npu's trace_view.json, the same Chrome-trace layout as
  msprof_*.json, with an Overlap Analysis track (Computing and Free events).
- msprof-ut-info-json: the info.json of msprof's own unit tests (no rank_id; tests add one).
Folder layouts around them are made in tmp_path; raw-data files there are empty files with the
names msprof gives them: only their names are ever looked at.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from postmortem.model import PROFILE_OPS, PROFILE_STEPS, Artifact
from postmortem.readers import profiler
from postmortem.readers.profiler import msprof, msprof_timeline

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
APP = CONF / "msprof-tilelang-app-prof" / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
OUT = APP / "mindstudio_profiler_output"
SUMMARY = OUT / "op_summary_20260605161737.csv"
STATISTIC = OUT / "op_statistic_20260605161737.csv"
TRACE = CONF / "mstt-torchnpu-kd-traceview-2023" / "worker0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
INFO = CONF / "msprof-ut-info-json" / "info.json"
PROF = "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"


def art(path: Path, root: Path) -> Artifact:
    return Artifact(path=str(path), rel=path.relative_to(root).as_posix(), size=path.stat().st_size, mtime=0.0)


def read(path: Path, root: Path):
    return profiler.READER.read(art(path, root))


def prof(tmp_path: Path, *files: tuple[Path, str], under: str = "") -> Path:
    """A PROF folder in tmp_path holding copies of real files at the given paths."""
    root = tmp_path / under / PROF if under else tmp_path / PROF
    for src, rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, root / rel)
    return root


def with_rank(tmp: Path, device: int, rank_id: int) -> Path:
    """msprof's own info.json with a rank_id, as a distributed run's info.json.N has one."""
    info = json.loads(INFO.read_text())
    info["rank_id"] = rank_id
    out = tmp / f"info.json.{device}"
    out.write_text(json.dumps(info))
    return out


def test_op_summary_aggregated_per_operator():
    r = read(SUMMARY, APP.parent)
    df = r.tables["profile_ops"]
    assert df.schema == PROFILE_OPS
    assert df.height == 1 and not r.diagnostics
    row = df.row(0, named=True)
    assert (row["rank"], row["type"], row["name"], row["core"]) == (0, "main_kernel", "main_kernel", "MIX_AIC")
    assert row["calls"] == 3 and row["step"] is None
    # Task Duration(us): 87139.380 + 86808.420 + 86846.720 = 260794.520 µs, the longest 87139.380
    assert row["total_s"] == pytest.approx(0.26079452)
    assert row["max_s"] == pytest.approx(0.08713938)
    # ... the same total msprof's own op_statistic gives (Total Time(us) 260794.52, Count 3)
    assert row["total_s"] == pytest.approx(260794.52e-6)


def test_op_statistic_only_where_no_op_summary_was_exported(tmp_path: Path):
    r = read(STATISTIC, APP.parent)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-covered"]
    root = prof(tmp_path, (STATISTIC, "mindstudio_profiler_output/" + STATISTIC.name))
    r = read(root / "mindstudio_profiler_output" / STATISTIC.name, tmp_path)
    row = r.tables["profile_ops"].row(0, named=True)
    assert (row["type"], row["name"], row["core"], row["calls"]) == ("main_kernel", "(other)", "MIX_AIC", 3)
    assert row["total_s"] == pytest.approx(260794.52e-6) and row["max_s"] == pytest.approx(87139.38e-6)
    assert "profiler-op-types-only" in [d.slug for d in r.diagnostics]


def test_names_past_the_kept_ones_are_summed_into_other(monkeypatch):
    monkeypatch.setattr(msprof, "OPS_KEPT", 0)
    row = read(SUMMARY, APP.parent).tables["profile_ops"].row(0, named=True)
    assert (row["name"], row["type"], row["calls"]) == ("(other)", "main_kernel", 3)
    assert row["total_s"] == pytest.approx(0.26079452) and row["max_s"] == pytest.approx(0.08713938)


def test_rank_id_from_info_json_wins_over_the_device_id(tmp_path: Path):
    root = prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/" + SUMMARY.name), under="rank_7")
    (root / "device_0").mkdir()
    shutil.move(with_rank(tmp_path, 0, 12), root / "device_0" / "info.json.0")
    r = read(root / "mindstudio_profiler_output" / SUMMARY.name, tmp_path)
    assert r.tables["profile_ops"]["rank"].to_list() == [12]  # Device_id 0 is rank 12
    (d,) = [d for d in r.diagnostics if d.slug == "profiler-rank-id"]
    assert "rank 12" in d.message
    r = read(root / "device_0" / "info.json.0", tmp_path)
    assert [d.slug for d in r.diagnostics] == ["profiler-metadata"] and "rank id 12" in r.diagnostics[0].message
    # not distributed (rank_id -1): the rank_7/ folder above names the rank
    shutil.move(with_rank(tmp_path, 0, -1), root / "device_0" / "info.json.0")
    msprof._device_ranks.cache_clear()
    assert read(root / "mindstudio_profiler_output" / SUMMARY.name, tmp_path).tables["profile_ops"]["rank"][0] == 7
    msprof._device_ranks.cache_clear()


def test_an_earlier_export_of_the_same_kind_is_not_read_twice(tmp_path: Path):
    root = prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/op_summary_20260605161737.csv"),
                (SUMMARY, "mindstudio_profiler_output/op_summary_20260605170000.csv"))
    r = read(root / "mindstudio_profiler_output" / "op_summary_20260605161737.csv", tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-superseded"]
    assert "op_summary_20260605170000.csv" in r.diagnostics[0].message
    r = read(root / "mindstudio_profiler_output" / "op_summary_20260605170000.csv", tmp_path)
    assert r.tables["profile_ops"]["calls"][0] == 3


def test_prof_inside_mindspore_output_defers_to_ascend_profiler_output(tmp_path: Path):
    ms = tmp_path / "rank_0" / "node_1_20260605161708_ascend_ms"
    shutil.copytree(TRACE.parent, ms / "ASCEND_PROFILER_OUTPUT")
    root = prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/" + SUMMARY.name),
                under="rank_0/node_1_20260605161708_ascend_ms")
    (root / "device_0" / "data").mkdir(parents=True)
    (root / "device_0" / "data" / "ts_track.data.0.slice_0").touch()
    r = read(root / "mindstudio_profiler_output" / SUMMARY.name, tmp_path)
    assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-covered"]
    assert "ASCEND_PROFILER_OUTPUT" in r.diagnostics[0].message
    r = read(root / "device_0" / "data" / "ts_track.data.0.slice_0", tmp_path)
    assert [d.slug for d in r.diagnostics] == ["profiler-raw"]


RAW = ("Framework.task_desc_info.0.slice_0", "hwts.data.0.slice_0", "ts_track.data.0.slice_0")


def test_raw_data_without_an_export_says_to_run_msprof_export_once_per_folder(tmp_path: Path):
    root = tmp_path / PROF
    (root / "device_0" / "data").mkdir(parents=True)
    for name in RAW:
        (root / "device_0" / "data" / name).touch()
    results = [read(root / "device_0" / "data" / name, tmp_path) for name in RAW]
    assert all(profiler.READER.claims(art(root / "device_0" / "data" / n, tmp_path)) for n in RAW)
    first, *rest = results
    (d,) = first.diagnostics
    assert d.slug == "profiler-raw-not-exported" and d.severity == "warning"
    assert "3 files" in d.message and f"msprof --export=on --output={PROF}" in d.message
    # each other file says it is counted in the first one's note (a claimed file is never silent)
    assert all(not r.tables and [(x.slug, x.severity, x.params["target"]) for x in r.diagnostics]
               == [("profiler-listed", "info", RAW[0])] for r in rest)
    # once exported, the same files are covered by what was exported
    prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/" + SUMMARY.name))
    (d,) = read(root / "device_0" / "data" / RAW[0], tmp_path).diagnostics
    assert d.slug == "profiler-raw" and d.severity == "info"


def test_every_file_of_a_prof_folder_is_claimed_and_accounted_for(tmp_path: Path):
    root = prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/" + SUMMARY.name),
                (STATISTIC, "mindstudio_profiler_output/" + STATISTIC.name),
                (STATISTIC, "mindstudio_profiler_output/api_statistic_20260605161737.csv"),
                (STATISTIC, "mindstudio_profiler_output/task_time_20260605161737.csv"),
                (INFO, "device_0/info.json.0"), (INFO, "host/info.json"))
    for rel in ("device_0/data/" + RAW[0], "device_0/sqlite/ascend_task.db", "host/data/" + RAW[0],
                "mindstudio_profiler_log/msprof_analysis_1.log", "msprof_20260605161737.db", "device_0/sample.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).touch()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    results = {p.relative_to(root).as_posix(): read(p, tmp_path) for p in files}
    assert all(profiler.READER.claims(art(p, tmp_path)) for p in files)
    said = {rel: [d.slug for d in r.diagnostics] for rel, r in results.items()}
    assert results["mindstudio_profiler_output/" + SUMMARY.name].tables["profile_ops"].height == 1
    assert said["mindstudio_profiler_output/" + STATISTIC.name] == ["profiler-covered"]
    assert said["mindstudio_profiler_output/api_statistic_20260605161737.csv"] == ["profiler-not-read"]
    assert said["mindstudio_profiler_output/task_time_20260605161737.csv"] == ["profiler-listed"]  # the folder's note covers it
    assert said["device_0/data/" + RAW[0]] == ["profiler-raw"]
    assert said["device_0/sqlite/ascend_task.db"] == ["profiler-raw"]
    assert said["msprof_20260605161737.db"] == ["profiler-db-export"]
    assert said["mindstudio_profiler_log/msprof_analysis_1.log"] == ["profiler-logs"]
    assert said["device_0/info.json.0"] == ["profiler-metadata"]
    note = results["mindstudio_profiler_output/api_statistic_20260605161737.csv"].diagnostics[0].message
    assert "api_statistic" in note and "task_time" in note


def test_db_only_export_is_read(tmp_path: Path):
    # without a text export the database is read (readers/profiler/db.py); an empty one names
    # the tables it lacks
    db = tmp_path / PROF / "msprof_20260605161737.db"
    db.parent.mkdir(parents=True)
    db.touch()
    (d,) = read(db, tmp_path).diagnostics
    assert d.slug == "profiler-db-tables" and d.severity.name == "WARNING" and "TASK" in d.message


def test_flat_analyze_communication_json_goes_to_msprof_not_ascend(tmp_path: Path):
    assert profiler.format_of(f"{PROF}/analyze/communication.json").name == "analyze/communication.json"
    assert profiler.format_of("rank_0/x_ascend_ms/ASCEND_PROFILER_OUTPUT/communication.json").name == "communication.json"
    assert profiler.format_of(f"{PROF}/mindstudio_profiler_output/msprof_20260605161734.json").name == "msprof_*.json"


def overlap_sums(events: list) -> dict[str, float]:
    sums = {"Computing": 0.0, "Free": 0.0}
    for e in events:
        if e.get("ph") == "X" and e.get("name") in sums:
            sums[e["name"]] += float(e["dur"])
    return sums


@pytest.mark.parametrize("chunk", [997, 8192, 16 << 20])
def test_timeline_stream_takes_the_overlap_events_whatever_the_chunk(monkeypatch, chunk: int):
    want = overlap_sums(json.loads(TRACE.read_text()))  # 274 Computing, 273 Free events
    assert want["Computing"] == pytest.approx(1788.2505) and want["Free"] == pytest.approx(9481.667)
    monkeypatch.setattr(msprof_timeline, "CHUNK", chunk)
    tl = msprof_timeline.read_timeline(str(TRACE))
    ((key, sums),) = tl.sums.items()
    assert key == (None, None)  # torch_npu labels no "NPU <id>" on this track; no Step Trace track
    assert sums["computing"] == pytest.approx(want["Computing"], rel=1e-12)
    assert sums["free"] == pytest.approx(want["Free"], rel=1e-12)
    assert tl.events == 547 and tl.broken == 0


def test_timeline_in_a_prof_folder_gives_one_step_row(tmp_path: Path):
    root = prof(tmp_path, (TRACE, "mindstudio_profiler_output/msprof_20240102000000.json"))
    r = read(root / "mindstudio_profiler_output" / "msprof_20240102000000.json", tmp_path)
    df = r.tables["profile_steps"]
    assert df.schema == PROFILE_STEPS and df.height == 1
    row = df.row(0, named=True)
    assert row["source"] == "msprof_timeline" and row["step"] is None
    assert row["computing_s"] == pytest.approx(1788.2505e-6) and row["free_s"] == pytest.approx(9481.667e-6)
    assert row["comm_not_overlapped_s"] == 0.0 and row["bubble_s"] == 0.0
    assert row["total_s"] == pytest.approx((1788.2505 + 9481.667) * 1e-6)
    assert "profiler-whole-capture" in [d.slug for d in r.diagnostics]


def test_a_cut_timeline_keeps_what_came_before_the_cut(tmp_path: Path):
    data = TRACE.read_bytes()
    cut = data[: int(len(data) * 0.6)]
    whole_events = json.loads(data)
    # the events wholly inside the kept bytes
    kept = json.loads(cut[: cut.rfind(b"},") + 1] + b"]") if cut.lstrip().startswith(b"[") else None
    assert kept is not None
    root = tmp_path / PROF / "mindstudio_profiler_output"
    root.mkdir(parents=True)
    (root / "msprof_20240102000000.json").write_bytes(cut)
    r = read(root / "msprof_20240102000000.json", tmp_path)
    row = r.tables["profile_steps"].row(0, named=True)
    want = overlap_sums(kept)
    assert row["computing_s"] == pytest.approx(want["Computing"] * 1e-6)
    assert row["free_s"] == pytest.approx(want["Free"] * 1e-6)
    assert want["Computing"] < overlap_sums(whole_events)["Computing"]


def test_step_trace_and_comm_statistic_reject_other_headers(tmp_path: Path):
    root = prof(tmp_path, (SUMMARY, "mindstudio_profiler_output/step_trace_20260605161737.csv"),
                (SUMMARY, "mindstudio_profiler_output/communication_statistic_20260605161737.csv"))
    for name in ("step_trace_20260605161737.csv", "communication_statistic_20260605161737.csv"):
        r = read(root / "mindstudio_profiler_output" / name, tmp_path)
        assert not r.tables and [d.slug for d in r.diagnostics] == ["profiler-columns"]


def test_a_cut_op_summary_reads_the_whole_rows(tmp_path: Path):
    text = SUMMARY.read_text()
    cut = text[: text.rindex("\n0,4294967295,2") + 40]  # the third row is cut before its duration
    root = tmp_path / PROF / "mindstudio_profiler_output"
    root.mkdir(parents=True)
    (root / SUMMARY.name).write_text(cut)
    r = read(root / SUMMARY.name, tmp_path)
    row = r.tables["profile_ops"].row(0, named=True)
    assert row["calls"] == 2 and row["total_s"] == pytest.approx((87139.380 + 86808.420) * 1e-6)
    assert [d.slug for d in r.diagnostics] == ["profiler-row"]


def test_timeline_figures_equal_msprof_analyzes_own_adapter(tmp_path: Path):
    """msprof-analyze's cluster step trace for PROF input sums the same events (its adapter, run here)."""
    adapter = pytest.importorskip("msprof_analyze.cluster_analyse.analysis.msprof_step_trace_time_adapter")
    bean = adapter.MsprofStepTraceTimeAdapter([str(TRACE)]).generate_step_trace_time_data()[0]
    theirs = dict(zip(bean.all_headers[3:], bean.row))
    root = prof(tmp_path, (TRACE, "mindstudio_profiler_output/msprof_20240102000000.json"))
    ours = read(root / "mindstudio_profiler_output" / "msprof_20240102000000.json", tmp_path).tables[
        "profile_steps"].row(0, named=True)
    assert ours["computing_s"] == pytest.approx(theirs["Computing"] * 1e-6, rel=1e-12)
    assert ours["free_s"] == pytest.approx(theirs["Free"] * 1e-6, rel=1e-12)
    assert ours["bubble_s"] == pytest.approx(theirs["Bubble"] * 1e-6, abs=1e-12)
    # their Stage is e2e - Bubble with e2e = Computing + Communication(Not Overlapped) + Free
    assert ours["total_s"] - ours["bubble_s"] == pytest.approx(theirs["Stage"] * 1e-6, rel=1e-12)
