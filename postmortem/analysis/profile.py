"""The profiler's step breakdown, per rank and over the run, and who waits for whom.

One rank can hold the same steps under two layouts (MindInsight's ``step_trace_raw`` and
MindSpore's own ``cluster_analyse``; a 2.x ``step_trace_time.csv`` and its ``trace_view.json``):
each rank's rows come from one layout, the first of ``STEP_SOURCES`` it has. The other layouts'
figures for the same steps are kept as ``alternatives`` (a tool's own split, shown beside ours).

Every part is a mean over the counted (rank, step) rows; a profiled step far slower than its rank's
other steps (the first, warm-up step) is left out and listed (``ProfileOutlier``).
The operator, communication, data-pipeline and memory views are in ``operators.py``,
``datapipe.py`` and ``memory.py``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from ..model import STEPS, Run
from . import thresholds as th
from .datapipe import data_pipeline
from .links import slow_links
from .memory import memory_breakdown
from .operators import comm_from_kernels, comm_timed, communication, operators, preferred
from .types import (
    BESIDE,
    PARTITION,
    PROFILE_STEP_SERIES,
    Profile,
    ProfileBreakdown,
    ProfileOutlier,
    RankProfile,
    RankRole,
    Stragglers,
    TotalBasis,
)

# Which layout a rank's steps come from, best first: the device's own overlap analysis (2.x
# step_trace_time, its trace_view, msprof's timeline), then msprof-analyze's cluster table (the same
# figures, coarser), msprof's step trace (compute and communication not split), then
# MindInsight-era step_trace_raw (split from the op columns, with the iteration gap) before
# MindSpore's own cluster analysis of it (no iteration gap; shown beside as the tool's figure).
STEP_SOURCES = ("step_trace_time", "trace_view", "msprof_timeline", "profiler_db", "cluster_step_trace_time", "cluster_analysis_db",
                "msprof_step_trace", "step_trace_raw", "cluster_analyse")

# part -> PROFILE_STEPS column
COLUMNS = {"compute": "computing_s", "comm_exposed": "comm_not_overlapped_s", "bubble": "bubble_s",
           "data_wait": "data_wait_s", "idle": "free_s", "preparing": "preparing_s",
           "comm_overlapped": "overlapped_s"}
OWN_PARTS = ("compute", "idle", "data_wait", "preparing")  # a rank's own time, as opposed to waiting on others


def step_series(profile_steps: pl.DataFrame) -> pl.DataFrame:
    """PROFILE_STEP_SERIES from PROFILE_STEPS rows (already one layout per rank), outliers marked."""
    if profile_steps.is_empty():
        return pl.DataFrame(schema=PROFILE_STEP_SERIES)
    parts = pl.sum_horizontal([pl.col(COLUMNS[p]).fill_null(0.0) for p in PARTITION])
    df = profile_steps.select(
        "rank", "step", *(pl.col(c).alias(p) for p, c in COLUMNS.items()),
        pl.coalesce("total_s", parts).alias("total_s"), pl.col("total_s").is_not_null().alias("total_given"),
        pl.col("source").fill_null("unknown"),
    )
    median = pl.col("total_s").median().over("rank")
    outlier = ((pl.col("total_s") > th.OUTLIER_RATIO * median)
               & (pl.col("total_s") - median > th.OUTLIER_MIN_S)
               & (pl.len().over("rank") >= 3))
    return (df.with_columns(outlier.fill_null(False).alias("outlier"))
            .sort("rank", "step", nulls_last=True).select(list(PROFILE_STEP_SERIES)))


def breakdown(series: pl.DataFrame) -> ProfileBreakdown | None:
    """Mean parts per step over the rows that are not outliers (all rows if every one is)."""
    kept = series.filter(~pl.col("outlier"))
    rows = kept if not kept.is_empty() else series
    n = rows.height
    if n == 0:
        return None
    step = float(rows["total_s"].sum()) / n
    if not step > 0:
        return None
    sums = rows.select(*(pl.col(p).sum() for p in (*PARTITION, *BESIDE))).row(0, named=True)
    has = rows.select(*(pl.col(p).is_not_null().any() for p in (*PARTITION, *BESIDE))).row(0, named=True)
    seconds = {p: (float(sums[p]) / n if has[p] else None) for p in (*PARTITION, *BESIDE)}
    shares = {p: (v / step if v is not None else None) for p, v in seconds.items()}
    exposed = [shares[p] for p in ("comm_exposed", "bubble") if shares[p] is not None]
    comm = sum(exposed) if exposed else None
    given = bool(rows["total_given"].all())
    return ProfileBreakdown(
        source="+".join(sorted(rows["source"].unique().to_list())), ranks=rows["rank"].n_unique(), steps=n,
        step_time_s=step, seconds=seconds, shares=shares, comm_share=comm,
        comm_flag=comm is not None and comm > th.COMM_SHARE,
        total_basis=TotalBasis.GIVEN if given else TotalBasis.PARTS, excluded=series.height - n,
    )


def outliers(series: pl.DataFrame) -> tuple[ProfileOutlier, ...]:
    """The left-out steps, with the part that grew the most against the rank's median of it."""
    if series.is_empty() or not series["outlier"].any():
        return ()
    medians = series.filter(~pl.col("outlier")).group_by("rank").agg(
        pl.col("total_s").median().alias("_median"), *(pl.col(p).median().alias("_m_" + p) for p in PARTITION))
    rows = series.filter(pl.col("outlier")).join(medians, on="rank", how="left")
    out = []
    for r in rows.iter_rows(named=True):
        growth = {p: r[p] - (r["_m_" + p] or 0.0) for p in PARTITION if r[p] is not None}
        part = max(growth, key=growth.__getitem__) if growth else None
        out.append(ProfileOutlier(rank=int(r["rank"]), step=int(r["step"]) if r["step"] is not None else 0,
                                  total_s=float(r["total_s"]), median_s=float(r["_median"] or 0.0),
                                  part=part, part_s=float(r[part]) if part else None))
    return tuple(out)


