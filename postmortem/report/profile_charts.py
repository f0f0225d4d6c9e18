"""The profiler section's charts (report/sections/profile.py): the step breakdown, the profiled
steps, the share bars of operators and communication, the ranks' parts and a distribution; Vega-Lite
specs made like every other chart (``charts.py``: its configuration, colours and helpers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import polars as pl

from ..words import Labels
from .charts import BASELINE, CURRENT, SPIKE, WIDTH, chart_data, finish

# The step's partition (analysis.types.PARTITION) in stack order, and the hidden communication
# drawn inside the compute bar (it is part of compute's time span, never added to the step).
PARTITION_COLORS = {
    "data_wait": "#e6550d",
    "compute": "#1f5fa8",
    "comm_exposed": "#d62728",
    "bubble": "#9467bd",
    "idle": "#c7c7c7",
    "preparing": "#ffbb78",
}
OVERLAPPED_COLOR = "#9ecae1"
LABELLED_WIDTH = WIDTH - 240  # charts with long names on the y axis
# ... and room on their left: on paper the names are drawn wider than vega measured them
LABELLED_PADDING = {"left": 40, "right": 5, "top": 5, "bottom": 5}
# Legend entries with room: on paper the labels are drawn in a wider font than vega measured.
_LEGEND = alt.Legend(columns=4, columnPadding=28, labelLimit=240)


def breakdown_chart(bars: Sequence[tuple[str, Mapping[str, float | None]]], names: Mapping[str, str],
                    title: str, labels: Labels) -> dict | None:
    """One stacked bar per breakdown (ours, a tool's own, the baseline's): the parts add up to
    100 %; communication hidden under compute is a thin bar inside the compute segment."""
    rows = [{"bar": bar, "part": names.get(p, p), "k": i, "share": shares.get(p)}
            for bar, shares in bars for i, p in enumerate(PARTITION_COLORS) if shares.get(p)]
    if not rows:
        return None
    df = pl.DataFrame(rows)
    domain = [names.get(p, p) for p in PARTITION_COLORS if names.get(p, p) in set(df["part"].to_list())]
    colors = [c for p, c in PARTITION_COLORS.items() if names.get(p, p) in domain]
    order = [b for b, _ in bars]
    stack = (
        alt.Chart(chart_data(df)).mark_bar(height=18)
        .encode(
            y=alt.Y("bar:N", title=None, sort=order, axis=alt.Axis(labelLimit=230)),
            x=alt.X("share:Q", title=None, axis=alt.Axis(format="%", tickCount=6), stack="zero", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("part:N", title=None, scale=alt.Scale(domain=domain, range=colors), legend=_LEGEND),
            order=alt.Order("k:Q"),
            tooltip=[alt.Tooltip("bar:N", title=" "), alt.Tooltip("part:N", title=labels["part"]),
                     alt.Tooltip("share:Q", title=labels["share"], format=".1%")],
        )
    )
    hidden_name = names.get("comm_overlapped", "comm_overlapped")
    hidden = [{"bar": bar, "part": hidden_name, "share": shares["comm_overlapped"]} for bar, shares in bars
              if shares.get("comm_overlapped")]
    layers = [stack]
    if hidden:
        layers.append(
            alt.Chart(chart_data(pl.DataFrame(hidden))).mark_bar(height=5, color=OVERLAPPED_COLOR, stroke="#08519c", strokeWidth=0.5)
            .encode(y=alt.Y("bar:N", sort=order), x="share:Q",
                    opacity=alt.Opacity("part:N", title=None, legend=alt.Legend(labelLimit=400)),
                    tooltip=[alt.Tooltip("bar:N", title=" "), alt.Tooltip("part:N", title=labels["part"]),
                             alt.Tooltip("share:Q", title=labels["share"], format=".1%")])
        )
    spec = finish(alt.layer(*layers), title, height=30 * len(bars))
    spec.update(width=LABELLED_WIDTH, padding=LABELLED_PADDING)  # the bar names take the rest
    return spec


def profile_steps_chart(steps: pl.DataFrame, names: Mapping[str, str], title: str, labels: Labels) -> dict | None:
    """Per profiled step, the parts in seconds (stacked, data wait at the bottom: the iteration
    gap graph). ``steps``: run, step, part, seconds; one facet row per run (current, baseline)."""
    df = steps.filter(pl.col("seconds").is_not_null() & (pl.col("seconds") > 0))
    if df.is_empty():
        return None
    parts = list(PARTITION_COLORS)
    runs = df["run"].unique(maintain_order=True).to_list()
    df = df.sort("step", maintain_order=True, nulls_last=True).with_columns(
        pl.col("part").replace_strict({p: i for i, p in enumerate(parts)}, default=99).alias("k"),
        pl.col("part").replace_strict({p: names.get(p, p) for p in parts}, default=None).alias("name"),
        pl.col("step").cast(pl.Utf8).fill_null(labels["whole_capture"]).alias("label"))
    domain = [names.get(p, p) for p in parts if p in set(df["part"].to_list())]
    colors = [PARTITION_COLORS[p] for p in parts if p in set(df["part"].to_list())]
    y_title = f"{labels['step_time']} (s)"
    n = max(df.group_by("run").agg(pl.col("step").n_unique())["step"].max() or 1, 1)
    base = alt.Chart(chart_data(df.drop("part"))).mark_bar(size=max(2.0, min(40.0, 0.7 * WIDTH / n))).encode(
        x=alt.X("label:O", title=labels["profiled_step"], sort=None, axis=alt.Axis(labelOverlap="greedy", labelAngle=0)),
        y=alt.Y("seconds:Q", title=y_title, stack="zero"),
        color=alt.Color("name:N", title=None, scale=alt.Scale(domain=domain, range=colors), legend=_LEGEND),
        order=alt.Order("k:Q"),
        tooltip=[alt.Tooltip("run:N", title=" "), alt.Tooltip("label:O", title=labels["profiled_step"]),
                 alt.Tooltip("name:N", title=labels["part"]), alt.Tooltip("seconds:Q", title=y_title, format=".4~s")],
    )
    if len(runs) > 1:
        spec = finish(base.properties(height=140, width=WIDTH).facet(row=alt.Row("run:N", title=None, sort=runs)), title)
        spec.pop("width", None), spec.pop("height", None)
        return spec
    return finish(base, title, height=160)


def share_bars_chart(rows: Sequence[Mapping[str, Any]], title: str, x_title: str, labels: Labels) -> dict | None:
    """Horizontal bars of a share per label, one colour per run (current, baseline), grouped.
    ``rows``: label, run, share (and optional flag: communication operators in red)."""
    df = pl.DataFrame(list(rows), schema={"label": pl.Utf8, "run": pl.Utf8, "share": pl.Float64, "flag": pl.Boolean})
    df = df.filter(pl.col("share").is_not_null())
    if df.is_empty():
        return None
    runs = df["run"].unique(maintain_order=True).to_list()
    order = df.filter(pl.col("run") == runs[0]).sort("share", descending=True)["label"].to_list()
    order += [x for x in df["label"].unique(maintain_order=True).to_list() if x not in order]
    chart = alt.Chart(chart_data(df)).mark_bar().encode(
        y=alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=230)),
        x=alt.X("share:Q", title=x_title, axis=alt.Axis(format="%", tickCount=6)),
        yOffset=alt.YOffset("run:N", sort=runs),
        color=alt.Color("run:N", title=None, sort=runs, scale=alt.Scale(domain=runs, range=[CURRENT, BASELINE][: len(runs)]),
                        legend=alt.Legend() if len(runs) > 1 else None),
        stroke=alt.condition("datum.flag", alt.value(SPIKE), alt.value(None)),
        strokeWidth=alt.condition("datum.flag", alt.value(1.5), alt.value(0)),
        tooltip=[alt.Tooltip("run:N", title=" "), alt.Tooltip("label:N", title=" "),
                 alt.Tooltip("share:Q", title=x_title, format=".1%")],
    )
    spec = finish(chart, title, height=max(60, 16 * len(order) * len(runs)))
    spec.update(width=LABELLED_WIDTH, padding=LABELLED_PADDING)
    return spec


def rank_parts_chart(rows: pl.DataFrame, names: Mapping[str, str], title: str, labels: Labels) -> dict | None:
    """One stacked bar per rank of the parts' shares of its step; ``rows``: label, part, share
    (label names the rank and its role, in the order to draw)."""
    df = rows.filter(pl.col("share").is_not_null() & (pl.col("share") > 0))
    if df.is_empty():
        return None
    parts = list(PARTITION_COLORS)
    df = df.with_columns(pl.col("part").replace_strict({p: i for i, p in enumerate(parts)}, default=99).alias("k"),
                         pl.col("part").replace_strict({p: names.get(p, p) for p in parts}, default=None).alias("name"))
    present = set(df["part"].to_list())
    domain = [names.get(p, p) for p in parts if p in present]
    colors = [PARTITION_COLORS[p] for p in parts if p in present]
    order = rows["label"].unique(maintain_order=True).to_list()
    chart = alt.Chart(chart_data(df.drop("part"))).mark_bar(height=12).encode(
        y=alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=200)),
        x=alt.X("share:Q", title=None, axis=alt.Axis(format="%", tickCount=6), stack="zero", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("name:N", title=None, scale=alt.Scale(domain=domain, range=colors), legend=_LEGEND),
        order=alt.Order("k:Q"),
        tooltip=[alt.Tooltip("label:N", title=labels["rank"]), alt.Tooltip("name:N", title=labels["part"]),
                 alt.Tooltip("share:Q", title=labels["share"], format=".1%")],
    )
    spec = finish(chart, title, height=max(60, 16 * len(order)))
    spec.update(width=LABELLED_WIDTH, padding=LABELLED_PADDING)
    return spec


def distribution_chart(values: Sequence[float], title: str, x_title: str, labels: Labels) -> dict | None:
    """How a per-rank share is spread over hundreds of ranks."""
    if not values:
        return None
    df = pl.DataFrame({"v": list(values)})
    chart = alt.Chart(chart_data(df)).mark_bar(color=CURRENT).encode(
        x=alt.X("v:Q", bin=alt.Bin(maxbins=40), title=x_title, axis=alt.Axis(format="%")),
        y=alt.Y("count():Q", title=labels["rank_count"]),
        tooltip=[alt.Tooltip("count():Q", title=labels["rank_count"])],
    )
    return finish(chart, title, height=120)
