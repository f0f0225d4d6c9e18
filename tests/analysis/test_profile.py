"""The profiler analysis on real profiler files (tests/fixtures/conformance/, each with its
PROVENANCE.md), with the expected figures worked out by hand from the files themselves.

Units: MindInsight-era step_trace_raw values are 10 ns ticks (x 1e-5 = ms); its cluster
analysis and the aicore/aicpu files are ms; msprof-analyze's cluster_step_trace_time is µs.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest

from postmortem.analysis import analyze
from postmortem.report.metrics_json import dumps, load_schema, to_metrics
from postmortem.load import load_run
from postmortem.words import english as en

CONF = Path(__file__).resolve().parent.parent / "fixtures" / "conformance"


@pytest.fixture(scope="module")
def cluster4():
    return analyze(load_run(str(CONF / "mi-cluster-4rank")))


@pytest.fixture(scope="module")
def run2():
    return analyze(load_run(str(CONF / "mi-run2-ascend-profiler")))


@pytest.fixture(scope="module")
def mstt_cluster():
    return analyze(load_run(str(CONF / "mstt-cluster-analysis-output")))


def _step_trace(rank: int) -> list[tuple[int, float, float]]:
    """(step, total ms, Receive ops' summed duration ms) read straight from the CSV."""
    rows = list(csv.reader((CONF / "mi-cluster-4rank" / "profiler" / f"step_trace_raw_{rank}_detail_time.csv").open()))
    head = rows[0]
    recv = [i for i, c in enumerate(head) if c.startswith("stream_") and "_Receive-op" in c
            and not c.endswith(("_start_point", "_end_point"))]
    total = head.index("total")
    return [(int(r[0]), int(r[total]) * 1e-5, sum(int(r[i]) for i in recv) * 1e-5) for r in rows[1:] if r[0].isdigit()]


# --------------------------------------------------------------------------- mi-cluster-4rank


def test_pipeline_run_first_stage_waits_in_receive(cluster4):
    """Ranks 0/1 (stage 0) wait; ranks 2/3 (stage 1) are the ones waited for."""
    ranks = {r.rank: r for r in cluster4.ranks.profile}
    assert set(ranks) == {0, 1, 2, 3} and all(r.source == "step_trace_raw" for r in ranks.values())
    # rank 0, all 5 steps (none left out): Receive 173.85 + 173.05 + 171.07 + 170.79 + 170.68 = 859.45 ms of
    # 178.19 + 181.01 + 179.14 + 178.79 + 178.71 = 895.84 ms -> 95.9 %, "~173 ms of each ~179 ms step"
    rows = _step_trace(0)
    assert [round(t, 2) for _, t, _ in rows] == [178.19, 181.01, 179.14, 178.79, 178.71]
    expected = sum(r for _, _, r in rows) / sum(t for _, t, _ in rows)
    assert expected == pytest.approx(0.9594, abs=5e-4)
    assert ranks[0].receive_share == pytest.approx(expected, rel=1e-9)
    # waiting on others = exposed collective + bubble: step 1 (63.90 + 108.96) / 178.19 = 97.0 %, step 2
    # (64.21 + 110.75) / 181.01 = 96.7 % (docs/formats/profiler-mindinsight.md); mean over 5 steps 96.7 %
    assert ranks[0].wait_share == pytest.approx(0.967, abs=0.003)
    assert ranks[0].step_time_s == pytest.approx(sum(t for _, t, _ in rows) / 5 / 1e3, rel=1e-6)
    # stage 1 computes ~120 ms of ~179 ms (66-67 %) and waits ~32 %
    assert ranks[2].compute_share == pytest.approx(0.669, abs=0.005)
    assert ranks[2].wait_share == pytest.approx(0.32, abs=0.01)
    g = cluster4.ranks.stragglers
    assert g.awaited == (2, 3) and g.waiting == (0, 1) and g.cause == "compute"
    assert [ranks[i].role for i in range(4)] == ["waits", "waits", "awaited", "awaited"]


def test_pipeline_run_outliers_and_tool_figures(cluster4):
    p = cluster4.profile
    # rank 2 step 1: 2163.85 ms against a median of 178.9 ms (> 2x), 1993 ms of it in Receive; rank 3: 2376.13 ms
    assert [(o.rank, o.step) for o in p.outliers] == [(2, 1), (3, 1)]
    assert p.outliers[0].total_s == pytest.approx(2163.848e-3, abs=1e-5) and p.outliers[0].part == "bubble"
    assert _step_trace(2)[0][2] == pytest.approx(1993.19, abs=0.01)
    assert p.breakdown.steps == 18 and p.breakdown.excluded == 2 and p.breakdown.ranks == 4
    assert p.breakdown.source == "step_trace_raw" and p.breakdown.total_basis == "given"
    # MindSpore's own split of the same steps beside ours
    (alt,) = p.alternatives
    assert alt.source == "cluster_analyse" and alt.steps == 18
    # MindSpore's rank 0: communication_alone / (computation + communication_alone), its 5 step rows
    rows = list(csv.DictReader((CONF / "mi-cluster-4rank" / "profiler" / "ascend_cluster_analyse_pipeline-parallel_2_4_0.csv").open()))[:5]
    alone = sum(float(r["communication_alone_time"]) for r in rows)
    total = alone + sum(float(r["computation_time"]) for r in rows)
    assert alone / total == pytest.approx(0.9184, abs=1e-4)  # 820.59 / 893.52
    rank0 = next(r for r in cluster4.ranks.profile if r.rank == 0)
    assert rank0.tool["cluster_analyse:wait_share"] == pytest.approx(alone / total, rel=1e-6)
    # flops_summary_0.json FLOPS_Utilization 0.23 (percent) -> 0.0023
    assert rank0.tool["flops_utilization"] == pytest.approx(0.0023)


def test_pipeline_run_triage_and_profile_step_times(cluster4):
    t = cluster4.triage
    assert (t.verdict, t.reason) == ("communication-bound", "pipeline_wait")
    assert t.params["waiting"] == [0, 1] and t.params["awaited"] == [2, 3] and t.params["stages"] == 2
    assert t.params["receive_share"] == pytest.approx(0.96, abs=0.005)
    assert t.actions[0] == "stage_balance" and "micro_batches" in t.actions
    assert cluster4.profile.breakdown.comm_flag
    # a profile-only run: e2e = the profiled step totals of rank 0; step 1 is excluded as the launch's first,
    # so the median of steps 2-5 is (179.140 + 178.794) / 2 = 178.97 ms
    assert cluster4.throughput.step_time_s.value == pytest.approx((179.13973 + 178.79385) / 2e3, rel=1e-6)
    assert any(d.slug == "steps-from-profile" for d in cluster4.diagnostics)
    comm = {o.type: o for o in cluster4.profile.communication.ops}
    assert list(comm) == ["Receive", "Send", "AllReduce"]
    # Receive over all 20 (rank, step) rows: per rank mean of the summed Receive columns / mean step
    recv = sum(r for rank in range(4) for _, _, r in _step_trace(rank))
    steps = sum(t for rank in range(4) for _, t, _ in _step_trace(rank))
    assert comm["Receive"].share == pytest.approx(recv / steps, rel=1e-6)
    assert comm["Receive"].kind == "p2p"


# --------------------------------------------------------------------------- mi-run2


def test_single_device_topn_and_data_pipeline(run2):
    p = run2.profile
    ai_core = next(o for o in p.operators if o.scope == "ai_core")
    assert ai_core.source == "aicore_detail"  # the type file describes the same time: not added
    top = ai_core.by_type[0]
    # aicore_intermediate_1_type.csv: MatMul 20.65774 ms, percent 89.47
    rows = list(csv.DictReader((CONF / "mi-run2-ascend-profiler" / "profiler" / "aicore_intermediate_1_type.csv").open()))
    matmul = next(float(r["execution_time"]) for r in rows if r["op_type"] == "MatMul")
    assert top.type == "MatMul" and top.total_s == pytest.approx(matmul / 1e3, abs=1e-8)
    assert top.share == pytest.approx(0.8947, abs=5e-5)
    assert top.share == pytest.approx(matmul / sum(float(r["execution_time"]) for r in rows), abs=1e-6)
    ai_cpu = next(o for o in p.operators if o.scope == "ai_cpu")
    # aicpu_intermediate_1.csv total_time: InitData 7.906 of 7.906 + 0.888 + 0.282 + 0.293 + 0.325 = 9.694 ms
    assert ai_cpu.by_type[0].type == "InitData" and ai_cpu.by_type[0].share == pytest.approx(7.906 / 9.694)
    d = p.data
    # minddata_pipeline_raw_1.csv: BatchOp [0, 2] of 64, the MapOps and ImageFolderOp [0, 0]: the source is empty
    assert [s.stage for s in d.stages] == ["BatchOp(id=0)", "MapOp(id=1)", "MapOp(id=2)", "ImageFolderOp(id=3)"]
    assert d.slowest == "ImageFolderOp(id=3)" and d.slowest_rule == "source_empty"
    # device_queue_profiling_1.txt: one queue record "1 64 1 0 10": size 0 of 64
    assert (d.queue_stage, d.queue_empty_share, d.queue_samples) == ("device_queue", 1.0, 1)


def test_single_device_triage(run2):
    t = run2.triage
    # the one profiled step: fp_and_bp 2,366,808 + tail 4,097 ticks of 2,370,905 with no iteration gap
    assert (t.verdict, t.reason) == ("compute-bound", "compute_busy")
    assert t.params["top_type"] == "MatMul" and t.params["share"] == pytest.approx(1.0)
    assert t.actions == ("op_fusion", "parallel_strategy", "graph_compile")
    # the empty queue is said, though the measured step shows no wait: it does not decide
    assert [(s.verdict, s.reason) for s in t.also] == [("data-bound", "data_queue_empty")]
    assert {e.key: e.value for e in t.evidence}["data_wait_share"] == 0.0


# --------------------------------------------------------------------------- msprof-analyze cluster output


def test_cluster_straggler_is_the_rank_others_wait_for(mstt_cluster):
    """msprof-analyze's advisor says 'communication max difference 622 ms' (rank 5 - rank 1); the
    rank the others wait for is rank 1, the one that waits least and idles most."""
    ranks = {r.rank: r for r in mstt_cluster.ranks.profile}
    # rank 1: 133385.977 of 80435.7465 + 133385.977 + 1488610.059 = 1702431.78 µs (Stage 1702431.75)
    assert ranks[1].step_time_s == pytest.approx(1702431.78e-6, abs=1e-6)
    assert ranks[1].wait_share == pytest.approx(133385.977 / 1702431.78, rel=1e-6)
    assert (ranks[5].comm_exposed_s - ranks[1].comm_exposed_s) == pytest.approx(0.622989, abs=1e-6)
    g = mstt_cluster.ranks.stragglers
    assert g.awaited == (1,) and g.cause == "idle"
    # waiting: wait share >= rank 1's 7.8 % + 10 points: ranks 0 (39.0 %), 2 (30.8 %), 4 (28.3 %), 5 (43.7 %), 7 (32.0 %)
    assert g.waiting == (0, 2, 4, 5, 7)
    t = mstt_cluster.triage
    # the device idles 68.8 % of the capture: Σ Free / Σ step over the 8 ranks
    assert (t.verdict, t.reason) == ("host-bound", "device_idle") and t.params["awaited"] == [1]
    assert t.actions[0] == "check_straggler"
    assert ("communication-bound", "straggler") in [(s.verdict, s.reason) for s in t.also]


# --------------------------------------------------------------------------- metrics.json


@pytest.mark.parametrize("folder", ["mi-cluster-4rank", "mi-run2-ascend-profiler", "mstt-cluster-analysis-output",
                                    "msprof-tilelang-app-prof", "mi-run3-run4-parallel"])
def test_metrics_json_profile_valid(folder):
    m = json.loads(dumps(to_metrics(analyze(load_run(str(CONF / folder))))))
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["schema_version"] == "1.5" and m["profile"] is not None
    assert m["triage"]["verdict"] in ("data-bound", "compute-bound", "communication-bound", "memory-bound", "host-bound", "unknown")


def test_metrics_json_profile_figures(cluster4):
    m = json.loads(dumps(to_metrics(cluster4)))
    p = m["profile"]
    b = p["breakdown"]
    assert p["steps"] == 18 and p["step_time_s"] == pytest.approx(cluster4.profile.breakdown.step_time_s)
    parts = b["compute_s"] + b["comm_exposed_s"] + b["bubble_s"] + b["data_wait_s"]
    assert parts == pytest.approx(p["step_time_s"], rel=1e-9)  # the partition adds up to the step
    assert p["comm_share"] == pytest.approx((b["comm_exposed_s"] + b["bubble_s"]) / p["step_time_s"])
    assert [o["name"] for o in p["comm_ops"]] == ["Receive", "Send", "AllReduce"]
    stats = {s["rank"]: s for s in m["ranks"]["stats"]}
    assert stats[2]["profile"]["role"] == "awaited" and stats[0]["profile"]["role"] == "waits"
    assert m["ranks"]["stragglers"]["awaited"] == [2, 3]
    assert m["triage"]["reason"] == "pipeline_wait" and m["triage"]["actions"][0] == "stage_balance"


def test_no_profile_is_null():
    m = to_metrics(analyze(load_run(str(Path(__file__).resolve().parents[2] / "samples" / "gpt-tiny-base"))))
    assert m["profile"] is None and m["ranks"]["stats"] == []
    assert m["triage"]["verdict"] == "unknown"


# --------------------------------------------------------------------------- torch_npu kernel_details (mstt)


def test_kernel_details_broadcast_flagged():
    """msprof-analyze's advisor does not flag the broadcast that takes 77.9 % of the kernel time."""
    a = analyze(load_run(str(CONF / "mstt-torchnpu-kd-traceview-2023")))
    kernels = next((o for o in (a.profile.operators if a.profile else ()) if o.scope == "kernels"), None)
    if kernels is None:
        pytest.skip("kernel_details.csv is read by the MindSpore 2.x / torch_npu reader (branch prof-ascend)")
    path = CONF / "mstt-torchnpu-kd-traceview-2023" / "worker0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.DictReader(path.open()))
    total = sum(float(r["Duration(us)"]) for r in rows)  # 591 kernels, 396,807.04 µs
    broadcast = sum(float(r["Duration(us)"]) for r in rows if r["Type"] == "hcom_broadcast_")  # 2 x, 308,989.62 µs
    assert (len(rows), round(total, 2), round(broadcast, 2)) == (591, 396807.04, 308989.62)
    top = kernels.by_type[0]
    assert top.type == "hcom_broadcast_" and top.communication and top.calls == 2
    assert top.share == pytest.approx(broadcast / total, rel=1e-9)  # 77.9 %
    signal = next(s for s in (a.triage, *a.triage.also) if s.reason == "comm_kernels")
    assert signal.params["top_type"] == "hcom_broadcast_" and signal.params["broadcast"]
