"""MindSpore 2.x / torch_npu profiler output read from real files (tests/fixtures/conformance/,
see each folder's PROVENANCE.md); the expected figures are worked out by hand from the files."""

from __future__ import annotations

import re

import csv
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import MEMORY, PROFILE_COMM, PROFILE_DATA, PROFILE_OPS, PROFILE_STEPS, Artifact
from postmortem.readers import profiler
from postmortem.readers.profiler import ascend_steps, trace

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
MSTT = CONF / "mstt-torchnpu-kd-traceview-2023" / "worker0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
IMAGENET = CONF / "msinsight-torchnpu-imagenet-2025"
L1 = IMAGENET / "level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
GPT3 = CONF / "msinsight-torchnpu-gpt3-2023" / "test_rank_0" / "ASCEND_PROFILER_OUTPUT"
MI = CONF / "mi-run2-ascend-profiler" / "profiler"
US = 1e-6


def read(path: Path, root: Path = CONF):
    rel = path.relative_to(root).as_posix()
    return profiler.READER.read(Artifact(str(path), rel, path.stat().st_size, 0.0))


def slugs(result) -> list[str]:
    return [d.slug for d in result.diagnostics]


def by_type(ops: pl.DataFrame) -> dict[str, tuple[int, float]]:
    agg = ops.group_by("type").agg(pl.col("calls").sum(), pl.col("total_s").sum())
    return {t: (c, s) for t, c, s in agg.iter_rows()}


# ------------------------------------------------------------------------------ kernel_details


def test_kernel_details_2023_mstt_ground_truth():
    r = read(MSTT / "kernel_details.csv")
    ops = r.tables["profile_ops"]
    assert ops.schema == PROFILE_OPS and not r.diagnostics
    assert ops["calls"].sum() == 591 and ops["step"].unique().to_list() == [1]
    total = ops["total_s"].sum()
    assert total == pytest.approx(396_807.04 * US)
    t = by_type(ops)
    assert t["hcom_broadcast_"] == (2, pytest.approx(308_989.62 * US))  # 308,926.68 + 62.94 µs
    assert t["hcom_broadcast_"][1] / total == pytest.approx(0.7787, abs=1e-4)  # 77.9 % of device time
    assert t["hcom_allReduce_"] == (14, pytest.approx(27_867.58 * US))
    assert t["MatMul"] == (9, pytest.approx(14_070.56 * US))
    assert t["ApplyAdamW"] == (28, pytest.approx(12_939.38 * US))
    assert t["Cast"] == (75, pytest.approx(5_904.02 * US))
    cores = dict(ops.group_by("core").agg(pl.col("calls").sum()).iter_rows())
    assert cores == {"AI_VECTOR_CORE": 520, "MIX_AIV": 25, "HCCL": 19, "AI_CORE": 13, "AI_CPU": 7, "DSA_SQE": 7}
    broadcast = ops.filter(pl.col("name") == "hcom_broadcast__445_0").row(0, named=True)
    assert broadcast["max_s"] == pytest.approx(308_926.68 * US) and broadcast["core"] == "HCCL"
    assert ops["rank"].unique().to_list() == [None] and ops["source"].unique().to_list() == ["kernel_details"]


def test_kernel_details_names_beyond_the_kept_ones_sum_into_other(monkeypatch):
    from postmortem.readers.profiler import ascend_ops

    monkeypatch.setattr(ascend_ops, "NAMED_ROWS", 0)
    monkeypatch.setattr(ascend_ops, "MIN_NAMES", 3)
    ops = read(MSTT / "kernel_details.csv").tables["profile_ops"]
    named = ops.filter(pl.col("name") != "(other)")
    # the 3 names with the most time: hcom_broadcast__445_0 308,926.68 µs, ApplyAdamW179 4 calls 7,127.5 µs,
    # hcom_allReduce__445_5 6,328.78 µs
    assert set(named["name"]) == {"hcom_broadcast__445_0", "ApplyAdamW179", "hcom_allReduce__445_5"}
    adam = named.filter(pl.col("name") == "ApplyAdamW179").row(0, named=True)
    assert (adam["calls"], adam["total_s"]) == (4, pytest.approx(7_127.5 * US))
    assert ops["calls"].sum() == 591 and ops["total_s"].sum() == pytest.approx(396_807.04 * US)
    assert by_type(ops)["MatMul"] == (9, pytest.approx(14_070.56 * US))  # all MatMuls now in "(other)"


