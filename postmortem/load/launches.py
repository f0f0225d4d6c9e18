"""Launches of a run: restarted step counters mapped onto global steps, and where each launch
starts (the primary stream's steps going back)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..text import Text
from ..model import Segment
from .sources import AVERAGED_SOURCES, FILE_PER_LAUNCH, labels, source_rank


def renumber_restarted_counters(scalars: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int], list[Diagnostic]]:
    """Map launch-local steps onto global steps by matching wall times with a global-step source.

    A later file of a per-launch source whose steps go back is either a resume that repeats global
    steps (kept as is: the later launch wins) or a restarted counter. Another source that logged
    global steps at the same wall times tells which, and by how much to shift.
    """
    notes: list[Diagnostic] = []
    if scalars.is_empty():
        return scalars, {}, notes
    shifts: dict[str, int] = {}
    # A file's source and rank are one (one reader per file; per-launch sources are whole files):
    # grouped by the launch order, one integer per file; with one file there is nothing to shift.
    files = scalars.head(0) if scalars["_file_order"].n_unique() < 2 else (
        scalars.select("_file_order", "source", "rank", "file", "step").group_by("_file_order")
        .agg(pl.col("source").first(), pl.col("rank").first(), pl.col("file").first(),
             pl.col("step").min().alias("first"), pl.col("step").max().alias("last"))
        .filter(pl.col("source").is_in(FILE_PER_LAUNCH))
        .sort("source", "rank", "_file_order")
    )
    for (source, rank), group in files.group_by(["source", "rank"], maintain_order=True):
        seen_last = None
        for row in group.iter_rows(named=True):
            shift = 0
            if seen_last is not None and row["first"] < seen_last:
                shift = _offset_from_wall_time(scalars, source, rank, row["file"])
                if shift > 0:
                    shifts[row["file"]] = shift
                    notes.append(diag.info("step-counter-restarted", path=row["file"], variant="file", source=source,
                                           first=row["first"], shift=shift, how=Text("restart-how.wall-times")))
            seen_last = max(seen_last or 0, row["last"] + shift)
    if shifts:
        offset = pl.col("file").cast(pl.Utf8).replace_strict(shifts, default=0, return_dtype=pl.Int64)
        scalars = scalars.with_columns((pl.col("step") + offset).alias("step"))
    scalars, log_notes = _renumber_log_launches(scalars)
    return scalars, shifts, notes + log_notes


# Two values are one print of the same number: a log's 6 decimals, float32 widened.
_SAME_VALUE_ABS, _SAME_VALUE_REL = 1e-6, 1e-6
_MATCHED_SHARE = 0.8


def _renumber_log_launches(scalars: pl.DataFrame) -> tuple[pl.DataFrame, list[Diagnostic]]:
    """A log file that several launches appended to: where one stream's steps go back, the rows
    after that point are a later launch's. If its counter restarted (LossMonitor after a resume
    without initial_epoch), its steps are moved onto global steps: by wall times where the lines
    carry them, else by its values, which equal another source's at the global steps (the loss
    printed by LossMonitor is the loss the summary recorded)."""
    names = [s for s in labels(scalars["source"]) if s.startswith("log:") and s not in AVERAGED_SOURCES]
    if not names:
        return scalars, []
    # A file's rows are together and in line order: if its steps never go back, no stream of it does.
    order = scalars.select("step", "_file_order", "source").filter(pl.col("source").is_in(names))
    if not ((order["step"].diff() < 0) & (order["_file_order"].diff() == 0)).any():
        return scalars, []
    logs = scalars.filter(pl.col("source").is_in(names))
    back = logs.group_by("source", "file", "rank", "tag").agg((pl.col("step").diff() < 0).any().alias("back"), pl.len())
    back = back.filter(pl.col("back")).sort("len", "tag", descending=[True, False])
    notes: list[Diagnostic] = []
    done: set[tuple] = set()
    for source, file, rank, tag, _, _ in back.iter_rows():
        if (source, file, rank) in done:
            continue
        done.add((source, file, rank))
        stream = logs.filter((pl.col("source") == source) & (pl.col("file") == file) & (pl.col("rank") == rank))
        rows = stream.filter(pl.col("tag") == tag).sort("_row")
        steps = rows["step"].to_numpy()
        starts = np.flatnonzero(np.diff(steps) < 0) + 1
        bounds = [*rows["_row"].to_numpy()[starts].tolist(), None]
        for k, start in enumerate(starts):
            part = rows.slice(int(start), (int(starts[k + 1]) if k + 1 < len(starts) else len(steps)) - int(start))
            shift, how = _segment_shift(part, scalars, source, file, rank, tag)
            if shift <= 0:
                continue
            row_lo, row_hi = bounds[k], bounds[k + 1]
            in_part = ((pl.col("source") == source) & (pl.col("file") == file) & (pl.col("rank") == rank)
                       & (pl.col("_row") >= row_lo) & ((pl.col("_row") < row_hi) if row_hi is not None else pl.lit(True)))
            scalars = scalars.with_columns(pl.when(in_part).then(pl.col("step") + shift).otherwise(pl.col("step")).alias("step"))
            notes.append(diag.info("step-counter-restarted", path=file, variant="part", source=source,
                                   first=int(steps[start]), shift=shift, how=how))
    return scalars, notes


def _segment_shift(part: pl.DataFrame, scalars: pl.DataFrame, source: str, file: str, rank: int, tag: str) -> tuple[int, Text | None]:
    """How far a restarted segment of a log stream is behind the global steps (0: not a restart)."""
    if part["wall_time"].null_count() < part.height:
        shift = _offset_rows_by_wall_time(part, scalars, source, rank)
        return shift, Text("restart-how.wall-times")
    reference = scalars.filter((pl.col("tag") == tag) & (pl.col("rank") == rank) & (pl.col("source") != source)
                               & pl.col("value").is_finite())
    if reference.is_empty() or part.height < 3:
        return 0, None
    ref = reference.group_by("step").agg(pl.col("value").last()).sort("step")
    ref_steps, ref_values = ref["step"].to_numpy(), ref["value"].to_numpy()
    votes: dict[int, int] = {}
    for step, value in part.head(5).select("step", "value").iter_rows():
        near = np.abs(ref_values - value) <= _SAME_VALUE_ABS + _SAME_VALUE_REL * np.abs(ref_values)
        for shift in (ref_steps[near] - step).tolist():
            votes[shift] = votes.get(shift, 0) + 1
    if not votes:
        return 0, None
    shift = max(votes, key=lambda s: (votes[s], -abs(s)))
    if shift <= 0:
        return 0, None
    shifted = part.select((pl.col("step") + shift).alias("step"), "value").join(ref, on="step", suffix="_ref")
    same = (shifted["value"] - shifted["value_ref"]).abs() <= _SAME_VALUE_ABS + _SAME_VALUE_REL * shifted["value_ref"].abs()
    if same.sum() < _MATCHED_SHARE * part.height:
        return 0, None
    return shift, Text("restart-how.values", tag=tag, steps=int(same.sum()))


def _offset_rows_by_wall_time(part: pl.DataFrame, scalars: pl.DataFrame, source: str, rank: int) -> int:
    mine = part.filter(pl.col("wall_time").is_not_null()).group_by("step").agg(pl.col("wall_time").max()).sort("wall_time")
    return _match_wall_times(mine, scalars, source, rank)


def _offset_from_wall_time(scalars: pl.DataFrame, source: str, rank: int, file: str) -> int:
    mine = (
        scalars.filter((pl.col("file") == file) & pl.col("wall_time").is_not_null())
        .group_by("step").agg(pl.col("wall_time").max()).sort("wall_time")
    )
    return _match_wall_times(mine, scalars, source, rank)


def _match_wall_times(mine: pl.DataFrame, scalars: pl.DataFrame, source: str, rank: int) -> int:
    """The step shift most of `mine`'s (step, wall_time) agree on with the other sources' steps
    at the same wall times (0 if none is clear)."""
    reference = (
        scalars.filter(
            (pl.col("source") != source) & (pl.col("rank") == rank) & pl.col("wall_time").is_not_null()
            & ~pl.col("source").is_in(AVERAGED_SOURCES)
        )
        .group_by("step", "source").agg(pl.col("wall_time").max())
        .sort("wall_time")
    )
    if mine.height < 3 or reference.is_empty():
        return 0
    gaps = mine["wall_time"].diff().drop_nulls()
    tolerance = max(float(gaps.median() or 0.0) / 2, 0.002)
    matched = mine.join_asof(
        reference.select(pl.col("step").alias("ref_step"), "wall_time"), on="wall_time",
        strategy="nearest", tolerance=tolerance,
    ).drop_nulls("ref_step")
    if matched.height < max(3, mine.height // 2):
        return 0
    offsets = (matched["ref_step"] - matched["step"]).value_counts(sort=True)
    best, count = offsets.row(0)
    # Accept only a clear answer: most matched steps agree on one shift.
    return int(best) if count >= 0.6 * matched.height and best > 0 else 0


def launches_by_rank(scalars: pl.DataFrame) -> tuple[dict[int, list[Segment]], dict[int, list[Diagnostic]]]:
    """Each rank's launches, from where its primary stream's steps go back (a resume), and the
    notes about them; every rank in one pass."""
    if scalars.is_empty():
        return {}, {}
    primary = _primary_streams(scalars)
    # Most ranks were launched once: a launch from their first step to their last, no rank's
    # steps taken apart. The few whose steps go back are split one by one.
    back = (pl.col("step").diff() < 0) & (pl.col("rank").diff() == 0)
    spans = (primary.with_columns(back.fill_null(False).alias("_back")).group_by("rank", maintain_order=True)
             .agg(pl.col("step").first().alias("first"), pl.col("step").last().alias("last"), pl.col("_back").any()))
    segments: dict[int, list[Segment]] = {}
    notes: dict[int, list[Diagnostic]] = {}
    for rank, first, last, resumed in spans.iter_rows():
        if not resumed:
            segments[rank], notes[rank] = [Segment(index=0, first_step=first, last_step=last, discarded=None)], []
            continue
        mine = segments_of_steps(primary.filter(pl.col("rank") == rank)["step"].to_numpy())
        segments[rank] = mine
        notes[rank] = [
            diag.info("run-resumed", launch=seg.index + 1, step=seg.first_step, first=seg.discarded[0], last=seg.discarded[1])
            for seg in mine[1:]
            if seg.discarded
        ]
    return segments, notes


_PRIMARY_TAGS = ("loss", "step_time", "lr")


def _primary_streams(scalars: pl.DataFrame) -> pl.DataFrame:
    """Per rank, the rows that best show launch order: loss (else step time, lr, else the rank's
    first row's tag) from the best source, in launch order; (rank, step), ordered by rank."""
    scalars = scalars.select("rank", "tag", "source", "step", "_file_order", "_row")
    present = scalars.group_by("rank", "tag", "source").len().with_columns(
        pl.col("tag").cast(pl.Utf8), pl.col("source").cast(pl.Utf8))
    first_tag = dict(scalars.group_by("rank").agg(pl.col("tag").first().cast(pl.Utf8)).iter_rows())
    found: dict[int, dict[str, list[str]]] = {}
    for rank, tag, source, _ in present.iter_rows():
        found.setdefault(rank, {}).setdefault(tag, []).append(source)
    chosen = []
    for rank, tags in found.items():
        tag = next((t for t in _PRIMARY_TAGS if t in tags), first_tag[rank])
        chosen.append((rank, tag, min(sorted(tags[tag]), key=source_rank)))
    chosen = pl.DataFrame(chosen, schema={"rank": pl.Int32, "_tag": pl.Utf8, "_source": pl.Utf8}, orient="row")
    # only the rows of the chosen tags and sources are cast to text for the join (not millions)
    of_chosen = pl.col("tag").is_in(chosen["_tag"].unique().to_list()) & pl.col("source").is_in(chosen["_source"].unique().to_list())
    return (scalars.filter(of_chosen)
            .with_columns(pl.col("tag").cast(pl.Utf8).alias("_tag"), pl.col("source").cast(pl.Utf8).alias("_source"))
            .join(chosen, on=["rank", "_tag", "_source"], how="semi")
            .sort("rank", "_file_order", "_row").select("rank", "step"))


def segments_of_steps(steps: Sequence[int] | np.ndarray) -> list[Segment]:
    """Split a launch-ordered step sequence where it goes back (a resume from a checkpoint).

    A step equal to the last one is a duplicate write (the summary writer can emit a step twice),
    not a restart: only going strictly back starts a new launch.
    """
    steps = np.asarray(steps)
    if not steps.size:
        return []
    # Within a launch steps never go back, so a launch ends where a step is below the one before.
    starts = [0, *(np.flatnonzero(np.diff(steps) < 0) + 1).tolist()]
    ends = [*starts[1:], steps.size]
    bounds = [(int(steps[start]), int(steps[end - 1])) for start, end in zip(starts, ends)]
    segments: list[Segment] = []
    previous_last = None
    for index, (lo, hi) in enumerate(bounds):
        discarded = (lo, previous_last) if previous_last is not None and lo <= previous_last else None
        segments.append(Segment(index=index, first_step=lo, last_step=hi, discarded=discarded))
        previous_last = hi
    return segments


def segment_of(step: pl.Expr, segments: Sequence[Segment]) -> pl.Expr:
    """The last launch whose first step is <= step (later launches win overlapping steps)."""
    expr = pl.lit(0, dtype=pl.Int32)
    for seg in segments[1:]:
        expr = pl.when(step >= seg.first_step).then(pl.lit(seg.index, dtype=pl.Int32)).otherwise(expr)
    return expr
