"""Checkpoints: the save tax, the saves, and the other checkpoint files read."""

from __future__ import annotations

import polars as pl

from ...analysis import types as t
from ...words import MISSING, Labels, numbers as fmt
from .. import charts
from ..blocks import Block, Cell, Chart, Paragraph, Section, cell, table, text


def section(a: t.Analysis, L: Labels) -> Section:
    saves = a.phases.checkpoint_saves
    tax = a.phases.checkpoint_tax
    tax_text = fmt.percent(tax.value) if tax.known else f"{MISSING} {L.text(tax.reason)}"
    blocks: list[Block] = [Paragraph(f"{L['checkpoint_tax']}{L['colon']}{tax_text} · {L.fmt('saves', n=fmt.integer(len(saves)))}")]
    if saves:
        df = pl.DataFrame(
            [{"step": s.step, "save_s": s.save_s, "size": fmt.bytes_(s.bytes) if s.bytes is not None else MISSING} for s in saves],
            schema={"step": pl.Int64, "save_s": pl.Float64, "size": pl.Utf8},
        )
        spec = charts.checkpoint_chart(df, L)
        if spec:
            blocks.append(Chart("chart-checkpoints", L["checkpoints"], spec))
        rows = [[cell(s.step, fmt.step), text(s.path), cell(s.bytes, fmt.bytes_), cell(s.save_s, fmt.duration), Cell(L.text(s.method), tone="muted")] for s in saves]
        blocks.append(table("checkpoints", [L["step"], L["file"], L["size"], L["save_time"], L["method"]], "rlrrl", rows, collapsed=len(rows) > 20))
    others = [f for f in a.phases.checkpoint_files if not f.save]
    if others:  # every file read is listed: these are the ones that are not saves (the tax leaves them out)
        rows = [[text(f.path), cell(f.rank, fmt.integer), cell(f.step, fmt.step), cell(f.bytes, fmt.bytes_),
                 cell(f.params, fmt.integer), Cell(f.kind or MISSING, tone="muted")] for f in others]
        blocks.append(Paragraph(L.fmt("other_checkpoints", n=fmt.integer(len(others)))))
        blocks.append(table("checkpoint-files", [L["file"], L["rank"], L["step"], L["size"], L["model_params"], L["kind"]],
                             "lrrrrl", rows, collapsed=len(rows) > 20))
    return Section("checkpoints", L["checkpoints"], tuple(blocks))
