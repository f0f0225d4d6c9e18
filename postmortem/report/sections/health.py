"""The health section: MindFormers' own judgement of the run (health_ckpts.json and the save to
resume from, the embedding's local norm against its threshold, MoE expert load and token drops,
aux loss), and the layout the strategy files hold. Layout only; words in catalog/health.py."""

from __future__ import annotations

import polars as pl

from ...analysis import types as t
from ...text import Text
from ...words import MISSING, Labels, numbers as fmt
from ..blocks import Block, Cell, Chart, Paragraph, Section, cell, table, text
from .. import charts
from ..charts import downsample


def _w(L: Labels, key: str, **params) -> str:
    return L.text(Text(f"health.{key}", **params))


# --------------------------------------------------------------------------- charts


def _embedding_chart(h, L: Labels) -> dict | None:
    df = h.series.get("embedding_norm")
    if df is None or df.is_empty():
        return None
    e = h.embedding
    line = downsample(df.filter(pl.col("value").is_finite()), "step", "value")
    return charts.line_chart(line, "value", _w(L, "embedding-norm"), L, rule=e.threshold,
                 rule_label=_w(L, "threshold", value=e.threshold))


def _expert_chart(h, L: Labels) -> dict | None:
    df = h.series.get("expert_load")
    if df is None or df.is_empty():
        return None
    per = (df.group_by("layer", "step").agg((pl.col("value").max() / pl.col("value").mean()).alias("ratio"))
           .filter(pl.col("ratio").is_finite()).sort("layer", "step")
           .with_columns(pl.format(_w(L, "layer-name", layer="{}"), pl.col("layer")).alias("layer_name")))
    return charts.line_chart(per.select("step", "ratio", "layer_name"), "ratio", _w(L, "expert-imbalance"), L, color="layer_name",
                 rule=1.0, rule_label=_w(L, "balanced"), y_title=_w(L, "col-imbalance"))


def _drop_chart(h, L: Labels) -> dict | None:
    df = h.series.get("drop_rate")
    if df is None or df.is_empty():
        return None
    df = df.with_columns(pl.format(_w(L, "layer-name", layer="{}"), pl.col("layer")).alias("layer_name"))
    return charts.line_chart(df.select("step", "value", "layer_name"), "value", _w(L, "drop-rate"), L, color="layer_name")


def _aux_chart(h, L: Labels) -> dict | None:
    df = h.series.get("aux_loss")
    if df is None or df.is_empty():
        return None
    return charts.line_chart(downsample(df, "step", "value"), "value", _w(L, "aux-loss"), L)


# --------------------------------------------------------------------------- blocks


def _saves(h, L: Labels) -> list[Block]:
    if not h.saves:
        return []
    blocks: list[Block] = []
    r = h.resume
    if r is not None:
        blocks.append(Paragraph(_w(L, "resume", name=r.ckpt_name, step=r.step, record=h.record)
                                + ("" if r.on_disk else _w(L, "not-on-disk")), "warning" if h.unhealthy else "good"))
    else:
        blocks.append(Paragraph(_w(L, "resume-none", record=h.record), "bad"))
    rows = [[cell(s.position + 1, fmt.integer), text(s.ckpt_name or MISSING), cell(s.step, fmt.step),
             Cell(_w(L, "healthy") if s.healthy else _w(L, "unhealthy", value=s.is_health), tone="good" if s.healthy else "bad"),
             Cell(_w(L, "on-disk") if s.on_disk else MISSING, tone="muted")]
            for s in h.saves]
    blocks.append(table("health-saves", [_w(L, "col-save"), L["file"], L["step"], _w(L, "col-health"), _w(L, "col-disk")],
                         "rlrll", rows, caption=_w(L, "rule-saves"), collapsed=len(rows) > 20))
    return blocks


def _embedding(h, L: Labels) -> list[Block]:
    e = h.embedding
    if e is None:
        return []
    blocks: list[Block] = []
    spec = _embedding_chart(h, L)
    if spec:
        blocks.append(Chart("chart-embedding-norm", _w(L, "embedding-norm"), spec))
    key = "embedding-over" if e.first_over is not None else "embedding-under"
    blocks.append(Paragraph(_w(L, key, tag=e.tag, threshold=e.threshold, first=e.first_over, over=e.over, steps=e.steps,
                               peak=e.peak, peak_step=e.peak_step)
                            + ("" if e.judged else _w(L, "unjudged")) + _w(L, "rule-embedding"),
                            "warning" if e.first_over is not None else ""))
    return blocks


def _moe(h, L: Labels) -> list[Block]:
    blocks: list[Block] = []
    if h.expert_load:
        spec = _expert_chart(h, L)
        if spec:
            blocks.append(Chart("chart-expert-load", _w(L, "expert-imbalance"), spec))
        rows = [[cell(x.layer, fmt.integer), cell(x.experts, fmt.integer), cell(x.step, fmt.step), cell(x.busiest, fmt.integer),
                 cell(x.busiest_share, fmt.percent), cell(x.max_over_mean, lambda v: f"{fmt.number(v)}×")]
                for x in h.expert_load]
        blocks.append(table("expert-load", [_w(L, "col-layer"), _w(L, "col-experts"), L["step"], _w(L, "col-busiest"),
                                             _w(L, "col-share"), _w(L, "col-imbalance")], "rrrrrr", rows,
                             caption=_w(L, "rule-expert-load"), collapsed=len(rows) > 16))
    if h.drops:
        spec = _drop_chart(h, L)
        if spec:
            blocks.append(Chart("chart-drop-rate", _w(L, "drop-rate"), spec))
        blocks.append(Paragraph(_w(L, "rule-drops")))
    spec = _aux_chart(h, L)
    if spec:
        blocks.append(Chart("chart-aux-loss", _w(L, "aux-loss"), spec))
    return blocks


def section(a: t.Analysis, L: Labels) -> Section | None:
    """None where the run left no health record, no health tag and no MoE figure."""
    h = a.health
    if h is None:
        return None
    blocks = [*_saves(h, L), *_embedding(h, L), *_moe(h, L)]
    return Section("health", _w(L, "title"), tuple(blocks)) if blocks else None
