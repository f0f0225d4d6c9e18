"""Steady-window throughput: robust e2e step time, and samples/tokens per second from it."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..model import Run
from .stats import robust_stats
from .types import AnalysisOptions, Figure, SteadyWindow, Throughput, missing


def setting_figure(run: Run, key: str) -> Figure | None:
    s = run.settings.get(key)
    if s is None:
        return None
    try:
        value = float(s.value)
    except (TypeError, ValueError):
        return None
    return Figure(value, method=f"setting {key}", source=f"settings:{key} ({s.source})")


def _num(run: Run, key: str) -> tuple[float, str] | None:
    f = setting_figure(run, key)
    return (f.value, f.source) if f is not None and f.value is not None else None


def global_batch_size(run: Run, options: AnalysisOptions) -> Figure:
    if options.global_batch_size is not None:
        return Figure(float(options.global_batch_size), method="given", source="options", unit="samples")
    direct = setting_figure(run, "global_batch_size")
    if direct is not None:
        return Figure(direct.value, method="setting global_batch_size", source=direct.source, unit="samples")
    micro = _num(run, "micro_batch_size") or _num(run, "batch_size")
    if micro is None:
        return missing("no global_batch_size, batch_size or micro_batch_size in options or settings",
                       unit="samples")
    parts: list[tuple[str, tuple[float, str]]] = [("micro/batch size", micro)]
    for key in ("data_parallel", "gradient_accumulation_steps"):
        got = _num(run, key)
        if got is not None:
            parts.append((key, got))
    pipeline = _num(run, "pipeline_stage")
    if pipeline is not None and pipeline[0] > 1:
        mbn = _num(run, "micro_batch_num")
        if mbn is not None:
            parts.append(("micro_batch_num", mbn))
    value = float(np.prod([p[1][0] for p in parts]))
    method = " x ".join(name for name, _ in parts)
    missing_factors = [k for k in ("data_parallel", "gradient_accumulation_steps") if _num(run, k) is None]
    note = f" (assumed 1: {', '.join(missing_factors)})" if missing_factors else ""
    return Figure(value, method=method + note, source="; ".join(p[1][1] for p in parts), unit="samples")


def seq_length(run: Run, options: AnalysisOptions) -> Figure:
    if options.seq_length is not None:
        return Figure(float(options.seq_length), method="given", source="options", unit="tokens")
    f = setting_figure(run, "seq_length")
    if f is not None:
        return Figure(f.value, method="setting seq_length", source=f.source, unit="tokens")
    return missing("no seq_length in options or settings", unit="tokens")


def logged_medians(scalars: pl.DataFrame, window: SteadyWindow, tags: tuple[str, ...]) -> dict[str, Figure]:
    """Median over the steady window of what the run logged itself (first rank per tag)."""
    out: dict[str, Figure] = {}
    if window.start_step is None:
        return out
    df = scalars.filter(
        pl.col("tag").is_in(list(tags)) & pl.col("step").is_between(window.start_step, window.end_step)
        & pl.col("value").is_finite()
    )
    if df.is_empty():
        return out
    first_rank = df.group_by("tag").agg(pl.col("rank").min().alias("r"))
    med = (
        df.join(first_rank, on="tag")
        .filter((pl.col("rank") == pl.col("r")) | pl.col("rank").is_null())
        .group_by("tag")
        .agg(pl.col("value").median().alias("v"), pl.len().alias("n"))
        .sort("tag")
    )
    for tag, v, n in med.iter_rows():
        out[tag] = Figure(float(v), method=f"median of {n} logged values in the steady window",
                          source=f"scalars:{tag}")
    return out


def throughput(
    steps: pl.DataFrame,
    reasons: np.ndarray,
    window: SteadyWindow,
    gbs: Figure,
    seq: Figure,
    scalars: pl.DataFrame,
    options: AnalysisOptions,
    rank: int | None = None,
) -> Throughput:
    t = steps["step_time_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    kept = t[reasons == ""] if t.size else t
    stats = robust_stats(kept, options.bootstrap_resamples, options.seed)
    method = "median e2e step time over the steady window"
    if stats is None or stats.median <= 0:
        reason = window.reason or "no usable step time in the steady window"
        step_time = missing(reason, unit="s")
        per_s = missing(reason, unit="steps/s")
    else:
        step_time = Figure(stats.median, method=method, source="steps.step_time_s", unit="s")
        per_s = Figure(1.0 / stats.median, method="1 / median step time", unit="steps/s")

    tokens_per_step = (
        Figure(gbs.value * seq.value, method="global_batch_size x seq_length", unit="tokens")
        if gbs.value is not None and seq.value is not None
        else missing(gbs.reason or seq.reason or "unknown", unit="tokens")
    )

    def rate(size: Figure, unit: str, what: str) -> Figure:
        if per_s.value is None:
            return missing(per_s.reason or "no step time", unit=unit)
        if size.value is None:
            return missing(size.reason or f"{what} unknown", unit=unit)
        return Figure(size.value * per_s.value, method=f"{what} / median step time", unit=unit,
                      source=size.source)

    logged = logged_medians(scalars, window, ("throughput", "samples_per_s", "tokens_per_s",
                                              "tflops_per_device", "step_time"))
    return Throughput(
        window=window,
        step_time=stats,
        step_time_s=step_time,
        steps_per_s=per_s,
        samples_per_s=rate(gbs, "samples/s", "global_batch_size"),
        tokens_per_s=rate(tokens_per_step, "tokens/s", "global_batch_size x seq_length"),
        global_batch_size=gbs,
        seq_length=seq,
        tokens_per_step=tokens_per_step,
        logged=logged,
        rank=rank,
    )


def as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