def chosen_steps(profile_steps: pl.DataFrame) -> pl.DataFrame:
    """Each rank's PROFILE_STEPS rows of its preferred layout."""
    return preferred(profile_steps, STEP_SOURCES)


def profile_step_times(profile_steps: pl.DataFrame) -> pl.DataFrame:
    """STEPS rows from the profile, for a run with no training logs: e2e = the profiled step's
    total (the profiler's own step numbering), source ``profiler:<layout>``."""
    series = step_series(chosen_steps(profile_steps)).filter(pl.col("step").is_not_null())
    if series.is_empty():
        return pl.DataFrame(schema=STEPS)
    return series.select(
        "step", "rank", pl.col("total_s").alias("step_time_s"), pl.lit(None, pl.Float64).alias("in_step_s"),
        pl.lit(None, pl.Float64).alias("gap_s"), pl.col("data_wait").alias("data_time_s"),
        pl.col("compute").alias("device_time_s"), pl.lit(None, pl.Float64).alias("wall_time"),
        pl.lit(0, pl.Int32).alias("segment"), ("profiler:" + pl.col("source")).alias("source"),
        pl.lit(None, pl.Utf8).alias("in_step_source"),
    ).select([pl.col(c).cast(t) for c, t in STEPS.items()])


def _receive_share(timed: pl.DataFrame, series: pl.DataFrame) -> dict[int, float]:
    """Per rank: the Receive ops' time in flight / step time, over the steps not left out.
    ``timed``: operators.comm_timed rows."""
    if timed.is_empty() or series.is_empty():
        return {}
    rows = timed.filter(pl.col("step").is_not_null() & pl.col("elapse_s").is_not_null()
                        & pl.col("type").str.to_lowercase().str.contains("receive"))
    if rows.is_empty():
        return {}
    recv = rows.group_by("rank", "step").agg(pl.col("elapse_s").sum().alias("recv"))
    steps = series.filter(~pl.col("outlier")).select("rank", "step", "total_s")
    both = steps.join(recv, on=["rank", "step"], how="left").group_by("rank").agg(
        pl.col("recv").fill_null(0.0).sum(), pl.col("total_s").sum(), pl.col("recv").is_not_null().any().alias("any"))
    return {int(r): float(a / b) for r, a, b, any_ in both.iter_rows() if any_ and b > 0}


