"""What several sections share: how a figure is labelled, written and compared (the headline's figures),
a finding as a list item, a list of steps, the recorder a run was read from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...analysis import types as t
from ...records import RECORDER
from ...words import MISSING, Labels, numbers as fmt
from ..blocks import Cell, Item, Tone
from ..messages import finding_text


def _pp(x: float) -> str:
    return fmt.number(x * 100, 2)


# figure name -> (label key, value formatter, delta formatter)
FIGURES: dict[str, tuple[str, Callable[[Any], str], Callable[[float], str]]] = {
    "tokens_per_s": ("fig_tokens_per_s", fmt.tokens_per_s, lambda d: fmt.delta(d, fmt.tokens_per_s)),
    "samples_per_s": ("fig_samples_per_s", fmt.samples_per_s, lambda d: fmt.delta(d, fmt.samples_per_s)),
    "step_time_s": ("fig_step_time_s", fmt.duration, lambda d: fmt.delta(d, fmt.duration)),
    "mfu": ("fig_mfu", lambda v: fmt.percent(v, 2 if abs(v) < 0.01 else 1), lambda d: fmt.delta(d, _pp)),
    "final_smoothed_loss": ("fig_final_smoothed_loss", fmt.loss, lambda d: fmt.delta(d, fmt.loss)),
    "loss_spikes": ("fig_loss_spikes", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "grad_norm_spikes": ("fig_grad_norm_spikes", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "loss_at_equal_tokens": ("fig_loss_at_equal_tokens", fmt.loss, lambda d: fmt.delta(d, fmt.loss)),
    "nan_steps": ("fig_nan_steps", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "checkpoint_tax": ("fig_checkpoint_tax", fmt.percent, lambda d: fmt.delta(d, _pp)),
    "convergence_step": ("fig_convergence_step", fmt.step, lambda d: fmt.delta(d, fmt.integer)),
}


PERCENTAGE_POINTS = {"mfu", "checkpoint_tax"}  # their deltas are in percentage points (L["pp"])


HEADLINE = ("tokens_per_s", "step_time_s", "mfu", "final_smoothed_loss", "loss_spikes", "checkpoint_tax")


def current_figure(a: t.Analysis, name: str) -> t.Figure:
    match name:
        case "tokens_per_s":
            return a.throughput.tokens_per_s
        case "samples_per_s":
            return a.throughput.samples_per_s
        case "step_time_s":
            return a.throughput.step_time_s
        case "mfu":
            return a.mfu.mfu
        case "final_smoothed_loss":
            return a.convergence.final_smoothed_loss
        case "loss_spikes":
            s = a.stability.loss
            return t.Figure(float(len(s.spikes)) if s.reason is None else None, s.rule, s.reason)
        case "nan_steps":
            return t.Figure(float(len(a.stability.nan_steps)))
        case "checkpoint_tax":
            return a.phases.checkpoint_tax
        case "convergence_step":
            return a.convergence.convergence_step
    return t.missing("unknown figure")


def figure_label(name: str, L: Labels, a: t.Analysis | None = None) -> str:
    if name == "step_time_s" and a is not None and a.throughput.timing == "timer":
        return L["step_time_timer"]  # not the e2e time: say so wherever it is shown
    return L.get("fig_" + name, name.replace("_", " "))


def fmt_value(name: str, value: float | None) -> str:
    formatter = FIGURES.get(name, ("", lambda v: fmt.number(v, 4), None))[1]
    return MISSING if value is None else formatter(value)


def fmt_delta(name: str, d: float | None, L: Labels) -> str:
    if d is None:
        return MISSING
    entry = FIGURES.get(name)
    text = entry[2](d) if entry else fmt.delta(d)
    return f"{text} {L['pp']}" if name in PERCENTAGE_POINTS else text


def delta_verdict(d: t.Delta | None, L: Labels) -> tuple[str, Tone]:
    if d is None or d.delta is None:
        return L["verdict_unknown"], "muted"
    if d.significant is None:
        return L["unknown"], "muted"
    if not d.significant or d.delta == 0:
        return L["within_noise"], ""
    better = (d.delta > 0) == (d.better == "higher")
    return (L["verdict_better"], "good") if better else (L["verdict_worse"], "bad")


SEVERITY_ORDER = {"critical": 0, "error": 0, "warning": 1, "info": 2}


def flag_text(a: t.Analysis, name: str, L: Labels) -> str:
    """Why a headline figure cannot be right (the implausible finding's text), or ""."""
    p = a.flag(name)
    if p is None:
        return ""
    f = next((f for f in a.findings if f.kind == t.FindingKind.IMPLAUSIBLE and f.variant.startswith(p.check)), None)
    return L.sentence(finding_text(f)) if f is not None else L.sentence(p.rule)


def flagged(value: str, flag: str, L: Labels) -> str:
    return f"{value} ({L['implausible']})" if flag else value


def flag_cell(a: t.Analysis, name: str, c: Cell, L: Labels) -> Cell:
    """The cell of a figure, marked when the figure cannot be right."""
    flag = flag_text(a, name, L)
    return Cell(flagged(c.text, flag, L), tone="error", title=flag) if flag else c


def finding_item(f: t.Finding, L: Labels) -> Item:
    sev = str(f.severity)
    return Item(L.sentence(finding_text(f)), tone="critical" if sev == "critical" else sev, tag=L.get(sev, sev))  # type: ignore[arg-type]


def id_slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in s.lower()).strip("-") or "x"


def step_list(steps: Sequence[int], L: Labels, limit: int = 12) -> str:
    shown = L.join(fmt.step(s) for s in steps[:limit])
    return shown + (f"{L['list_sep']}… (+{len(steps) - limit})" if len(steps) > limit else "")


def recorder_format(a: t.Analysis) -> str | None:
    """The format of postmortem's callback records the run was read from (the `recorder` setting), or None."""
    for r in a.identity.settings:
        if r.key == "recorder" and str(r.value).startswith(RECORDER):
            return str(r.value)[len(RECORDER):].strip() or "?"
    return None
