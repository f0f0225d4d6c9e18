"""Throughput: the steady window, the step time chart, the figures and the excluded steps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...analysis import types as t
from ...analysis.window import excluded_ranges
from ...words import MISSING, Labels, numbers as fmt
from .. import charts
from ..blocks import Block, Cell, Chart, Paragraph, Section, fig_cell, table
from .common import flag_cell, recorder_format


def _how(f: t.Figure, L: Labels) -> str:
    """How a figure was obtained and from where ("setting x" says no more than its source)."""
    if not f.known:
        return L.text(f.reason)
    if f.method is None or f.method.key == "method.setting":
        return L.text(f.source)
    return f"{L.text(f.method)} · {L.text(f.source)}" if f.source else L.text(f.method)


def section(a: t.Analysis, L: Labels, base: t.Analysis | None) -> Section:
    tp = a.throughput
    w = tp.window
    blocks: list[Block] = []
    ranges = excluded_ranges(w.excluded)
    if w.start_step is not None and w.end_step is not None:
        blocks.append(
            Paragraph(
                L["window_summary"].format(
                    start=fmt.step(w.start_step), end=fmt.step(w.end_step), kept=fmt.integer(w.steps_kept),
                    excluded=fmt.integer(w.excluded.height), ranges=fmt.integer(len(ranges)),
                )
            )
        )
    else:
        blocks.append(Paragraph(L["no_window"].format(reason=L.text(w.reason) or L["unknown"]), "warning"))
    if w.caveat is not None:  # the figures rest on few or marked steps (analysis/window.py)
        blocks.append(Paragraph(L.sentence(w.caveat), "warning"))
    if tp.timing in ("timer", "logged"):
        blocks.append(Paragraph(L[f"timing_{tp.timing}"], "warning" if tp.timing == "timer" else "muted"))
    elif recorder_format(a) is not None:
        blocks.append(Paragraph(L["timing_callback"], "muted"))
    phases = [(p.name, p.start_step, p.end_step) for p in a.phases.phases]
    window = (w.start_step, w.end_step) if w.start_step is not None and w.end_step is not None else None
    spec = charts.step_time_chart(a.steps, window, L, phases)
    if spec:
        blocks.append(Chart("chart-step-time", L["step_time"], spec))
    # figures table, with the baseline beside when there is one
    bt = base.throughput if base else None
    figs: list[tuple[str, str, Callable[[t.Throughput], t.Figure], Callable[[Any], str]]] = [
        ("step_time_s", {"e2e": "step_time_e2e", "timer": "step_time_timer"}.get(tp.timing, "fig_step_time_s"),
         lambda x: x.step_time_s, fmt.duration),
        ("", "step_time_in_step", lambda x: x.in_step_time_s, fmt.duration),
        ("", "gap_share", lambda x: x.gap_share, fmt.percent),
        ("tokens_per_s", "fig_tokens_per_s", lambda x: x.tokens_per_s, fmt.tokens_per_s),
        ("samples_per_s", "fig_samples_per_s", lambda x: x.samples_per_s, fmt.samples_per_s),
        ("", "fig_steps_per_s", lambda x: x.steps_per_s, lambda v: fmt.number(v) + " steps/s"),
        ("", "global_batch_size", lambda x: x.global_batch_size, fmt.integer),
        ("", "seq_length", lambda x: x.seq_length, fmt.integer),
        ("", "tokens_per_step", lambda x: x.tokens_per_step, fmt.integer),
    ]
    rows = []
    for name, key, get, f in figs:
        cur = get(tp)
        row = [Cell(L.get(key, key.replace("_", " ")), title=L.text(cur.method)), flag_cell(a, name, fig_cell(cur, f, L), L)]
        if bt:
            row.append(fig_cell(get(bt), f, L))
        row.append(Cell(_how(cur, L), tone="muted"))
        rows.append(row)
    if tp.step_time:
        s = tp.step_time
        stat_rows = [
            (L["median"], fmt.duration(s.median)),
            (L["ci95"], f"{fmt.duration(s.median_ci_low)} – {fmt.duration(s.median_ci_high)}"),
            (L["trimmed_mean"], fmt.duration(s.trimmed_mean)),
            (L["p10_p90"], f"{fmt.duration(s.p10)} – {fmt.duration(s.p90)}"),
            ("p99", fmt.duration(s.p99)),
            ("MAD", fmt.duration(s.mad)),
        ]
        for label, value in stat_rows:
            row = [Cell(f"{L['step_time']}{L['colon']}{label}"), Cell(value)]
            if bt:
                row.append(Cell(MISSING, tone="muted"))
            row.append(Cell(f"n = {fmt.integer(s.count)}", tone="muted"))
            rows.append(row)
    for key, f in sorted(tp.implied.items()):
        row = [Cell(L.fmt("logged", tag=L.get(key, key))), fig_cell(f, lambda v: fmt.number(v, 4), L)]
        if bt:
            row.append(fig_cell(bt.implied[key], lambda v: fmt.number(v, 4), L) if key in bt.implied else Cell(MISSING, tone="muted"))
        row.append(Cell(L.text(f.method), tone="muted"))
        rows.append(row)
    for tag, f in sorted(tp.logged.items()):
        row = [Cell(L.fmt("logged", tag=tag)), fig_cell(f, lambda v: fmt.number(v, 4), L)]
        if bt:
            row.append(fig_cell(bt.logged[tag], lambda v: fmt.number(v, 4), L) if tag in bt.logged else Cell(MISSING, tone="muted"))
        row.append(Cell(L.text(f.source or f.method), tone="muted"))
        rows.append(row)
    cols = [L["figure"], L["current"]] + ([L["baseline"]] if bt else []) + [L["source"]]
    blocks.append(table("throughput", cols, "lr" + ("r" if bt else "") + "l", rows))
    # excluded steps: counts by reason with the rule, then the steps (collapsed)
    if w.excluded_counts:
        rows = [[Cell(L.name("reason_", r)), Cell(fmt.integer(c)), Cell(L.text(w.rules.get(r)), tone="muted")] for r, c in sorted(w.excluded_counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        blocks.append(table("excluded-counts", [L["excluded_reason"], L["steps"], L["rule"]], "lrl", rows, caption=L["excluded_steps"]))
    if ranges:
        rows = [[Cell(fmt.step(s) if s == e else f"{fmt.step(s)} – {fmt.step(e)}"), Cell(fmt.integer(e - s + 1)), Cell(L.name("reason_", r))]
                for s, e, r in ranges]
        blocks.append(table("excluded-steps", [L["step_range"], L["steps"], L["excluded_reason"]], "rrl", rows, caption=L["excluded_ranges"], collapsed=True))
    return Section("throughput", L["throughput"], tuple(blocks))