def _tool_per_rank(run: Run, alternatives: dict[str, pl.DataFrame]) -> dict[int, dict[str, float]]:
    """The profilers' own per-rank figures: profile_summary keys, and each alternative layout's
    waiting share (``<layout>:wait_share``)."""
    out: dict[int, dict[str, float]] = {}
    summary = run.tables["profile_summary"].filter(pl.col("value").is_finite() & pl.col("rank").is_not_null())
    for r, key, value in summary.select("rank", "key", "value").iter_rows():
        out.setdefault(int(r), {})[key] = float(value)
    for source, series in alternatives.items():
        per = series.filter(~pl.col("outlier")).group_by("rank").agg(
            (pl.sum_horizontal(pl.col("comm_exposed").fill_null(0.0), pl.col("bubble").fill_null(0.0)).sum()
             / pl.col("total_s").sum()).alias("w"))
        for r, w in per.iter_rows():
            if r is not None and w is not None and np.isfinite(w):
                out.setdefault(int(r), {})[f"{source}:wait_share"] = float(w)
    return out


def rank_profiles(series: pl.DataFrame, receive: dict[int, float],
                  tool: dict[int, dict[str, float]]) -> tuple[RankProfile, ...]:
    if series.is_empty():
        return ()
    kept = series.filter(~pl.col("outlier"))
    per = kept.group_by("rank").agg(
        pl.len().alias("n"), pl.col("source").first(), pl.col("total_s").mean().alias("step"),
        *(pl.when(pl.col(p).is_not_null().any()).then(pl.col(p).fill_null(0.0).mean()).alias(p) for p in PARTITION),
    ).sort("rank")
    left_out = series.filter(pl.col("outlier")).group_by("rank").agg(pl.col("step").sort())
    dropped = {int(r): tuple(int(s) for s in steps if s is not None) for r, steps in left_out.iter_rows()}
    out = []
    for r in per.iter_rows(named=True):
        rank, step = int(r["rank"]), r["step"]
        waits = [r[p] for p in ("comm_exposed", "bubble") if r[p] is not None]
        wait = sum(waits) / step if waits and step else None
        out.append(RankProfile(
            rank=rank, steps=int(r["n"]), source=r["source"], step_time_s=step, compute_s=r["compute"],
            comm_exposed_s=r["comm_exposed"], bubble_s=r["bubble"], data_wait_s=r["data_wait"], idle_s=r["idle"],
            wait_share=wait, compute_share=r["compute"] / step if r["compute"] is not None and step else None,
            receive_share=receive.get(rank), role=RankRole.NONE, outlier_steps=dropped.get(rank, ()),
            tool=tool.get(rank, {}),
        ))
    return tuple(out)


