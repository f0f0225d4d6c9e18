"""The layout section: what the auto-parallel strategy files say the job ran with (each file's
degrees, and the distinct splits of the model's parameters). Words in catalog/health.py."""

from __future__ import annotations

from ...analysis import types as t
from ...text import Text
from ...words import MISSING, Labels, numbers as fmt
from ..blocks import Block, Cell, Paragraph, Section, cell, table, text

FILES_SHOWN = 16


def _w(L: Labels, key: str, **params) -> str:
    return L.text(Text(f"layout.{key}", **params))


def _dims(values) -> str:
    return " × ".join(fmt.integer(v) for v in values) if values else MISSING


def section(a: t.Analysis, L: Labels) -> Section | None:
    v = a.strategy
    if v is None:
        return None
    first = v.files[0]
    blocks: list[Block] = [Paragraph(_w(L, "summary", path=first.path, stages=list(first.stages), devices=first.devices_per_stage,
                                        mp=first.model_parallel, dp=first.data_parallel, files=len(v.files)))]
    rows = [[text(f.path), cell(f.rank, fmt.integer), Cell(f.format, tone="muted"), text(", ".join(map(str, f.stages)) or MISSING),
             cell(f.devices_per_stage, fmt.integer), cell(f.model_parallel, fmt.integer), cell(f.data_parallel, fmt.integer),
             cell(f.expert_parallel, fmt.integer), cell(f.optimizer_shard, fmt.integer), cell(f.operators, fmt.integer),
             cell(f.parameters, fmt.integer)] for f in v.files]
    blocks.append(table("strategy-files", [L["file"], L["rank"], _w(L, "col-format"), _w(L, "col-stages"),
                                            _w(L, "col-devices"), "mp", "dp", "ep", _w(L, "col-shard"),
                                            _w(L, "col-operators"), _w(L, "col-params")],
                         "lrllrrrrrrr", rows, collapsed=len(rows) > FILES_SHOWN))
    if v.groups:
        rows = [[cell(g.stage, fmt.integer), text(_dims(g.dev_matrix)), text(_dims(g.split)),
                 cell(g.opt_shard or None, fmt.integer), cell(g.count, fmt.integer), text(", ".join(g.examples))]
                for g in v.groups]
        blocks.append(table("strategy-splits", [_w(L, "col-stage"), _w(L, "col-dev-matrix"), _w(L, "col-split"),
                                                 _w(L, "col-shard"), _w(L, "col-params"), _w(L, "col-examples")],
                             "rllrrl", rows, caption=_w(L, "rule-splits", path=first.path), collapsed=len(rows) > 24))
    return Section("layout", _w(L, "title"), tuple(blocks))
