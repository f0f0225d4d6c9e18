"""Per-rank step time: which ranks are slow, each rank held against the others.

A rank's median e2e step time (steady-window steps) is compared with the median of the other
ranks' medians; it is slow when it exceeds that by more than max(5%, 3 x the scaled MAD of the
other medians, relative). With two ranks the other "median" is the other rank, whose MAD is 0, so
the 5% threshold decides. msprof-analyze's imbalance figure, (max - min) / mean of the rank
medians, is a floor: at or below 5% no rank is flagged.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import RankStat, Ranks

THRESHOLD = 0.05  # relative excess over the others' median that makes a rank slow
SPREAD_FLOOR = 0.05  # msprof: (max - min) / mean above this is an imbalance worth a look
MAD_K = 3.0
LEAVE_ONE_OUT_MAX = 512  # ranks; above, every rank is held against the median of all

RULE = Text("rule.slow-ranks", threshold=THRESHOLD, k=MAD_K, spread=SPREAD_FLOOR)


def ranks(steps: pl.DataFrame, kept_steps: np.ndarray) -> Ranks:
    df = steps.filter(pl.col("step_time_s").is_finite())
    if kept_steps.size:
        inside = df.filter(pl.col("step").is_in(pl.Series(kept_steps).implode()))
        df = inside if not inside.is_empty() else df
    per = (df.group_by("rank").agg(pl.len().alias("n"), pl.col("step_time_s").median().alias("med"),
                                    pl.col("in_step_s").median().alias("inner"))
           .filter(pl.col("rank").is_not_null()).sort("rank"))
    if per.height < 2:
        return Ranks((), (), RULE, reason=Text("reason.one-rank"))
    med = per["med"].to_numpy()
    spread = float((med.max() - med.min()) / med.mean()) if med.mean() > 0 else None
    if med.size <= LEAVE_ONE_OUT_MAX:  # median and MAD of the others, dropping one rank at a time
        others = np.array([np.delete(med, i) for i in range(med.size)])
        center = np.median(others, axis=1)
        scale = MAD_SCALE * np.median(np.abs(others - center[:, None]), axis=1)
    else:  # one rank among this many barely moves them
        center = np.full(med.size, np.median(med))
        scale = np.full(med.size, MAD_SCALE * np.median(np.abs(med - center[0])))
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(center > 0, (med - center) / center, np.nan)
        limit = np.maximum(THRESHOLD, np.where(center > 0, MAD_K * scale / center, np.inf))
    slow = (excess > limit) & (spread is not None and spread > SPREAD_FLOOR)
    stats = tuple(
        RankStat(rank=int(r), steps=int(n), median_step_time_s=float(m), slow=bool(sl),
                 excess=float(e) if np.isfinite(e) else None, others_median_s=float(c),
                 in_step_median_s=float(i) if i is not None else None)
        for (r, n, m, i), sl, e, c in zip(per.iter_rows(), slow, excess, center)
    )
    return Ranks(stats, tuple(s.rank for s in stats if s.slow), RULE, spread=spread)
