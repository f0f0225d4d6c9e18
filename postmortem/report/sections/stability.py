"""Stability: NaN and overflow steps, explosions, and the spikes of the loss and the gradient norm."""

from __future__ import annotations

from ...analysis import types as t
from ...words import Labels, numbers as fmt
from .. import charts
from ..blocks import Block, Cell, Chart, Paragraph, Section, cell, fig_cell, table
from ..messages import finding_text
from .common import id_slug, step_list

MIN_SPIKES_FOR_HISTOGRAM = 5


def section(a: t.Analysis, L: Labels) -> Section:
    st = a.stability
    blocks: list[Block] = []
    facts = [
        [Cell(L["nan_steps"]), Cell(fmt.integer(len(st.nan_steps))), Cell(step_list(st.nan_steps, L), tone="muted")],
        [Cell(L["overflow_steps"]), Cell(fmt.integer(len(st.overflow_steps))), Cell(step_list(st.overflow_steps, L), tone="muted")],
        [Cell(L["grad_leads_loss"]), fig_cell(st.grad_leads_loss, fmt.percent, L), Cell(L.fmt("within_steps", n=st.lead_window_steps), tone="muted")],
    ]
    blocks.append(table("stability-facts", [L["figure"], L["value"], L["steps"]], "lrl", facts))
    # explosions, at any log density (analysis/stability.py): said where the spikes are
    blocks += [Paragraph(L.sentence(finding_text(f)), "warning") for f in a.findings if f.kind == t.FindingKind.EXPLOSION]
    for series in (st.loss, st.grad_norm):
        title = L["spikes_of"].format(tag=series.tag)
        if series.reason:
            blocks.append(Paragraph(f"{title}{L['colon']}{L.text(series.reason)}", "muted"))
            continue
        if not series.spikes:
            blocks.append(Paragraph(f"{title}{L['colon']}{L['no_spikes']}{L['paren'].format(L.text(series.rule))}", "good"))
            continue
        spec = charts.spike_height_chart([s.height for s in series.spikes], [str(s.recovery) for s in series.spikes], L)
        if spec and series is st.loss and len(series.spikes) >= MIN_SPIKES_FOR_HISTOGRAM:
            blocks.append(Chart("chart-spike-heights", L["spike_heights"], spec))
        summary = L.fmt(
            "spike_stats", title=title, n=fmt.integer(len(series.spikes)), p50=fmt.percent(series.height_p50),
            p90=fmt.percent(series.height_p90), max=fmt.percent(series.height_max), rule_label=L["rule"], rule=L.text(series.rule),
        )
        blocks.append(Paragraph(summary))
        rows = [
            [Cell(fmt.step(s.step)), Cell(fmt.number(s.value, 4)), Cell(fmt.number(s.baseline, 4)), Cell(fmt.percent(s.height)),
             Cell(fmt.number(s.score, 3)), Cell(fmt.integer(s.duration)),
             Cell(L.name("recovery_", s.recovery), tone="bad" if s.recovery == t.Recovery.NONE else ""),
             cell(s.recovery_steps, fmt.integer)]
            for s in series.spikes
        ]
        cols = [L["step"], L["peak"], L["median"], L["height"], "z", L["duration"], L["recovery"], L["steps"]]
        blocks.append(table(f"spikes-{id_slug(series.tag)}", cols, "rrrrrrlr", rows, collapsed=len(rows) > 20))
    return Section("stability", L["stability"], tuple(blocks))
