"""MindInsight-era profiler folders, read from the real files in tests/fixtures/conformance/mi-*
(MindInsight's own test resources, written by the MindSpore 1.x profiler; PROVENANCE.md in each).

Expected values are worked out by hand from the files (the arithmetic is in each test) or are
the ground truth of /work/shared/conformance/README.md. Times in the files: step_trace_raw in 10 ns
ticks (1 ms = 1e5 ticks), everything else in ms unless said.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import PROFILE_COMM, PROFILE_DATA, PROFILE_OPS, PROFILE_STEPS, PROFILE_SUMMARY, Artifact
from postmortem.readers import profiler

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
CLUSTER = CONF / "mi-cluster-4rank" / "profiler"
RUN2 = CONF / "mi-run2-ascend-profiler" / "profiler"
RUN34 = CONF / "mi-run3-run4-parallel"
UT = CONF / "mi-ut-resource"
TICK_MS = 1e-5  # one 10 ns tick in ms


def read(path: Path, root: Path = CONF):
    return profiler.READER.read(Artifact(str(path), path.relative_to(root).as_posix(), path.stat().st_size, 0.0))


def ms(seconds: float) -> float:
    return seconds * 1000


def slugs(result) -> list[str]:
    return [d.slug for d in result.diagnostics]


def comm_by_type(df: pl.DataFrame, step: int) -> dict[str, float]:
    """Summed op time (ms) per op type (Receive, Send, AllReduce) of one step."""
    typed = df.filter(pl.col("step") == step).with_columns(t=pl.col("op").str.extract(r"_([A-Za-z]+)-op\d+$"))
    return {t: ms(v) for t, v in typed.group_by("t").agg(pl.col("elapse_s").sum()).iter_rows()}


# --------------------------------------------------------------------------- step_trace_raw


def test_cluster_step_totals_and_average_row_dropped():
    r0 = read(CLUSTER / "step_trace_raw_0_detail_time.csv")
    df = r0.tables["profile_steps"]
    assert df.schema == PROFILE_STEPS and not r0.diagnostics
    assert df["step"].to_list() == [1, 2, 3, 4, 5]  # the 7th line, step "-", is the writer's average
    assert df["rank"].unique().to_list() == [0] and df["source"].unique().to_list() == ["step_trace_raw"]
    # total column of steps 1-5: 17818660, 18101269, 17913973, 17879385, 17870916 ticks
    assert [round(ms(t), 2) for t in df["total_s"]] == [178.19, 181.01, 179.14, 178.79, 178.71]
    # step 2: iteration_interval 82528 ticks = fp_point 1162429980537 - start_point 1162429898009
    assert ms(df["data_wait_s"][1]) == pytest.approx(82528 * TICK_MS)
    for rank, first in ((1, 210.37), (2, 2163.85), (3, 2376.13)):
        d = read(CLUSTER / f"step_trace_raw_{rank}_detail_time.csv").tables["profile_steps"]
        assert d.height == 5 and round(ms(d["total_s"][0]), 2) == first  # 21036965, 216384836, 237613245 ticks


def test_partition_adds_up_to_the_step():
    for rank in range(4):
        df = read(CLUSTER / f"step_trace_raw_{rank}_detail_time.csv").tables["profile_steps"]
        parts = df["computing_s"] + df["comm_not_overlapped_s"] + df["bubble_s"] + df["data_wait_s"]
        assert (parts - df["total_s"]).abs().max() < 1e-12
        # what is communication is bubble + collective exactly (receive split off the union)
        assert ((df["bubble_s"] + df["comm_not_overlapped_s"] - df["communication_s"]).abs().max()) < 1e-12
        assert df["free_s"].is_null().all() and df["overlapped_s"].is_null().all()  # not measurable here


def test_receive_and_allreduce_per_step_from_the_op_columns():
    c0 = read(CLUSTER / "step_trace_raw_0_detail_time.csv").tables["profile_comm"]
    assert c0.schema == PROFILE_COMM and c0["source"].unique().to_list() == ["step_trace_raw"]
    # 97 ops (4 Receive, 4 Send, 89 AllReduce) in each of the 5 steps
    assert c0.group_by("step").len().sort("step")["len"].to_list() == [97] * 5
    # one op by hand: step 2, stream_48_0_Receive-op663 = 4811086 ticks
    # (end 1162434784260 - start 1162429973174)
    op = c0.filter((pl.col("step") == 2) & (pl.col("op") == "stream_48_0_Receive-op663"))
    assert op["kind"].to_list() == ["p2p"] and ms(op["elapse_s"][0]) == pytest.approx(48.11086)
    step2 = comm_by_type(c0, 2)
    assert round(step2["Receive"], 2) == 173.05 and round(step2["AllReduce"], 2) == 13.08  # of a 181.01 ms step
    c2 = read(CLUSTER / "step_trace_raw_2_detail_time.csv").tables["profile_comm"]
    c3 = read(CLUSTER / "step_trace_raw_3_detail_time.csv").tables["profile_comm"]
    assert round(comm_by_type(c2, 1)["Receive"]) == 1993 and round(comm_by_type(c3, 1)["Receive"]) == 2206
    steady = comm_by_type(c2, 2)
    assert round(steady["Receive"], 1) == 6.9 and round(steady["AllReduce"], 1) == 51.5


def test_first_stage_is_bubble_and_communication_bound_not_compute_bound():
    df = read(CLUSTER / "step_trace_raw_0_detail_time.csv").tables["profile_steps"]
    share = (df["computing_s"].sum() / df["total_s"].sum())
    assert share < 0.05  # was "compute is 99 %" when fp_and_bp counted as compute
    assert df["bubble_s"].sum() / df["total_s"].sum() > 0.3


def _trimmed(tmp_path: Path, keep_ops: list[str], steps: set[str]) -> Path:
    """The real rank-0 step trace with only some op columns and steps (a real file, cut down)."""
    with open(CLUSTER / "step_trace_raw_0_detail_time.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    cols = list(range(9)) + [rows[0].index(op + sfx) for op in keep_ops for sfx in ("", "_start_point", "_end_point")]
    out = tmp_path / "profiler" / "step_trace_raw_0_detail_time.csv"
    out.parent.mkdir(parents=True)
    with open(out, "w", newline="") as fh:
        csv.writer(fh).writerows([[row[i] for i in cols] for row in rows if row[0] in steps | {"step_num"}])
    return out


def test_bubble_is_receive_time_no_other_op_covers_by_hand(tmp_path: Path):
    ops = ["stream_48_0_Receive-op663", "stream_49_1_Send-op737", "stream_48_1_Receive-op794", "stream_49_2_Send-op868"]
    path = _trimmed(tmp_path, ops, {"2"})
    r = read(path, tmp_path)
    row = r.tables["profile_steps"].row(0, named=True)
    # Step 2: start 1162429898009, fp 1162429980537, end 1162447999278, total 18101269 ticks.
    # Receive-op663 [1162429973174, 1162434784260] starts 7363 ticks before fp: counted from fp -> 4803723
    # Send-op737    [1162431105422, 1162434775982] lies inside it                     -> 3670560
    # Receive-op794 [1162434796392, 1162438953047]                                    -> 4156655
    # Send-op868    [1162435928354, 1162438966800] ends 13753 after Receive-op794 ends -> 3038446
    # any communication: 4803723 + (1162438966800 - 1162434796392 = 4170408) = 8974131
    # not Receive: 3670560 + 3038446 = 6709006; bubble = 8974131 - 6709006 = 2265125
    assert row["bubble_s"] == pytest.approx(2265125 * 1e-8)
    assert row["comm_not_overlapped_s"] == pytest.approx(6709006 * 1e-8)
    assert row["communication_s"] == pytest.approx(8974131 * 1e-8)
    # computing: (end - fp) - any communication = 18018741 - 8974131 = 9044610
    assert row["computing_s"] == pytest.approx(9044610 * 1e-8)
    assert row["data_wait_s"] == pytest.approx(82528 * 1e-8)
    assert 82528 + 9044610 + 2265125 + 6709006 == 18101269
    # the op rows keep each op's own duration, unclipped
    assert ms(r.tables["profile_comm"].filter(pl.col("op") == ops[0])["elapse_s"][0]) == pytest.approx(48.11086)


def test_run2_one_real_step_and_the_zero_row():
    r = read(RUN2 / "step_trace_raw_1_detail_time.csv")
    df = r.tables["profile_steps"]
    assert df["step"].to_list() == [1] and df["rank"].to_list() == [1]
    row = df.row(0, named=True)
    # total 2370905 = iteration_interval 0 + fp_and_bp 2366808 + tail 4097; no communication columns:
    # fp_and_bp and tail (update) are all compute
    assert ms(row["total_s"]) == pytest.approx(23.70905)
    assert ms(row["computing_s"]) == pytest.approx((2366808 + 4097) * TICK_MS)
    assert row["data_wait_s"] == 0 and row["bubble_s"] == 0 and row["comm_not_overlapped_s"] == 0
    assert "profile_comm" not in r.tables
    (d,) = r.diagnostics  # the "0" row (zeros but iteration_interval 1243211) is not a step
    assert d.slug == "profiler-step-trace-row" and d.offset == 3


def test_pre_1_0_layout_parallel_ops_and_absent_ops():
    r = read(UT / "profiler" / "step_trace_raw_10_detail_time.csv")
    steps, comm = r.tables["profile_steps"], r.tables["profile_comm"]
    assert steps["step"].to_list() == list(range(1, 41)) and steps["rank"].unique().to_list() == [10]
    # start/end before duration in this layout; step 40 writes zeros for all 4 ops: absent
    counts = dict(comm.group_by("step").len().iter_rows())
    assert counts.get(40) is None and set(counts.values()) == {4}
    assert comm["kind"].unique().to_list() == ["collective"]  # "parallel": type unknown, not a Receive
    # step 1 (interval 0, fp = start 45000025226, end 45004034753): the four ops are
    # [45000044023, 45000060886] 16863, [45001043581, 45001343373] 299792,
    # [45002254048, 45002452830] 198782, [45000043807, 45000065736] 21929, which contains the first:
    # union = 21929 + 299792 + 198782 = 520503
    row = steps.row(0, named=True)
    assert row["comm_not_overlapped_s"] == pytest.approx(520503 * 1e-8)
    assert row["computing_s"] == pytest.approx((4009527 - 520503) * 1e-8)


# --------------------------------------------------------------------------- ascend_cluster_analyse


def test_cluster_analyse_pipeline_mapping():
    r = read(CLUSTER / "ascend_cluster_analyse_pipeline-parallel_2_4_0.csv")
    df = r.tables["profile_steps"]
    assert not r.diagnostics and df["source"].unique().to_list() == ["cluster_analyse"]
    assert df["step"].to_list() == [1, 2, 3, 4, 5]  # line 7 is MindSpore's average
    row = df.row(0, named=True)
    # step 1: computation 13.8202, communication_alone 164.476, stage 121.8989, receive_alone 56.3973,
    # collective_communication_alone 108.0787; receive + collective = 56.3973 + 108.0787 = 164.476
    assert ms(row["computing_s"]) == pytest.approx(13.8202)
    assert ms(row["bubble_s"]) == pytest.approx(56.3973)
    assert ms(row["comm_not_overlapped_s"]) == pytest.approx(108.0787)
    assert ms(row["total_s"]) == pytest.approx(13.8202 + 164.476)  # = 178.2962 = stage 121.8989 + 56.3973
    assert row["data_wait_s"] is None and row["free_s"] is None  # inside MindSpore's computation_time
    assert r.settings["pipeline_stage"].value == 2 and r.settings["device_num"].value == 4
    r2 = read(CLUSTER / "ascend_cluster_analyse_pipeline-parallel_2_4_2.csv").tables["profile_steps"]
    assert ms(r2["computing_s"][0]) == pytest.approx(122.7529)
    assert ms(r2["total_s"][0] - r2["computing_s"][0]) == pytest.approx(2041.2075)  # communication_alone
    assert ms(r2["total_s"][1] - r2["computing_s"][1]) == pytest.approx(56.0189)


def test_cluster_analyse_other_layouts():
    # MindInsight's run_2: header "iteration_interval, fp_and_bp, tail" in ticks, one row 0, 2366808, 4097
    r = read(RUN2 / "ascend_cluster_analyse_data-parallel_1_1_1.csv")
    row = r.tables["profile_steps"].row(0, named=True)
    assert ms(row["total_s"]) == pytest.approx((2366808 + 4097) * TICK_MS) and row["data_wait_s"] == 0
    # one row only (no average row), and rank 1 in a rank size of 1: the number is a device id
    assert sorted(slugs(r)) == ["profiler-cluster-rows", "profiler-rank"]
    # run_3: "computation,communication_alone_time" (model parallel, no Receive op)
    r3 = read(RUN34 / "run_3/normal_run/profiler/ascend_cluster_analyse_model-parallel_1_2_1.csv")
    row = r3.tables["profile_steps"].row(0, named=True)
    assert ms(row["computing_s"]) == pytest.approx(651.9051) and ms(row["comm_not_overlapped_s"]) == pytest.approx(1293.1231)
    assert row["bubble_s"] == 0 and ms(row["total_s"]) == pytest.approx(651.9051 + 1293.1231)
    # run_4 (hand-made by MindInsight): receive 368.7766 + collective 227.1234 = 595.9 is not 1293.1231
    r4 = read(RUN34 / "run_4/normal_run/profiler/ascend_cluster_analyse_pipeline-parallel_1_2_1.csv")
    assert ms(r4.tables["profile_steps"]["bubble_s"][0]) == pytest.approx(368.7766)
    assert "profiler-implausible" in slugs(r4)


# --------------------------------------------------------------------------- hccl_raw


def test_hccl_raw_per_op_rows():
    r = read(CLUSTER / "hccl_raw_0.csv")
    df = r.tables["profile_comm"]
    assert df.schema == PROFILE_COMM and not r.diagnostics and df["source"].unique().to_list() == ["hccl_raw"]
    # steps 1-6 of 97 ops, the last one partial (15 ops); the "-" average row dropped
    assert dict(df.group_by("step").len().iter_rows()) == {1: 97, 2: 97, 3: 97, 4: 97, 5: 97, 6: 15}
    per_step = df.group_by("step").agg(pl.col("transit_s").sum(), pl.col("wait_s").sum()).sort("step")
    # the step row's own figures are the sums over its ops: step 1 communication_cost 2.60018,
    # wait_cost 270.25056 ms (waits of ops on parallel streams: more than the 178 ms step)
    assert ms(per_step["transit_s"][0]) == pytest.approx(2.60018)
    assert ms(per_step["wait_s"][0]) == pytest.approx(270.25056)
    assert all(2.59 < ms(t) < 2.61 for t in per_step["transit_s"][:5])
    assert all(265 < ms(w) < 272 for w in per_step["wait_s"][:5])
    # stream_41_0_AllReduce-op4582, step 1: ["1", 0.00322, 0.01035, {"1-0": {"SDMA": [0.00237, 4.096,
    # 1728270.04]}, "0-0": {"SDMA": [0.00085, 2.048, ...]}}]: the link 1->0 (not the copy within rank 0)
    op = df.filter((pl.col("step") == 1) & (pl.col("op") == "stream_41_0_AllReduce-op4582")).row(0, named=True)
    assert ms(op["transit_s"]) == pytest.approx(0.00322) and ms(op["wait_s"]) == pytest.approx(0.01035)
    assert op["transport"] == "SDMA" and op["bytes"] == pytest.approx(4096)  # 4.096 KB of 1000 bytes
    assert op["bandwidth_gbps"] == pytest.approx(4096 / 0.00237e-3 / 1e9)  # = 1728270 KB/s / 1e6
    assert op["kind"] == "collective" and op["elapse_s"] is None
    assert set(df.filter(pl.col("op").str.contains("Receive|Send"))["kind"]) == {"p2p"}


# --------------------------------------------------------------------------- operators and FLOPs


def test_aicore_type_old_layout():
    r = read(RUN2 / "aicore_intermediate_1_type.csv")
    df = r.tables["profile_ops"]
    assert df.schema == PROFILE_OPS and not r.diagnostics and df.height == 21
    assert df["rank"].unique().to_list() == [1]  # from _1_ before the suffix
    assert df["core"].unique().to_list() == ["AI_CORE"] and df["source"].unique().to_list() == ["aicore_type"]
    total = df["total_s"].sum()
    assert ms(total) == pytest.approx(23.088095)  # the sum of execution_time over the 21 types
    mm = df.filter(pl.col("type") == "MatMul").row(0, named=True)
    assert ms(mm["total_s"]) == pytest.approx(20.65774) and mm["calls"] == 9 and mm["name"] is None
    share = {t: round(100 * s / total, 2) for t, s in df.select("type", "total_s").iter_rows()}
    # 20.65774 / 23.088095 = 89.47 %, 1.24128 / 23.088095 = 5.38 %, 0.46107 / 23.088095 = 2.00 %
    assert (share["MatMul"], share["ApplyMomentum"], share["Conv2D"]) == (89.47, 5.38, 2.00)


def test_aicore_detail_agrees_with_type_file():
    detail = read(RUN2 / "aicore_intermediate_1_detail.csv").tables["profile_ops"]
    types = read(RUN2 / "aicore_intermediate_1_type.csv").tables["profile_ops"]
    assert detail.height == 105 and detail["calls"].unique().to_list() == [1]
    by_type = detail.group_by("type").agg(pl.col("total_s").sum(), pl.col("calls").sum())
    joined = types.join(by_type, on="type", suffix="_detail")
    assert joined.height == 21  # every type named from its ops' names (Conv2D-op91 -> Conv2D)
    assert (joined["total_s"] - joined["total_s_detail"]).abs().max() < 1e-12
    assert (joined["calls"] == joined["calls_detail"]).all()


def test_aicore_later_layout_totals_and_percent_check():
    t = read(UT / "run_1/profiler/aicore_intermediate_1_type.csv", UT)
    d = read(UT / "run_1/profiler/aicore_intermediate_1_detail.csv", UT).tables["profile_ops"]
    td = t.tables["profile_ops"].filter(pl.col("type") == "TransData").row(0, named=True)
    assert ms(td["total_s"]) == pytest.approx(0.08612) and td["calls"] == 9  # total_time, execution_frequency
    # detail: execution_time is the mean call, total = mean * execution_frequency
    # (Default/GetNext-op6: 5e-05 ms * 3)
    op = d.filter(pl.col("name") == "Default/GetNext-op6").row(0, named=True)
    assert op["calls"] == 3 and ms(op["total_s"]) == pytest.approx(5e-05 * 3)
    assert ms(d.filter(pl.col("type") == "TransData")["total_s"].sum()) == pytest.approx(0.08612)
    # its percent column adds up to 71.10, not 100: flagged
    assert "profiler-implausible" in slugs(t)


def test_aicpu_ops():
    df = read(RUN2 / "aicpu_intermediate_1.csv").tables["profile_ops"]
    rows = {r["type"]: r for r in df.iter_rows(named=True)}
    assert df["calls"].sum() == 5 and df["core"].unique().to_list() == ["AI_CPU"]
    assert ms(rows["InitData"]["total_s"]) == pytest.approx(7.906)
    # GetNext: total_time 0.888 and 0.293 ms
    assert rows["GetNext"]["calls"] == 2 and ms(rows["GetNext"]["total_s"]) == pytest.approx(0.888 + 0.293)
    assert ms(rows["GetNext"]["max_s"]) == pytest.approx(0.888)


def test_flops_summary_units():
    want = {0: 0.23, 1: 0.229, 2: 0.725, 3: 0.725}  # FLOPS_Utilization, percent
    for rank, pct in want.items():
        r = read(CLUSTER / f"flops_summary_{rank}.json")
        df = r.tables["profile_summary"]
        assert df.schema == PROFILE_SUMMARY and not r.diagnostics
        values = {k: (v, u) for k, v, u in df.select("key", "value", "unit").iter_rows()}
        assert values["flops_utilization"][0] == pytest.approx(pct / 100) and values["flops_utilization"][1] == "fraction"
    # rank 0: {"FLOPs": 107146.763 (MFLOP), "FLOPS": 5385.552 (GFLOP/s, mean over ops)}
    values = {k: v for k, v in read(CLUSTER / "flops_summary_0.json").tables["profile_summary"].select("key", "value").iter_rows()}
    assert values["total_flops"] == pytest.approx(107146.763e6)
    assert values["mean_op_flops_per_s"] == pytest.approx(5385.552e9)


# --------------------------------------------------------------------------- data pipeline


def test_minddata_pipeline_queues_and_order():
    r = read(RUN2 / "minddata_pipeline_raw_1.csv")
    df = r.tables["profile_data"]
    assert df.schema == PROFILE_DATA and not r.diagnostics
    rows = {row["stage"]: row for row in df.iter_rows(named=True)}
    batch = rows["BatchOp(id=0)"]
    # output_queue_size [0, 2]: average 1.0 of a 64 long queue = 0.015625; empty in 1 of 2 samples
    assert batch["queue_usage"] == 0.015625 and batch["queue_empty_share"] == 0.5 and batch["samples"] == 2
    assert batch["workers"] == 4 and batch["parent_stage"] is None
    for stage in ("MapOp(id=1)", "MapOp(id=2)", "ImageFolderOp(id=3)"):
        assert rows[stage]["queue_usage"] == 0.0 and rows[stage]["queue_empty_share"] == 1.0  # [0, 0] of 128
    assert [rows[s]["parent_stage"] for s in ("MapOp(id=1)", "MapOp(id=2)", "ImageFolderOp(id=3)")] == [
        "BatchOp(id=0)", "MapOp(id=1)", "MapOp(id=2)"]
    # run_1: Batch has no output queue (inline): nulls, not zeros
    b = read(UT / "run_1/profiler/minddata_pipeline_raw_1.csv", UT).tables["profile_data"].row(0, named=True)
    assert b["stage"] == "Batch(id=0)" and b["queue_usage"] is None and b["queue_empty_share"] is None


def test_device_queue_and_iterator_traces():
    df = read(RUN2 / "device_queue_profiling_1.txt").tables["profile_data"]
    rows = {row["stage"]: row for row in df.iter_rows(named=True)}
    # "1 64 1 0 10": queue of capacity 64 holds 0 at batch 1; "0 2 1 4 10": batch 1 took 4 ms,
    # "0 0 1 0 10": 0 ms to get it from the pipeline, "0 1 1 4 10": 4 ms to push it to the device
    q = rows["device_queue"]
    assert (q["queue_usage"], q["queue_empty_share"], q["samples"]) == (0.0, 1.0, 1)
    assert ms(q["time_s"]) == pytest.approx(4)
    assert rows["device_queue.get"]["time_s"] == 0 and ms(rows["device_queue.push"]["time_s"]) == pytest.approx(4)
    it = read(RUN2 / "dataset_iterator_profiling_1.txt").tables["profile_data"].row(0, named=True)
    # "1 64 1 3": 3 of 64; no timestamp, so no batch time
    assert it["stage"] == "iterator" and it["queue_usage"] == 3 / 64 and it["time_s"] is None


def test_minddata_aicpu_get_next():
    row = read(RUN2 / "minddata_aicpu_1.txt").tables["profile_data"].row(0, named=True)
    # GetNext_dequeue_wait 154907895305 154907895306 3 / ...614 ...614 2 / ...920 ...921 1 (us)
    assert row["samples"] == 3 and row["time_s"] == pytest.approx((1 + 0 + 1) / 3 * 1e-6)
    assert row["queue_empty_share"] == 0


def test_cpu_utilization():
    r = read(RUN2 / "minddata_cpu_utilization_1.json")
    values = {k: v for k, v in r.tables["profile_summary"].select("key", "value").iter_rows()}
    # host user [10, 20, 30] %: the first sample is the writer's 0 placeholder -> (20 + 30) / 2 = 25 %
    assert values["host_cpu_user"] == pytest.approx(0.25) and values["host_cpu_idle"] == pytest.approx(0.10)
    # process user + sys [20, 40, 60] % of one core -> 0.4 cores
    assert values["process_cpu_cores"] == pytest.approx(0.4)
    assert "profiler-not-read" in slugs(r)  # the per-operator CPU use


# --------------------------------------------------------------------------- every file, bad input


def _files() -> list[Path]:
    return sorted(p for p in CONF.glob("mi-*/**/*") if p.is_file() and p.name != "PROVENANCE.md")


def test_every_file_is_claimed_and_gives_rows_or_says_why():
    files = _files()
    assert len(files) == 49
    for path in files:
        art = Artifact(str(path), path.relative_to(CONF).as_posix(), path.stat().st_size, 0.0)
        assert profiler.READER.claims(art), path
        r = profiler.READER.read(art)
        assert r.rows() > 0 or r.diagnostics, path
        assert "profiler-unreadable" not in slugs(r), path


READ_FILES = [p for p in _files() if profiler.format_of(p.name) and read(p).rows() > 0]


@pytest.mark.parametrize("path", READ_FILES, ids=lambda p: p.relative_to(CONF).as_posix())
def test_truncated_and_flipped_copies_never_raise(tmp_path: Path, path: Path):
    raw = path.read_bytes()
    rng = random.Random(path.name)
    copy = tmp_path / "profiler" / path.name
    copy.parent.mkdir()
    cuts = sorted({0, len(raw) - 1, *(rng.randrange(len(raw)) for _ in range(8))})
    for cut in cuts:
        copy.write_bytes(raw[:cut])
        r = read(copy, tmp_path)
        assert "profiler-unreadable" not in slugs(r), cut
        if cut == 0:
            assert r.rows() == 0 and r.diagnostics
    for _ in range(8):
        flipped = bytearray(raw)
        for pos in rng.sample(range(len(raw)), k=min(4, len(raw))):
            flipped[pos] ^= 1 << rng.randrange(8)
        copy.write_bytes(bytes(flipped))
        read(copy, tmp_path)  # the dispatcher's last resort may answer, nothing may raise


def test_truncated_step_trace_keeps_complete_steps(tmp_path: Path):
    raw = (CLUSTER / "step_trace_raw_2_detail_time.csv").read_bytes()
    lines = raw.split(b"\n")
    copy = tmp_path / "profiler" / "step_trace_raw_2_detail_time.csv"
    copy.parent.mkdir()
    copy.write_bytes(b"\n".join(lines[:4]) + b"\n" + lines[4][: len(lines[4]) // 2])  # killed in step 4
    r = read(copy, tmp_path)
    full = read(CLUSTER / "step_trace_raw_2_detail_time.csv").tables["profile_steps"]
    assert r.tables["profile_steps"].drop("file").equals(full.head(3).drop("file"))
    assert [d.slug for d in r.diagnostics] == ["profiler-row"] and r.diagnostics[0].offset == 5
