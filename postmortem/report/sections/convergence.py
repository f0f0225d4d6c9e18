"""Convergence: the loss charts, the loss figures, time to target and the auxiliary losses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from ...analysis import types as t
from ...words import MISSING, Labels, numbers as fmt
from .. import charts
from ..blocks import Block, Cell, Chart, Paragraph, Section, fig_cell, table, text
from .common import step_list


def section(a: t.Analysis, L: Labels, base: t.Analysis | None, base_id: str) -> Section:
    blocks: list[Block] = []
    bsteps = base.steps if base else None
    for x in ("step", "tokens"):
        if x == "tokens" and a.steps.filter(pl.col("tokens").is_not_null()).is_empty():
            continue
        spec = charts.loss_chart(a.steps, bsteps, L, x=x, baseline_name=base_id)
        if spec:
            blocks.append(Chart(f"chart-loss-{x}", L[f"loss_by_{x}"], spec))
    for make, cid, title in (
        (lambda: charts.grad_norm_chart(a.steps, L), "chart-grad-norm", L["grad_norm"]),
        (lambda: charts.lr_chart(a.steps, bsteps, L, base_id), "chart-lr", L["learning_rate"]),
    ):
        spec = make()
        if spec:
            blocks.append(Chart(cid, title, spec))
    c = a.convergence
    bc = base.convergence if base else None
    figs: list[tuple[str, Callable[[t.Convergence], t.Figure], Callable[[Any], str]]] = [
        (L["initial_loss"], lambda x: x.initial_loss, fmt.loss),
        (L["fig_final_smoothed_loss"], lambda x: x.final_smoothed_loss, fmt.loss),
        (L["min_loss"], lambda x: x.min_smoothed_loss, fmt.loss),
        (L["fig_convergence_step"], lambda x: x.convergence_step, fmt.step),
        (L["convergence_tokens"], lambda x: x.convergence_tokens, fmt.tokens),
        (L["time_to_converge"], lambda x: x.convergence_hours, lambda v: fmt.duration(v * 3600)),
        (L["eval_loss"], lambda x: x.eval_loss_last, fmt.loss),
    ]
    rows = []
    for label, get, f in figs:
        row = [Cell(label), fig_cell(get(c), f, L)] + ([fig_cell(get(bc), f, L)] if bc else []) + [Cell(L.text(get(c).method), tone="muted")]
        rows.append(row)
    cols = [L["figure"], L["current"]] + ([L["baseline"]] if bc else []) + [L["method"]]
    blocks.append(table("convergence", cols, "lr" + ("r" if bc else "") + "l", rows, caption=L['smoothing'] + L['colon'] + L.text(c.smoothing)))
    if c.status == "not_converged":
        blocks.append(Paragraph(f"{L['not_converged']}{L['colon']}{L.text(c.convergence_step.reason)}", "warning"))
    left = [(L[f"left_out_{k}"], steps) for k, steps in sorted(c.left_out.items()) if steps]
    if left:
        blocks.append(Paragraph(f"{L['left_out']}{L['colon']}" + L["sentence_sep"].join(f"{k} {step_list(v, L)}" for k, v in left), "muted"))
    if c.targets:
        trows = [
            [Cell(fmt.loss(tt.target) if tt.target is not None else MISSING), Cell(L[f"target_{tt.target_source}"], tone="muted"),
             fig_cell(tt.step, fmt.step, L), fig_cell(tt.tokens, fmt.tokens, L), fig_cell(tt.hours, lambda v: fmt.duration(v * 3600), L)]
            for tt in c.targets
        ]
        blocks.append(table("time-to-target", [L["target"], L["source"], L["step"], L["tokens"], L["duration"]], "rlrrr", trows, caption=L["time_to_target"]))
    if c.aux_losses:
        arows = [[Cell(x.tag), text(x.first), text(x.last), text(x.min), text(x.final_smoothed), Cell(fmt.integer(x.nonfinite))] for x in c.aux_losses]
        cols = [L["loss"], L["aux_first"], L["aux_last"], L["aux_min"], L["aux_final"], L["nonfinite"]]
        blocks.append(table("aux-losses", cols, "lrrrrr", arows))
    return Section("convergence", L["convergence"], tuple(blocks))
