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
    notes; and the files left local."""
    if not local_files:
        return scalars, events, [], []
    timed = scalars.filter(pl.col("wall_time").is_not_null() & ~pl.col("source").is_in(AVERAGED_SOURCES))
    file_text = pl.col("file").cast(pl.Utf8)
    reference = (
        timed.filter(~file_text.is_in(local_files))
        .group_by("file", "step").agg(pl.col("wall_time").max().alias("ref"), pl.col("source").first())
    )
    notes: list[Diagnostic] = []
    offsets: dict[str, float] = {}
    unaligned: list[str] = []
    for rel in local_files:
        mine = timed.filter(file_text == rel).group_by("step").agg(pl.col("wall_time").max().alias("local"))
        if mine.is_empty():
            continue  # no wall times here: nothing to align
        pairs = mine.join(reference, on="step") if not reference.is_empty() else None
        offset = _offset(pairs) if pairs is not None and pairs.height else None
        if offset is None:
            unaligned.append(rel)
            notes.append(diag.info("log-clock-local", path=rel, variant="no-reference" if reference.is_empty() else "no-match"))
            continue
        offsets[rel] = offset
        agreeing = pairs.filter((pairs["ref"] - pairs["local"] - offset).abs() < _AGREE_S)
        sources = sorted(set(agreeing["source"].cast(pl.Utf8).to_list()))
        notes.append(diag.info("log-clock-aligned", path=rel, sources=sources, steps=agreeing["step"].n_unique(),
                               zone=_zone(offset)))
    if offsets:
        scalars = _shift(scalars, offsets)
        events = _shift(events, offsets)
    return scalars, events, notes, unaligned


def _offset(pairs: pl.DataFrame) -> float | None:
    """The quarter-hour offset (UTC minus local) most step pairs agree on, if most agree."""
    diff = (pairs["ref"] - pairs["local"]).to_numpy()
    quarters = np.round(diff / _QUARTER_HOUR) * _QUARTER_HOUR
    values, counts = np.unique(quarters, return_counts=True)
    best = float(values[np.argmax(counts)])
    agree = np.abs(diff - best) < _AGREE_S
    if agree.sum() < max(3, 0.5 * diff.size) or abs(best) > 14 * 3600:
        return None
    return best


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
