"""Data quality: every diagnostic of reading and loading, the same note on many files as one row."""

from __future__ import annotations

from ...analysis import types as t
from ...text import Text
from ...words import Labels, numbers as fmt
from ..blocks import Cell, Paragraph, Section, cell, table, text
from .common import SEVERITY_ORDER


def section(a: t.Analysis, L: Labels) -> Section:
    if not a.diagnostics:
        return Section("data-quality", L["data_quality"], (Paragraph(L["no_diagnostics"], "good"),))
    diags = sorted(a.diagnostics, key=lambda d: (SEVERITY_ORDER.get(str(d.severity), 3), d.path or "", d.offset or 0, d.slug))
    # The same note on every rank's file (a zone-less clock, one epoch) is one row with its files
    # counted: 1,024 ranks would otherwise make a hundred pages of the same sentence.
    same: dict[tuple, list] = {}
    for d in diags:
        sentence = L.sentence(d.text)
        key = (str(d.severity), d.slug, sentence) if d.offset is None and d.path else (id(d),)
        same.setdefault(key, []).append((d, sentence))
    rows = []
    for group in same.values():
        d, sentence = group[0]
        where = (text(d.path) if len(group) == 1 else
                 Cell(L.text(Text("data-quality.files", first=d.path, n=len(group) - 1)), title=d.path))
        rows.append([
            Cell(L.get(str(d.severity), str(d.severity)), tone=str(d.severity)),  # type: ignore[arg-type]
            Cell(d.slug),
            Cell(sentence),
            where,
            cell(d.offset, fmt.integer),
        ])
    cols = [L["severity"], L["code"], L["message"], L["file"], L["location"]]
    return Section("data-quality", L["data_quality"], (table("diagnostics", cols, "wwllw", rows, collapsed=len(rows) > 30),))
