"""The experiment's earlier archived runs, as the history reads them (analysis/history.py).

Each archived run gives its headline figures (metrics.json, as the dashboard reads them), its
settings (metrics.json's identity block: the settings the report showed, the batch a logged rate
implies too; else data/run.json), and its smoothed loss by tokens (data/scalars.parquet's loss,
smoothed as its report smoothed it, times its tokens per step). Nothing is written.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from . import archive
from .analysis.history import PastRun
from .index import index_row

# The earlier runs read: the newest few times N (runs of other settings groups are kept apart per
# figure, so a range of N may need more than N runs).
READ_FACTOR = 4


def _settings(run: archive.ArchivedRun) -> dict:
    rows = (run.metrics.get("identity") or {}).get("settings")
    if isinstance(rows, list) and rows:
        return {r["key"]: r.get("value") for r in rows if isinstance(r, dict) and "key" in r}
    return archive.archived_settings(run.path) or {}


def _figures(run: archive.ArchivedRun) -> dict[str, float | None]:
    row = index_row(run)
    m = run.metrics
    steady = (m.get("throughput") or {}).get("steady") or {}
    flagged = {f for p in m.get("plausibility") or [] if isinstance(p, dict) for f in p.get("figures") or []}
    return {"step_time_s": row["step_time_s"], "tokens_per_s": row["tokens_per_s"], "samples_per_s": steady.get("samples_per_s"),
            "mfu": row["mfu"] if "mfu" not in flagged else None, "loss_spikes": float(row["loss_spikes"]),
            "comm_share": row["comm_share"], "data_wait_share": row["data_wait_share"]}


def loss_curve(run: archive.ArchivedRun) -> tuple[np.ndarray, np.ndarray] | None:
    """(tokens, smoothed loss) of an archived run, as its report smoothed it; None without a loss
    or without tokens per step."""
    import polars as pl

    from .analysis.convergence import smooth
    from .analysis.throughput import last_per_step

    m = run.metrics
    tokens_per_step = (m.get("throughput") or {}).get("tokens_per_step")
    smoothing = (m.get("convergence") or {}).get("smoothing") or {}
    window = smoothing.get("window_steps")
    file = run.path / archive.DATA_DIR / "scalars.parquet"
    if not tokens_per_step or not window or not file.is_file():
        return None
    try:
        loss = (pl.scan_parquet(file).filter(pl.col("tag").cast(pl.Utf8) == "loss")
                .select("step", "value", "rank", "wall_time").collect())
    except (OSError, pl.exceptions.PolarsError):
        return None
    if loss.is_empty():
        return None
    low = loss["rank"].min()
    loss = last_per_step(loss.filter(pl.col("rank") == low) if low is not None else loss)
    left_out = sorted({int(s) for v in (smoothing.get("left_out") or {}).values() for s in v or []})
    sm = smooth(loss, int(window), left_out).drop_nulls("smoothed")
    if sm.height < 2:
        return None
    return sm["step"].to_numpy().astype(float) * float(tokens_per_step), sm["smoothed"].to_numpy().astype(float)


def past_runs(archive_root: Path, experiment: str, run_id: str, finished_at: str | None, wanted: int) -> list[PastRun]:
    """The experiment's archived runs before this one (by when they finished), newest first; this
    run's own earlier build is left out."""
    runs = [r for r in archive.list_runs(archive_root, experiment) if r.run_id != run_id]
    if finished_at:
        runs = [r for r in runs if (r.finished_at or r.built_at) <= finished_at]
    out = []
    for r in runs[:READ_FACTOR * wanted]:
        out.append(PastRun(r.run_id, r.finished_at or r.built_at, _figures(r), _settings(r), partial(loss_curve, r)))
    return out
