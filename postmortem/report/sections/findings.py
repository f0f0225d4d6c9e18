"""The findings, most severe first."""

from __future__ import annotations

from ...analysis import types as t
from ...words import Labels
from ..blocks import ItemList, Paragraph, Section
from .common import SEVERITY_ORDER, finding_item


def section(a: t.Analysis, L: Labels) -> Section:
    if not a.findings:
        return Section("findings", L["findings"], (Paragraph(L["no_findings"], "good"),))
    findings = sorted(a.findings, key=lambda f: SEVERITY_ORDER.get(str(f.severity), 3))
    return Section("findings", L["findings"], (ItemList(tuple(finding_item(f, L) for f in findings)),))
