"""Loss and grad-norm spikes with a causal robust rule; NaN/Inf steps counted apart.

Rule: for each finite value x_i, m_i and MAD_i are the median and MAD of the previous
``spike_window`` finite values (NaN/Inf never enter them; at least MIN_HISTORY needed). The scale
is max(1.4826 MAD_i, 1e-3 |m_i|) so a flat series does not turn every wiggle into infinity.
z_i = (x_i - m_i) / scale; a spike is z_i > spike_z with x_i above m_i. Consecutive spiking
values merge into one spike. Height = (peak - m) / |m| (relative rise over the rolling median
before the spike). Recovery: the first later value within m + 3 scale; fast if that is at most
5 steps after the spike's last step, slow if later, none if never.

Speed: the rolling median is exact (polars); the rolling MAD is first approximated by the rolling
median of |x_j - m_j| to pick candidates with a 2x margin, then computed exactly for them.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import Figure, Recovery, Spike, SpikeSeries, Stability, missing

MIN_HISTORY = 20
FAST_STEPS = 5
RECOVERY_BAND = 3.0
LEAD_WINDOW = 5


def _rule(window: int, z: float) -> Text:
    return Text("rule.spikes", window=window, history=MIN_HISTORY, z=z, fast=FAST_STEPS)


def find_spikes(series: pl.DataFrame, tag: str, window: int, z: float) -> SpikeSeries:
    """Spikes of one (step, value) series sorted by step."""
    rule = _rule(window, z)
    if series.is_empty():
        return SpikeSeries(tag, rule, 0, (), (), None, None, None, None, {}, reason=Text("reason.not-logged", tag=tag))
    steps_all = series["step"].to_numpy()
    values_all = series["value"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    ok = np.isfinite(values_all)
    nonfinite = tuple(int(s) for s in steps_all[~ok])
    steps, x = steps_all[ok], values_all[ok]
    n = x.size
    if n <= MIN_HISTORY:
        return SpikeSeries(tag, rule, n, (), nonfinite, None, None, None, None, {},
                           reason=Text("reason.few-values", n=n, need=MIN_HISTORY))

    xs = pl.Series(x)
    m = xs.rolling_median(window, min_samples=MIN_HISTORY).shift(1).to_numpy()  # previous values only
    dev = pl.Series(np.abs(x - np.nan_to_num(m, nan=0.0)))
    approx_mad = dev.rolling_median(window, min_samples=MIN_HISTORY).shift(1).to_numpy()
    floor = 1e-3 * np.abs(m)
    approx_z = (x - m) / np.maximum(np.maximum(MAD_SCALE * approx_mad, floor), 1e-300)
    candidates = np.flatnonzero(np.isfinite(approx_z) & (approx_z > z / 2) & (x > m))

    # exact statistics for the candidates only: one (candidates x window) gather, vectorised
    flagged: list[tuple[int, float, float, float]] = []  # (position, z, median, scale)
    if candidates.size:
        offsets = np.arange(-window, 0)
        idx = candidates[:, None] + offsets[None, :]
        hist = np.where(idx >= 0, x[np.clip(idx, 0, None)], np.nan)  # short history at the start: NaN-padded
        med = np.nanmedian(hist, axis=1)
        scale = np.maximum(np.maximum(MAD_SCALE * np.nanmedian(np.abs(hist - med[:, None]), axis=1),
                                      1e-3 * np.abs(med)), 1e-300)
        score = (x[candidates] - med) / scale
        hit = (score > z) & (x[candidates] > med)
        flagged = [(int(i), float(sc), float(md), float(sd))
                   for i, sc, md, sd in zip(candidates[hit], score[hit], med[hit], scale[hit])]

    spikes: list[Spike] = []
    k = 0
    while k < len(flagged):  # merge consecutive positions
        j = k
        while j + 1 < len(flagged) and flagged[j + 1][0] == flagged[j][0] + 1:
            j += 1
        first, last = flagged[k][0], flagged[j][0]
        _, _, med, scale = flagged[k]
        peak_pos = first + int(np.argmax(x[first : last + 1]))
        after = np.flatnonzero(x[last + 1 :] <= med + RECOVERY_BAND * scale)
        if after.size:
            back = int(steps[last + 1 + after[0]] - steps[last])
            recovery = Recovery.FAST if back <= FAST_STEPS else Recovery.SLOW
        else:
            back, recovery = None, Recovery.NONE
        spikes.append(Spike(
            step=int(steps[first]), end_step=int(steps[last]), value=float(x[peak_pos]), baseline=med,
            height=float((x[peak_pos] - med) / abs(med)) if med != 0 else float("inf"),
            score=max(f[1] for f in flagged[k : j + 1]), duration=last - first + 1,
            recovery=recovery, recovery_steps=back,
        ))
        k = j + 1

    heights = np.array([s.height for s in spikes if np.isfinite(s.height)])
    starts = np.array([s.step for s in spikes])
    counts = {r.value: sum(1 for s in spikes if s.recovery == r) for r in Recovery}
    return SpikeSeries(
        tag=tag, rule=rule, points=n, spikes=tuple(spikes), nonfinite_steps=nonfinite,
        height_p50=float(np.percentile(heights, 50)) if heights.size else None,
        height_p90=float(np.percentile(heights, 90)) if heights.size else None,
        height_max=float(heights.max()) if heights.size else None,
        spacing_median_steps=float(np.median(np.diff(starts))) if starts.size > 1 else None,
        recovery_counts=counts,
    )


def stability(loss: pl.DataFrame, grad_norm: pl.DataFrame, overflow_steps: tuple[int, ...],
              window: int, z: float) -> Stability:
    loss_s = find_spikes(loss, "loss", window, z)
    grad_s = find_spikes(grad_norm, "grad_norm", window, z)
    nan_steps = tuple(sorted(set(loss_s.nonfinite_steps) | set(grad_s.nonfinite_steps)))
    if not loss_s.spikes:
        lead = missing(Text("reason.no-loss-spikes"))
    elif grad_norm.is_empty():
        lead = missing(Text("reason.not-logged", tag="grad_norm"))
    else:
        g = np.array([s.step for s in grad_s.spikes], dtype=np.int64)
        led = sum(1 for s in loss_s.spikes if np.any((g <= s.step) & (g >= s.step - LEAD_WINDOW)))
        lead = Figure(led / len(loss_s.spikes), unit="fraction",
                      method=Text("method.grad-leads", window=LEAD_WINDOW))
    return Stability(loss=loss_s, grad_norm=grad_s, nan_steps=nan_steps, overflow_steps=overflow_steps,
                     grad_leads_loss=lead, lead_window_steps=LEAD_WINDOW)
