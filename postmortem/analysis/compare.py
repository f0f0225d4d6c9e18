"""Current run against a baseline: deltas, significance, per-family verdicts, settings diff.

Significance rules (documented per figure in ``Delta.method``):
- step time, tokens/s, samples/s, MFU: seeded bootstrap 95% interval of the difference of the
  steady-window median step times excludes 0 AND |rel| >= 1% (a practical floor for huge samples).
  MFU and rates are proportional to 1/step time, so they share the step-time test.
- final loss: |delta| > 2 x sqrt(se_baseline^2 + se_current^2), each run's standard error of its
  final level (``Convergence.final_loss_se``); unknown when either has too few tail values.
- loss at equal tokens: |delta| > 2 x the baseline's noise of one smoothed point: scaled MAD of
  (raw - smoothed) loss over its last 10% of steps / sqrt(values in one smoothing window).
- convergence step: |delta| > max(smoothing window, 5% of the baseline's step).
- counts (spikes, NaN steps): any change. Checkpoint tax: |delta| > 1 percentage point.

A family's verdict comes from its significant figures; with none, it is "unknown" when the
family's main figure (KEY_FIGURES) cannot be judged, else "no significant change".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from .convergence import tail_start
from .identity import explaining_order
from ..text import Text
from .stats import MAD_SCALE, bootstrap_median_diff_ci
from .types import (
    FAMILIES,
    Alignment,
    Better,
    Comparison,
    Delta,
    Family,
    FamilyVerdict,
    Outcome,
    SettingChange,
    SettingsDiff,
)

if TYPE_CHECKING:
    from ..model import Setting
    from .types import Analysis

MIN_REL = 0.01
KEY_FIGURES = {Family.THROUGHPUT: "step_time_s", Family.EFFICIENCY: "mfu", Family.CONVERGENCE: "final_smoothed_loss",
               Family.STABILITY: "loss_spikes"}
T, E, C, S = Family.THROUGHPUT, Family.EFFICIENCY, Family.CONVERGENCE, Family.STABILITY
HIGHER, LOWER = Better.HIGHER, Better.LOWER


def _where(base_missing: bool, current_missing: bool) -> str:
    return "both" if base_missing and current_missing else "baseline" if base_missing else "current"


def _delta(figure: str, family: Family, base: float | None, cur: float | None, better: Better, alignment: Alignment,
           method: Text, test: Any, aligned_tokens: float | None = None) -> Delta:
    if base is None or cur is None or not (math.isfinite(base) and math.isfinite(cur)):
        return Delta(figure, family, base, cur, None, None, None, better, alignment, method,
                     reason=Text(f"reason.missing-in-{_where(base is None, cur is None)}"), aligned_tokens=aligned_tokens)
    d = cur - base
    rel = d / abs(base) if base != 0 else None
    return Delta(figure, family, base, cur, d, rel, test(d, rel), better, alignment, method, aligned_tokens=aligned_tokens)


def _steady_times(a: Analysis) -> np.ndarray:
    w = a.throughput.window  # the steps the figure rests on: marked ones where no step is free (window.py)
    used = (pl.col("step").is_in(pl.Series(w.used_steps, dtype=pl.Int64).implode()) if w.basis == "marked"
            else pl.col("excluded").is_null())
    s = a.steps.filter(used)["step_time_s"].to_numpy()
    return s[np.isfinite(s)]


def loss_noise(a: Analysis) -> float | None:
    """Standard error of one smoothed loss point near the end of the run."""
    s = a.steps.filter(pl.col("loss").is_finite() & pl.col("loss_smoothed").is_not_null())
    if s.height < 2:
        return None
    step = s["step"].to_numpy()
    tail = s.filter(pl.col("step") >= tail_start(int(step[0]), int(step[-1])))
    if tail.height < 2:
        tail = s.tail(2)
    r = (tail["loss"] - tail["loss_smoothed"]).to_numpy()
    noise = MAD_SCALE * float(np.median(np.abs(r - np.median(r))))
    w = a.options.smoothing_window
    per_window = min(float(w), max(1.0, w / float(np.median(np.diff(step)))))
    return noise / math.sqrt(per_window)


def loss_at_tokens(a: Analysis, tokens: float) -> float | None:
    s = a.steps.filter(pl.col("tokens").is_not_null() & pl.col("loss_smoothed").is_not_null())
    if s.is_empty() or tokens < s["tokens"][0] or tokens > s["tokens"][-1]:
        return None
    return float(np.interp(tokens, s["tokens"].to_numpy(), s["loss_smoothed"].to_numpy()))


def settings_diff(current: Mapping[str, Setting], baseline: Mapping[str, Setting]) -> SettingsDiff:
    cur = {k: v.value for k, v in current.items()}
    base = {k: v.value for k, v in baseline.items()}
    # ordered by what can explain a change: hyperparameters and the parallel layout first, per-run values last
    order = explaining_order
    return SettingsDiff(
        added=tuple(SettingChange(k, None, cur[k]) for k in sorted(cur.keys() - base.keys(), key=order)),
        removed=tuple(SettingChange(k, base[k], None) for k in sorted(base.keys() - cur.keys(), key=order)),
        changed=tuple(SettingChange(k, base[k], cur[k]) for k in sorted(cur.keys() & base.keys(), key=order)
                      if cur[k] != base[k]),
    )


def _verdict(family: Family, deltas: list[Delta]) -> FamilyVerdict:
    mine = [d for d in deltas if d.family == family]
    sig = [d for d in mine if d.significant]
    unjudged = tuple(d.figure for d in mine if d.significant is None)
    if not sig:
        key_known = KEY_FIGURES.get(family) not in unjudged and any(d.significant is not None for d in mine)
        return FamilyVerdict(family, Outcome.NO_CHANGE if key_known else Outcome.UNKNOWN, (), unjudged)
    good = [d for d in sig if (d.delta > 0) == (d.better == Better.HIGHER)]
    bad = [d for d in sig if d not in good]
    verdict = Outcome.MIXED if good and bad else Outcome.IMPROVED if good else Outcome.REGRESSED
    return FamilyVerdict(family, verdict, tuple(d.figure for d in sig), unjudged)


def _unless_flagged(d: Delta, current: Analysis, baseline: Analysis) -> Delta:
    """A figure that cannot be right in either run is not judged."""
    flagged_base, flagged_current = baseline.flag(d.figure) is not None, current.flag(d.figure) is not None
    if not (flagged_base or flagged_current):
        return d
    return dataclasses.replace(d, significant=None, reason=Text(f"reason.implausible-in-{_where(flagged_base, flagged_current)}"))


def compare(
    current: Analysis, baseline: Analysis, current_settings: Mapping[str, Setting], baseline_settings: Mapping[str, Setting]
) -> Comparison:
    o = current.options
    a, b = _steady_times(current), _steady_times(baseline)
    if a.size and b.size:
        lo, hi = bootstrap_median_diff_ci(a, b, o.bootstrap_resamples, o.seed)
        time_moved = lo > 0 or hi < 0
        boot = Text("method.bootstrap", low=lo, high=hi, rel=MIN_REL)
    else:
        time_moved, boot = None, Text("reason.no-steady-times")
    by_step_time = Text("method.step-time-test", test=boot)

    def by_time(d: float, rel: float | None) -> bool | None:
        if time_moved is None:
            return None
        return bool(time_moved and rel is not None and abs(rel) >= MIN_REL)

    noise = loss_noise(baseline)
    loss_method = (Text("method.loss-noise", limit=2 * noise) if noise is not None else Text("reason.loss-noise-unknown"))

    def by_noise(d: float, rel: float | None) -> bool | None:
        return None if noise is None else bool(abs(d) > 2 * noise)

    ses = (baseline.convergence.final_loss_se.value, current.convergence.final_loss_se.value)
    final_noise = math.hypot(*ses) if None not in ses else None
    final_method = (Text("method.final-noise", limit=2 * final_noise) if final_noise is not None
                    else Text(f"reason.final-se-unknown-{_where(ses[0] is None, ses[1] is None)}"))

    def by_final_noise(d: float, rel: float | None) -> bool | None:
        return None if final_noise is None else bool(abs(d) > 2 * final_noise)

    ct, bt = current.throughput, baseline.throughput
    cc, bc = current.convergence, baseline.convergence
    w = o.smoothing_window

    cur_tokens = current.steps["tokens"].drop_nulls()
    base_tokens = baseline.steps["tokens"].drop_nulls()
    if cur_tokens.len() and base_tokens.len():
        at = float(min(cur_tokens[-1], base_tokens[-1]))
        eq_cur, eq_base, eq_at = loss_at_tokens(current, at), loss_at_tokens(baseline, at), at
    else:
        eq_cur = eq_base = eq_at = None

    bstep = bc.convergence_step.value
    steady, whole = Alignment.STEADY_WINDOW, Alignment.WHOLE_RUN
    any_change, count_test = Text("method.any-change"), (lambda d, r: d != 0)
    deltas = [
        _delta("step_time_s", T, bt.step_time_s.value, ct.step_time_s.value, LOWER, steady, boot, by_time),
        _delta("tokens_per_s", T, bt.tokens_per_s.value, ct.tokens_per_s.value, HIGHER, steady, by_step_time, by_time),
        _delta("samples_per_s", T, bt.samples_per_s.value, ct.samples_per_s.value, HIGHER, steady, by_step_time, by_time),
        _delta("mfu", E, baseline.mfu.mfu.value, current.mfu.mfu.value, HIGHER, steady, by_step_time, by_time),
        _delta("checkpoint_tax", E, baseline.phases.checkpoint_tax.value, current.phases.checkpoint_tax.value, LOWER,
               whole, Text("method.tax-change", limit=0.01), lambda d, r: abs(d) > 0.01),
        _delta("final_smoothed_loss", C, bc.final_smoothed_loss.value, cc.final_smoothed_loss.value, LOWER,
               Alignment.LAST_TENTH, final_method, by_final_noise),
        _delta("loss_at_equal_tokens", C, eq_base, eq_cur, LOWER, Alignment.BY_TOKENS, loss_method, by_noise, eq_at),
        _delta("convergence_step", C, bstep, cc.convergence_step.value, LOWER, Alignment.BY_STEP,
               Text("method.convergence-step-change", window=w, share=0.05),
               lambda d, r: abs(d) > max(w, 0.05 * abs(bstep or 0))),
        _delta("loss_spikes", S, float(len(baseline.stability.loss.spikes)), float(len(current.stability.loss.spikes)),
               LOWER, whole, any_change, count_test),
        _delta("grad_norm_spikes", S, float(len(baseline.stability.grad_norm.spikes)),
               float(len(current.stability.grad_norm.spikes)), LOWER, whole, any_change, count_test),
        _delta("nan_steps", S, float(len(baseline.stability.nan_steps)), float(len(current.stability.nan_steps)),
               LOWER, whole, any_change, count_test),
    ]
    deltas = [_unless_flagged(d, current, baseline) for d in deltas]
    verdicts = tuple(_verdict(f, deltas) for f in FAMILIES)
    return Comparison(baseline_id=baseline.run_id, deltas=tuple(deltas), verdicts=verdicts,
                      settings=settings_diff(current_settings, baseline_settings))
