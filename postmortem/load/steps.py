"""The per-step table: end-to-end step times from the wall clock, and the callbacks' own timers.

* ``step_time_s``, end to end: the wall-clock gap between consecutive step ends, from the stream
  that best times step ends (most steps with wall times; among those nearly as dense, the one
  whose stamps follow the step end closest: sources.clock_rank), divided by the steps between
  two rows of a sampled stream. The first step of each launch has no gap.
* ``in_step_s``: the step's own timer as a callback logged it (MindFormers' per_step_time starts
  at step begin, once the batch has arrived): of several timers, the narrowest (_timers).
* ``gap_s = step_time_s - in_step_s``: the host / data time the timer leaves out.
* Where the stream's stamps are coarse (a log's milliseconds) and the step's own timer agrees
  with the gap to within their resolution, the timer is that same interval measured finer (a
  user's end-to-end step_ms): ``step_time_s`` takes its value (the source stays the wall clock's,
  which confirmed it).
* A step with no wall-clock gap gets its timer as ``step_time_s`` (source ``timer:<source>``); a
  rank with neither gets the per-epoch averages (source ``average:<source>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from ..model import TABLES, Segment, conform
from ..tags import DATA_TIME, STEP_TIMER
from .launches import segment_of
from .sources import AVERAGED_SOURCES, clock_rank, source_rank

# A stream nearly as dense as the densest (this share of its steps) may time the steps instead.
_DENSE_ENOUGH = 0.9
# A stream whose step ends repeat this often (timestamps in whole seconds for sub-second steps)
# cannot time single steps.
_MAX_REPEATED = 0.2


def steps_table(scalars: pl.DataFrame, latest: pl.Series | None, kept: pl.DataFrame,
                segments: Mapping[int, Sequence[Segment]] | Sequence[Segment]) -> pl.DataFrame:
    """`scalars`: every row; `latest`: the row numbers of every source's own view (the later
    launch winning within a source), None for all of them; `kept`: one value per (tag, rank, step);
    `segments`: each rank's launches (or the same for every rank).

    Every rank in one pass where its steps are timed the usual way (one launch, its first
    candidate stream times single steps, at most one source of step timers); the others one by one."""
    columns = ("step", "tag", "value", "wall_time", "rank", "source")
    wanted = kept.select(columns).filter(pl.col("tag").is_in([STEP_TIMER, DATA_TIME]))
    if wanted.is_empty() and scalars["wall_time"].null_count() == scalars.height:
        return conform(None, TABLES["steps"])
    launches_of = segments.get if isinstance(segments, Mapping) else (lambda rank, default=None: segments)
    streams = _stream_candidates(scalars)
    columns_only = scalars.select(columns)
    if latest is None:
        latest_rows = columns_only
    else:
        mask = np.zeros(scalars.height, dtype=bool)
        mask[latest.to_numpy()] = True
        latest_rows = columns_only.filter(pl.Series(mask))
    is_timer = (pl.col("tag") == STEP_TIMER) & ~pl.col("source").is_in(AVERAGED_SOURCES)
    timers = latest_rows.filter(is_timer)
    timer_sources = dict(timers.group_by("rank").agg(pl.col("source").n_unique()).iter_rows())
    ranks = sorted(set(streams) | set(wanted["rank"].unique().to_list()))
    together = [r for r in ranks if streams.get(r) and len(launches_of(r, []) or []) <= 1 and timer_sources.get(r, 0) < 2]
    frames = []
    done, alone = _steps_together(together, streams, latest_rows, kept, is_timer)
    if done is not None:
        frames.append(done)
    for rank in sorted(set(ranks) - set(together) | alone):
        mine = latest_rows.filter(pl.col("rank") == rank)

        def stream_rows(source: str, tag: str, mine=mine) -> pl.DataFrame:
            return mine.filter((pl.col("source") == source) & (pl.col("tag") == tag))

        frames.append(_steps_of_rank(rank, timers.filter(pl.col("rank") == rank), streams.get(rank, []), stream_rows,
                                     wanted.filter(pl.col("rank") == rank), launches_of(rank, []) or []))
    frames = [conform(f, TABLES["steps"]) for f in frames if not f.is_empty()]
    if not frames:
        return conform(None, TABLES["steps"])
    return pl.concat(frames, how="vertical").sort("rank", "step") if len(frames) > 1 else frames[0]


def _steps_together(ranks: list[int], streams: dict[int, list[tuple[str, str]]], latest_rows: pl.DataFrame,
                    kept: pl.DataFrame, is_timer: pl.Expr) -> tuple[pl.DataFrame | None, set[int]]:
    """_steps_of_rank of every rank of `ranks` (one launch each, a candidate stream, at most one
    source of timers) in one pass over their rows; and the ranks whose first candidate cannot time
    single steps (left to _steps_of_rank, which tries the next)."""
    if not ranks:
        return None, set()
    firsts = pl.DataFrame([(r, *streams[r][0]) for r in ranks], schema={"rank": pl.Int32, "_source": pl.Utf8, "_tag": pl.Utf8},
                          orient="row")
    in_ranks = pl.col("rank").is_in(ranks)
    # only the rows of the candidates' tags and sources are cast to text for the join (not millions)
    of_firsts = pl.col("tag").is_in(firsts["_tag"].unique().to_list()) & pl.col("source").is_in(firsts["_source"].unique().to_list())
    ends = (latest_rows.filter(in_ranks & of_firsts & pl.col("wall_time").is_not_null())
            .with_columns(pl.col("source").cast(pl.Utf8).alias("_source"), pl.col("tag").cast(pl.Utf8).alias("_tag"))
            .join(firsts, on=["rank", "_source", "_tag"], how="semi")
            .select("rank", "step", "wall_time").sort("rank", "step"))
    if ((ends["step"].diff() <= 0) & (ends["rank"].diff() == 0)).any():  # a step twice (two files of one source): its last stamp
        ends = ends.group_by("rank", "step").agg(pl.col("wall_time").max()).sort("rank", "step")
    # Sampled streams (collect_freq > 1) give the mean time of the steps in between.
    ends = ends.with_columns((pl.col("wall_time").diff() / pl.col("step").diff()).over("rank").alias("e2e"))
    repeated = (ends.filter(pl.col("e2e").is_not_null()).group_by("rank")
                .agg(((pl.col("e2e") <= 0).mean() > _MAX_REPEATED).alias("bad")).filter("bad")["rank"].to_list())
    alone = set(repeated)
    if alone:
        ends = ends.filter(~pl.col("rank").is_in(repeated))
    clock = ends.join(firsts.select("rank", ("wall-clock:" + pl.col("_source")).alias("source")), on="rank")
    columns = ["rank", "step", pl.col("value").alias("in_step_s"), pl.col("source").cast(pl.Utf8).alias("in_step_source"),
               pl.col("wall_time").alias("_timer_wall")]
    mine = kept.filter(pl.col("rank").is_in([r for r in ranks if r not in alone]))
    timers = mine.filter(is_timer).select(columns)
    steps = clock.join(timers, on=["rank", "step"], how="full", coalesce=True)

    def whole(unit: float) -> pl.Expr:
        return ((pl.col("wall_time") / unit - (pl.col("wall_time") / unit).round()).abs() < 1e-3).all()

    # The stamps' resolution per rank where they are whole milliseconds or seconds (log lines), else 0.
    resolution = steps.group_by("rank").agg(
        pl.when(pl.col("wall_time").count() == 0).then(0.0)
        .when(whole(1.0).fill_null(True)).then(1.0)
        .when(whole(1e-3).fill_null(True)).then(1e-3).otherwise(0.0).alias("_resolution"))
    steps = steps.join(resolution, on="rank")
    from_clock = pl.col("e2e").is_not_null()
    finer = from_clock & (pl.col("_resolution") > 0) & ((pl.col("in_step_s") - pl.col("e2e")).abs() <= 1.5 * pl.col("_resolution"))
    steps = steps.with_columns(_step_time_columns(finer))
    data = mine.filter(pl.col("tag") == DATA_TIME).select("rank", "step", pl.col("value").alias("data_time_s"))
    if not data.is_empty():
        steps = steps.join(data, on=["rank", "step"], how="left")
    steps = steps.with_columns(pl.col("rank").cast(pl.Int32), pl.lit(0, dtype=pl.Int32).alias("segment"))
    return conform(steps.sort("rank", "step"), TABLES["steps"]), alone


def _stream_candidates(scalars: pl.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """Per rank, the (source, tag) streams that may time the step ends, best first: each
    source's densest timed tag; sources nearly as dense as the densest, the closest stamps first."""
    # Lazily: only the four columns are read, nothing is materialised (an eager filter would copy
    # every column of millions of rows).
    counts = (scalars.lazy().filter(pl.col("wall_time").is_not_null()).group_by("rank", "source", "tag").len()
              .collect().with_columns(pl.col("source").cast(pl.Utf8), pl.col("tag").cast(pl.Utf8))
              .filter(~pl.col("source").is_in(AVERAGED_SOURCES)).sort("rank", "source", "tag"))
    best: dict[int, dict[str, tuple[int, str]]] = {}  # rank -> source -> (rows, tag) of its densest tag
    for rank, source, tag, n in counts.iter_rows():
        mine = best.setdefault(int(rank), {})
        if source not in mine or n > mine[source][0]:
            mine[source] = (n, tag)
    out: dict[int, list[tuple[str, str]]] = {}
    for rank, mine in best.items():
        densest = max(n for n, _ in mine.values())
        order = sorted((s for s, (n, _) in mine.items() if n >= _DENSE_ENOUGH * densest),
                       key=lambda s: (clock_rank(s), -mine[s][0], source_rank(s), s))
        out[rank] = [(s, mine[s][1]) for s in order]
    return out


