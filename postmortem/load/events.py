"""Events of the run, and pauses put at the step whose e2e time holds them.

* A restart at the first step of each later launch.
* An evaluation at each row of an evaluation tag (``lm loss validation``, ``eval_loss``), beside
  the readers' own eval events (log lines, lineage); one evaluation per (rank, step).
* Evaluations and checkpoint saves happen between two steps, so they lengthen the e2e time of
  the step after them. With a wall time, an event goes to the first step whose end is at or after
  it (in its rank's steps, else the lowest rank's). Without one, an evaluation after step N goes
  to N + 1, and a save of step N to N or N + 1: whichever the saves make slower in the median over
  all of them (the save runs before or after the callback whose stamp ends the step, in the same
  order every time).
* Durations: a save's from its file's mtime (when the save finished) against the last record
  a source stamped in the training process made of the saved step before that mtime (the save runs in that step's end
  callbacks, after the records of the callbacks before it); where every record of the step came
  after the save, or the mtime is not the save's, the step's e2e time over the median of the
  steps around it. An evaluation's as given, else the same e2e excess. The ``detail`` says
  which, with the checkpoint's own step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ..model import EVENTS, Segment, conform, empty
from ..tags import EVAL_TAGS
from .sources import AVERAGED_SOURCES, clock_rank, labels

_AROUND = 10  # steps on each side whose median e2e time is a pause's baseline


def restart_events(segments: Sequence[Segment]) -> pl.DataFrame:
    restarts = [
        {
            "kind": "restart",
            "step": seg.first_step,
            "rank": 0,
            "detail": f"launch {seg.index + 1} resumed at step {seg.first_step}"
            + (f"; steps {seg.discarded[0]}-{seg.discarded[1]} of the earlier launch replaced" if seg.discarded else ""),
            "source": "load",
        }
        for seg in segments[1:]
    ]
    return conform(pl.DataFrame(restarts), EVENTS) if restarts else empty(EVENTS)


def eval_events(scalars: pl.DataFrame) -> pl.DataFrame:
    """One evaluation event per row of an evaluation tag."""
    present = [tag for tag in EVAL_TAGS if tag in set(labels(scalars["tag"]))]  # no pass over the rows when none is
    rows = scalars.filter(pl.col("tag").is_in(present)) if present else scalars.clear()
    if rows.is_empty():
        return empty(EVENTS)
    return conform(rows.select(
        pl.lit("eval").alias("kind"), "step", "rank", "wall_time",
        pl.format("{} = {} after step {}", pl.col("raw_tag").cast(pl.Utf8), pl.col("value").round_sig_figs(6), pl.col("step")).alias("detail"),
        pl.col("source").cast(pl.Utf8), pl.col("file").cast(pl.Utf8),
    ), EVENTS)


def place_pauses(events: pl.DataFrame, steps: pl.DataFrame, scalars: pl.DataFrame) -> pl.DataFrame:
    """Evaluations and checkpoint saves at the step whose e2e time holds them, with durations.
    `scalars`: the records whose wall times time the saved steps."""
    pauses = events.filter(pl.col("kind").is_in(["eval", "checkpoint_save"]))
    if pauses.is_empty() or steps.is_empty():
        return events
    timelines = {rank: _Timeline(part) for (rank,), part in steps.partition_by("rank", as_dict=True).items()}
    lowest = min(timelines)
    records = _records(scalars, pauses.filter(pl.col("kind") == "checkpoint_save"))
    rows = [(row, row["rank"] if row["rank"] in timelines else lowest) for row in pauses.iter_rows(named=True)]
    after = _untimed_save_offset([(timelines[rank], row) for row, rank in rows if row["kind"] == "checkpoint_save"])
    placed = []
    for row, rank in rows:
        if row["kind"] == "eval":
            placed.append(timelines[rank].eval(row))
        else:
            placed.append(timelines[rank].save(row, records.get((rank, row["step"]), np.empty(0)), after))
    others = events.filter(~pl.col("kind").is_in(["eval", "checkpoint_save"]))
    placed_frame = conform(pl.DataFrame(placed, schema=EVENTS), EVENTS)
    # One evaluation per (rank, step): a log line and a TensorBoard scalar may both tell of it.
    evals = placed_frame.filter(pl.col("kind") == "eval").sort("duration_s", nulls_last=True, descending=True)
    evals = evals.unique(subset=["rank", "step"], keep="first", maintain_order=True)
    saves = placed_frame.filter(pl.col("kind") == "checkpoint_save")
    return pl.concat([others, evals, saves]).sort("step", "kind", nulls_last=True)


def _untimed_save_offset(saves: list[tuple[_Timeline, dict]]) -> int:
    """For saves without a save time: whether they lengthen the saved step (0) or the next (1).
    The callbacks run in one order for every save, so the step the saves make slower, in the
    median over all of them, is the one (a single slow step after one save is noise)."""
    at, after = [], []
    for line, row in saves:
        if row["step"] is None or line._after_wall(row["wall_time"]) is not None:
            continue
        for out, step in ((at, row["step"]), (after, row["step"] + 1)):
            i = line._at(step)
            excess = line._excess(i) if i is not None else None
            if excess is not None:
                out.append(excess)
    if not at or not after:
        return 1 if after else 0
    return int(np.median(after) > np.median(at))


def _records(scalars: pl.DataFrame, saves: pl.DataFrame) -> dict[tuple[int, int], np.ndarray]:
    """(rank, step) -> the wall times of the step's records stamped in the training process (a
    summary's are stamped by its writer process, possibly during the save), for the saved steps."""
    wanted = saves.select("step").drop_nulls().unique()
    if wanted.is_empty():
        return {}
    stamped_in_process = [s for s in labels(scalars["source"])
                          if s not in AVERAGED_SOURCES and clock_rank(s) < clock_rank("summary")]
    rows = (scalars.filter(pl.col("step").is_in(wanted["step"].to_list()) & pl.col("wall_time").is_not_null()
                           & pl.col("source").is_in(stamped_in_process))
            .group_by("rank", "step").agg(pl.col("wall_time").sort()))
    return {(rank, step): np.asarray(walls, dtype=float) for rank, step, walls in rows.iter_rows()}


