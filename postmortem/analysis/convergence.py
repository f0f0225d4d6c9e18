"""Smoothed loss, final loss level, convergence step and time-to-target.

Smoothing: at each logged step s, the mean of the loss values logged at steps s-w+1..s, with w
the smoothing window in *steps* (a log every 200 steps puts one value in each window, so the
smoothed value is the value itself). Detected loss spikes and NaN/Inf values stay out of it and
are listed (``Convergence.left_out``).

Final loss level: the finite, non-spike loss values of the last 10% of the run's steps (by step,
not by count of values), fitted with Tukey's resistant line (slope through the medians of the
first and last thirds, intercept the median residual) and read at the last step. It is as robust
to outliers as a median, and reads where a still-falling loss ended rather than the middle of the
tail; one value gives itself, two the line through them. Its standard error is taken as
2.6 x scaled MAD of the residuals / sqrt(n) (the resistant line's endpoint under Gaussian noise).

Too few values: with fewer than MIN_VALUES finite loss values left, convergence is not judged
(status unknown, code ``too_few``); the levels are still given.

Convergence: the loss came down (its initial level, the median of the values of the first w
steps, lies above the band final +- tolerance x |final|), and the smoothed loss enters the band
and stays in it through at least the last 10% of steps. The convergence step is the first logged
step after which it stays in the band. Spikes are not in the smoothed loss, so one late spike does
not undo convergence. Time-to-target: first step whose smoothed loss is <= the target. Tokens =
step x tokens per step; hours = wall time elapsed since the first step ended.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import AnalysisOptions, AuxLoss, Convergence, Figure, TimeToTarget, missing

AUX_TAGS = ("lm_loss", "load_balancing_loss", "mtp_loss")
TAIL = 0.10
ENDPOINT_SE = 2.6  # standard error of the resistant line's endpoint, in sigma / sqrt(n)
MIN_SE_POINTS = 5  # fewer tail values give no noise estimate
# Fewer finite loss values than this (spikes and skipped-data steps left out) are too few to say
# whether the loss came down and settled: the status is unknown, "too few loss values (n) to judge".
MIN_VALUES = 5


def smooth(series: pl.DataFrame, window: int, leave_out: tuple[int, ...] | list[int] = ()) -> pl.DataFrame:
    """(step, value, smoothed) of the finite values not left out: trailing mean over `window` steps."""
    kept = series.filter(pl.col("value").is_finite())
    if len(leave_out):
        kept = kept.filter(~pl.col("step").is_in(pl.Series(list(leave_out), dtype=pl.Int64).implode()))
    return kept.sort("step").select(
        "step", "value", pl.col("value").rolling_mean_by("step", window_size=f"{max(1, window)}i").alias("smoothed")
    )


def tail_start(first: int, last: int) -> int:
    """First step of the last 10% of the steps first..last (at least the last step)."""
    return last - max(1, math.ceil(TAIL * (last - first + 1))) + 1


def final_level(step: np.ndarray, value: np.ndarray) -> tuple[float, float | None]:
    """(level at the last step, its standard error or None) of Tukey's resistant line."""
    x, y = step.astype(np.float64), value.astype(np.float64)
    k = max(1, y.size // 3)
    xl, xr = np.median(x[:k]), np.median(x[-k:])
    slope = (np.median(y[-k:]) - np.median(y[:k])) / (xr - xl) if xr > xl else 0.0
    intercept = float(np.median(y - slope * x))
    level = intercept + slope * x[-1]
    if y.size < MIN_SE_POINTS:
        return float(level), None
    r = y - (intercept + slope * x)
    sigma = MAD_SCALE * float(np.median(np.abs(r - np.median(r))))
    return float(level), ENDPOINT_SE * sigma / math.sqrt(y.size)


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
            return missing(Text("reason.tokens-unknown"), unit="tokens")
        return Figure(step * self.tokens_per_step, method=Text("method.step-x-tokens"), unit="tokens")

    def hours(self, step: int) -> Figure:
        if self.steps.is_empty():
            return missing(Text("reason.no-times"), unit="h")
        hit = self.steps.filter(pl.col("step") <= step)
        if hit.is_empty():
            return missing(Text("reason.before-first-timed"), unit="h")
        return Figure(float(hit["elapsed_s"][-1]) / 3600.0, method=Text("method.elapsed"), unit="h")


def time_to_target(sm: pl.DataFrame, target: float | None, source: str, clock: StepClock) -> TimeToTarget:
    """``source``: where the target is from, "options" or "baseline"."""
    if target is None:
        why = missing(Text(f"reason.no-target-{source}"))
        return TimeToTarget(None, source, why, why, why)
    hit = sm.filter(pl.col("smoothed") <= target)
    if hit.is_empty():
        why = missing(Text("reason.target-not-reached", target=target))
        return TimeToTarget(target, source, why, why, why)
    step = int(hit["step"][0])
    return TimeToTarget(target, source, Figure(float(step), method=Text("method.first-below-target")),
                        clock.tokens(step), clock.hours(step))


def _tail(series: pl.DataFrame, leave_out: tuple[int, ...] = ()) -> tuple[pl.DataFrame, int] | None:
    """The finite values not left out in the last 10% of the series' steps, and where that tail starts."""
    steps = series["step"].drop_nulls()
    if steps.is_empty():
        return None
    start = tail_start(int(steps.min()), int(steps.max()))
    tail = series.filter((pl.col("step") >= start) & pl.col("value").is_finite())
    if leave_out:
        tail = tail.filter(~pl.col("step").is_in(pl.Series(leave_out, dtype=pl.Int64).implode()))
    return tail.sort("step"), start


def aux_loss(tag: str, series: pl.DataFrame) -> AuxLoss:
    v = series["value"].to_numpy()
    ok = v[np.isfinite(v)]
    got = _tail(series)
    level = final_level(got[0]["step"].to_numpy(), got[0]["value"].to_numpy())[0] if got and got[0].height else None
    return AuxLoss(
        tag=tag, count=int(v.size),
        first=float(ok[0]) if ok.size else None, last=float(ok[-1]) if ok.size else None,
        min=float(ok.min()) if ok.size else None, final_smoothed=level, nonfinite=int(v.size - ok.size),
    )


def convergence(
    loss: pl.DataFrame,
    aux: dict[str, pl.DataFrame],
    eval_loss: pl.DataFrame,
    clock: StepClock,
    options: AnalysisOptions,
    baseline_final: float | None = None,
    spike_steps: tuple[int, ...] = (),
    skip_steps: tuple[int, ...] = (),
) -> Convergence:
    """``skip_steps``: skipped-data steps, left out like spikes (their loss is of a batch the update left out)."""
    w, tol = options.smoothing_window, options.convergence_tolerance
    nonfinite = tuple(int(s) for s in loss.filter(~pl.col("value").is_finite())["step"].to_list())
    left_out = {"spike": tuple(sorted(spike_steps)), "nonfinite": nonfinite}
    if skip_steps:
        left_out["skip"] = tuple(sorted(skip_steps))
    leave = tuple(sorted({*spike_steps, *skip_steps}))
    smoothing = Text("method.smoothing", window=w, spikes=len(left_out["spike"]), nonfinite=len(nonfinite))
    rule = Text("rule.convergence", window=w, tolerance=tol, tail=TAIL)
    sm = smooth(loss, w, leave)
    auxes = tuple(aux_loss(t, s) for t, s in sorted(aux.items()) if not s.is_empty())
    ev = eval_loss.filter(pl.col("value").is_finite())
    eval_last = (Figure(float(ev["value"][-1]), method=Text("method.last-eval", step=int(ev["step"][-1])))
                 if not ev.is_empty() else missing(Text("reason.not-logged", tag="eval_loss")))
    targets = (
        time_to_target(sm, options.target_loss, "options", clock),
        time_to_target(sm, baseline_final, "baseline", clock),
    )
    common = dict(smoothing=smoothing, targets=targets, aux_losses=auxes, eval_loss_last=eval_last,
                  left_out=left_out, rule=rule)
    if sm.is_empty():
        skipped_only = bool(skip_steps) and loss.filter(pl.col("value").is_finite()).height > 0
        why = missing(Text("reason.only-skipped-loss", n=len(skip_steps)) if skipped_only else Text("reason.no-finite-loss"))
        return Convergence(initial_loss=why, final_smoothed_loss=why, min_smoothed_loss=why, convergence_step=why,
                           convergence_tokens=why, convergence_hours=why, final_loss_se=why, status="unknown",
                           status_code="no_loss", **common)
    initial = Figure(float(sm["value"][0]), method=Text("method.first-loss"), unit="loss")
    s = sm["smoothed"].to_numpy()
    minimum = Figure(float(s.min()), method=Text("method.min-smoothed"), unit="loss")
    tail, start = _tail(loss, leave)
    last = int(loss["step"].max())
    if tail.is_empty():
        gone = missing(Text("reason.no-tail-loss", tail=TAIL, start=start, last=last))
        return Convergence(initial_loss=initial, final_smoothed_loss=gone, min_smoothed_loss=minimum,
                           convergence_step=gone, convergence_tokens=gone, convergence_hours=gone, final_loss_se=gone,
                           status="not_converged", status_code="nonfinite_end",
                           status_evidence={"tail_start": start, "last_step": last}, **common)
    level, se = final_level(tail["step"].to_numpy(), tail["value"].to_numpy())
    final = Figure(level, unit="loss", method=Text("method.final-level", n=tail.height, tail=TAIL, start=start, last=last))
    se_f = (Figure(se, unit="loss", method=Text("method.final-se", k=ENDPOINT_SE, n=tail.height))
            if se is not None else missing(Text("reason.few-tail-values", n=tail.height, tail=TAIL, need=MIN_SE_POINTS)))
    first_window = sm.filter(pl.col("step") < int(sm["step"][0]) + w)["value"]
    start_level = float(first_window.median())
    evidence: dict[str, float | int | None] = {"initial": start_level, "final": level, "tolerance": tol,
                                               "tail_start": start, "entered_step": None,
                                               "smoothed_last": float(s[-1])}
    if sm.height < MIN_VALUES:
        few = missing(Text("reason.too-few-loss", n=sm.height, need=MIN_VALUES), method=rule)
        evidence["values"] = sm.height
        return Convergence(
            initial_loss=initial, final_smoothed_loss=final, min_smoothed_loss=minimum, convergence_step=few,
            convergence_tokens=missing(Text("reason.not-judged"), unit="tokens"),
            convergence_hours=missing(Text("reason.not-judged"), unit="h"), final_loss_se=se_f,
            status="unknown", status_code="too_few", status_evidence=evidence, **common)
    band = tol * abs(level)
    idx = settle_index(s, level, tol)
    entered = int(sm["step"][idx]) if idx is not None else None
    evidence["entered_step"] = entered
    if start_level - level <= band:
        code = "no_drop"
        # a log that starts mid-run (an excerpt, a rotated file) shows no drop over its own steps only
        steps_logged = sm["step"].to_numpy()
        gaps = np.diff(steps_logged)
        mid_run = steps_logged.size > 1 and steps_logged[0] > 2 * max(1.0, float(np.median(gaps)))
        why = Text(("reason.loss-rose" if start_level < level - band else "reason.loss-flat") + ("/excerpt" if mid_run else ""),
                   initial=start_level, final=level, tolerance=tol, first=int(steps_logged[0]))
    elif entered is None or entered > start:
        code = "still_moving"
        why = (Text("reason.loss-settled-late", tolerance=tol, final=level, step=entered, tail=TAIL) if entered is not None
               else Text("reason.loss-still-moving", smoothed=float(s[-1]), tolerance=tol, final=level))
    else:
        code = None
    if code is not None:
        step_f = missing(why, method=rule)
        tokens_f = missing(Text("reason.not-converged"), unit="tokens")
        hours_f = missing(Text("reason.not-converged"), unit="h")
        status = "not_converged"
    else:
        step_f = Figure(float(entered), method=rule)
        tokens_f, hours_f = clock.tokens(entered), clock.hours(entered)
        status = "converged"
    return Convergence(
        initial_loss=initial, final_smoothed_loss=final, min_smoothed_loss=minimum,
        convergence_step=step_f, convergence_tokens=tokens_f, convergence_hours=hours_f, final_loss_se=se_f,
        status=status, status_code=code, status_evidence=evidence, **common,
    )
