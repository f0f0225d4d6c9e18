"""The triage and profiler rules at their thresholds (analysis/thresholds.py), the source
preference, the memory split from real files, and damaged real profiler files."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.analysis import thresholds as th
from postmortem.analysis.operators import preferred
from postmortem.load import load_run
from postmortem.model import Run

from .runs import make_run

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "tests" / "fixtures" / "conformance"


def _steps(**parts) -> dict:
    """Two ranks x three steps of one layout with the given per-step seconds of each part."""
    n = 6
    cols = {"rank": [0, 0, 0, 1, 1, 1], "step": [1, 2, 3, 1, 2, 3], "source": ["step_trace_time"] * n}
    cols.update({k: [v] * n for k, v in parts.items()})
    return cols


def _triage(**parts):
    a = analyze(make_run(tables={"profile_steps": _steps(**parts)}))
    return a.triage


def test_data_wait_at_the_articles_thirty_percent():
    t = _triage(computing_s=0.65, data_wait_s=0.35)
    assert (t.verdict, t.reason) == ("data-bound", "data_wait") and t.params["strong"]
    assert t.actions == ("data_workers", "data_prefetch", "data_offload")
    weak = _triage(computing_s=0.88, data_wait_s=0.12)  # above DATA_NOTABLE (10 %), below the article's 30 %
    assert weak.verdict == "data-bound" and not weak.params["strong"]
    none = _triage(computing_s=0.95, data_wait_s=0.05)
    assert none.verdict == "compute-bound"  # 95 % compute: past COMPUTE_BUSY (70 %)


def test_communication_share_above_a_quarter():
    assert _triage(computing_s=0.74, comm_not_overlapped_s=0.26).verdict == "communication-bound"
    t = _triage(computing_s=0.76, comm_not_overlapped_s=0.24)
    assert t.verdict == "compute-bound" and t.reason == "compute_busy"
    # the largest time share decides: 30 % communication against 40 % data wait
    assert _triage(computing_s=0.3, comm_not_overlapped_s=0.3, data_wait_s=0.4).verdict == "data-bound"


def test_pipeline_bubble_from_thirty_percent():
    t = _triage(computing_s=0.6, bubble_s=0.32, comm_not_overlapped_s=0.08)
    assert (t.verdict, t.reason) == ("communication-bound", "pipeline_bubble")
    assert t.actions == ("micro_batches", "stage_balance")
    t = _triage(computing_s=0.6, bubble_s=0.10, comm_not_overlapped_s=0.30)
    assert t.reason == "comm_exposed"


def test_idle_device_is_host_bound_unless_the_data_queue_is_empty():
    t = _triage(computing_s=0.6, free_s=0.4)
    assert (t.verdict, t.reason) == ("host-bound", "device_idle") and t.actions[0] == "host_sink_mode"
    data = {"rank": [0], "stage": ["device_queue"], "op_type": ["device_queue"], "queue_usage": [0.05],
            "queue_empty_share": [0.8], "samples": [50], "source": ["minddata_device_trace"]}
    a = analyze(make_run(tables={"profile_steps": _steps(computing_s=0.6, free_s=0.4), "profile_data": data}))
    assert (a.triage.verdict, a.triage.reason) == ("data-bound", "data_queue_empty")
    assert a.triage.params["idle_share"] == pytest.approx(0.4)


def test_empty_queue_alone_decides_only_without_a_measured_wait():
    data = {"rank": [0], "stage": ["device_queue"], "queue_empty_share": [0.5], "samples": [10], "source": ["x"]}
    a = analyze(make_run(tables={"profile_data": data}))
    assert (a.triage.verdict, a.triage.reason) == ("data-bound", "data_queue_empty")
    below = dict(data, queue_empty_share=[th.QUEUE_EMPTY])  # MindInsight warns only above 30 %
    assert analyze(make_run(tables={"profile_data": below})).triage.verdict == "unknown"


def test_memory_near_the_device_limit(tmp_path):
    mem = {"rank": [0, 0], "time_s": [1.0, 2.0], "allocated_bytes": [30e9, 62e9], "reserved_bytes": [63e9, 63e9],
           "component": ["MindSpore", "MindSpore"]}
    run = make_run(tables={"memory": mem, "profile_steps": _steps(computing_s=0.9, data_wait_s=0.05)},
                   settings={"device": "910B2"})
    t = analyze(run).triage
    # 62e9 of 64 GiB = 68,719,476,736 bytes: 90.2 %, past MEMORY_NEAR (90 %); compute 94.7 % loses to memory
    assert (t.verdict, t.reason) == ("memory-bound", "memory_near_limit")
    assert t.params["share"] == pytest.approx(62e9 / 64 / 1024**3)
    assert t.actions[:2] == ("mixed_precision", "grad_accumulation")


def test_straggler_rule_needs_more_waiting_than_awaited_ranks():
    # four ranks: three wait 40 %, one waits 5 % -> it is awaited
    cols = {"rank": [0, 1, 2, 3], "step": [1, 1, 1, 1], "source": ["step_trace_time"] * 4,
            "computing_s": [0.6, 0.6, 0.6, 0.95], "comm_not_overlapped_s": [0.4, 0.4, 0.4, 0.05]}
    a = analyze(make_run(tables={"profile_steps": cols}))
    g = a.ranks.stragglers
    assert g.awaited == (3,) and g.waiting == (0, 1, 2) and g.cause == "compute"
    # one rank waits more than three others: a fast rank, not three stragglers
    cols2 = dict(cols, computing_s=[0.95, 0.95, 0.95, 0.6], comm_not_overlapped_s=[0.05, 0.05, 0.05, 0.4])
    assert analyze(make_run(tables={"profile_steps": cols2})).ranks.stragglers is None


def test_one_layout_per_rank_never_two_summed():
    df = pl.DataFrame({"rank": [0, 0, 0, 1], "source": ["zz_new", "aa_new", "step_trace_raw", "zz_new"],
                       "v": [1, 2, 3, 4]})
    kept = preferred(df, ("step_trace_raw", "cluster_analyse"))
    assert kept.sort("rank")["v"].to_list() == [3, 4]
    # two layouts neither list knows: the first by name, not both
    assert preferred(df.filter(pl.col("source") != "step_trace_raw"), ())["v"].to_list() == [2, 4]


def test_memory_split_from_a_real_memory_record_and_checkpoint():
    """The CPU profiler sample's memory record with the same tiny model's checkpoint header
    (samples/gpt-tiny-base: the profiler sample saves none)."""
    prof, ckpt = load_run(str(ROOT / "samples" / "profiler-cpu")), load_run(str(ROOT / "samples" / "gpt-tiny-base"))
    tables = {**prof.tables, "checkpoints": ckpt.tables["checkpoints"], "checkpoint_params": ckpt.tables["checkpoint_params"]}
    run = Run(prof.root, prof.name, tables, prof.settings, prof.inventory, prof.segments, prof.ranks, prof.diagnostics)
    m = analyze(run).profile.memory
    peak = float(prof.tables["memory"].filter(pl.col("component") == "MindSpore")["allocated_bytes"].max())
    assert m.peak_bytes == peak and m.component == "MindSpore"
    # tiny_gpt-3_100.ckpt (step 300, the latest): 30,592 Float32 model elements, 61,184 Float32 optimizer (Adam m, v)
    assert m.checkpoint.endswith("tiny_gpt-3_100.ckpt")
    assert m.parameters_bytes == 30_592 * 4 == m.gradients_bytes
    assert m.optimizer_bytes == 61_184 * 4
    assert m.activations_bytes == pytest.approx(peak - (2 * 30_592 + 61_184) * 4)
    assert m.gap is None and m.capacity_bytes is None  # a CPU: no device memory in the peak table


def test_damaged_profiler_files_still_analysed(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(CONF / "mi-cluster-4rank", run_dir)
    prof = run_dir / "profiler"
    text = (prof / "step_trace_raw_3_detail_time.csv").read_bytes()
    (prof / "step_trace_raw_3_detail_time.csv").write_bytes(text[: len(text) // 2])  # a killed write
    (prof / "hccl_raw_1.csv").write_bytes(b"")
    (prof / "ascend_cluster_analyse_pipeline-parallel_2_4_2.csv").write_bytes(b"\x00\xff garbage\n")
    a = analyze(load_run(str(run_dir)))
    assert a.profile is not None and a.profile.breakdown is not None
    assert {r.rank for r in a.ranks.profile} == {0, 1, 2, 3}
    assert a.triage.verdict == "communication-bound"
    # each damage said where it is: the short row, the empty file, the unreadable header
    said = {(d.slug, d.path) for d in a.diagnostics}
    assert {("profiler-row", "profiler/step_trace_raw_3_detail_time.csv"), ("profiler-empty", "profiler/hccl_raw_1.csv"),
            ("profiler-columns", "profiler/ascend_cluster_analyse_pipeline-parallel_2_4_2.csv")} <= said
