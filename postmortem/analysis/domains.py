"""Communication by parallel domain: which dimension of the layout (TP, PP, DP, CP, EP, or the
whole world) each communication operator serves, and what each costs per step.

A group's domain comes, first of what the run holds, from
1. the framework's own name for it (``parallel_group_info``: Megatron / MindSpeed ``pg_name`` such
   as ``tp``, ``dp_cp``, ``pp``, ``exp``; MindSpore's ``hccl_world_group``);
2. its ranks against the layout (data / model / context / pipeline / expert parallel degrees from
   the config, the callback header or ``distributed_args``): in MindSpore's and Megatron's rank
   order tensor parallel is the innermost dimension (stride 1), then context, then data, then
   the pipeline stages (stride world / stages); expert groups are taken from data parallel ranks
   (stride tp × cp);
3. the operator itself: a send / receive serves the pipeline; an all-to-all the experts.
What is left is "unknown", with the reason.

Per domain and step, over the ranks that take part (means per rank): the operators' time, its
exposed part (what compute does not hide: from the operators' intervals in DB exports; else all of
it where the rank's step overlapped nothing; else the step's exposed communication where the
domain is the step's only one), bytes over transfer time, and the rank the others wait for: per
group and step the rank whose operators took the least time (it arrived last; msprof-analyze
``communication_bottleneck``'s rule), when the spread is at least 5 % of the longest.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import polars as pl

from ..readers.profiler.groups import double_hash
from .operators import comm_timed, with_transfer_time
from .profile import chosen_steps, step_series

DOMAINS = ("TP", "PP", "DP", "CP", "EP", "world")
SLOW_SPREAD = 0.05  # communication_bottleneck DEFAULT_SLOW_NPU_HAPPEN_THRESHOLD
IDLE_MHZ = 800.0  # freq_analysis FREE_FREQ: the level a device idles at between tasks

# Megatron / MindSpeed pg_name (hccl_config group_name) and MindSpore names -> domain. Composite
# names go to the dimension whose traffic they carry: dp_cp is the distributed optimizer's
# gradient reduce-scatter over data × context ranks; embd the tied-embedding sync between the
# first and last stage.
PG_NAMES = {
    "tp": "TP", "tp_cp": "TP", "pp": "PP", "embd": "PP", "pp_embd": "PP", "position_embd": "PP",
    "dp": "DP", "dp_cp": "DP", "edp": "DP", "dp_modulo_exp": "DP", "dp_modulo_exp_cp": "DP", "intra_dp_cp": "DP",
    "cp": "CP", "cp2": "CP", "cp_ring": "CP", "cp_ulysses": "CP", "cp_ring_intra": "CP",
    "exp": "EP", "ep": "EP", "tp_exp": "EP", "tp_ep": "EP",
    "default_group": "world", "hccl_world_group": "world", "nccl_world_group": "world",
}


@dataclass(frozen=True)
class GroupDomain:
    group: str  # the name the operator records carry
    name: str | None  # the framework's name (pg_name), where given
    domain: str  # one of DOMAINS, or "unknown"
    basis: str  # pg-name | layout | op-kind | only-dimension | "" (unknown)
    reason: str  # why unknown: no-layout | no-ranks | ambiguous | spans-dimensions | one-rank | no-group; else ""
    ranks: tuple[int, ...]  # the group's global ranks (from the records where no group info)


@dataclass(frozen=True)
class DomainStep:
    domain: str
    step: int | None
    ranks: int
    total_s: float  # operator time per rank
    exposed_s: float | None
    step_s: float | None  # the same ranks' profiled step, mean
    bytes: float | None
    bandwidth_gbps: float | None
    slowest_rank: int | None  # the rank the others wait for (its group the costliest of the domain)
    slowest_wait_s: float | None
    slowest_transit_s: float | None
    others_wait_s: float | None  # the other ranks of that group, mean wait
    wait_stage_s: float | None  # per rank: Σ over ops of (its time − the group's shortest), msprof-analyze's wait stage
    transmit_stage_s: float | None  # per rank: Σ over ops of the group's shortest time (the transfer itself)


@dataclass(frozen=True)
class DomainCost:
    domain: str
    steps: int
    ranks: int
    groups: int
    types: tuple[str, ...]  # operator types, costliest first
    total_s: float  # mean per step and rank
    exposed_s: float | None
    share: float | None  # of the step
    exposed_share: float | None
    exposed_basis: str  # intervals | none-overlapped | one-domain | mixed | ""
    bandwidth_gbps: float | None
    slowest_rank: int | None  # most often the rank the others wait for
    slowest_steps: int  # on how many of the steps where one was found
    judged_steps: int
    slowest_wait_s: float | None
    slowest_transit_s: float | None
    others_wait_s: float | None
    wait_stage_s: float | None  # mean per step and rank (cluster_time_summary's communicationWaitStageTime)
    transmit_stage_s: float | None  # (its communicationTransmitStageTime)


@dataclass(frozen=True)
class FrequencyRank:
    rank: int
    samples: int
    min_mhz: float
    max_mhz: float
    state: str  # steady | idle-drops (only to the idle level) | drop
    first_drop_s: float | None = None  # when it first ran at a dropped level (s from the capture's first record)


@dataclass(frozen=True)
class Frequency:
    nominal_mhz: float
    ranks: tuple[FrequencyRank, ...]
    dropped: tuple[int, ...]  # ranks whose AI Core ran below the nominal level other than idling


@dataclass(frozen=True)
class IdleReason:
    reason: str
    gaps: int
    total_s: float


@dataclass(frozen=True)
class IdleGaps:
    ranks: int
    reasons: tuple[IdleReason, ...]  # longest total first
    longest_rank: int | None
    longest_step: int | None
    longest_s: float
    longest_reason: str
    by_rank: tuple[tuple[int, str, float], ...] = ()  # per rank: the reason holding most of its gaps' time, that time


@dataclass(frozen=True)
class CommDomains:
    groups: tuple[GroupDomain, ...]
    steps: tuple[DomainStep, ...]
    domains: tuple[DomainCost, ...]  # costliest first; "unknown" last
    costliest: DomainCost | None  # of the known domains, by exposed time where every one has it, else total
    layout: dict[str, int]  # the degrees used, with "world"
    layout_source: str | None
    frequency: Frequency | None
    idle: IdleGaps | None


# --------------------------------------------------------------------------- group -> domain


def group_keys(comm: pl.DataFrame) -> pl.DataFrame:
    """PROFILE_COMM with one name per group: an HCCL comm name (profiler DBs) becomes its double
    hash where the other records of the run use that (communication.json, analysis.db); records
    that name no group are grouped by their kind ("<p2p>", "<collective>")."""
    names = [g for g in comm["group"].drop_nulls().unique().to_list()]
    hashed = {g: double_hash(g) for g in names if not g.isdigit()}
    present = set(names)
    rename = {g: h for g, h in hashed.items() if h in present}
    group = pl.col("group").replace(rename) if rename else pl.col("group")
    return comm.with_columns(pl.when(pl.col("group").is_null() | (pl.col("group") == ""))
                             .then(pl.concat_str(pl.lit("<"), pl.col("kind").fill_null("collective"), pl.lit(">")))
                             .otherwise(group).alias("group"))


def _degrees(settings: dict[str, Any]) -> tuple[dict[str, int], str | None]:
    def get(key: str) -> int | None:
        s = settings.get(key)
        v = getattr(s, "value", s)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 else None

    out = {d: get(k) for d, k in (("TP", "model_parallel"), ("PP", "pipeline_stage"), ("DP", "data_parallel"),
                                   ("CP", "context_parallel"), ("EP", "expert_parallel"), ("world", "device_num"))}
    src = next((getattr(settings.get(k), "source", None) for k in ("data_parallel", "model_parallel", "pipeline_stage")
                if settings.get(k) is not None), None)
    known = {k: v for k, v in out.items() if v is not None}
    if "DP" in known and "TP" in known:
        known.setdefault("CP", 1)
        known.setdefault("EP", 1)
        known.setdefault("PP", 1)
        known.setdefault("world", known["DP"] * known["TP"] * known["CP"] * known["PP"])
    return known, src


def _patterns(deg: dict[str, int]) -> dict[str, tuple[int, int]]:
    """domain -> (group size, stride between its ranks) in MindSpore's / Megatron's rank order."""
    if not {"TP", "DP", "CP", "PP", "world"} <= deg.keys():
        return {}
    tp, cp, dp, pp, world = deg["TP"], deg["CP"], deg["DP"], deg["PP"], deg["world"]
    out = {"TP": (tp, 1), "CP": (cp, tp), "DP": (dp, tp * cp), "PP": (pp, world // pp if pp else 0)}
    if deg.get("EP", 1) > 1:
        out["EP"] = (deg["EP"], tp * cp)
    return {d: p for d, p in out.items() if p[0] > 1}


def _by_ranks(ranks: tuple[int, ...], deg: dict[str, int], kinds: set[str]) -> tuple[str, str, str]:
    """(domain, basis, reason) of a group from its ranks and the layout."""
    pats = _patterns(deg)
    if not pats:
        return "unknown", "", "no-layout"
    n = len(ranks)
    if n == 1:
        return "unknown", "", "one-rank"
    world = deg["world"]
    if n == world:
        only = [d for d, (size, _) in pats.items() if size == world]
        return (only[0], "layout", "") if len(only) == 1 else ("world", "layout", "")
    steps = {b - a for a, b in pairwise(ranks)}
    fits = [d for d, (size, stride) in pats.items() if size == n and steps == {stride}]
    if len(fits) > 1:
        fits = [d for d in fits if (d == "PP") == ("p2p" in kinds)] or fits
        if "alltoall" in kinds and "EP" in fits:
            fits = ["EP"]
    if len(fits) == 1:
        return fits[0], "layout", ""
    return ("unknown", "", "ambiguous") if fits else ("unknown", "", "spans-dimensions")


def _only_dimension(deg: dict[str, int], kind: str) -> str | None:
    """Where the records name no group: the layout's one collective dimension, if it has one."""
    if kind == "p2p" or not {"TP", "DP", "CP"} <= deg.keys():
        return None
    live = [d for d in ("TP", "DP", "CP", "EP") if deg.get(d, 1) > 1]
    return live[0] if len(live) == 1 else None


