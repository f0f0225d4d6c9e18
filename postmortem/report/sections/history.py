"""The report's "normal for this experiment" section: each headline figure against the robust range
of the experiment's last archived runs (analysis/history.py), with the runs the range rests on and
the figure's trend over them."""

from __future__ import annotations

from ...analysis.history import MIN_RUNS, History, HistoryFigure, value_text
from ...text import Text
from ...words import Labels, render
from ..blocks import Cell, Paragraph, Section, table

MAX_RUNS_NAMED = 3  # the runs a range rests on, named at each end; the rest counted


def runs_text(f: HistoryFigure) -> Text:
    """The runs a range rests on: all of them when few, else the first and last ones and a count."""
    if len(f.runs) <= 2 * MAX_RUNS_NAMED:
        return Text("history.runs.all", n=len(f.runs), runs=list(f.runs))
    return Text("history.runs.ends", n=len(f.runs), first=list(f.runs[:MAX_RUNS_NAMED]), last=list(f.runs[-MAX_RUNS_NAMED:]))


def verdict_text(f: HistoryFigure) -> tuple[Text, str]:
    """Within, outside (which side, better or worse), or why it is not judged; and its tone."""
    if f.unusual is None:
        return f.reason or Text("history.reason.no-value"), "muted"
    if not f.unusual:
        return Text("history.within"), "good"
    return Text(f"history.outside.{f.direction}", worse=bool(f.worse)), "bad" if f.worse else "info"


def section(h: History | None, L: Labels) -> Section | None:
    if h is None:
        return None
    lang = L.lang
    title = render(Text("history.title"), lang)
    if not h.figures or not h.considered:  # the experiment's first run: nothing to say figure by figure
        return Section("history", title, (Paragraph(render(Text("history.none", n=h.considered, need=h.wanted, least=MIN_RUNS), lang), "muted"),))
    rows = []
    for f in h.figures:
        verdict, tone = verdict_text(f)
        span = (render(Text("history.range", low=value_text(f.figure, f.low), high=value_text(f.figure, f.high)), lang)
                if f.low is not None else "—")
        rows.append([
            Cell(render(Text(f"history.figure.{f.figure}"), lang)),
            Cell(render(value_text(f.figure, f.value), lang), tone="bad" if f.unusual and f.worse else ""),
            Cell(span, title=render(Text("history.median", median=value_text(f.figure, f.median)), lang) if f.median is not None else ""),
            Cell(render(runs_text(f), lang) if f.runs else "—",
                 sub=render(Text("history.apart", n=len(f.apart), keys=sorted({k for _, ks in f.apart for k in ks})[:4]), lang)
                 if f.apart else ""),
            Cell(render(Text(f"history.trend.{f.trend or 'unknown'}"), lang), tone="muted"),
            Cell(render(verdict, lang), tone=tone),
        ])
    cols = [render(Text(f"history.col.{c}"), lang) for c in ("figure", "run", "range", "runs", "trend", "verdict")]
    note = render(h.rule, lang) if h.rule is not None else ""
    return Section("history", title, (table("history", cols, "lrllww", rows, caption=note),))
