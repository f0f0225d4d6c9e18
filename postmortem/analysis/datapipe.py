"""The data pipeline (the article's first graph, with the iteration gap): how often the device
found its data queue empty, and which stage holds the pipeline back.

The slowest stage is found by MindInsight's queue rule (MinddataPipelineAnalyser, thresholds in
thresholds.py): a stage whose producer's output queue is fuller than its own by more than 0.1 is
slower than its producer; a source stage whose output queue is below 60 % full cannot keep up; when
every queue is above 80 % full, the pipeline keeps up and no stage is named.
"""

from __future__ import annotations

import polars as pl

from . import thresholds as th
from .types import DataPipeline, DataStage, SlowestRule

# The queue the device takes batches from, best first: sink mode's device queue, the device-side
# GetNext, the host iterator (non-sink).
QUEUE_STAGES = ("device_queue", "get_next", "iterator")


def _order(stages: list[dict]) -> list[dict]:
    """Device side first: each stage before the ones that feed it (parent_stage links)."""
    by_parent: dict[str | None, list[dict]] = {}
    names = {s["stage"] for s in stages}
    for s in stages:
        parent = s["parent_stage"] if s["parent_stage"] in names else None
        by_parent.setdefault(parent, []).append(s)
    out: list[dict] = []
    todo = list(reversed(by_parent.get(None, [])))
    seen: set[str] = set()
    while todo:
        s = todo.pop()
        if s["stage"] in seen:
            continue
        seen.add(s["stage"])
        out.append(s)
        todo.extend(reversed(by_parent.get(s["stage"], [])))
    return out + [s for s in stages if s["stage"] not in seen]


def slowest_stage(stages: list[dict]) -> tuple[str | None, SlowestRule | None]:
    """The stage that holds the pipeline back, by MindInsight's queue rule (see module doc)."""
    with_queue = [s for s in stages if s["queue_usage"] is not None]
    if not with_queue:
        return None, None
    names = {s["stage"] for s in with_queue}
    usage = {s["stage"]: s["queue_usage"] for s in with_queue}
    children: dict[str, list[str]] = {}
    for s in with_queue:
        if s["parent_stage"] in names:
            children.setdefault(s["parent_stage"], []).append(s["stage"])
    non_root = [s for s in with_queue if s["parent_stage"] in names]
    if non_root and all(s["queue_usage"] >= th.QUEUE_HIGH for s in non_root):
        return None, SlowestRule.NONE
    for s in non_root:  # device side first: the first slow stage downstream is the one to fix first
        if any(usage[c] - s["queue_usage"] > th.QUEUE_GAP for c in children.get(s["stage"], ())):
            return s["stage"], SlowestRule.PRODUCER_FULLER
    for s in reversed(with_queue):  # most upstream first
        if not children.get(s["stage"]) and s["queue_usage"] < th.QUEUE_LOW:
            return s["stage"], SlowestRule.SOURCE_EMPTY
    return None, None


def data_pipeline(data: pl.DataFrame) -> DataPipeline | None:
    if data.is_empty():
        return None
    queues = data.filter(pl.col("stage").is_in(QUEUE_STAGES) & pl.col("queue_empty_share").is_not_null())
    queues = queues.with_columns(pl.col("stage").replace_strict({s: i for i, s in enumerate(QUEUE_STAGES)},
                                                                 return_dtype=pl.Int32).alias("_q"))
    queues = queues.filter(pl.col("_q") == pl.col("_q").min().over("rank"))
    ranks = data["rank"].n_unique()
    if not queues.is_empty():  # the rank whose device found the queue empty most often
        worst = queues.sort(["queue_empty_share", "rank"], descending=[True, False], nulls_last=True).row(0, named=True)
        rank = worst["rank"]
    else:
        worst, rank = None, data["rank"].drop_nulls().min()
    rows = data.filter(pl.col("rank") == rank) if rank is not None else data.filter(pl.col("rank").is_null())
    pipeline = [r for r in rows.iter_rows(named=True) if r["stage"] not in QUEUE_STAGES
                and not r["stage"].startswith(tuple(q + "." for q in QUEUE_STAGES))]
    ordered = _order(pipeline)
    slowest, rule = slowest_stage(ordered)
    stages = tuple(DataStage(stage=s["stage"], op_type=s["op_type"], workers=s["workers"], queue_usage=s["queue_usage"],
                             queue_empty_share=s["queue_empty_share"], time_s=s["time_s"], samples=s["samples"],
                             parent_stage=s["parent_stage"]) for s in ordered)
    return DataPipeline(
        rank=int(rank) if rank is not None else None, ranks=ranks, stages=stages,
        queue_empty_share=worst["queue_empty_share"] if worst else None,
        queue_samples=worst["samples"] if worst else None, queue_stage=worst["stage"] if worst else None,
        slowest=slowest, slowest_rule=rule,
    )
