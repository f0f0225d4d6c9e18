"""Zone-less log times onto UTC.

A reader marks a file ``clock="local"`` when it wrote clock times without a zone (most logs):
their wall times were read as if UTC, so their gaps are right but their offset is not. Where the
rank has sources that know UTC (summary and TensorBoard events carry unix time), the offset is
found by matching the same steps' times: it is the whole number of 15 minutes (every zone's
offset is) that most pairs agree on. Without such a source the times stay local and a note says so.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from .sources import AVERAGED_SOURCES

_QUARTER_HOUR = 900.0
# A pair agrees with an offset when its residual is below this: the same step's end as two
# writers stamped it (milliseconds apart; a summary writer can lag by a pause).
_AGREE_S = 120.0


def align_local_clocks(
    scalars: pl.DataFrame, events: pl.DataFrame, local_files: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame, list[Diagnostic], list[str]]:
    """Scalars and events with each local file's times shifted to UTC where an offset is found;
    notes; and the files left local. A file is matched with the sources of its own rank; every
    file of every rank in one pass."""
    if not local_files:
        return scalars, events, [], []
    timed = (scalars.select("file", "rank", "step", "wall_time", "source")
             .filter(pl.col("wall_time").is_not_null() & ~pl.col("source").is_in(AVERAGED_SOURCES)))
    is_local = pl.col("file").is_in(local_files)  # categorical: no strings made
    local = timed.filter(is_local)
    rank_of = dict(local.group_by("file").agg(pl.col("rank").first()).with_columns(pl.col("file").cast(pl.Utf8)).iter_rows())
    if not rank_of:
        return scalars, events, [], []  # no wall times in them: nothing to align
    reference = (
        timed.filter(~is_local)
        .group_by("rank", "file", "step").agg(pl.col("wall_time").max().alias("ref"), pl.col("source").first())
        .drop("file")
    )
    with_reference = set(reference["rank"].unique().to_list())
    found: dict[str, float] = {}
    agreeing = pl.DataFrame(schema={"file": pl.Utf8, "source": pl.List(pl.Utf8), "step": pl.UInt32})
    if with_reference:  # a log-only run has none: no pairs to make
        mine = (local.filter(pl.col("rank").is_in(list(with_reference)))
                .group_by("file", "rank", "step").agg(pl.col("wall_time").max().alias("local"))
                .with_columns(pl.col("file").cast(pl.Utf8)))
        pairs = mine.join(reference, on=["rank", "step"]).with_columns((pl.col("ref") - pl.col("local")).alias("_diff"))
        found = _offsets(pairs)
        agreeing = (pairs.join(pl.DataFrame({"file": list(found), "_offset": list(found.values())},
                                            schema={"file": pl.Utf8, "_offset": pl.Float64}), on="file")
                    .filter((pl.col("_diff") - pl.col("_offset")).abs() < _AGREE_S)
                    .group_by("file").agg(pl.col("source").cast(pl.Utf8).unique().sort(), pl.col("step").n_unique()))
    agreed = {file: (sources, steps) for file, sources, steps in agreeing.iter_rows()}
    notes: list[Diagnostic] = []
    unaligned: list[str] = []
    for rel in local_files:
        if rel not in rank_of:
            continue  # no wall times here: nothing to align
        offset = found.get(rel)
        if offset is None:
            unaligned.append(rel)
            notes.append(diag.info("log-clock-local", path=rel,
                                   variant="no-match" if rank_of[rel] in with_reference else "no-reference"))
            continue
        sources, steps = agreed[rel]
        notes.append(diag.info("log-clock-aligned", path=rel, sources=list(sources), steps=steps, zone=_zone(offset)))
    if found:
        scalars = _shift(scalars, found)
        events = _shift(events, found)
    return scalars, events, notes, unaligned


def _offsets(pairs: pl.DataFrame) -> dict[str, float]:
    """Per file, the quarter-hour offset (UTC minus local) most of its step pairs agree on, where
    most agree."""
    if pairs.is_empty():
        return {}
    diff = pairs["_diff"].to_numpy()
    quarters = pairs.select("file").with_columns(pl.Series("_q", np.round(diff / _QUARTER_HOUR) * _QUARTER_HOUR))
    # the most common quarter of each file (on a tie the lowest, as np.unique orders them)
    best = (quarters.group_by("file", "_q").len().sort("file", "len", "_q", descending=[False, True, False])
            .group_by("file", maintain_order=True).first().select("file", pl.col("_q").alias("_best")))
    judged = (pairs.join(best, on="file").group_by("file")
              .agg(((pl.col("_diff") - pl.col("_best")).abs() < _AGREE_S).sum().alias("agree"), pl.len().alias("n"),
                   pl.col("_best").first()))
    return {file: float(b) for file, agree, n, b in judged.iter_rows()
            if not (agree < max(3, 0.5 * n) or abs(b) > 14 * 3600)}


def _shift(table: pl.DataFrame, offsets: dict[str, float]) -> pl.DataFrame:
    if table.is_empty():
        return table
    shift = pl.col("file").cast(pl.Utf8).replace_strict(offsets, default=0.0, return_dtype=pl.Float64)
    return table.with_columns((pl.col("wall_time") + shift).alias("wall_time"))


def _zone(offset: float) -> str:
    """UTC minus local = -offset of the zone: a local clock 8 h ahead of UTC is UTC+08:00."""
    minutes = int(round(-offset / 60))
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
