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
from .stats import MAD_SCALE, bootstrap_median_diff_ci
from .types import Comparison, Delta, FamilyVerdict, SettingChange, SettingsDiff

if TYPE_CHECKING:
    from ..model import Setting
    from .types import Analysis

MIN_REL = 0.01
KEY_FIGURES = {"throughput": "step_time_s", "efficiency": "mfu", "convergence": "final_smoothed_loss",
               "stability": "loss_spikes"}


def _delta(figure: str, family: str, base: float | None, cur: float | None, better: str, alignment: str,
           method: str, test: Any) -> Delta:
    if base is None or cur is None or not (math.isfinite(base) and math.isfinite(cur)):
        return Delta(figure, family, base, cur, None, None, None, better, alignment, method,
                     reason="missing in " + ("both runs" if base is None and cur is None
                                             else "the baseline" if base is None else "the current run"))
    d = cur - base
    rel = d / abs(base) if base != 0 else None
    return Delta(figure, family, base, cur, d, rel, test(d, rel), better, alignment, method)


def _steady_times(a: Analysis) -> np.ndarray:
    s = a.steps.filter(pl.col("excluded").is_null())["step_time_s"].to_numpy()
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
    return SettingsDiff(
        added=tuple(SettingChange(k, None, cur[k]) for k in sorted(cur.keys() - base.keys())),
        removed=tuple(SettingChange(k, base[k], None) for k in sorted(base.keys() - cur.keys())),
        changed=tuple(SettingChange(k, base[k], cur[k]) for k in sorted(cur.keys() & base.keys())
                      if cur[k] != base[k]),
    )


def _verdict(family: str, deltas: list[Delta]) -> FamilyVerdict:
    mine = [d for d in deltas if d.family == family]
    sig = [d for d in mine if d.significant]
    unjudged = tuple(d.figure for d in mine if d.significant is None)
    if not sig:
        key_known = KEY_FIGURES.get(family) not in unjudged and any(d.significant is not None for d in mine)
        return FamilyVerdict(family, "no significant change" if key_known else "unknown", (), unjudged)
    good = [d for d in sig if (d.delta > 0) == (d.better == "higher")]
    bad = [d for d in sig if d not in good]
    verdict = "mixed" if good and bad else "improved" if good else "regressed"
    return FamilyVerdict(family, verdict, tuple(d.figure for d in sig), unjudged)


def _unless_flagged(d: Delta, current: Analysis, baseline: Analysis) -> Delta:
    """A figure that cannot be right in either run is not judged."""
    where = [name for name, a in (("the current run", current), ("the baseline", baseline)) if a.flag(d.figure)]
    if not where:
        return d
    return dataclasses.replace(d, significant=None, reason=f"implausible in {' and '.join(where)}")


