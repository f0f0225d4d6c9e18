"""The view's types: a report is sections of generic blocks (paragraph, table, chart, list), every
string already formatted, never escaped; and the small helpers that make a cell or a table.

Renderers (html, pdf, markdown) only walk these; other documents (the archive index, the weekly
digest) reuse them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..analysis import types as t
from ..words import MISSING, Labels, numbers as fmt

Align = Literal["left", "right", "left word", "left keep"]  # CSS classes of a column's cells
Tone = Literal["", "good", "bad", "muted", "info", "warning", "error", "critical"]


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    reason: str = ""  # why the value is missing: a tooltip in HTML, a footnote in PDF
    tone: Tone = ""
    title: str = ""  # extra tooltip (e.g. the method behind a number)
    href: str = ""  # a link (the archive index links each run to its report)
    sub: str = ""  # a second, smaller line (a change against the previous run)
    parts: tuple[Cell, ...] = ()  # shown instead of text: several short texts, each with its tone


@dataclass(frozen=True)
class Table:
    id: str
    columns: tuple[str, ...]
    align: tuple[Align, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    collapsed: bool = False  # HTML puts it in a <details>, closed
    kind: str = "table"
    widths: tuple[str, ...] = ()  # column classes of a fixed layout (the dashboard's), none: automatic


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    spec: dict[str, Any]  # Vega-Lite, data inline
    kind: str = "chart"


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: Tone = ""
    kind: str = "paragraph"


@dataclass(frozen=True)
class Item:
    text: str
    tone: Tone = ""
    tag: str = ""  # short badge text before the item (severity)


@dataclass(frozen=True)
class ItemList:
    items: tuple[Item, ...]
    kind: str = "list"


Block = Table | Chart | Paragraph | ItemList


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Stat:
    """One big headline number with its change against the baseline."""

    key: str
    label: str
    value: str
    reason: str = ""
    baseline: str = ""
    delta: str = ""
    rel: str = ""
    verdict: str = ""  # localized: "better" / "worse" / "within noise" / "not comparable"
    tone: Tone = ""


@dataclass(frozen=True)
class Badge:
    label: str
    verdict: str
    tone: Tone


@dataclass(frozen=True)
class Summary:
    badges: tuple[Badge, ...]
    stats: tuple[Stat, ...]
    findings: tuple[Item, ...]  # the most severe few
    note: str = ""  # e.g. "no baseline"


@dataclass(frozen=True)
class VerdictItem:
    tone: str  # critical, error, warning, info, good
    tag: str  # the severity, as a badge
    title: str
    numbers: str  # the deciding quantities, current against baseline
    lines: tuple[str, ...]  # the cause, the problem's own details, the settings that can or cannot explain it
    actions: tuple[str, ...]  # the first things to try
    evidence: tuple[tuple[str, str], ...]  # (section title, #anchor)


@dataclass(frozen=True)
class VerdictBlock:
    title: str
    note: str  # what the block is about: against the baseline, or the run itself
    items: tuple[VerdictItem, ...]
    empty: str = ""  # nothing stands out


@dataclass(frozen=True)
class ReportView:
    lang: str
    title: str
    run_id: str
    experiment: str
    baseline_id: str
    generated_at: str  # formatted; the only thing that differs between two renders of one analysis
    version: str
    labels: dict[str, str]
    summary: Summary
    sections: tuple[Section, ...]
    meta: tuple[tuple[str, str], ...] = field(default=())  # key facts under the title
    verdict: VerdictBlock | None = None  # report/verdict.py makes it: the first block, above the headline figures

    @property
    def charts(self) -> tuple[Chart, ...]:
        return tuple(b for s in self.sections for b in s.blocks if isinstance(b, Chart))


def cell(value: float | None, formatter: Callable[[Any], str], reason: str | None = "", title: str = "") -> Cell:
    if value is None:
        return Cell(MISSING, reason=reason or "", tone="muted", title=title)
    return Cell(formatter(value), title=title)


def fig_cell(figure: t.Figure, formatter: Callable[[Any], str], L: Labels) -> Cell:
    return cell(figure.value, formatter, L.text(figure.reason), L.text(figure.method))


def text(value: Any) -> Cell:
    if value is None or value == "":
        return Cell(MISSING, tone="muted")
    if isinstance(value, float):
        return Cell(fmt.number(value, 4))
    return Cell(str(value))


def table(id: str, columns: Sequence[str], align: str, rows: Sequence[Sequence[Cell]], **kw: Any) -> Table:
    """``align`` is one letter per column: l, r, w (left, and a word is never broken: short
    labels such as a status, which a narrow column would otherwise split mid-word) or k (left,
    lines break between words only: names and labels beside a column of long paths, which
    would otherwise squeeze them to a few letters a line)."""
    return Table(
        id=id,
        columns=tuple(columns),
        align=tuple({"r": "right", "w": "left word", "k": "left keep"}.get(a, "left") for a in align),
        rows=tuple(tuple(r) for r in rows),
        **kw,
    )