def test_kernel_details_2025_level1_and_its_op_statistic():
    ops = read(L1 / "kernel_details.csv").tables["profile_ops"]
    assert ops["calls"].sum() == 191 and ops["step"].unique().to_list() == [50]
    assert ops["rank"].unique().to_list() == [0]  # profiler_info_0.json beside the output folder
    assert ops["total_s"].sum() == pytest.approx(114_865.613 * US)
    t = by_type(ops)
    # the 4 allReduce kernels are the step's communication: step_trace_time.csv says 105,991.878 µs
    assert t["hcom_allReduce_"] == (4, pytest.approx(105_991.876 * US))
    r = read(L1 / "op_statistic.csv")
    assert "profile_ops" not in r.tables and slugs(r) == ["profiler-covered"]


def test_op_statistic_alone_equals_kernel_details_without_hccl(tmp_path: Path):
    lone = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    lone.mkdir(parents=True)
    shutil.copy(L1 / "op_statistic.csv", lone)
    stats = read(lone / "op_statistic.csv", tmp_path).tables["profile_ops"]
    assert stats.schema == PROFILE_OPS and stats.height == 33 and set(stats["name"]) == {"(other)"}
    assert stats["step"].null_count() == 33 and stats["source"][0] == "op_statistic"
    kernels = read(L1 / "kernel_details.csv").tables["profile_ops"]
    per = lambda df: {(ty, c): (n, s) for ty, c, n, s in  # noqa: E731
                      df.group_by("type", "core").agg(pl.col("calls").sum(), pl.col("total_s").sum()).iter_rows()}
    got, want = per(stats), per(kernels)
    del want[("hcom_allReduce_", "HCCL")]  # op_statistic.csv leaves communication out
    assert got.keys() == want.keys()
    for key, (calls, total) in want.items():
        # op_statistic sums CANN's unrounded durations: within 0.01 µs of the sum of the 3-decimal ones
        assert got[key][0] == calls and got[key][1] == pytest.approx(total, abs=0.01 * US), key
    fe = stats.filter(pl.col("type") == "ForeachAddList").row(0, named=True)
    assert (fe["calls"], fe["total_s"], fe["max_s"]) == (3, pytest.approx(1959.079 * US), pytest.approx(706.614 * US))


def test_kernel_details_column_sets_of_each_version():
    level0 = read(IMAGENET / "level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", CONF)
    ops = level0.tables["profile_ops"]  # 8 columns: Step Id,Name,Type,Accelerator Core,Start Time,Duration,...
    assert ops["calls"].sum() == 191 and ops["total_s"].sum() == pytest.approx(94_344.34 * US)
    gpt3 = read(GPT3 / "kernel_details.csv").tables["profile_ops"]  # 2023: no OP State, with HF32 Eligible
    assert gpt3["calls"].sum() == 21 and gpt3["step"].unique().to_list() == [2]
    assert gpt3["total_s"].sum() == pytest.approx(37_370.965 * US)
    assert dict(gpt3.group_by("core").agg(pl.col("calls").sum()).iter_rows()) == {
        "AI_CORE": 4, "HCCL": 4, "MIX_AIC": 4, "MIX_AIV": 3, "AI_CPU": 2, "DSA_SQE": 2, "AI_VECTOR_CORE": 2}


def _rewrite_csv(src: Path, dst: Path, keep: list[str], rename: dict[str, str]) -> None:
    """A real file with some columns dropped or renamed, as other writer versions have it."""
    with open(src, newline="") as fh, open(dst, "w", newline="") as out:
        rows = csv.DictReader(fh)
        w = csv.writer(out)
        w.writerow([rename.get(c, c) for c in keep])
        for row in rows:
            w.writerow([row[c] for c in keep])


def test_kernel_details_mindspore_step_id_spelling_and_no_step(tmp_path: Path):
    folder = tmp_path / "h_1_2_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    cols = ["Step Id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "Accelerator Core", "Start Time(us)",
            "Duration(us)", "Wait Time(us)"]
    _rewrite_csv(MSTT / "kernel_details.csv", folder / "kernel_details.csv", cols, {"Step Id": "Step ID"})
    ops = read(folder / "kernel_details.csv", tmp_path).tables["profile_ops"]
    assert ops["step"].unique().to_list() == [1] and ops["calls"].sum() == 591
    _rewrite_csv(MSTT / "kernel_details.csv", folder / "kernel_details.csv", cols[1:], {})
    r = read(folder / "kernel_details.csv", tmp_path)
    assert r.tables["profile_ops"]["step"].null_count() == r.tables["profile_ops"].height
    assert "profiler-no-step" in slugs(r)


