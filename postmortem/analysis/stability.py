"""Loss and grad-norm spikes with a causal robust rule; NaN/Inf steps counted apart.

Rule: for each finite value x_i, m_i and MAD_i are the median and MAD of the previous
``spike_window`` finite values (NaN/Inf never enter them; at least MIN_HISTORY needed). The scale
is max(1.4826 MAD_i, 1e-3 |m_i|) so a flat series does not turn every wiggle into infinity.
z_i = (x_i - m_i) / scale; a spike is z_i > spike_z with x_i above m_i. Consecutive spiking
values merge into one spike. Height = (peak - m) / |m| (relative rise over the rolling median
before the spike). Recovery: the first later value within m + 3 scale; fast if that is at most
5 steps after the spike's last step, slow if later, none if never.

Sparse logs (MIN_SPARSE..MIN_HISTORY finite values: a log every 100 steps, a short run): each
value with SPARSE_NEIGHBOURS values before it (the first records of a log have no history to spike
against) is judged against its neighbouring logged values (up to SPARSE_NEIGHBOURS before and after,
itself left out): median m and scale max(1.4826 MAD, SPARSE_FLOOR |m|); a spike when z > spike_z
and above m. Recovery is counted in logged values (fast: back at the next logged value), the gap in
steps beside it.

Explosions, at any density: a value >= EXPLOSION_RATIO x the median of the up to EXPLOSION_HISTORY
finite logged values before it (a median of 0 or below is no level: nothing is judged against it),
or a non-finite value. Consecutive exploding values merge; recovery is the first later value back
below EXPLOSION_RATIO x that level, in logged values with the gap in steps.

Speed: the rolling median is exact (polars); the rolling MAD is first approximated by the rolling
median of |x_j - m_j| to pick candidates with a 2x margin, then computed exactly for them.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import Explosion, Figure, Recovery, Spike, SpikeSeries, Stability, missing

MIN_HISTORY = 20
FAST_STEPS = 5
RECOVERY_BAND = 3.0
LEAD_WINDOW = 5
# The few-points rules (module doc).
MIN_SPARSE = 3  # a value needs two neighbours to be judged
SPARSE_NEIGHBOURS = 2
SPARSE_FLOOR = 0.10  # a rise under a tenth of the neighbours' level is no spike on a sparse log
EXPLOSION_RATIO = 10.0
EXPLOSION_HISTORY = 5
MAX_EXPLOSIONS = 100  # the first ones are listed (a value flipping to NaN every other step is one problem)


def _rule(window: int, z: float) -> Text:
    return Text("rule.spikes", window=window, history=MIN_HISTORY, z=z, fast=FAST_STEPS)


def _sparse_rule(z: float) -> Text:
    return Text("rule.spikes-sparse", neighbours=SPARSE_NEIGHBOURS, floor=SPARSE_FLOOR, z=z, need=MIN_SPARSE,
                before=SPARSE_NEIGHBOURS)


def explosions(series: pl.DataFrame, tag: str) -> tuple[Explosion, ...]:
    """The explosions of one (step, value) series sorted by step (module doc)."""
    if series.is_empty():
        return ()
    steps = series["step"].to_numpy()
    x = series["value"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    n = x.size
    finite = np.isfinite(x)
    pos = np.flatnonzero(finite)
    # each value's level: the median of the up to EXPLOSION_HISTORY finite values before it, computed
    # only where it can matter: x >= 10 x median needs x >= 10 x the least of those values
    f = x[pos]
    prev_min = np.full(f.size, np.inf)
    for lag in range(1, EXPLOSION_HISTORY + 1):
        prev_min[lag:] = np.minimum(prev_min[lag:], f[:-lag])
    candidate = np.zeros(n, dtype=bool)
    candidate[pos] = np.isfinite(prev_min) & (f >= EXPLOSION_RATIO * np.maximum(prev_min, 0.0))
    levels = np.full(n, np.nan)
    where = np.flatnonzero(candidate | ~finite)
    if where.size and pos.size:
        count_before = np.searchsorted(pos, where)  # finite values before each position
        idx = count_before[:, None] + np.arange(-EXPLOSION_HISTORY, 0)[None, :]
        hist = np.where(idx >= 0, f[np.clip(idx, 0, None)], np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no value before the first: no level
            levels[where] = np.nanmedian(hist, axis=1)
    ok = finite & np.isfinite(levels) & (levels > 0)
    exploding = ok & (x >= EXPLOSION_RATIO * np.where(ok, levels, np.inf))
    marks = np.flatnonzero(exploding | ~finite)
    if not marks.size:
        return ()
    # runs of consecutive positions, vectorised: a NaN tail of 250k steps is one run
    breaks = np.flatnonzero(np.diff(marks) != 1)
    firsts = marks[np.concatenate([[0], breaks + 1])][:MAX_EXPLOSIONS]
    lasts = marks[np.concatenate([breaks, [marks.size - 1]])][:MAX_EXPLOSIONS]
    out: list[Explosion] = []
    for first, last in zip(firsts.tolist(), lasts.tolist()):
        level = float(levels[first]) if np.isfinite(levels[first]) and levels[first] > 0 else None
        k = int(np.searchsorted(pos, first)) - 1  # the last finite value before it
        before = float(x[pos[k]]) if k >= 0 else None
        back = None
        if level is not None:
            later = np.flatnonzero(finite[last + 1:] & (x[last + 1:] < EXPLOSION_RATIO * level))
            back = last + 1 + int(later[0]) if later.size else None
        value = float(x[first])
        out.append(Explosion(
            tag=tag, step=int(steps[first]), end_step=int(steps[last]), before=before, value=value, level=level,
            ratio=value / level if level is not None and np.isfinite(value) else None,
            recovered_step=int(steps[back]) if back is not None else None,
            recovery_values=back - last if back is not None else None, nonfinite=not np.isfinite(value),
        ))
    return tuple(out)


def _sparse_spikes(steps: np.ndarray, x: np.ndarray, z: float) -> list[Spike]:
    """Spikes of a few finite values, each against its neighbouring logged values (module doc)."""
    n = x.size
    flagged: list[tuple[int, float, float, float]] = []
    for i in range(SPARSE_NEIGHBOURS, n):  # a spike needs history before it: the log's first values are not judged
        nb = np.concatenate([x[max(0, i - SPARSE_NEIGHBOURS):i], x[i + 1:i + 1 + SPARSE_NEIGHBOURS]])
        if nb.size < MIN_SPARSE - 1:
            continue
        med = float(np.median(nb))
        scale = max(MAD_SCALE * float(np.median(np.abs(nb - med))), SPARSE_FLOOR * abs(med), 1e-300)
        score = (x[i] - med) / scale
        if score > z and x[i] > med:
            flagged.append((i, float(score), med, scale))
    return _merge(steps, x, flagged, sparse=True)


def _merge(steps: np.ndarray, x: np.ndarray, flagged: list[tuple[int, float, float, float]], sparse: bool) -> list[Spike]:
    """Consecutive flagged positions as one spike each, with its recovery."""
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
            values = int(after[0]) + 1
            fast = values <= 1 if sparse else back <= FAST_STEPS
            recovery = Recovery.FAST if fast else Recovery.SLOW
        else:
            back, values, recovery = None, None, Recovery.NONE
        spikes.append(Spike(
            step=int(steps[first]), end_step=int(steps[last]), value=float(x[peak_pos]), baseline=med,
            height=float((x[peak_pos] - med) / abs(med)) if med != 0 else float("inf"),
            score=max(f[1] for f in flagged[k : j + 1]), duration=last - first + 1,
            recovery=recovery, recovery_steps=back, recovery_values=values,
        ))
        k = j + 1
    return spikes


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
        if n < MIN_SPARSE:
            return SpikeSeries(tag, _sparse_rule(z), n, (), nonfinite, None, None, None, None, {},
                               reason=Text("reason.few-values", n=n, need=MIN_SPARSE - 1))
        return _series(tag, _sparse_rule(z), n, nonfinite, _sparse_spikes(steps, x, z))

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

    return _series(tag, rule, n, nonfinite, _merge(steps, x, flagged, sparse=False))


def _series(tag: str, rule: Text, n: int, nonfinite: tuple[int, ...], spikes: list[Spike]) -> SpikeSeries:
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


def with_explosions(series: SpikeSeries, values: pl.DataFrame, found: tuple[Explosion, ...]) -> SpikeSeries:
    """The spikes, and each finite explosion no spike covers as a spike too (a sparse log's level
    shift is one, though its neighbours share its level): one count of spikes everywhere. Its score
    is its rise over SPARSE_FLOOR of its level, the sparse rule's floor scale."""
    extra = []
    for e in found:
        if e.nonfinite or e.level is None or any(sp.step <= e.end_step and e.step <= sp.end_step for sp in series.spikes):
            continue
        inside = values.filter(pl.col("step").is_between(e.step, e.end_step) & pl.col("value").is_finite())
        peak = float(inside["value"].max())
        fast = e.recovery_values is not None and e.recovery_values <= 1
        extra.append(Spike(
            step=e.step, end_step=e.end_step, value=peak, baseline=e.level, height=(peak - e.level) / abs(e.level),
            score=(peak - e.level) / (SPARSE_FLOOR * abs(e.level)), duration=inside.height,
            recovery=Recovery.NONE if e.recovered_step is None else (Recovery.FAST if fast else Recovery.SLOW),
            recovery_steps=e.recovered_step - e.end_step if e.recovered_step is not None else None,
            recovery_values=e.recovery_values))
    if not extra:
        return series
    return _series(series.tag, series.rule, series.points, series.nonfinite_steps,
                   sorted((*series.spikes, *extra), key=lambda sp: sp.step))


