"""Phases and ranks: the run's phases, the per-rank step times and the slow ranks as groups."""

from __future__ import annotations

import polars as pl

from ...analysis import types as t
from ...analysis.ranks import group_params
from ...text import Text
from ...words import Labels, numbers as fmt
from .. import charts
from ..blocks import Block, Cell, Chart, Paragraph, Section, cell, table
from ..verdict import rank_group_text


def section(a: t.Analysis, L: Labels, base: t.Analysis | None) -> Section:
    p = a.phases
    blocks: list[Block] = []
    if p.reason:
        blocks.append(Paragraph(L.sentence(p.reason), "muted"))
    if p.phases:
        rows = [
            [Cell(L.name("phase_", ph.name), title=L.text(ph.rule)), Cell(fmt.step(ph.start_step)), Cell(fmt.step(ph.end_step)),
             cell(ph.step_time_median_s, fmt.duration), cell(ph.tokens_per_s, fmt.tokens_per_s),
             cell(ph.max_allocated_bytes, fmt.bytes_), cell(ph.data_wait_share, fmt.percent), cell(ph.comm_share, fmt.percent),
             Cell(L.join(f"{L.name('event_', k)} × {v}" for k, v in sorted(ph.events.items())), tone="muted")]
            for ph in p.phases
        ]
        cols = [L["phase"], L["first_step"], L["last_step"], L["step_time"], L["tokens_per_s"], L["max_memory"], L["wait_share"], L["comm_share"], L["events"]]
        blocks.append(table("phases", cols, "lrrrrrrrl", rows, caption=L.sentence(p.rule)))
    r = a.ranks
    if r.reason:
        blocks.append(Paragraph(f"{L['per_rank']}{L['colon']}{L.text(r.reason)}", "muted"))
    elif r.ranks:
        rdf = pl.DataFrame(
            [{"rank": x.rank, "median_step_time_s": x.median_step_time_s, "slow": x.slow, "excess": x.excess} for x in r.ranks],
            schema={"rank": pl.Int64, "median_step_time_s": pl.Float64, "slow": pl.Boolean, "excess": pl.Float64},
        )
        spec = charts.rank_chart(rdf, L)
        if spec:
            blocks.append(Chart("chart-ranks", L["per_rank"], spec))
        # Slowest first: the chart shows rank order, and on paper a long table keeps its first rows only.
        slowest_first = sorted(r.ranks, key=lambda x: (-(x.median_step_time_s or 0.0), x.rank))
        rows = [[Cell(str(x.rank)), Cell(fmt.integer(x.steps)), cell(x.median_step_time_s, fmt.duration),
                 cell(x.others_median_s, fmt.duration), cell(x.excess, fmt.rel_delta),
                 Cell(L["slow"] if x.slow else "", tone="bad" if x.slow else "")] for x in slowest_first]
        # the slow ranks as groups (stages, nodes, odd/even, ranges), said before the long table
        groups = [L.sentence(rank_group_text(g)) for g in group_params(r)]
        notes = [L.text(Text("ranks.basis.profile"))] if r.basis == "profile" else []
        if r.node_size and any(g.kind == t.RankGroupKind.NODE for g in r.groups):
            notes.append(L.text(Text(f"ranks.nodes.{r.node_source}", size=r.node_size)))
        if groups or notes:
            sep = L["stop"] + ("" if L.lang == "zh" else " ")
            blocks.append(Paragraph(sep.join([*groups, *notes]) + (L["stop"] if groups and not notes else "")))
        spread = f" {L['rank_spread']}{L['colon']}{fmt.percent(r.spread)}{L['stop']}" if r.spread is not None else ""
        blocks.append(table("ranks", [L["rank"], L["steps"], L["median"], L["others_median"], L["excess"], ""], "rrrrrl", rows,
                             caption=f"{L.sentence(r.rule)}{L['stop']}{spread}", collapsed=len(rows) > 16))
    return Section("phases", L["phases"], tuple(blocks))
