"""Per-rank step time: which ranks are slow, and the groups they make (stage, node, odd/even).

Each rank's figure is its median e2e step time over the steady-window steps (without logged step
times, its mean profiled step: msprof-analyze's cluster table, a profiler folder per rank).

The reference is the fast mode of the ranks, found the same way at 2 ranks and at 1,024: the rank
medians are sorted and split at their largest relative gap when that gap is wider than the rule's
threshold and than 3 x the scaled MAD of the lower side, and the lower side is no smaller than the
upper or holds at least a quarter of the ranks (a slow half is slow, 33 slow ranks of 64 too; one
fast rank among slow ones does not make the others slow); the lower side is split again the same way. Without such a gap every rank is the reference. A rank is
slow when its median exceeds the median of the reference ranks (itself left out) by more than
max(5%, 3 x the scaled MAD of the reference, relative). msprof-analyze's imbalance figure,
(max - min) / mean of the rank medians, is a floor: at or below 5% no rank is flagged.

Holding each rank against the median of all ranks, as this did above 512 ranks, flags nothing
when half of them are slow: the median then falls between the two modes and the MAD is half their
distance (1,024 ranks with the odd half 54% slower gave no slow rank while 64 ranks gave 32).

The slow ranks are then named as groups, first what explains them most: whole pipeline stages
(contiguous blocks of world / pipeline_stage ranks, where pipeline_stage > 1: a stage is never
taken for a node), whole nodes (the ranks of one host where the files name it, else contiguous
blocks of the devices per node a setting gives, else 8), the odd or the even ranks, the same device
slot of every node; what is left is listed as rank ranges. The ranks the profiler finds the
others waiting for (profile.stragglers) are slow too: their own step is not longer, the others'
is (they wait in their collectives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import RankGroup, RankGroupKind, RankProfile, RankStat, Ranks, Stragglers

THRESHOLD = 0.05  # relative excess over the reference median that makes a rank slow
SPREAD_FLOOR = 0.05  # msprof: (max - min) / mean above this is an imbalance worth a look
MAD_K = 3.0
DEFAULT_NODE = 8  # devices per node when neither the files nor a setting say (Ascend servers: 8 NPUs)
MAX_SPLITS = 4  # fast-mode refinements: each split leaves the lower side, at most this many times
MODE_SHARE = 0.25  # a faster side smaller than the slower is the reference only if it holds this share of the ranks
# Settings that give the devices per node (msrun's --local_worker_num, a user's own key).
NODE_KEYS = ("devices_per_node", "local_worker_num", "device_num_per_host", "npus_per_node")
# A MindSpore 2.x / torch_npu profiler folder: {host}_{pid}_{timestamp}_ascend_{ms|pt}.
_HOST_DIR = re.compile(r"(?:^|/)([^/]+?)_\d+_\d{14,20}_ascend_(?:ms|pt)(?:/|$)")

RULE = Text("rule.slow-ranks", threshold=THRESHOLD, k=MAD_K, spread=SPREAD_FLOOR)


@dataclass(frozen=True)
class Layout:
    """What names a group of ranks: their hosts, the devices per node, the pipeline stages."""

    hosts: Mapping[int, str] = field(default_factory=dict)  # rank -> host, where the files name it
    node_size: int = DEFAULT_NODE
    node_source: str = "default"  # host, setting, default
    stages: int = 1  # pipeline_stage
    world: int | None = None  # device_num, else the highest rank + 1


def _positive(value) -> int | None:
    try:
        v = int(value)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def layout(settings: Mapping, files: pl.DataFrame | None = None) -> Layout:
    """The run's layout from its settings (``Setting`` values) and the files its ranks were read
    from (a DataFrame of rank, file: the profiler's per-rank folders name their host)."""
    value = {k: getattr(s, "value", s) for k, s in settings.items()}
    hosts: dict[int, str] = {}
    if files is not None and not files.is_empty():
        for rank, path in files.unique().iter_rows():
            m = _HOST_DIR.search(str(path)) if path is not None and rank is not None else None
            if m:
                hosts.setdefault(int(rank), m.group(1))
    per_node = next((v for v in (_positive(value.get(k)) for k in NODE_KEYS) if v), None)
    if len(set(hosts.values())) > 1:
        size, source = max(np.unique(list(hosts.values()), return_counts=True)[1]), "host"
    elif per_node:
        size, source = per_node, "setting"
    else:
        size, source = DEFAULT_NODE, "default"
    return Layout(hosts if source == "host" else {}, int(size), source, _positive(value.get("pipeline_stage")) or 1,
                  _positive(value.get("device_num")))


def _reference(med: np.ndarray) -> np.ndarray:
    """Indices of the fast mode (see the module docstring)."""
    idx = np.arange(med.size)
    for _ in range(MAX_SPLITS):
        if idx.size < 2:
            break
        order = idx[np.argsort(med[idx], kind="stable")]
        logm = np.log(med[order])
        gaps = np.diff(logm)
        k = int(np.argmax(gaps))
        low, high = order[: k + 1], order[k + 1:]
        low_log = logm[: k + 1]
        scale = MAD_SCALE * float(np.median(np.abs(low_log - np.median(low_log))))
        few = high.size > low.size and (low.size < 2 or low.size < MODE_SHARE * med.size)
        if few or gaps[k] <= max(np.log1p(THRESHOLD), MAD_K * scale):
            break
        idx = np.sort(low)
    return idx


def _loo_medians(values: np.ndarray) -> np.ndarray:
    """For each value, the median of the others (values sorted or not); one value: NaN."""
    n = values.size
    if n < 2:
        return np.full(n, np.nan)
    order = np.argsort(values, kind="stable")
    v = values[order]
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    q = n - 1  # how many remain

    def at(j: np.ndarray) -> np.ndarray:  # the j-th of the remaining, with the value at pos removed
        return np.where(j < pos, v[np.minimum(j, n - 1)], v[np.minimum(j + 1, n - 1)])

    if q % 2:
        return at(np.full(n, q // 2))
    return (at(np.full(n, q // 2 - 1)) + at(np.full(n, q // 2))) / 2


def _centers(med: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Each rank's reference median: the reference ranks without itself; a lone reference rank is
    held against all the other ranks."""
    center = np.full(med.size, float(np.median(med[ref])))
    if ref.size >= 2:
        center[ref] = _loo_medians(med[ref])
    elif ref.size == 1 and med.size >= 2:
        center[ref] = float(np.median(np.delete(med, ref)))
    return center


def ranks(steps: pl.DataFrame, kept_steps: np.ndarray, *, profile: tuple[RankProfile, ...] = (),
          stragglers: Stragglers | None = None, layout: Layout = Layout()) -> Ranks:
    # Lazily, by the streaming engine: the steps of thousands of ranks are grouped as they are
    # read, never copied (millions of rows).
    timed_steps = steps.lazy().select("rank", "step", "step_time_s", "in_step_s").filter(pl.col("step_time_s").is_finite())

    def per_rank(rows: pl.LazyFrame) -> pl.DataFrame:
        return rows.group_by("rank").agg(pl.len().alias("n"), pl.col("step_time_s").median().alias("med"),
                                         pl.col("in_step_s").median().alias("inner")).collect(engine="streaming")

    per = per_rank(timed_steps.filter(pl.col("step").is_in(pl.Series(kept_steps).implode()))) if kept_steps.size else None
    if per is None or per.is_empty():  # no timed row among the kept steps: all timed rows
        per = per_rank(timed_steps)
    per = per.filter(pl.col("rank").is_not_null()).sort("rank")
    basis = "steps"
    if per.height < 2:
        timed = [p for p in profile if p.step_time_s is not None and p.step_time_s > 0]
        if len(timed) >= 2:  # no logged step times per rank: the profiler's per-rank step
            per = pl.DataFrame({"rank": [p.rank for p in timed], "n": [p.steps for p in timed],
                                "med": [p.step_time_s for p in timed], "inner": [None] * len(timed)},
                               schema={"rank": pl.Int64, "n": pl.Int64, "med": pl.Float64, "inner": pl.Float64})
            basis = "profile"
    awaited = tuple(stragglers.awaited) if stragglers is not None else ()
    if per.height < 2:
        return Ranks((), awaited, RULE, reason=Text("reason.one-rank"), profile=profile, stragglers=stragglers,
                     groups=_groups(np.array(awaited, dtype=np.int64), {}, 0, layout))
    rank_ids = per["rank"].to_numpy().astype(np.int64)
    med = per["med"].to_numpy().astype(float)
    spread = float((med.max() - med.min()) / med.mean()) if med.mean() > 0 else None
    positive = med > 0
    ref = _reference(med) if positive.all() else np.flatnonzero(positive)
    center = _centers(med, ref)
    scale = MAD_SCALE * float(np.median(np.abs(med[ref] - np.median(med[ref])))) if ref.size else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(center > 0, (med - center) / center, np.nan)
        limit = np.maximum(THRESHOLD, np.where(center > 0, MAD_K * scale / center, np.inf))
    slow = (excess > limit) & (spread is not None and spread > SPREAD_FLOOR)
    stats = tuple(
        RankStat(rank=int(r), steps=int(n), median_step_time_s=float(m), slow=bool(sl),
                 excess=float(e) if np.isfinite(e) else None, others_median_s=float(c) if np.isfinite(c) else None,
                 in_step_median_s=float(i) if i is not None else None)
        for (r, n, m, i), sl, e, c in zip(per.iter_rows(), slow, excess, center)
    )
    by_rank = dict(zip(rank_ids.tolist(), med.tolist()))
    reference = float(np.median(med[ref])) if ref.size else float("nan")
    slow_ids = rank_ids[slow]
    groups = _groups(slow_ids, by_rank, reference, layout, rank_ids)
    extra = [r for r in awaited if r not in set(slow_ids.tolist())]
    if extra:  # the awaited ranks: a group of their own, named the same way
        groups += _groups(np.array(extra, dtype=np.int64), by_rank, reference, layout, rank_ids)
    all_slow = tuple(sorted({*slow_ids.tolist(), *awaited}))
    return Ranks(stats, all_slow, RULE, spread=spread, profile=profile, stragglers=stragglers, groups=groups,
                 basis=basis, node_size=layout.node_size, node_source=layout.node_source)


def _groups(slow: np.ndarray, by_rank: Mapping[int, float], reference: float, lay: Layout,
            present: np.ndarray | None = None) -> tuple[RankGroup, ...]:
    """The slow ranks as stages, nodes, odd/even, slots, then ranges (each rank in one group)."""
    if slow.size == 0:
        return ()
    present = np.asarray(sorted(by_rank)) if present is None or present.size == 0 else present
    if present.size == 0:
        present = slow
    n = int(present.size)
    left = set(int(r) for r in slow)
    out: list[RankGroup] = []

    def take(kind: RankGroupKind, members: list[int], units: tuple[str, ...], size: int | None) -> None:
        figures = [by_rank[r] for r in members if r in by_rank]
        m = float(np.median(figures)) if figures else float("nan")
        ex = m / reference - 1 if figures and reference > 0 else float("nan")
        out.append(RankGroup(kind, tuple(sorted(members)), n, m, reference, ex, units, size))
        left.difference_update(members)

    def whole(blocks: dict, kind: RankGroupKind, size: int | None, min_members: int = 2) -> None:
        full = [(u, ms) for u, ms in blocks.items() if len(ms) >= min_members and set(ms) <= left]
        if full and len(full) < len(blocks):  # every block slow is no group: it is the run
            take(kind, [r for _, ms in full for r in ms], tuple(str(u) for u, _ in full), size)

    world = lay.world or int(present.max()) + 1
    if lay.stages > 1 and world % lay.stages == 0:
        size = world // lay.stages
        whole(_blocks(present, lambda r: r // size), RankGroupKind.STAGE, size)
    if lay.hosts:
        whole(_blocks(present, lambda r: lay.hosts.get(int(r), "?")), RankGroupKind.NODE, lay.node_size)
    elif lay.node_size >= 2 and n > lay.node_size:
        whole(_blocks(present, lambda r: r // lay.node_size), RankGroupKind.NODE, lay.node_size)
    if n >= 4:
        whole(_blocks(present, lambda r: r % 2), RankGroupKind.PARITY, None, min_members=2)
    if lay.node_size > 2 and n >= 2 * lay.node_size:
        whole(_blocks(present, lambda r: r % lay.node_size), RankGroupKind.SLOT, lay.node_size)
    if left:
        take(RankGroupKind.RANKS, sorted(left), (), None)
    return tuple(out)


def _blocks(present: np.ndarray, key) -> dict:
    out: dict = {}
    for r in present.tolist():
        out.setdefault(key(r), []).append(int(r))
    return out


def ranges(ranks: list[int] | tuple[int, ...]) -> list[tuple[int, int]]:
    """Sorted ranks as (first, last) runs of consecutive ranks."""
    out: list[tuple[int, int]] = []
    for r in sorted(set(int(x) for x in ranks)):
        if out and r == out[-1][1] + 1:
            out[-1] = (out[-1][0], r)
        else:
            out.append((r, r))
    return out


def group_params(r: Ranks) -> list[dict]:
    """The groups as plain data (a verdict problem's params, metrics.json): kind, ranks, figures;
    the awaited ranks (stragglers) marked, with their waiting shares."""
    awaited = set(r.stragglers.awaited) if r.stragglers is not None else set()
    out = []
    for g in r.groups:
        item = {"kind": str(g.kind), "ranks": list(g.ranks), "count": len(g.ranks), "of": g.of,
                "median_s": _finite(g.median_s), "reference_s": _finite(g.reference_s), "excess": _finite(g.excess),
                "units": list(g.units), "unit_size": g.unit_size,
                "by": r.node_source if g.kind == RankGroupKind.NODE else None, "awaited": bool(awaited) and set(g.ranks) <= awaited}
        if item["awaited"] and r.stragglers is not None:
            item.update(awaited_share=r.stragglers.awaited_wait_share, waiting_share=r.stragglers.waiting_wait_share,
                        of=max(g.of, len(r.profile)))
        out.append(item)
    return out


def _finite(x: float | None) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None