def assign_groups(comm: pl.DataFrame, groups: pl.DataFrame, settings: dict[str, Any]) -> tuple[GroupDomain, ...]:
    deg, _ = _degrees(settings)
    info: dict[str, tuple[str | None, tuple[int, ...]]] = {}
    for g, h, name, ranks in groups.select("group", "hashed", "pg_name", "global_ranks").iter_rows():
        entry = (name, tuple(ranks) if ranks is not None else ())
        for key in (g, h):
            if key is not None:
                info.setdefault(key, entry)
    rows = comm.filter(pl.col("dst_rank").is_null())
    seen = rows.group_by("group").agg(pl.col("rank").drop_nulls().unique().sort().alias("ranks"),
                                      pl.col("kind").drop_nulls().unique().alias("kinds"),
                                      pl.col("op").str.to_lowercase().str.contains("alltoall").any().alias("a2a"))
    # the records' own ranks are a group's where every rank of the world was profiled
    profiled_all = "world" in deg and comm["rank"].drop_nulls().n_unique() >= deg["world"]
    out = []
    for group, seen_ranks, kinds, a2a in seen.sort("group").iter_rows():
        kinds = set(kinds) | ({"alltoall"} if a2a else set())
        name, ranks = info.get(group, (None, ()))
        if not ranks:
            ranks, complete = tuple(int(r) for r in seen_ranks), profiled_all
        else:
            complete = True
        if name and name.lower() in PG_NAMES:
            domain, basis, reason = PG_NAMES[name.lower()], "pg-name", ""
        elif group.startswith("<"):
            dim = "PP" if kinds == {"p2p"} else _only_dimension(deg, "collective")
            domain, basis, reason = (dim, "op-kind" if dim == "PP" else "only-dimension", "") if dim else (
                "unknown", "", "no-group" if deg else "no-layout")
        elif complete:
            domain, basis, reason = _by_ranks(ranks, deg, kinds)
        elif kinds == {"p2p"}:
            domain, basis, reason = "PP", "op-kind", ""
        else:
            domain, basis, reason = "unknown", "", "no-ranks" if deg else "no-layout"
        if domain == "unknown" and kinds == {"p2p"}:
            domain, basis, reason = "PP", "op-kind", ""
        out.append(GroupDomain(group=group, name=name, domain=domain, basis=basis, reason=reason, ranks=ranks))
    return tuple(out)