def stragglers(ranks: tuple[RankProfile, ...], series: pl.DataFrame) -> tuple[tuple[RankProfile, ...], Stragglers | None]:
    """The ranks the others wait for: those whose waiting share is within a tolerance of the least
    (thresholds.STRAGGLER_*), when other ranks wait at least STRAGGLER_GAP of their step longer and
    are at least as many. Returns the ranks with their roles set."""
    known = [r for r in ranks if r.wait_share is not None]
    if len(known) < 2:
        return ranks, None
    least = min(r.wait_share for r in known)
    awaited = [r for r in known if r.wait_share <= least + max(th.STRAGGLER_ABS, th.STRAGGLER_REL * least)]
    waiting = [r for r in known if r.wait_share >= least + th.STRAGGLER_GAP]
    if not waiting or len(awaited) > len(waiting):
        return ranks, None
    own = series.filter(~pl.col("outlier")).group_by("rank").agg(
        *((pl.col(p).fill_null(0.0).sum() / pl.col("total_s").sum()).alias(p) for p in OWN_PARTS))
    shares = {int(r[0]): dict(zip(OWN_PARTS, r[1:])) for r in own.iter_rows()}
    a_ids, w_ids = {r.rank for r in awaited}, {r.rank for r in waiting}

    def med(ids: set[int], part: str) -> float:
        return float(np.median([shares[i][part] for i in ids if i in shares] or [0.0]))

    cause = max(OWN_PARTS, key=lambda p: med(a_ids, p))
    receive = [r.receive_share for r in waiting if r.receive_share is not None]
    info = Stragglers(
        awaited=tuple(sorted(a_ids)), waiting=tuple(sorted(w_ids)),
        awaited_wait_share=float(np.median([r.wait_share for r in awaited])),
        waiting_wait_share=float(np.median([r.wait_share for r in waiting])),
        waiting_receive_share=float(np.median(receive)) if receive else None,
        cause=cause, cause_share=med(a_ids, cause), waiting_cause_share=med(w_ids, cause),
    )
    roles = {**{i: RankRole.AWAITED for i in a_ids}, **{i: RankRole.WAITS for i in w_ids}}
    return tuple(replace(r, role=roles.get(r.rank, RankRole.NONE)) for r in ranks), info


def _tool_means(run: Run) -> dict[str, float]:
    summary = run.tables["profile_summary"].filter(pl.col("value").is_finite())
    means = summary.group_by("key").agg(pl.col("value").mean()).sort("key")
    return {k: float(v) for k, v in means.iter_rows()}


def has_profile(run: Run) -> bool:
    return any(not run.tables[k].is_empty() for k in
               ("profile_steps", "profile_ops", "profile_comm", "profile_data", "profile_summary", "memory"))


def profile(run: Run, device: str | None) -> tuple[Profile | None, tuple[RankProfile, ...], Stragglers | None]:
    """The profile of a run (None without profiler data), its per-rank figures and stragglers."""
    if not has_profile(run):
        return None, (), None
    ps = run.tables["profile_steps"]
    chosen = chosen_steps(ps)
    series = step_series(chosen)
    # the other layouts' rows of the same ranks: a tool's own split, shown beside ours
    others = ps.join(chosen.select("rank", "source").unique(), on=["rank", "source"], how="anti")
    alt_series = {src: step_series(rows) for (src,), rows in sorted(others.partition_by("source", as_dict=True).items())}
    alternatives = tuple(b for b in (breakdown(s) for s in alt_series.values()) if b is not None)
    comm = run.tables["profile_comm"]
    timed = comm_timed(comm)
    ranks = rank_profiles(series, _receive_share(timed, series), _tool_per_rank(run, alt_series))
    ranks, strag = stragglers(ranks, series)
    ops = operators(run.tables["profile_ops"])
    prof = Profile(
        breakdown=breakdown(series), alternatives=alternatives, steps=series, outliers=outliers(series),
        operators=ops, communication=communication(comm, timed, series) or comm_from_kernels(ops),
        data=data_pipeline(run.tables["profile_data"]),
        memory=memory_breakdown(run, device), tool=_tool_means(run), links=slow_links(comm),
    )
    return prof, ranks, strag


def phase_comm_share(series: pl.DataFrame, first: int, last: int) -> float | None:
    """Communication share of the profiled steps first..last (for phases, when the run's steps
    are the profile's own)."""
    rows = series.filter(pl.col("step").is_between(first, last))
    b = breakdown(rows) if not rows.is_empty() else None
    return b.comm_share if b else None
