"""Operator time TopN and communication operators (the article's second and third graphs).

One rank's operators can be in two files that describe the same time (MindInsight's
``aicore_type`` and ``aicore_detail``; a 2.x ``kernel_details.csv`` and its ``op_statistic.csv``):
per rank and scope the first layout of the scope's list is used. Times are per rank: summed over
the ranks that have the scope, divided by their number; shares are of the scope's total.
"""

from __future__ import annotations

import re

import polars as pl

from . import thresholds as th
from .types import CommOpStat, Communication, LinkStat, OpScope, Operators, OpStat

# scope -> layouts, best first. KERNELS covers every device kernel (communication included), so a
# rank that has it uses nothing else; otherwise AI Core and AI CPU files are complementary.
OP_SOURCES = {
    OpScope.KERNELS: ("kernel_details", "op_summary", "profiler_db", "msprof_task_time", "op_statistic"),
    OpScope.AI_CORE: ("aicore_detail", "aicore_type"),
    OpScope.AI_CPU: ("aicpu",),
}
# Communication operator time, best first: per-op records with elapsed time, then MindInsight's
# step trace (each op's own duration), then hccl_raw (transfer + wait per op).
COMM_TIME_SOURCES = ("communication.json", "cluster_communication", "msprof_analyze_communication", "analysis_db",
                     "communication_statistic", "msprof_hccl", "profiler_db", "step_trace_raw", "hccl_raw")
# Bytes and transfer time per transport: per-op records before per-link matrices (the same bytes).
LINK_SOURCES = ("communication.json", "cluster_communication", "msprof_analyze_communication", "analysis_db", "hccl_raw",
                "msprof_hccl", "communication_matrix.json", "cluster_communication_matrix", "analysis_db_matrix",
                "msprof_hccl_link")
COMM_CORES = ("HCCL", "COMMUNICATION")
_COMM_TYPES = r"(?i)^(hcom|hccl|allreduce|allgather|reducescatter|broadcast|alltoall|send|receive|recv|batchsendrecv)"


def with_transfer_time(comm: pl.DataFrame) -> pl.DataFrame:
    """PROFILE_COMM rows with ``transit_s`` the transport's own transfer time: bytes / the record's
    bandwidth where it gives one (a per-op record's bandwidth and bytes are its transport's, its
    transit time the whole op's, 0 for HCCS ops in some writers: torch_npu 2023), else the
    record's transit time. The one definition for the per-transport and the per-link bandwidths."""
    bw = pl.col("bandwidth_gbps")
    own = pl.when((bw > 0) & bw.is_finite()).then(pl.col("bytes") / (bw * 1e9)).otherwise(pl.col("transit_s"))
    return comm.with_columns(own.alias("transit_s"))


def preferred(df: pl.DataFrame, order: tuple[str, ...]) -> pl.DataFrame:
    """Per rank, the rows of the first layout of ``order`` the rank has (a layout not in the list
    comes after it, by name, so two unknown layouts are never summed together)."""
    if df.is_empty():
        return df
    # decided on the distinct (rank, layout) pairs; then each row is kept if its layout is its rank's
    rank, source = pl.col("rank").fill_null(-1), pl.col("source").fill_null("")
    pairs = df.select(rank.alias("rank"), source.alias("source")).unique()
    known = pl.col("source").replace_strict({s: i for i, s in enumerate(order)}, default=None, return_dtype=pl.Int64)
    pairs = pairs.with_columns(known.fill_null(len(order) + pl.col("source").rank("dense").cast(pl.Int64)).alias("_pref"))
    best = dict(pairs.filter(pl.col("_pref") == pl.col("_pref").min().over("rank")).select("rank", "source").iter_rows())
    return df.filter(source == rank.replace_strict(best, default=None, return_dtype=pl.Utf8))


def comm_type(op: pl.Expr) -> pl.Expr:
    """AllReduce from stream_41_0_AllReduce-op4582, hcom_broadcast from hcom_broadcast__501_0."""
    return (op.str.replace(r"@.*$", "").str.replace(r"^stream_\d+_parallel_\d+$", "parallel")
            .str.replace(r"^stream_\d+_\d+_", "").str.replace(r"^.*/", "").str.replace(r"-op\d+(?:_\d+)*$", "")
            .str.replace(r"(_+\d+)+$", "").str.strip_chars_end("_"))


