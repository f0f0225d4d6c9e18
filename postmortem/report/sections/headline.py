"""The summary at the top (badges, the big numbers, the worst findings) and the headline figures' table."""

from __future__ import annotations

from ...analysis import types as t
from ...text import Text
from ...words import Labels, numbers as fmt
from ..blocks import Badge, Block, Cell, Paragraph, Section, Stat, Summary, Tone, cell, fig_cell, table
from ..messages import alignment
from .common import (
    HEADLINE,
    SEVERITY_ORDER,
    current_figure,
    delta_verdict,
    figure_label,
    finding_item,
    flag_cell,
    flag_text,
    flagged,
    fmt_delta,
    fmt_value,
)

_VERDICT_TONE: dict[str, Tone] = {"improved": "good", "regressed": "bad", "mixed": "warning", "unknown": "muted"}


def failed_summary(a: t.Analysis, L: Labels) -> Summary | None:
    """A run that died before its first step has no figure to show: the summary says so once
    instead of a row of missing marks (the failure leads the verdict above it)."""
    if a.failure is None or a.step_range is not None:
        return None
    return Summary(badges=(), stats=(), findings=(), note=L.text(Text("failure.no-steps")))


def summary(a: t.Analysis, L: Labels) -> Summary:
    comp = a.comparison
    badges = tuple(
        Badge(L.name("family_", v.family), L.name("v_", v.verdict), _VERDICT_TONE.get(str(v.verdict), ""))
        for v in (comp.verdicts if comp else ())
    )
    stats = []
    for name in HEADLINE:
        f = current_figure(a, name)
        d = comp.delta(name) if comp else None
        verdict, tone = delta_verdict(d, L) if comp else ("", "")
        flag = flag_text(a, name, L)
        stats.append(
            Stat(
                key=name,
                label=figure_label(name, L, a),
                value=flagged(fmt_value(name, f.value), flag, L),
                reason=flag or L.text(f.reason) or L.text(f.caveat) or (L.text(d.reason) if d and d.reason else ""),
                baseline=fmt_value(name, d.baseline) if d else "",
                delta=fmt_delta(name, d.delta, L) if d and d.delta is not None else "",
                rel=fmt.rel_delta(d.rel) if d and d.rel is not None else "",
                verdict=verdict,
                tone="error" if flag else tone,
            )
        )
    findings = sorted(a.findings, key=lambda f: SEVERITY_ORDER.get(str(f.severity), 3))
    items = tuple(finding_item(f, L) for f in findings[:3])
    return Summary(badges, tuple(stats), items, "" if comp else L["no_baseline"])


def section(a: t.Analysis, L: Labels) -> Section:
    comp = a.comparison
    blocks: list[Block] = []
    if comp is None:
        rows = [[Cell(figure_label(n, L, a)), flag_cell(a, n, fig_cell(current_figure(a, n), lambda v, n=n: fmt_value(n, v), L), L)]
                for n in HEADLINE]
        blocks.append(table("headline", [L["figure"], L["current"]], "lr", rows))
        blocks.append(Paragraph(L["no_baseline"], "muted"))
    else:
        names = list(dict.fromkeys([*HEADLINE, *(d.figure for d in comp.deltas)]))
        rows = []
        for name in names:
            d = comp.delta(name)
            if d is None:
                continue
            verdict, tone = delta_verdict(d, L)
            rows.append(
                [
                    Cell(figure_label(name, L, a), title=L.text(alignment(d))),
                    cell(d.baseline, lambda v, n=name: fmt_value(n, v), L.text(d.reason)),
                    flag_cell(a, name, cell(d.current, lambda v, n=name: fmt_value(n, v), L.text(d.reason)), L),
                    cell(d.delta, lambda v, n=name: fmt_delta(n, v, L), L.text(d.reason)),
                    cell(d.rel, fmt.rel_delta, L.text(d.reason)),
                    Cell(verdict, tone=tone, title=L.text(d.method)),
                    Cell(L.text(alignment(d))),
                ]
            )
        cols = [L["figure"], L['baseline'] + L['paren'].format(comp.baseline_id), L["current"], L["delta"], L["rel_delta"], L["significance"], L["alignment"]]
        blocks.append(table("headline", cols, "lrrrrll", rows))
    return Section("headline", L["headline"], tuple(blocks))
