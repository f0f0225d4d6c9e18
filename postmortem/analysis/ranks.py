"""Per-rank step time: which ranks are slow (robust rule over the rank medians)."""

from __future__ import annotations

import numpy as np
import polars as pl

from .stats import MAD_SCALE
from .types import RankStat, Ranks

RULE = ("rank median e2e step time (steady-window steps) above the median of rank medians by more than "
        "max(3 x scaled MAD of the rank medians, 5%)")


def ranks(steps: pl.DataFrame, kept_steps: np.ndarray) -> Ranks:
    df = steps.filter(pl.col("step_time_s").is_finite())
    if kept_steps.size:
        inside = df.filter(pl.col("step").is_in(pl.Series(kept_steps).implode()))
        df = inside if not inside.is_empty() else df
    per = df.group_by("rank").agg(pl.len().alias("n"), pl.col("step_time_s").median().alias("med")).sort("rank")
    if per.height < 2:
        return Ranks((), (), RULE, reason="fewer than two ranks logged step times")
    med = per["med"].to_numpy()
    center = float(np.median(med))
    limit = center + max(3 * MAD_SCALE * float(np.median(np.abs(med - center))), 0.05 * center)
    stats = tuple(
        RankStat(rank=int(r), steps=int(n), median_step_time_s=float(m), slow=bool(m > limit),
                 excess=float((m - center) / center) if center > 0 else None)
        for r, n, m in per.iter_rows()
    )
    return Ranks(stats, tuple(s.rank for s in stats if s.slow), RULE)