def with_comm_type(comm: pl.DataFrame) -> pl.DataFrame:
    """PROFILE_COMM rows with their operator ``type``: the names repeat over ranks and steps, so
    each distinct name is parsed once."""
    if "type" in comm.columns:
        return comm
    names = comm.select(pl.col("op").unique())
    return comm.join(names.with_columns(comm_type(pl.col("op")).alias("type")), on="op", how="left", nulls_equal=True)


def source_label(df: pl.DataFrame) -> str:
    """The layouts the rows come from, as one label ("a+b")."""
    return "+".join(sorted(df["source"].unique().drop_nulls().to_list()))


def _is_comm(type_: pl.Expr, core: pl.Expr) -> pl.Expr:
    return core.is_in(COMM_CORES).fill_null(False) | type_.str.contains(_COMM_TYPES)


def _stats(rows: pl.DataFrame, by: list[str], ranks: int, total: float) -> tuple[OpStat, ...]:
    if rows.is_empty() or total <= 0:
        return ()
    g = (rows.group_by(by).agg(pl.col("total_s").sum(), pl.col("calls").sum().alias("calls"),
                               pl.col("calls").is_null().all().alias("no_calls"),
                               pl.col("core").sort_by("total_s", descending=True).first(), pl.col("comm").any())
         .sort(["total_s", *by], descending=[True, *([False] * len(by))]).head(th.TOP_N))
    return tuple(
        OpStat(type=r["type"], name=r.get("name"), core=r["core"], calls=None if r["no_calls"] else int(r["calls"]),
               total_s=float(r["total_s"]) / ranks, share=float(r["total_s"]) / total, communication=bool(r["comm"]))
        for r in g.iter_rows(named=True)
    )


def operators(ops: pl.DataFrame) -> tuple[Operators, ...]:
    ops = ops.filter(pl.col("total_s").is_finite() & pl.col("type").is_not_null())
    if ops.is_empty():
        return ()
    ops = ops.with_columns(_is_comm(pl.col("type"), pl.col("core")).alias("comm"))
    scope_of = {s: str(scope) for scope, sources in OP_SOURCES.items() for s in sources}
    ops = ops.with_columns(pl.col("source").replace_strict(scope_of, default=None).alias("scope"))
    with_kernels = ops.filter(pl.col("scope") == OpScope.KERNELS.value)["rank"].unique()
    out = []
    for scope, sources in OP_SOURCES.items():
        rows = ops.filter(pl.col("scope") == scope.value)
        if scope != OpScope.KERNELS:
            rows = rows.filter(~pl.col("rank").is_in(with_kernels.implode()))
        rows = preferred(rows, sources)
        if rows.is_empty():
            continue
        ranks = max(rows["rank"].n_unique(), 1)
        total = float(rows["total_s"].sum())
        named = rows.filter(pl.col("name").is_not_null())
        comm = float(rows.filter(pl.col("comm"))["total_s"].sum()) / total if scope == OpScope.KERNELS and total > 0 else None
        out.append(Operators(
            scope=scope, source=source_label(rows), ranks=ranks, total_s=total / ranks,
            by_type=_stats(rows, ["type"], ranks, total), by_name=_stats(named, ["type", "name"], ranks, total),
            types=rows["type"].n_unique(), names=named.filter(pl.col("name") != "(other)")["name"].n_unique(),
            comm_share=comm,
        ))
    return tuple(out)


def comm_from_kernels(operators: tuple[Operators, ...]) -> Communication | None:
    """Without communication files, the communication kernels of a KERNELS scope (HCCL ops in
    kernel_details.csv / op_summary), their shares of the device kernel time."""
    kernels = next((o for o in operators if o.scope == OpScope.KERNELS), None)
    ops = [o for o in (kernels.by_type if kernels else ()) if o.communication]
    if not ops:
        return None
    return Communication(
        source=kernels.source, ranks=kernels.ranks, links=(), link_source=None, share_basis="kernels",
        ops=tuple(CommOpStat(type=o.type.rstrip("_"), kind="p2p" if re.search(r"(?i)send|rec(ei)?v", o.type) else "collective",
                             calls=o.calls, total_s=o.total_s, share=o.share, wait_s=None, transit_s=None) for o in ops),
    )