class _Timeline:
    """One rank's steps in step order, with what placing a pause needs."""

    def __init__(self, steps: pl.DataFrame) -> None:
        steps = steps.sort("step")
        self.step = steps["step"].to_numpy()
        self.e2e = steps["step_time_s"].fill_null(np.nan).to_numpy().astype(float)
        self.wall = steps["wall_time"].fill_null(np.nan).to_numpy().astype(float)
        self.e2e_clock = steps["source"].fill_null("").str.starts_with("wall-clock:").to_numpy()

    def _at(self, step: int) -> int | None:
        i = int(np.searchsorted(self.step, step))
        return i if i < self.step.size and self.step[i] == step else None

    def _after_wall(self, wall: float | None) -> int | None:
        """Index of the first step that ended at or after `wall` (None past the last step)."""
        if wall is None or not np.isfinite(wall):
            return None
        timed = np.flatnonzero(np.isfinite(self.wall))
        j = np.searchsorted(self.wall[timed], wall - 1e-6)
        return int(timed[j]) if j < timed.size else None

    def _last_end(self) -> float:
        return float(np.nanmax(self.wall)) if np.isfinite(self.wall).any() else np.nan

    def _excess(self, i: int) -> float | None:
        """Step i's e2e time over the median of the steps around it."""
        if not (self.e2e_clock[i] and np.isfinite(self.e2e[i])):
            return None
        around = np.r_[self.e2e[max(0, i - _AROUND):i], self.e2e[i + 1:i + 1 + _AROUND]]
        around = around[np.isfinite(around)]
        if not around.size:
            return None
        return max(0.0, float(self.e2e[i] - np.median(around)))

    def eval(self, row: dict) -> dict:
        i = self._after_wall(row["wall_time"])
        how = "at the first step that ended after it"
        if i is None and row["step"] is not None:
            i, how = self._at(row["step"] + 1), f"after step {row['step']}"
        if i is None:
            return row
        row = {**row, "step": int(self.step[i])}
        if row["duration_s"] is None:
            excess = self._excess(i)
            if excess is not None:
                row["duration_s"] = excess
                how += f"; {excess:.3g} s: this step's e2e time over the median of the {2 * _AROUND} steps around it"
        row["detail"] = f"{row['detail'] or 'evaluation'}; {how}"
        return row

    def save(self, row: dict, records: np.ndarray, untimed_offset: int) -> dict:
        """`untimed_offset`: for a save without a save time, the step it lengthens is the saved
        step plus this (see _untimed_save_offset)."""
        saved_step = row["step"]
        name = row["detail"] or row["file"]
        mtime = row["wall_time"]
        i = self._after_wall(mtime)
        if i is None and mtime is not None and mtime > self._last_end():  # the save at train end
            i = self._at(saved_step) if saved_step is not None else None
        if i is None and saved_step is not None:
            i = self._at(saved_step + untimed_offset)
            i = i if i is not None else self._at(saved_step)
        if i is None:
            return {**row, "detail": f"{name}: step {saved_step}; no step to put its save at"}
        before = records[records <= mtime + 1e-6] if mtime is not None else records[:0]
        if before.size:
            duration = float(mtime - before[-1])
            how = f"{duration:.3g} s from the file's mtime: after the last record of step {saved_step} before it"
        else:
            duration = self._excess(i)
            why = "every record of the step came after the save" if mtime is not None else "the file's mtime is not the save's"
            how = (f"{duration:.3g} s from the step time ({why}): step {int(self.step[i])}'s e2e time over the median of "
                   f"the {2 * _AROUND} steps around it" if duration is not None else f"no step time to estimate it from ({why})")
        return {**row, "step": int(self.step[i]), "duration_s": duration, "detail": f"{name}: step {saved_step}; {how}"}