def test_kernel_details_damaged_copy_keeps_the_rows_before(tmp_path: Path):
    raw = (MSTT / "kernel_details.csv").read_bytes()
    lines = raw.split(b"\n")
    damaged = b"\n".join(lines[:300]) + b'\n1,"broken\n' + b"\n".join(lines[300:])  # a stray quote
    bad = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(damaged)
    r = read(bad, tmp_path)
    assert "profiler-damaged" in slugs(r)
    assert r.tables["profile_ops"]["calls"].sum() >= 299  # the 299 kernels before the damage at least
    bad.write_bytes(raw.split(b"\n")[0] + b"\n")
    r = read(bad, tmp_path)
    assert "profile_ops" not in r.tables and slugs(r) == ["profiler-empty"]
    bad.write_bytes(b"Name,Kind\nx,y\n")
    assert slugs(read(bad, tmp_path)) == ["profiler-columns"]


# ------------------------------------------------------------------------------ steps


def partition_holds(steps: pl.DataFrame) -> bool:
    parts = steps.select(
        pl.sum_horizontal(pl.col("computing_s", "comm_not_overlapped_s", "bubble_s", "data_wait_s", "free_s",
                                 "preparing_s").fill_null(0.0)).alias("parts"), "total_s")
    return all(abs(a - b) < 1e-9 for a, b in parts.iter_rows())


def test_step_trace_time_2025_partition():
    r = read(L1 / "step_trace_time.csv")
    steps = r.tables["profile_steps"]
    assert steps.schema == PROFILE_STEPS and not r.diagnostics
    row = steps.row(0, named=True)
    assert (row["step"], row["rank"], row["source"]) == (50, 0, "step_trace_time")
    assert row["computing_s"] == pytest.approx(8_873.756 * US)
    assert row["comm_not_overlapped_s"] == pytest.approx(101_963.203 * US)  # Bubble 0: nothing moved out
    assert row["bubble_s"] == 0.0 and row["data_wait_s"] is None
    assert row["free_s"] == pytest.approx(25_744.050 * US)
    assert row["overlapped_s"] == pytest.approx(4_028.675 * US)  # 105,991.878 - 101,963.203
    assert row["communication_s"] == pytest.approx(105_991.878 * US)
    assert row["preparing_s"] == pytest.approx(17_902.5 * US)  # the first (only) profiled step
    # 8,873.756 + 101,963.203 + 25,744.050 = 136,581.009 (= the writer's Stage, Bubble 0) + 17,902.5
    assert row["total_s"] == pytest.approx(154_483.509 * US)
    assert partition_holds(steps)


def test_step_trace_time_2023_without_preparing():
    steps = read(GPT3 / "step_trace_time.csv").tables["profile_steps"]
    row = steps.row(0, named=True)
    assert row["step"] == 2 and row["preparing_s"] is None
    # 75,174.57464 + 146,614.02034 + 69,909.50350 = 291,698.09849 µs; the writer's Stage: 291,698.0
    assert row["total_s"] == pytest.approx(291_698.09849 * US)
    assert partition_holds(steps)


def test_partition_arithmetic_with_bubble_and_later_steps():
    """The mapping of the writers' columns, on numbers chosen to show each rule."""
    from postmortem.model import ReadResult

    parts = [  # step, computing, CNO (incl. receive), communication, free, bubble, preparing (µs)
        ascend_steps.Parts(2, 800.0, 300.0, 500.0, 100.0, 120.0, 40.0),  # first profiled step
        ascend_steps.Parts(3, 800.0, 300.0, 500.0, 100.0, 450.0, 30.0),  # receive mostly under compute
    ]
    result = ReadResult("profiler")
    art = Artifact("x", "x/step_trace_time.csv", 0, 0.0)
    ascend_steps.profile_steps(parts, 4, "step_trace_time", art, result)
    s = result.tables["profile_steps"].rows(named=True)
    assert s[0]["bubble_s"] == pytest.approx(120 * US) and s[0]["comm_not_overlapped_s"] == pytest.approx(180 * US)
    assert s[0]["total_s"] == pytest.approx((800 + 300 + 100 + 40) * US)  # preparing added on the first step
    assert s[1]["bubble_s"] == pytest.approx(300 * US) and s[1]["comm_not_overlapped_s"] == 0.0  # clipped to CNO
    assert s[1]["preparing_s"] is None and s[1]["total_s"] == pytest.approx(1200 * US)  # inside Free already
    assert s[0]["overlapped_s"] == pytest.approx(200 * US)
    assert {"profiler-bubble-overlapped", "profiler-preparing-in-free"} <= set(slugs(result))