def _per_link(comm: pl.DataFrame) -> pl.Expr:
    """Rows of a communication matrix (one per link; their time is not the op's elapsed time)."""
    return pl.col("dst_rank").is_not_null() if "dst_rank" in comm.columns else pl.lit(False)


def comm_timed(comm: pl.DataFrame) -> pl.DataFrame:
    """The operator rows whose time counts, one layout per rank (COMM_TIME_SOURCES), with ``type``
    and ``time_s`` (elapsed, else transfer + wait)."""
    if comm.is_empty():
        return comm.with_columns(pl.lit(None, pl.Utf8).alias("type"), pl.lit(None, pl.Float64).alias("time_s"))
    comm = with_comm_type(comm).with_columns(pl.coalesce("elapse_s", pl.col("transit_s") + pl.col("wait_s")).alias("time_s"))
    if "calls" not in comm.columns:
        comm = comm.with_columns(pl.lit(None, pl.Int64).alias("calls"))
    return preferred(comm.filter(pl.col("time_s").is_not_null() & ~_per_link(comm)), COMM_TIME_SOURCES)


def communication(comm: pl.DataFrame, timed: pl.DataFrame, steps: pl.DataFrame) -> Communication | None:
    """Communication operators by type (time in flight, its share of the profiled step time) and
    bytes by transport. ``timed``: comm_timed(comm); ``steps``: PROFILE_STEP_SERIES, the
    denominator (all profiled steps)."""
    if comm.is_empty():
        return None
    ops: tuple[CommOpStat, ...] = ()
    ranks = 0
    if not timed.is_empty():
        ranks = max(timed["rank"].n_unique(), 1)
        in_steps = steps.filter(pl.col("rank").is_in(timed["rank"].unique().implode()))
        step_total = float(in_steps["total_s"].sum()) / max(in_steps["rank"].n_unique(), 1) if not in_steps.is_empty() else None
        g = (timed.group_by("type").agg(
            pl.col("kind").drop_nulls().first(), pl.col("time_s").sum(),
            pl.when(pl.col("calls").is_null()).then(1).otherwise(pl.col("calls")).sum().alias("calls"),
            pl.col("wait_s").sum().alias("wait"), pl.col("wait_s").is_not_null().any().alias("has_wait"),
            pl.col("transit_s").sum().alias("transit"), pl.col("transit_s").is_not_null().any().alias("has_transit"),
        ).sort(["time_s", "type"], descending=[True, False]))
        ops = tuple(
            CommOpStat(type=r["type"], kind=r["kind"] or "collective", calls=int(r["calls"]), total_s=r["time_s"] / ranks,
                       share=(r["time_s"] / ranks / step_total) if step_total else None,
                       wait_s=r["wait"] / ranks if r["has_wait"] else None,
                       transit_s=r["transit"] / ranks if r["has_transit"] else None)
            for r in g.iter_rows(named=True)
        )
    moved = preferred(with_transfer_time(comm).filter((pl.col("bytes") > 0) & (pl.col("transit_s") > 0) & pl.col("transport").is_not_null()),
                      LINK_SOURCES)
    links: tuple[LinkStat, ...] = ()
    if not moved.is_empty():
        n = max(moved["rank"].n_unique(), 1)
        g = moved.group_by("transport").agg(pl.col("bytes").sum(), pl.col("transit_s").sum(), pl.len().alias("ops")).sort(
            ["bytes", "transport"], descending=[True, False])
        links = tuple(LinkStat(transport=t, bytes=b / n, transit_s=s / n, bandwidth_gbps=b / s / 1e9 if s > 0 else None,
                               ops=int(k)) for t, b, s, k in g.iter_rows())
    if not ops and not links:
        return None
    return Communication(
        source=source_label(timed) if not timed.is_empty() else None, ranks=ranks,
        ops=ops, links=links, link_source=source_label(moved) if not moved.is_empty() else None,
    )