def stability(loss: pl.DataFrame, grad_norm: pl.DataFrame, overflow_steps: tuple[int, ...],
              window: int, z: float, skip_steps: tuple[int, ...] = ()) -> Stability:
    """``skip_steps``: skipped-data steps, whose values (the loss of a batch the update left out)
    stay out of the spike and explosion rules."""
    if skip_steps:
        out = pl.Series(list(skip_steps), dtype=pl.Int64).implode()
        kept_loss, grad_norm = (s.filter(~pl.col("step").is_in(out)) for s in (loss, grad_norm))
        if kept_loss.is_empty() and not loss.is_empty():  # every logged loss is of a skipped step
            rule = _rule(window, z)
            only = SpikeSeries("loss", rule, 0, (), (), None, None, None, None, {},
                               reason=Text("reason.only-skipped-loss", n=len(skip_steps)))
            grad_s = find_spikes(grad_norm, "grad_norm", window, z)
            return Stability(loss=only, grad_norm=grad_s, nan_steps=tuple(grad_s.nonfinite_steps),
                             overflow_steps=overflow_steps, grad_leads_loss=missing(Text("reason.no-loss-spikes")),
                             lead_window_steps=LEAD_WINDOW, skip_steps=tuple(sorted(skip_steps)),
                             explosions=explosions(grad_norm, "grad_norm"))
        loss = kept_loss
    loss_x, grad_x = explosions(loss, "loss"), explosions(grad_norm, "grad_norm")
    loss_s = with_explosions(find_spikes(loss, "loss", window, z), loss, loss_x)
    grad_s = with_explosions(find_spikes(grad_norm, "grad_norm", window, z), grad_norm, grad_x)
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
                     grad_leads_loss=lead, lead_window_steps=LEAD_WINDOW, skip_steps=tuple(sorted(skip_steps)),
                     explosions=(*loss_x, *grad_x))