# ------------------------------------------------------------------------------ trace_view


def test_trace_view_2023_counts_and_steps():
    r = read(MSTT / "trace_view.json")
    (d,) = [d for d in r.diagnostics if d.slug == "profiler-trace-events"]
    assert d.message.startswith("3,670 trace events (X 2212, s 713, f 713, M 32)")
    steps = r.tables["profile_steps"]  # no step_trace_time.csv beside it: derived from Overlap Analysis
    row = steps.row(0, named=True)
    assert (row["step"], row["source"]) == (1, "trace_view")
    assert row["computing_s"] == pytest.approx(1_788.2505 * US) and row["free_s"] == pytest.approx(9_481.667 * US)
    assert row["comm_not_overlapped_s"] == 0.0 and row["communication_s"] == 0.0
    # ProfilerStep#1 starts at ...420289.011 µs, the first Computing event at ...422904.204 µs
    assert row["preparing_s"] == pytest.approx(2_615.193 * US)
    assert row["total_s"] == pytest.approx((1_788.2505 + 9_481.667 + 2_615.193) * US)  # 13,885.11 of 14,091.97
    assert partition_holds(steps)


def test_trace_view_sums_equal_its_step_trace_time():
    r = read(L1 / "trace_view.json")
    assert "profile_steps" not in r.tables and "profiler-covered" in slugs(r)
    (s,) = trace.step_sums(trace.scan(str(L1 / "trace_view.json")))[0]
    csv_row = read(L1 / "step_trace_time.csv").tables["profile_steps"].row(0, named=True)
    assert s.step == 50
    assert s.computing * US == pytest.approx(csv_row["computing_s"], abs=1e-12)
    assert (s.comm_not_overlapped - s.receive) * US == pytest.approx(csv_row["comm_not_overlapped_s"], abs=1e-12)
    assert s.free * US == pytest.approx(csv_row["free_s"], abs=1e-12)
    assert s.communication * US == pytest.approx(csv_row["communication_s"], abs=1e-12)
    assert s.preparing == pytest.approx(17_902.502)  # 1736408883704643.212 - 1736408883686740.710


def test_trace_view_alone_gives_the_same_rows(tmp_path: Path):
    alone = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    alone.mkdir(parents=True)
    shutil.copy(L1 / "trace_view.json", alone)
    shutil.copy(L1.parent / "profiler_info_0.json", alone.parent)
    got = read(alone / "trace_view.json", tmp_path).tables["profile_steps"].row(0, named=True)
    want = read(L1 / "step_trace_time.csv").tables["profile_steps"].row(0, named=True)
    for k in ("step", "rank", "computing_s", "comm_not_overlapped_s", "free_s", "overlapped_s", "bubble_s"):
        assert got[k] == pytest.approx(want[k], abs=1e-9), k
    assert got["source"] == "trace_view" and got["preparing_s"] == pytest.approx(17_902.502 * US)


def test_trace_view_small_blocks_give_the_same_result(monkeypatch):
    whole = trace.scan(str(L1 / "trace_view.json"))
    monkeypatch.setattr(trace, "BLOCK", 4096)
    monkeypatch.setattr(trace, "TAIL", 3000)  # events of this trace are < 3 kB
    monkeypatch.setattr(trace, "BACK", 3000)
    pieces = trace.scan(str(L1 / "trace_view.json"))
    assert pieces.phases == whole.phases and pieces.steps == whole.steps and pieces.process == whole.process
    assert trace.step_sums(pieces) == trace.step_sums(whole)