def compare(
    current: Analysis, baseline: Analysis, current_settings: Mapping[str, Setting], baseline_settings: Mapping[str, Setting]
) -> Comparison:
    o = current.options
    a, b = _steady_times(current), _steady_times(baseline)
    if a.size and b.size:
        lo, hi = bootstrap_median_diff_ci(a, b, o.bootstrap_resamples, o.seed)
        time_moved = lo > 0 or hi < 0
        boot = f"bootstrap 95% CI of the median difference [{lo:.4g}, {hi:.4g}] s excludes 0 and |rel| >= 1%"
    else:
        time_moved, boot = None, "no steady step times in one run"

    def by_time(d: float, rel: float | None) -> bool | None:
        if time_moved is None:
            return None
        return bool(time_moved and rel is not None and abs(rel) >= MIN_REL)

    noise = loss_noise(baseline)
    loss_method = (f"|delta| > 2 x baseline noise of a smoothed point ({2 * noise:.3g})" if noise is not None
                   else "baseline loss noise unknown")

    def by_noise(d: float, rel: float | None) -> bool | None:
        return None if noise is None else bool(abs(d) > 2 * noise)

    ses = (baseline.convergence.final_loss_se.value, current.convergence.final_loss_se.value)
    final_noise = math.hypot(*ses) if None not in ses else None
    final_method = (f"|delta| > 2 x sqrt(se_baseline^2 + se_current^2) ({2 * final_noise:.3g}) of the final levels"
                    if final_noise is not None else
                    "standard error of the final level unknown in " + (
                        "both runs" if ses == (None, None) else "the baseline" if ses[0] is None else "the current run"))

    def by_final_noise(d: float, rel: float | None) -> bool | None:
        return None if final_noise is None else bool(abs(d) > 2 * final_noise)

    ct, bt = current.throughput, baseline.throughput
    cc, bc = current.convergence, baseline.convergence
    w = o.smoothing_window

    cur_tokens = current.steps["tokens"].drop_nulls()
    base_tokens = baseline.steps["tokens"].drop_nulls()
    if cur_tokens.len() and base_tokens.len():
        at = float(min(cur_tokens[-1], base_tokens[-1]))
        eq_cur, eq_base, eq_align = loss_at_tokens(current, at), loss_at_tokens(baseline, at), f"by tokens (at {at:,.0f} tokens)"
    else:
        eq_cur = eq_base = None
        eq_align = "by tokens (tokens per step unknown)"

    bstep = bc.convergence_step.value
    deltas = [
        _delta("step_time_s", "throughput", bt.step_time_s.value, ct.step_time_s.value, "lower",
               "steady window", boot, by_time),
        _delta("tokens_per_s", "throughput", bt.tokens_per_s.value, ct.tokens_per_s.value, "higher",
               "steady window", "step-time test: " + boot, by_time),
        _delta("samples_per_s", "throughput", bt.samples_per_s.value, ct.samples_per_s.value, "higher",
               "steady window", "step-time test: " + boot, by_time),
        _delta("mfu", "efficiency", baseline.mfu.mfu.value, current.mfu.mfu.value, "higher",
               "steady window", "step-time test: " + boot, by_time),
        _delta("checkpoint_tax", "efficiency", baseline.phases.checkpoint_tax.value,
               current.phases.checkpoint_tax.value, "lower", "whole run", "|delta| > 0.01",
               lambda d, r: abs(d) > 0.01),
        _delta("final_smoothed_loss", "convergence", bc.final_smoothed_loss.value, cc.final_smoothed_loss.value,
               "lower", "each run's last 10%", final_method, by_final_noise),
        _delta("loss_at_equal_tokens", "convergence", eq_base, eq_cur, "lower", eq_align, loss_method, by_noise),
        _delta("convergence_step", "convergence", bstep, cc.convergence_step.value, "lower", "by step",
               f"|delta| > max({w}, 5% of baseline)",
               lambda d, r: abs(d) > max(w, 0.05 * abs(bstep or 0))),
        _delta("loss_spikes", "stability", float(len(baseline.stability.loss.spikes)),
               float(len(current.stability.loss.spikes)), "lower", "whole run", "any change", lambda d, r: d != 0),
        _delta("grad_norm_spikes", "stability", float(len(baseline.stability.grad_norm.spikes)),
               float(len(current.stability.grad_norm.spikes)), "lower", "whole run", "any change",
               lambda d, r: d != 0),
        _delta("nan_steps", "stability", float(len(baseline.stability.nan_steps)),
               float(len(current.stability.nan_steps)), "lower", "whole run", "any change", lambda d, r: d != 0),
    ]
    deltas = [_unless_flagged(d, current, baseline) for d in deltas]
    verdicts = tuple(_verdict(f, deltas) for f in ("throughput", "efficiency", "convergence", "stability"))
    return Comparison(baseline_id=baseline.run_id, deltas=tuple(deltas), verdicts=verdicts,
                      settings=settings_diff(current_settings, baseline_settings))