def _steps_of_rank(rank: int, timer_rows: pl.DataFrame, streams: list[tuple[str, str]], stream_rows,
                   kept: pl.DataFrame, segments: Sequence[Segment]) -> pl.DataFrame:
    """`timer_rows`: every source's step timers; `stream_rows(source, tag)`: a candidate stream's rows."""
    source = pl.col("source").cast(pl.Utf8)
    timers = _timers(timer_rows, kept)
    clock = _wall_clock_steps(stream_rows, streams, segments)
    if clock is None and timers.is_empty():
        averaged = kept.filter(pl.col("tag") == STEP_TIMER)
        if averaged.is_empty():
            return pl.DataFrame()
        steps = averaged.select("step", pl.col("value").alias("step_time_s"), ("average:" + source).alias("source"),
                                "wall_time")
    else:
        steps = clock if clock is not None else timers.select("step")
        if not timers.is_empty():
            steps = steps.join(timers, on="step", how="full", coalesce=True)
        if clock is None:
            steps = steps.with_columns(pl.lit(None, pl.Float64).alias("e2e"), pl.lit(None, pl.Utf8).alias("source"),
                                       pl.lit(None, pl.Float64).alias("wall_time"))
        if timers.is_empty():
            steps = steps.with_columns(pl.lit(None, pl.Float64).alias("in_step_s"), pl.lit(None, pl.Utf8).alias("in_step_source"),
                                       pl.lit(None, pl.Float64).alias("_timer_wall"))
        from_clock = pl.col("e2e").is_not_null()
        resolution = _resolution(steps["wall_time"]) if clock is not None else 0.0
        finer = from_clock & ((pl.col("in_step_s") - pl.col("e2e")).abs() <= 1.5 * resolution) if resolution else pl.lit(False)
        steps = steps.with_columns(_step_time_columns(finer))
    data = kept.filter(pl.col("tag") == DATA_TIME).select("step", pl.col("value").alias("data_time_s"))
    if not data.is_empty():
        steps = steps.join(data, on="step", how="left")
    steps = steps.with_columns(pl.lit(rank, dtype=pl.Int32).alias("rank"), segment_of(pl.col("step"), segments).alias("segment"))
    return conform(steps.sort("step"), TABLES["steps"])


