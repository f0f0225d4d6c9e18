"""The learning rate at a step, as a share of the schedule's peak where the files show the peak.

The article's first suspect for a spike or a NaN at the end of warmup is a peak set too high
(§5.2). That needs the schedule's peak, which the files show only where the config gives it (and
the logged rates stay under it), or where the log sees warmup end (the rate rose and then stopped
rising) or starts at the schedule's first step. Elsewhere (an excerpt of a decay, a log that ends
in warmup) the highest rate in the log is only that: the share is against it, and said so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Analysis

PEAK_KEYS = ("peak_lr", "max_lr", "learning_rate")  # where a config gives the schedule's peak
RISE = 1e-3  # a relative rise of the rate below this is no warmup (float noise of a logged rate)
ABOVE = 1.01  # logged rates this far above a config's value: the value is not the schedule's peak


def lr_at(a: Analysis, step: int) -> tuple[float | None, str | None]:
    """(the rate at ``step`` / the peak, how the peak is known): "config", "warmup" (seen to end),
    "start" (the log starts at the schedule's start), or "log" (the highest rate in the log)."""
    lr = a.steps.select("step", "lr").drop_nulls()
    lr = lr.filter(lr["lr"] > 0)
    if lr.is_empty():
        return None, None
    at = lr.filter(lr["step"] <= step)
    if not at.height:
        return None, None
    value = float(at["lr"][-1])
    values = lr["lr"].to_numpy()
    top = float(values.max())
    peak, basis = _config_peak(a, top), "config"
    if peak is None:
        peak = top
        first_step = int(lr["step"][0])
        top_last = int(values.argmax()) == values.size - 1 and values.size > 1 and values[-1] > values[-2] * (1 + RISE)
        rose = values[0] < top * (1 - RISE)
        if rose and not top_last:
            basis = "warmup"
        elif first_step <= 1 and not top_last:
            basis = "start"
        else:
            basis = "log"
    return value / peak, basis


def _config_peak(a: Analysis, top: float) -> float | None:
    by_key = {row.key.removeprefix("user."): row for row in a.identity.settings}
    for key in PEAK_KEYS:
        row = by_key.get(key)
        if row is None or isinstance(row.value, bool):
            continue
        try:
            value = float(row.value)
        except (TypeError, ValueError):
            continue
        if value > 0 and top <= value * ABOVE:
            return value
    return None


def logged_after(a: Analysis, tag: str, step: int) -> int:
    """Finite values of a per-step series (loss, grad_norm) logged after ``step``: with none, the
    log ends before anything could recover, and a sentence says so rather than "never"."""
    import polars as pl

    if tag not in a.steps.columns:
        return 0
    return a.steps.filter((pl.col("step") > step) & pl.col(tag).is_finite()).height


def at_log_end(a: Analysis, tag: str, spike) -> bool:
    """A spike with no recovery seen and no value logged after it: the log ends in it."""
    return str(spike.recovery) == "none" and logged_after(a, tag, spike.end_step) == 0
