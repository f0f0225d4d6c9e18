"""The run's settings: what defines it, each value with the file it was read from."""

from __future__ import annotations

from typing import Any

from ...analysis import types as t
from ...text import Text
from ...words import MISSING, Labels, render, setting_value, source_text
from ..blocks import Block, Cell, Paragraph, Section, table


def setting_cell(v: Any, L: Labels) -> Cell:

    return Cell(MISSING, tone="muted") if v is None or v == "" else Cell(setting_value(v, L.lang))


def section(a: t.Analysis, L: Labels) -> Section:
    """The run's identity: the settings that define it, grouped, with the file each was read from;
    the run's own values (outcomes, paths, derived counts) apart and collapsed."""

    ident = a.identity
    blocks: list[Block] = []
    versions = [f"{render(Text('version.' + k), L.lang)}{L['colon']}{v if v else MISSING}" for k, v in ident.versions.items()]
    if versions:
        blocks.append(Paragraph(" · ".join(versions)))
        if not all(ident.versions.values()):
            blocks.append(Paragraph(L["versions_missing"] + L["colon"] + render(Text("version.not-found"), L.lang), "muted"))
    rows, run_rows, last = [], [], None
    for r in ident.settings:
        if str(r.group) in ("framework",) and r.key in ident.versions:
            continue  # said above
        row = [Cell(render(Text(f"group.{r.group}"), L.lang) if r.group != last else ""), Cell(r.key), setting_cell(r.value, L),
               Cell(source_text(r.source, L.lang), tone="muted")]
        (run_rows if r.group == t.SettingGroup.RUN else rows).append(row)
        last = r.group
    if rows:
        blocks.append(table("settings", [L["group"], L["setting"], L["value"], L["source"]], "kkll", rows, caption=L["settings_note"]))
    elif not versions:
        blocks.append(Paragraph(L["no_settings"], "muted"))
    if run_rows:
        for r in run_rows:
            r[0] = Cell("")
        blocks.append(table("run-values", [" ", L["setting"], L["value"], L["source"]], "kkll", run_rows, caption=L["run_values"],
                             collapsed=True))
    return Section("settings", L["settings"], tuple(blocks))