def _resolution(walls: pl.Series) -> float:
    """The stamps' resolution where they are whole milliseconds or seconds (log lines), else 0."""
    w = walls.drop_nulls().to_numpy()
    if not w.size:
        return 0.0
    for unit in (1.0, 1e-3):
        scaled = w / unit
        if np.all(np.abs(scaled - np.round(scaled)) < 1e-3):
            return unit
    return 0.0


def _timers(latest: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """(step, in_step_s, in_step_source, _timer_wall): the step's own timer. Where several sources
    time every step, the narrowest (lowest median) is the one closest to the step itself: an
    interval timer (Megatron's iteration-time, a user's end-to-end step_ms) holds the data wait
    that MindFormers' per_step_time leaves out. Steps it lacks take the kept row's timer."""
    is_timer = (pl.col("tag") == STEP_TIMER) & ~pl.col("source").is_in(AVERAGED_SOURCES)
    columns = ["step", pl.col("value").alias("in_step_s"), pl.col("source").cast(pl.Utf8).alias("in_step_source"),
               pl.col("wall_time").alias("_timer_wall")]
    timers = kept.filter(is_timer).select(columns)
    if timers.is_empty():
        return timers
    rows = latest.filter(is_timer)
    if rows["source"].n_unique() < 2:
        return timers
    per_source = rows.group_by("source").agg(pl.len().alias("n"), pl.col("value").median().alias("median"))
    narrowest = (per_source.filter(pl.col("n") >= 0.5 * pl.col("n").max())
                 .sort("median", pl.col("source").cast(pl.Utf8))["source"][0])
    chosen = (rows.filter(pl.col("source") == narrowest).group_by("step")
              .agg(pl.col("value").last(), pl.col("source").first(), pl.col("wall_time").max()).select(columns))
    return pl.concat([chosen, timers.join(chosen.select("step"), on="step", how="anti")]).sort("step")


def _wall_clock_steps(stream_rows, streams: list[tuple[str, str]], segments: Sequence[Segment]) -> pl.DataFrame | None:
    """(step, e2e, source, wall_time) from the first of the candidate streams that can time
    single steps, or None."""
    seg = segment_of(pl.col("step"), segments)
    for source, tag in streams:
        ends = stream_rows(source, tag).filter(pl.col("wall_time").is_not_null()).select("step", "wall_time").sort("step")
        if (ends["step"].diff() <= 0).any():  # a step twice (two files of one source): its last stamp
            ends = ends.group_by("step").agg(pl.col("wall_time").max()).sort("step")
        # Sampled streams (collect_freq > 1) give the mean time of the steps in between.
        per_step = pl.col("wall_time").diff() / pl.col("step").diff()
        ends = ends.with_columns(seg.alias("_seg")).with_columns(
            (per_step.over("_seg") if len(segments) > 1 else per_step).alias("e2e"))
        gaps = ends["e2e"].drop_nulls()
        if gaps.len() and (gaps <= 0).mean() > _MAX_REPEATED:
            continue
        return ends.select("step", "e2e", pl.lit(f"wall-clock:{source}").alias("source"), "wall_time")
    return None


def _step_time_columns(finer: pl.Expr) -> list[pl.Expr]:
    """A step's time from the clock's gap (e2e), or its timer where the timer is finer than the
    clock and agrees with it within 1.5 ticks, or the timer alone; its source; the gap between them."""
    e2e = pl.when(finer).then(pl.col("in_step_s")).otherwise(pl.col("e2e"))
    return [
        pl.coalesce(e2e, "in_step_s").alias("step_time_s"),
        pl.when(pl.col("e2e").is_not_null()).then(pl.col("source"))
        .when(pl.col("in_step_s").is_not_null()).then("timer:" + pl.col("in_step_source"))
        .alias("source"),
        (e2e - pl.col("in_step_s")).alias("gap_s"),
        pl.coalesce("wall_time", "_timer_wall").alias("wall_time"),
    ]
