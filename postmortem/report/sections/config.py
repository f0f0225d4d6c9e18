"""The configuration checks: each rule, its status, what it found and the fix."""

from __future__ import annotations

from ...analysis import types as t
from ...words import Labels, numbers as fmt
from ..blocks import Cell, Paragraph, Section, Tone, table
from ..messages import check_name

_CHECK_TONE: dict[str, Tone] = {"pass": "good", "warn": "warning", "fail": "bad", "unknown": "muted"}


def _evidence(value) -> str:
    """Config evidence as people write it: 8, not 8.0; 0.0312, not 0.031234567."""
    if isinstance(value, float) and value.is_integer():
        return fmt.integer(value)
    if isinstance(value, float):
        return fmt.number(value)
    return str(value)


_CHECK_LABEL = {"pass": "ok", "warn": "warn", "fail": "fail", "unknown": "unknown"}


def section(a: t.Analysis, L: Labels) -> Section:
    if not a.config_checks:
        return Section("config", L["config_checks"], (Paragraph(L["section_empty"], "muted"),))
    rows = [
        [Cell(check_name(c.name, L.lang)), Cell(L[_CHECK_LABEL.get(str(c.status), "unknown")], tone=_CHECK_TONE.get(str(c.status), "")), Cell(L.text(c.detail) + (f" — {L['check_fix']}{L['colon']}{L.text(c.fix)}" if c.fix is not None else "")),
         Cell(", ".join(f"{k}={_evidence(v)}" for k, v in sorted(c.evidence.items()) if v is not None), tone="muted")]
        for c in a.config_checks
    ]
    return Section("config", L["config_checks"], (table("config-checks", [L["check"], L["status"], L["detail"], L["value"]], "lwll", rows),))
