"""Smoothed loss, final plateau, convergence step and time-to-target.

Smoothing: trailing mean of the last ``smoothing_window`` finite loss values (NaN/Inf skipped).
Plateau: mean of the last 10% of the smoothed values (at least one). Convergence step: the first
step after which the smoothed loss stays within ``convergence_tolerance`` x |plateau| of it.
Time-to-target: first step whose smoothed loss is <= the target. Tokens = step x tokens per step
(global step counts from 1); hours = wall time elapsed since the first step ended.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .types import AnalysisOptions, AuxLoss, Convergence, Figure, TimeToTarget, missing

AUX_TAGS = ("lm_loss", "load_balancing_loss", "mtp_loss")
TAIL = 0.10


def smooth(series: pl.DataFrame, window: int) -> pl.DataFrame:
    """(step, value, smoothed) of the finite values, trailing mean over ``window`` values."""
    finite = series.filter(pl.col("value").is_finite())
    return finite.select(
        "step", "value", pl.col("value").rolling_mean(window, min_samples=1).alias("smoothed")
    )


def plateau(values: np.ndarray) -> float:
    k = max(1, int(np.ceil(values.size * TAIL)))
    return float(values[-k:].mean())


def settle_index(smoothed: np.ndarray, level: float, tolerance: float) -> int | None:
    """First index after which every value stays within tolerance x |level| of level."""
    outside = np.flatnonzero(np.abs(smoothed - level) > tolerance * abs(level))
    if outside.size == 0:
        return 0
    nxt = int(outside[-1]) + 1
    return nxt if nxt < smoothed.size else None


class StepClock:
    """Maps a step to tokens and elapsed hours using the per-step series."""

    def __init__(self, steps: pl.DataFrame, tokens_per_step: float | None):
        self.steps = steps.select("step", "elapsed_s").filter(pl.col("elapsed_s").is_not_null()).sort("step")
        self.tokens_per_step = tokens_per_step

    def tokens(self, step: int) -> Figure:
        if self.tokens_per_step is None:
            return missing("tokens per step unknown", unit="tokens")
        return Figure(step * self.tokens_per_step, method="step x global_batch_size x seq_length", unit="tokens")

    def hours(self, step: int) -> Figure:
        if self.steps.is_empty():
            return missing("no step times or wall times", unit="h")
        hit = self.steps.filter(pl.col("step") <= step)
        if hit.is_empty():
            return missing("step before the first timed step", unit="h")
        return Figure(float(hit["elapsed_s"][-1]) / 3600.0, method="wall time elapsed since the first step",
                      unit="h")


def time_to_target(sm: pl.DataFrame, target: float | None, source: str, clock: StepClock) -> TimeToTarget:
    if target is None:
        why = missing(f"no target ({source})")
        return TimeToTarget(None, source, why, why, why)
    hit = sm.filter(pl.col("smoothed") <= target)
    if hit.is_empty():
        why = missing(f"smoothed loss never reached {target:g}")
        return TimeToTarget(target, source, why, why, why)
    step = int(hit["step"][0])
    return TimeToTarget(target, source, Figure(float(step), method="first step with smoothed loss <= target"),
                        clock.tokens(step), clock.hours(step))


def aux_loss(tag: str, series: pl.DataFrame) -> AuxLoss:
    v = series["value"].to_numpy()
    ok = v[np.isfinite(v)]
    return AuxLoss(
        tag=tag, count=int(v.size),
        first=float(ok[0]) if ok.size else None, last=float(ok[-1]) if ok.size else None,
        min=float(ok.min()) if ok.size else None, final_smoothed=plateau(ok) if ok.size else None,
        nonfinite=int(v.size - ok.size),
    )


def convergence(
    loss: pl.DataFrame,
    aux: dict[str, pl.DataFrame],
    eval_loss: pl.DataFrame,
    clock: StepClock,
    options: AnalysisOptions,
    baseline_final: float | None = None,
) -> Convergence:
    w = options.smoothing_window
    smoothing = f"trailing mean of the last {w} finite loss values"
    sm = smooth(loss, w)
    auxes = tuple(aux_loss(t, s) for t, s in sorted(aux.items()) if not s.is_empty())
    ev = eval_loss.filter(pl.col("value").is_finite())
    eval_last = (Figure(float(ev["value"][-1]), method=f"last finite eval_loss (step {ev['step'][-1]})")
                 if not ev.is_empty() else missing("no eval_loss logged"))
    targets = (
        time_to_target(sm, options.target_loss, "options.target_loss", clock),
        time_to_target(sm, baseline_final, "baseline final smoothed loss", clock),
    )
    if sm.is_empty():
        why = missing("no finite loss logged")
        return Convergence(smoothing, why, why, why, why, why, why, targets, auxes, eval_last)
    s = sm["smoothed"].to_numpy()
    level = plateau(s)
    final = Figure(level, method=f"mean of the last {TAIL:.0%} of the smoothed loss", unit="loss")
    idx = settle_index(s, level, options.convergence_tolerance)
    if idx is None:
        step_f = tokens_f = hours_f = missing(
            f"smoothed loss is still outside +-{options.convergence_tolerance:.0%} of its plateau at the end")
    else:
        step = int(sm["step"][idx])
        step_f = Figure(float(step), method=f"first step after which the smoothed loss stays within "
                        f"+-{options.convergence_tolerance:.0%} of the final plateau")
        tokens_f, hours_f = clock.tokens(step), clock.hours(step)
    return Convergence(
        smoothing=smoothing,
        initial_loss=Figure(float(sm["value"][0]), method="first finite loss", unit="loss"),
        final_smoothed_loss=final,
        min_smoothed_loss=Figure(float(s.min()), method="minimum of the smoothed loss", unit="loss"),
        convergence_step=step_f, convergence_tokens=tokens_f, convergence_hours=hours_f,
        targets=targets, aux_losses=auxes, eval_loss_last=eval_last,
    )
