"""MFU: the derivation, every quantity with its method and source."""

from __future__ import annotations

from ...analysis import types as t
from ...words import Labels, numbers as fmt
from ..blocks import Block, Cell, Paragraph, Section, fig_cell, table
from .common import flag_cell


def section(a: t.Analysis, L: Labels) -> Section:
    m = a.mfu
    rows = [
        (L["mfu"], m.mfu, fmt.percent),
        (L["mfu_causal"], m.mfu_causal, fmt.percent),
        (L["mfu_params"], m.model.params, fmt.si_count),
        (L["params_total"], m.model.params_total, fmt.si_count),
        (L["params_non_embedding"], m.model.params_non_embedding, fmt.si_count),
        (L["embedding_params"], m.model.embedding_params, fmt.si_count),
        (L["position_embedding_params"], m.model.position_embedding_params, fmt.si_count),
        (L["flops_per_token"], m.flops_per_token, lambda v: fmt.si(v, "FLOP")),
        (L["flops_per_token_causal"], m.flops_per_token_causal, lambda v: fmt.si(v, "FLOP")),
        (L["peak_per_device"], m.peak_flops, fmt.flops),
        (L["devices"], m.devices, fmt.integer),
        (L["achieved_per_device"], m.achieved_tflops_per_device, lambda v: fmt.flops(v * 1e12)),
    ]
    rows += [(L.fmt("logged", tag=k), f, lambda v: fmt.number(v, 4)) for k, f in sorted(m.logged.items())]
    rows += [(k, f, lambda v: fmt.integer(v) if float(v).is_integer() else fmt.number(v, 4)) for k, f in sorted(m.architecture.items())]
    table_rows = [
        [Cell(label), flag_cell(a, "mfu", fig_cell(f, ff, L), L) if f is m.mfu else fig_cell(f, ff, L), Cell(L.text(f.method), tone="muted"),
         Cell(L.text(f.source or f.reason), tone="muted")]
        for label, f, ff in rows
    ]
    blocks: list[Block] = [
        Paragraph(L["mfu_formula"]),
        table("mfu", [L["quantity"], L["value"], L["method"], L["source"]], "lrll", table_rows),
    ]
    if m.model.checkpoint:
        blocks.append(Paragraph(L.fmt("params_from", path=m.model.checkpoint), "muted"))
    return Section("mfu", L["mfu_derivation"], tuple(blocks))
