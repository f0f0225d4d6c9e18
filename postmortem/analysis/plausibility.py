"""Figures that cannot be right: each becomes an error finding, and the headline figure is flagged.

- MFU above 100% or below 0.1%: a wrong peak, parameter count, device count or batch size.
- A logged in-step time shorter than a tenth of its wall-clock gap (medians over the steady
  window): the timer's unit or the step count between wall times is wrong.
- A logged in-step time longer than the wall-clock step (a negative gap, more than NEGATIVE_GAP of
  the step over the steady window): the timer is not the step's (another interval, another unit);
  the gap is then no share and no evidence for a bottleneck.
- tokens/s that contradict the run's own logged tokens/s by more than 20%, unless the two agree
  on the tokens of a step (then only the timers differ: the log divided by its in-step timer).
"""

from __future__ import annotations

from ..text import Text
from .throughput import LOGGED_TOLERANCE
from .types import Implausible, Mfu, Throughput

MFU_MAX = 1.0
MFU_MIN = 0.001
STEP_VS_GAP = 0.1
NEGATIVE_GAP = 0.01  # a timer longer than the step by less than this is the stamps' resolution


def _ratio_off(a: float, b: float) -> bool:
    return a <= 0 or b <= 0 or max(a, b) > (1 + LOGGED_TOLERANCE) * min(a, b)


def plausibility(tp: Throughput, m: Mfu) -> tuple[Implausible, ...]:
    out: list[Implausible] = []
    mfu = m.mfu.value
    if mfu is not None and not MFU_MIN <= mfu <= MFU_MAX:
        high = mfu > MFU_MAX
        out.append(Implausible(
            "mfu_range", ("mfu",), mfu, "mfu_max" if high else "mfu_min", MFU_MAX if high else MFU_MIN,
            Text("rule.mfu-range", low=MFU_MIN, high=MFU_MAX)))
    inner, e2e = tp.in_step_time_s.value, tp.step_time_s.value
    if inner is not None and e2e is not None and tp.timing == "e2e" and inner < STEP_VS_GAP * e2e:
        out.append(Implausible(
            "step_vs_gap", ("step_time_s", "tokens_per_s", "samples_per_s"), inner, "wall_gap", e2e,
            Text("rule.step-vs-gap", share=STEP_VS_GAP)))
    gap = tp.gap_share.reason
    if (gap is not None and gap.key == "reason.negative-gap" and gap.params.get("share", 0.0) < -NEGATIVE_GAP
            and inner is not None and e2e is not None):
        out.append(Implausible(
            "timer_vs_wall", ("in_step_time_s", "gap_share"), inner, "wall_step", e2e,
            Text("rule.timer-vs-wall", share=NEGATIVE_GAP)))
    ours, logged = tp.tokens_per_s.value, tp.logged.get("tokens_per_s")
    implied = tp.implied.get("tokens_per_step")
    logged_tokens_per_step = implied.value if implied is not None else None
    # a size from the logged rate cannot contradict its source
    tokens_from_logged = tp.tokens_per_step.source is not None and tp.tokens_per_step.source.key == "source.scalars"
    if (not tokens_from_logged and ours is not None and logged is not None and logged.value is not None
            and _ratio_off(ours, logged.value)):
        # the tokens of a step by the logged rate, with each timer the log may have divided by
        per_step = tp.tokens_per_step.value
        timers = [x for x in (tp.step_time_s.value, tp.in_step_time_s.value) if x is not None]
        implied = [logged_tokens_per_step] if logged_tokens_per_step is not None else []
        implied += [logged.value * x for x in timers]
        same_step = per_step is not None and any(not _ratio_off(per_step, x) for x in implied)
        if not same_step:
            out.append(Implausible(
                "tokens_vs_logged", ("tokens_per_s",), ours, "logged_tokens_per_s", logged.value,
                Text("rule.tokens-vs-logged", tolerance=LOGGED_TOLERANCE)))
    return tuple(out)