# --------------------------------------------------------------------------- figures


def _exposure(timed: pl.DataFrame, comm: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """timed rows with exposed_s and its basis."""
    measured = (comm.filter(pl.col("exposed_s").is_not_null() & pl.col("dst_rank").is_null())
                .group_by("rank", "step", "op").agg(pl.col("exposed_s").sum().alias("_exp")))
    out = timed.join(measured, on=["rank", "step", "op"], how="left", nulls_equal=True)
    out = out.with_columns(pl.coalesce("exposed_s", "_exp").alias("exposed_s")).drop("_exp")
    per_step = steps.group_by("rank", "step").agg(
        pl.col("overlapped_s").sum(), (pl.col("comm_not_overlapped_s").fill_null(0) + pl.col("bubble_s").fill_null(0)).sum()
        .alias("_exposed_step"), pl.col("comm_not_overlapped_s").is_not_null().any().alias("_has"))
    out = out.join(per_step, on=["rank", "step"], how="left", nulls_equal=True)
    n_dom = pl.col("domain").n_unique().over("rank", "step")
    return out.with_columns(
        pl.when(pl.col("exposed_s").is_not_null()).then(pl.lit("intervals"))
        .when(pl.col("overlapped_s") == 0).then(pl.lit("none-overlapped"))
        .when((n_dom == 1) & pl.col("_has")).then(pl.lit("one-domain")).otherwise(pl.lit(None)).alias("exposed_basis"),
        pl.when(pl.col("exposed_s").is_not_null()).then(pl.col("exposed_s"))
        .when(pl.col("overlapped_s") == 0).then(pl.col("time_s"))
        .when((n_dom == 1) & pl.col("_has")).then(pl.col("_exposed_step") * pl.col("time_s") / pl.col("time_s").sum().over("rank", "step"))
        .otherwise(None).alias("exposed_s"),
    )


def _slowest(per_rank: pl.DataFrame) -> pl.DataFrame:
    """Per (domain, step, group): the rank whose operators took least (it arrived last)."""
    g = per_rank.filter((pl.col("ranks_in_group") >= 2) & ~pl.col("group").str.starts_with("<"))  # a named group
    spread = (pl.col("time_s").max() - pl.col("time_s").min()) / pl.col("time_s").max()
    last = (g.sort("time_s").group_by("domain", "step", "group", maintain_order=True).agg(
        pl.col("rank").first().alias("slowest_rank"), pl.col("wait_s").first().alias("slowest_wait_s"),
        pl.col("transit_s").first().alias("slowest_transit_s"),
        ((pl.col("wait_s").sum() - pl.col("wait_s").first()) / (pl.len() - 1)).alias("others_wait_s"),
        spread.alias("spread"), pl.col("time_s").mean().alias("group_time")))
    return last.filter(pl.col("spread") >= SLOW_SPREAD)


def comm_domains(comm: pl.DataFrame, groups: pl.DataFrame, steps: pl.DataFrame, settings: dict[str, Any],
                 freq: pl.DataFrame, free: pl.DataFrame) -> CommDomains | None:
    """``steps``: PROFILE_STEPS; ``comm``: PROFILE_COMM; ``groups``: COMM_GROUPS."""
    frequency, idle = frequency_drops(freq), idle_gaps(free)
    steps = chosen_steps(steps)  # one layout per rank, as the profile's own figures use
    comm = group_keys(comm)
    timed = comm_timed(comm)
    if timed.is_empty():
        return None if frequency is None and idle is None else CommDomains((), (), (), None, {}, None, frequency, idle)
    assigned = assign_groups(comm, groups, settings)
    dom = {g.group: g.domain for g in assigned}
    timed = timed.with_columns(pl.col("group").replace_strict(dom, default="unknown").alias("domain"))
    timed = _exposure(timed, comm, steps)
    # cluster_time_summary's split: an op's transfer is the shortest time any rank of its group took
    # for it, the rest of each rank's time is waiting (only ops seen on at least two ranks)
    same = ["group", "op", "step"]
    seen = pl.col("rank").n_unique().over(same, mapping_strategy="group_to_rows") >= 2
    shortest = pl.col("time_s").min().over(same)
    timed = timed.with_columns(pl.when(seen).then(pl.col("time_s") - shortest).alias("_wait_stage"),
                               pl.when(seen).then(shortest).alias("_transmit_stage"))
    moved = with_transfer_time(timed).with_columns(
        pl.when((pl.col("bytes") > 0) & (pl.col("transit_s") > 0)).then(pl.col("bytes")).alias("_b"),
        pl.when((pl.col("bytes") > 0) & (pl.col("transit_s") > 0)).then(pl.col("transit_s")).alias("_t"))
    per_rank = moved.group_by("domain", "step", "group", "rank").agg(
        pl.col("time_s").sum(), pl.col("exposed_s").sum(), pl.col("exposed_s").is_null().any().alias("_gap"),
        pl.col("exposed_basis").drop_nulls().unique().alias("bases"),
        *(pl.when(pl.col(c).is_not_null().any()).then(pl.col(c).sum()).alias(c)
          for c in ("wait_s", "transit_s", "_wait_stage", "_transmit_stage")),
        pl.col("_b").sum(), pl.col("_t").sum())
    per_rank = per_rank.with_columns(pl.len().over("domain", "step", "group").alias("ranks_in_group"),
                                     pl.when(pl.col("_gap")).then(None).otherwise(pl.col("exposed_s")).alias("exposed_s"))
    step_total = step_series(steps).group_by("rank", "step").agg(pl.col("total_s").sum())  # the layout's total, else its parts
    by_rank_step = (per_rank.group_by("domain", "step", "rank").agg(
        pl.col("time_s").sum(), pl.col("exposed_s").sum(), pl.col("exposed_s").is_null().any().alias("_gap"),
        pl.col("bases").list.explode(keep_nulls=False, empty_as_null=False).unique(), pl.col("_b").sum(), pl.col("_t").sum(),
        *(pl.when(pl.col(c).is_not_null().any()).then(pl.col(c).sum()).alias(c) for c in ("_wait_stage", "_transmit_stage")))
        .join(step_total, on=["rank", "step"], how="left", nulls_equal=True))
    per_step = by_rank_step.group_by("domain", "step").agg(
        pl.len().alias("ranks"), pl.col("time_s").mean(), pl.col("exposed_s").mean(), pl.col("_gap").any(),
        pl.col("bases").list.explode(keep_nulls=False, empty_as_null=False).unique(), pl.col("total_s").mean().alias("step_s"),
        pl.col("_b").sum(), pl.col("_t").sum(), pl.col("_wait_stage").mean(), pl.col("_transmit_stage").mean())
    slow = _slowest(per_rank)
    worst = slow.sort("group_time", descending=True).group_by("domain", "step", maintain_order=True).first()
    per_step = per_step.join(worst, on=["domain", "step"], how="left", nulls_equal=True).sort("domain", "step")
    steps_out = tuple(DomainStep(
        domain=r["domain"], step=r["step"], ranks=r["ranks"], total_s=r["time_s"],
        exposed_s=None if r["_gap"] else r["exposed_s"], step_s=r["step_s"],
        bytes=r["_b"] or None, bandwidth_gbps=r["_b"] / r["_t"] / 1e9 if r["_t"] else None,
        slowest_rank=r["slowest_rank"], slowest_wait_s=r["slowest_wait_s"], slowest_transit_s=r["slowest_transit_s"],
        others_wait_s=r["others_wait_s"], wait_stage_s=r["_wait_stage"], transmit_stage_s=r["_transmit_stage"])
        for r in per_step.iter_rows(named=True))
    types = (timed.group_by("domain", "type").agg(pl.col("time_s").sum()).sort("time_s", descending=True)
             .group_by("domain", maintain_order=True).agg(pl.col("type")))
    types = dict(types.iter_rows())
    costs = [_cost(d, [s for s in steps_out if s.domain == d], per_step.filter(pl.col("domain") == d), assigned, types)
             for d in per_step["domain"].unique().to_list()]
    costs.sort(key=lambda c: (c.domain == "unknown", -(c.exposed_s if c.exposed_s is not None else c.total_s)))
    known = [c for c in costs if c.domain != "unknown"]
    by_exposed = known and all(c.exposed_s is not None for c in known)
    costliest = max(known, key=lambda c: c.exposed_s if by_exposed else c.total_s) if known else None
    deg, src = _degrees(settings)
    return CommDomains(groups=assigned, steps=steps_out, domains=tuple(costs), costliest=costliest, layout=deg,
                       layout_source=src, frequency=frequency, idle=idle)


def _cost(domain: str, rows: list[DomainStep], frame: pl.DataFrame, groups: tuple[GroupDomain, ...],
          types: dict[str, list[str]]) -> DomainCost:
    n = len(rows)
    total = sum(r.total_s for r in rows) / n
    exposed = None if any(r.exposed_s is None for r in rows) else sum(r.exposed_s for r in rows) / n
    step = [r.step_s for r in rows if r.step_s]
    step_s = sum(step) / len(step) if len(step) == n else None
    bases = sorted({b for bs in frame["bases"].to_list() for b in bs})
    b, t = sum(r.bytes or 0 for r in rows), float(frame["_t"].sum())
    judged = [r for r in rows if r.slowest_rank is not None]
    counts: dict[int, int] = {}
    for r in judged:
        counts[r.slowest_rank] = counts.get(r.slowest_rank, 0) + 1
    top = min(counts, key=lambda k: (-counts[k], k)) if counts else None
    mine = [r for r in judged if r.slowest_rank == top]

    def mean(xs: list[float | None]) -> float | None:
        xs = [x for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else None

    return DomainCost(
        domain=domain, steps=n, ranks=max(r.ranks for r in rows), groups=sum(g.domain == domain for g in groups),
        types=tuple(types.get(domain, ())[:3]), total_s=total, exposed_s=exposed,
        share=total / step_s if step_s else None, exposed_share=exposed / step_s if step_s and exposed is not None else None,
        exposed_basis=bases[0] if len(bases) == 1 else ("mixed" if bases else ""),
        bandwidth_gbps=b / t / 1e9 if t > 0 and b else None, slowest_rank=top, slowest_steps=counts.get(top, 0),
        judged_steps=len(judged), slowest_wait_s=mean([r.slowest_wait_s for r in mine]),
        slowest_transit_s=mean([r.slowest_transit_s for r in mine]), others_wait_s=mean([r.others_wait_s for r in mine]),
        wait_stage_s=mean([r.wait_stage_s for r in rows]), transmit_stage_s=mean([r.transmit_stage_s for r in rows]))


# --------------------------------------------------------------------------- device: frequency, idle


def frequency_drops(freq: pl.DataFrame) -> Frequency | None:
    """freq_analysis' rule: a rank at one level runs steady; one that only falls to the idle
    level between tasks idles; any other level is a drop (power or thermal capping). The nominal
    level is the highest any rank reached (no chip's table is assumed)."""
    f = freq.filter(pl.col("freq_mhz").is_not_null() & pl.col("rank").is_not_null())
    if f.is_empty():
        return None
    nominal = float(f["freq_mhz"].max())
    ranks = []
    for rank, n, lo, hi, levels in (f.group_by("rank").agg(
            pl.len(), pl.col("freq_mhz").min().alias("lo"), pl.col("freq_mhz").max().alias("hi"),
            pl.col("freq_mhz").unique().alias("levels")).sort("rank").iter_rows()):
        levels = set(levels)
        state = "steady" if levels == {nominal} else ("idle-drops" if levels <= {nominal, IDLE_MHZ} else "drop")
        dropped = f.filter((pl.col("rank") == rank) & ~pl.col("freq_mhz").is_in([nominal, IDLE_MHZ]))
        first = float(dropped["time_s"].min()) if state == "drop" and dropped["time_s"].drop_nulls().len() else None
        ranks.append(FrequencyRank(rank=rank, samples=n, min_mhz=lo, max_mhz=hi, state=state, first_drop_s=first))
    return Frequency(nominal_mhz=nominal, ranks=tuple(ranks), dropped=tuple(r.rank for r in ranks if r.state == "drop"))


def idle_gaps(free: pl.DataFrame) -> IdleGaps | None:
    if free.is_empty():
        return None
    g = free.group_by("reason").agg(pl.len(), pl.col("duration_s").sum()).sort("duration_s", descending=True)
    top = free.sort("duration_s", descending=True).row(0, named=True)
    per = (free.filter(pl.col("rank").is_not_null()).group_by("rank", "reason").agg(pl.col("duration_s").sum())
           .sort(["rank", "duration_s", "reason"], descending=[False, True, False]).group_by("rank", maintain_order=True).first())
    return IdleGaps(ranks=free["rank"].n_unique(), reasons=tuple(IdleReason(r, int(n), s) for r, n, s in g.iter_rows()),
                    longest_rank=top["rank"], longest_step=top["step"], longest_s=top["duration_s"],
                    longest_reason=top["reason"], by_rank=tuple(per.iter_rows()))
