"""Appendix: every file of the run, the ones read and the ones no reader claimed."""

from __future__ import annotations

from collections.abc import Sequence

from ...model import InventoryEntry
from ...words import Labels, name, numbers as fmt
from ..blocks import Block, Cell, Paragraph, Section, cell, table


def _note(note: str, L: Labels) -> str:
    """Why a file was not read (a code; an archive from before codes keeps its words)."""

    return name("inventory.", note, L.lang) if note else ""


def section(inventory: Sequence[InventoryEntry], L: Labels) -> Section:
    claimed = [e for e in inventory if e.reader]
    unclaimed = [e for e in inventory if not e.reader]
    blocks: list[Block] = []
    if claimed:
        rows = [[Cell(e.rel), Cell(e.reader or ""), Cell(fmt.integer(e.rows)), Cell(fmt.bytes_(e.size)), cell(e.rank, str), Cell(_note(e.note, L), tone="muted")] for e in claimed]
        blocks.append(table("inventory", [L["file"], L["reader"], L["rows"], L["size"], L["rank"], L["note"]], "llrrrl", rows, collapsed=len(rows) > 30))
    elif not inventory:
        blocks.append(Paragraph(L["section_empty"], "muted"))
    if unclaimed:
        rows = [[Cell(e.rel), Cell(fmt.bytes_(e.size)), cell(e.rank, str), Cell(_note(e.note, L), tone="muted")] for e in unclaimed]
        blocks.append(table("unclaimed", [L["file"], L["size"], L["rank"], L["note"]], "lrrl", rows, caption=L["unclaimed"]))
    elif inventory:
        blocks.append(Paragraph(L["no_unclaimed"], "muted"))
    return Section("appendix", L["appendix"], tuple(blocks))