def test_trace_view_truncated_keeps_what_came_before(tmp_path: Path):
    raw = (MSTT / "trace_view.json").read_bytes()
    cut = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    cut.parent.mkdir(parents=True)
    cut.write_bytes(raw[: len(raw) // 2])
    r = read(cut, tmp_path)
    assert "profiler-trace-truncated" in slugs(r)
    (d,) = [d for d in r.diagnostics if d.slug == "profiler-trace-events"]
    assert 1000 < int(d.message.split()[0].replace(",", "")) < 3670
    cut.write_bytes(b"")
    assert slugs(read(cut, tmp_path)) == ["profiler-empty"]


def test_trace_view_streams_a_big_file_in_bounded_memory(tmp_path: Path, monkeypatch):
    """A 20 MB trace made of the real one's events repeated (shifted per step), read in 1 MB
    blocks: the scanner's Python memory stays a few blocks, not the file, and every copy is a
    step with the same sums."""
    import tracemalloc

    events = json.loads((MSTT / "trace_view.json").read_text())
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    path = tmp_path / "big_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    path.parent.mkdir(parents=True)
    copies = 0
    with open(path, "w") as fh:
        fh.write("[" + ", ".join(json.dumps(e) for e in meta))
        while fh.tell() < 20_000_000:
            shifted = [{**e, "ts": f"{float(e['ts']) + copies * 20_000:.3f}"} for e in body]
            text = ", ".join(json.dumps(e) for e in shifted).replace('"ProfilerStep#1"', f'"ProfilerStep#{copies + 1}"')
            fh.write(", " + text)
            copies += 1
        fh.write("]")
    monkeypatch.setattr(trace, "BLOCK", 1 << 20)
    monkeypatch.setattr(trace, "TAIL", 64 << 10)
    monkeypatch.setattr(trace, "BACK", 16 << 10)
    tracemalloc.start()
    scanned = trace.scan(str(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8_000_000 and path.stat().st_size > 20_000_000
    assert sum(scanned.phases.values()) == 32 + copies * (3670 - 32)
    rows, _ = trace.step_sums(scanned)
    assert [r.step for r in rows] == list(range(1, copies + 1))
    assert all(r.computing == pytest.approx(1_788.2505) and r.free == pytest.approx(9_481.667) for r in rows)


# ------------------------------------------------------------------------------ communication


def test_communication_json_2025():
    comm = read(L1 / "communication.json").tables["profile_comm"]
    assert comm.schema == PROFILE_COMM and comm.height == 4
    assert set(comm["kind"]) == {"collective"} and set(comm["group"]) == {"17522688603477080586"}
    op = comm.filter(pl.col("op") == "hcom_allReduce__586_0_1").row(0, named=True)
    assert (op["step"], op["rank"], op["source"]) == (50, 0, "communication.json")
    # Elapse 79.0895 ms = Transit 0.23918 + Wait 5.64663 + Idle 73.20370
    assert op["elapse_s"] == pytest.approx(79.08952021875e-3)
    assert op["wait_s"] == pytest.approx(5.64663284375e-3) and op["transit_s"] == pytest.approx(0.23918478125e-3)
    assert op["synchronization_s"] == pytest.approx(5.61569221875e-3)
    # HCCS (= SDMA, the on-chip sum) moved 28.647232 MB = 28,647,232 bytes at 15.7676 GB/s
    assert op["transport"] == "HCCS" and op["bytes"] == pytest.approx(28_647_232)
    assert op["bandwidth_gbps"] == pytest.approx(15.7676)
    assert op["bytes"] / (1.81683634375e-3) / 1e9 == pytest.approx(op["bandwidth_gbps"], rel=1e-4)
    assert op["src_rank"] is None


def test_communication_json_2023_p2p_rdma_and_empty_bandwidth():
    comm = read(GPT3 / "communication.json").tables["profile_comm"]
    assert comm.height == 28 and comm.filter(pl.col("kind") == "p2p").height == 1
    send = comm.filter(pl.col("kind") == "p2p").row(0, named=True)
    assert (send["op"], send["transport"]) == ("hcom_send__822_0", "RDMA")
    assert send["bytes"] == pytest.approx(20_971_520) and send["bandwidth_gbps"] == pytest.approx(24.2778)
    ar = comm.filter(pl.col("op") == "hcom_allReduce__459_0").row(0, named=True)
    assert ar["elapse_s"] == pytest.approx(102.7216123828125e-3) and ar["wait_s"] == pytest.approx(96.88045108203126e-3)
    bc = comm.filter(pl.col("op") == "hcom_broadcast__483_0").row(0, named=True)  # no bandwidth info written
    assert bc["transport"] is None and bc["bytes"] is None and bc["elapse_s"] == pytest.approx(4.96980784765625e-3)


def test_communication_matrix_aggregated_2025_and_per_op_2023():
    m = read(L1 / "communication_matrix.json").tables["profile_comm"]
    assert m.height == 8 and set(m["op"]) == {"allreduce-total"}  # top1/middle/bottom* are single ops: skipped
    assert m["source"][0] == "communication_matrix.json" and m["elapse_s"].null_count() == 8
    link = m.filter((pl.col("src_rank") == 0) & (pl.col("dst_rank") == 1)).row(0, named=True)
    assert link["transport"] == "HCCS" and link["bytes"] == pytest.approx(61_210_624)
    assert link["transit_s"] == pytest.approx(3.88393759375e-3)
    assert link["bandwidth_gbps"] == pytest.approx(15.7599)  # 61.210624 MB / 3.88393759 ms
    local = m.filter(pl.col("dst_rank") == 0).row(0, named=True)
    assert local["transport"] == "LOCAL" and local["src_rank"] == 0
    old = read(GPT3 / "communication_matrix.json").tables["profile_comm"]
    assert old.height == 111 and "Total Op Info" not in set(old["op"])
    send = old.filter((pl.col("op") == "hcom_send__822_0") & (pl.col("dst_rank") == 8)).row(0, named=True)
    assert (send["transport"], send["kind"]) == ("RDMA", "p2p") and send["bandwidth_gbps"] == pytest.approx(24.2778)


def test_communication_damaged(tmp_path: Path):
    bad = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes((L1 / "communication.json").read_bytes()[:300])
    assert slugs(read(bad, tmp_path)) == ["profiler-json"]
    bad.write_text('{"step1": {"collective": {}}}')
    assert slugs(read(bad, tmp_path)) == ["profiler-empty"]


# ------------------------------------------------------------------------------ memory


def test_memory_record_torch_npu_mib():
    mem = read(L1 / "memory_record.csv").tables["memory"]
    assert mem.schema == MEMORY and mem.height == 1004
    assert dict(mem.group_by("component").len().iter_rows()) == {"APP": 14, "GE": 114, "PTA": 381, "PTA+GE": 495}
    pta = mem.filter(pl.col("component") == "PTA").row(0, named=True)
    assert pta["time_s"] == pytest.approx(1736408883.694238)
    assert pta["allocated_bytes"] == 935.9951171875 * 2**20 == 981_462_016  # a whole number of bytes
    assert pta["reserved_bytes"] == 1452.0 * 2**20 and pta["rank"] == 0
    app = mem.filter(pl.col("component") == "APP").row(0, named=True)
    assert app["allocated_bytes"] is None and app["reserved_bytes"] == 2109.6015625 * 2**20
    old = read(GPT3 / "memory_record.csv").tables["memory"]  # 2023: no Total Active column
    assert old.height == 11 and old["active_bytes"].null_count() == 11


def test_operator_memory_units_and_live_sum():
    rows = sorted(csv.DictReader(open(L1 / "operator_memory.csv")), key=lambda r: float(r["Allocation Time(us)"]))
    # torch_npu's MB is 2^20 bytes: the second allocation (Size 18816.5 KB after one of 18816.5 KB... ) steps
    # Allocation Total Allocated(MB) by exactly its Size(KB) / 1024
    a, b = rows[0], rows[1]
    assert float(b["Allocation Total Allocated(MB)"]) - float(a["Allocation Total Allocated(MB)"]) == pytest.approx(
        float(b["Size(KB)"]) / 1024)
    mem = read(L1 / "operator_memory.csv").tables["memory"]
    assert set(mem["component"]) == {"operators"} and mem["reserved_bytes"].null_count() == mem.height
    first = mem.row(0, named=True)
    assert first["time_s"] == pytest.approx(1736408883.694625) and first["allocated_bytes"] == 18816.5 * 1024
    released = sum(1 for r in rows if r["Release Time(us)"].strip())
    assert mem.height == len(rows) + released  # one row per allocation and per release
    alive_at_end = sum(float(r["Size(KB)"]) * 1024 for r in rows if not r["Release Time(us)"].strip())
    assert mem["allocated_bytes"][-1] == pytest.approx(alive_at_end)


def test_npu_module_mem():
    mem = read(L1 / "npu_module_mem.csv").tables["memory"]
    assert mem.height == 1078 and all(c.startswith("module:") for c in mem["component"])
    hccl = mem.filter(pl.col("component") == "module:HCCL").row(0, named=True)
    assert hccl["reserved_bytes"] == 404.0625 * 2**20 and hccl["time_s"] == pytest.approx(1736408883.657086)


# ------------------------------------------------------------------------------ data pipeline


def test_minddata_pipeline_raw(tmp_path: Path):
    folder = tmp_path / "h_1_2_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    shutil.copy(MI / "minddata_pipeline_raw_1.csv", folder)
    data = read(folder / "minddata_pipeline_raw_1.csv", tmp_path).tables["profile_data"]
    assert data.schema == PROFILE_DATA and data["rank"].unique().to_list() == [1]
    rows = {r["stage"]: r for r in data.rows(named=True)}
    assert list(rows) == ["BatchOp(id=0)", "MapOp(id=1)", "MapOp(id=2)", "ImageFolderOp(id=3)"]
    batch = rows["BatchOp(id=0)"]
    assert (batch["op_type"], batch["workers"], batch["samples"]) == ("BatchOp", 4, 2)
    assert batch["queue_usage"] == 0.015625  # average fill 1.0 of 64
    assert batch["queue_empty_share"] == 0.5  # fills [0, 2]
    assert rows["MapOp(id=1)"]["queue_usage"] == 0.0 and rows["MapOp(id=1)"]["queue_empty_share"] == 1.0


# ------------------------------------------------------------------------------ folders and ranks


def _all_files():
    # every file of the torch_npu / MindSpore 2.x profiler folders (other layouts have their own tests)
    return [p for p in sorted(CONF.rglob("*")) if p.is_file() and p.name != "PROVENANCE.md"
            and re.search(r"_ascend_(?:pt|ms)/", p.relative_to(CONF).as_posix())]


@pytest.mark.parametrize("path", _all_files(), ids=lambda p: p.relative_to(CONF).as_posix())
def test_every_file_is_claimed_and_nothing_is_silent(path: Path):
    art = Artifact(str(path), path.relative_to(CONF).as_posix(), path.stat().st_size, 0.0)
    assert profiler.READER.claims(art)
    r = profiler.READER.read(art)
    assert r.rows() > 0 or r.diagnostics


def test_rank_from_profiler_info_wins_over_the_path(tmp_path: Path):
    folder = tmp_path / "rank_5" / "rank0_ascend_pt"
    shutil.copytree(L1.parent, folder)
    r = read(folder / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", tmp_path)
    assert r.tables["profile_steps"]["rank"].to_list() == [0]
    assert "profiler-rank-mismatch" in slugs(r)


def test_unknown_file_in_a_profile_folder_is_a_warning(tmp_path: Path):
    f = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "new_thing.csv"
    f.parent.mkdir(parents=True)
    f.write_text("a,b\n1,2\n")
    art = Artifact(str(f), f.relative_to(tmp_path).as_posix(), f.stat().st_size, 0.0)
    assert profiler.READER.claims(art)
    assert slugs(profiler.READER.read(art)) == ["profiler-format-not-read"]


def test_trace_view_hostile_nesting_does_not_raise(tmp_path: Path):
    raw = (MSTT / "trace_view.json").read_bytes()
    f = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    f.parent.mkdir(parents=True)
    f.write_bytes(b'[{"name": "Free", "ph": "X", "args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}, " + raw[1:])
    r = read(f, tmp_path)
    assert "profiler-row" in slugs(r)  # the one event that does not decode
    assert r.tables["profile_steps"]["computing_s"][0] == pytest.approx(1_788.2505 * US)  # the rest is read


def test_load_run_of_two_ranks_keeps_each_figure_once():
    from postmortem.load import load_run

    run = load_run(IMAGENET / "level1")
    steps = run.tables["profile_steps"]
    assert sorted(steps["rank"].to_list()) == [0, 1] and set(steps["source"]) == {"step_trace_time"}
    ops = run.tables["profile_ops"]
    assert set(ops["source"]) == {"kernel_details"}  # op_statistic.csv beside it is not counted again
    assert dict(ops.group_by("rank").agg(pl.col("calls").sum()).iter_rows()) == {0: 191, 1: 191}
    assert set(run.tables["profile_comm"]["source"]) == {"communication.json", "communication_matrix.json"}
    assert set(run.tables["memory"]["rank"]) == {0, 1}
