"""Two text logs of one rank holding the same step lines are one source of one launch.

MindFormers' msrun writes each worker's stdout to ``output/msrun_log/worker_N.log`` while its
logger writes the same records to ``output/log/rank_N/info.log`` (the info.log lacks what was
printed without the logger: tracebacks, prints). Read as two files of one stream, the second
copy's steps "go back" and the run looks resumed at step 1. Here, before any join, the copy that
holds fewer of the shared records gives up its rows that the other file also has (same tag, step,
value and wall time); its other rows stay.
"""

from __future__ import annotations

import polars as pl

from .. import diagnostics as diag
from ..model import Artifact, ReadResult

_KEY = ("source", "tag", "step", "value", "wall_time")  # the same writer's records: a kv and a JSON line of one step are two sources
_SHARED = 0.9  # of the smaller file's loss records found in the other: one source
_MIN_SHARED = 2


def one_source_per_launch(jobs: list[tuple[object, Artifact]], results: list[ReadResult]) -> None:
    """Drop, in place, the rows a text log shares with a fuller copy of the same records (said in
    the copy's diagnostics)."""
    logs = [i for i, ((reader, _), r) in enumerate(zip(jobs, results))
            if getattr(reader, "name", "") == "textlog" and r.tables.get("scalars") is not None
            and not r.tables["scalars"].is_empty()]
    if len(logs) < 2:
        return
    keys = {i: _records(results[i].tables["scalars"]) for i in logs}
    dropped: set[int] = set()
    for a in logs:
        for b in logs:
            if a >= b or a in dropped or b in dropped:
                continue
            ka, kb = keys[a], keys[b]
            if min(ka.height, kb.height) < _MIN_SHARED:
                continue
            shared = ka.join(kb, on=list(_KEY), how="semi", nulls_equal=True).height
            if shared < _SHARED * min(ka.height, kb.height):
                continue
            # the fuller file keeps its rows; on a tie the bigger file (worker_N.log holds info.log's lines and more)
            fuller = lambda i: (keys[i].height, results[i].tables["scalars"].height, jobs[i][1].size)  # noqa: E731
            keep, drop = (a, b) if fuller(a) >= fuller(b) else (b, a)
            _drop_shared(results[drop], results[keep])
            dropped.add(drop)
            results[drop].diagnostics.append(
                diag.info("log-duplicate-source", path=jobs[drop][1].rel, n=shared, other=jobs[keep][1].rel))


def _records(scalars: pl.DataFrame) -> pl.DataFrame:
    loss = scalars.filter(pl.col("tag") == "loss")
    return (loss if not loss.is_empty() else scalars).select(
        pl.col("source").cast(pl.Utf8), pl.col("tag").cast(pl.Utf8), "step", "value", "wall_time").unique()


def _drop_shared(dup: ReadResult, keep: ReadResult) -> None:
    mine = dup.tables["scalars"]
    other = keep.tables["scalars"].select(pl.col("source").cast(pl.Utf8).alias("_s"), pl.col("tag").cast(pl.Utf8).alias("_t"),
                                          "step", "value", "wall_time")
    mine = mine.with_columns(pl.col("source").cast(pl.Utf8).alias("_s"), pl.col("tag").cast(pl.Utf8).alias("_t"))
    dup.tables["scalars"] = mine.join(other, on=["_s", "_t", "step", "value", "wall_time"], how="anti", nulls_equal=True,
                                      maintain_order="left").drop("_s", "_t")
    events, kept = dup.tables.get("events"), keep.tables.get("events")
    if events is not None and kept is not None and not events.is_empty() and not kept.is_empty():
        dup.tables["events"] = events.join(kept.select("kind", "step", "detail"), on=["kind", "step", "detail"],
                                           how="anti", nulls_equal=True, maintain_order="left")
