"""Altair charts from polars frames, returned as Vega-Lite spec dicts.

The same spec renders interactively in HTML (tooltips, x-zoom bound to the scales) and as static
SVG for the PDF (``svg.to_svg``). Series are downsampled for DISPLAY only (min/max per bucket, about
``MAX_POINTS`` per series); spike, NaN and exclusion markers are always drawn from the full data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import polars as pl
from altair.utils.schemapi import debug_mode

from ..words import Labels

MAX_POINTS = 2000  # per displayed series
MAX_MARKERS = 5000  # exclusion markers; spikes and NaN steps are never thinned
WIDTH = 820
HEIGHT = 220
FONT = 'system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif'

# Fixed colours so a reason or series means the same colour in every chart and report.
REASON_COLORS = {
    "compile": "#7b3294",
    "warmup": "#c2a5cf",
    "checkpoint": "#e66101",
    "eval": "#fdb863",
    "data_stall": "#b2182b",
    "resume": "#2166ac",
    "nan": "#000000",
    "overflow": "#d6604d",
    "outlier": "#878787",
    "missing": "#bababa",
}
CURRENT = "#1f5fa8"
BASELINE = "#8c8c8c"
SPIKE = "#d62728"
WINDOW = "#2ca02c"
PHASE_COLORS = {"startup": "#e4dcf0", "warmup": "#fdeccf", "main": "#f4f4f4", "decay": "#d8e8f6"}


# --------------------------------------------------------------------------- data helpers


def downsample(df: pl.DataFrame, x: str, y: str, max_points: int = MAX_POINTS) -> pl.DataFrame:
    """Keep the first, min and max row of each bucket of consecutive rows (display only).

    Extremes survive, so a spike never disappears from a line; rows stay in x order.
    """
    df = df.filter(pl.col(y).is_not_null() & pl.col(y).is_finite())
    if df.height <= max_points:
        return df
    buckets = max(max_points // 3, 1)
    indexed = df.with_row_index("_i").with_columns((pl.col("_i") * buckets // df.height).alias("_b"))
    keep = pl.concat(
        [
            indexed.group_by("_b").agg(pl.col("_i").first()),
            indexed.group_by("_b").agg(pl.col("_i").get(pl.col(y).arg_min())),
            indexed.group_by("_b").agg(pl.col("_i").get(pl.col(y).arg_max())),
        ]
    )["_i"].unique()
    return indexed.filter(pl.col("_i").is_in(keep.implode())).drop("_i", "_b")


def thin(df: pl.DataFrame, max_rows: int) -> pl.DataFrame:
    """Evenly spaced rows, for marker layers that could otherwise be huge."""
    if df.height <= max_rows:
        return df
    every = math.ceil(df.height / max_rows)
    return df.gather_every(every)


def values(df: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows for an inline Vega dataset: 5 significant digits, non-finite floats as null (valid JSON)."""
    exprs = []
    for name, dtype in df.schema.items():
        if dtype.is_float():
            col = pl.col(name)
            exprs.append(pl.when(col.is_finite()).then(col.round_sig_figs(5)).otherwise(None).alias(name))
        else:
            exprs.append(pl.col(name))
    return df.select(exprs).to_dicts()


class _Rows:
    """Inline rows altair carries without looking inside: it copies and converts every row of a
    plain list at each layer and to_dict (most of a long run's chart time); finish puts the list
    back, so the spec is the same."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __repr__(self) -> str:  # altair names a layer by a hash of its data's repr
        return repr(self.rows)


def chart_data(df: pl.DataFrame) -> alt.Data:
    # altair validates a Data against the schema when it is made, walking every inline row (about
    # a second for a long run); these rows are ours, plain numbers and strings (see finish).
    with debug_mode(False):
        return alt.Data(values=_Rows(values(df)))


def _unwrap(node: Any) -> Any:
    """The spec with every _Rows replaced by its list (rows themselves are not walked)."""
    if isinstance(node, _Rows):
        return node.rows
    if isinstance(node, dict):
        return {key: _unwrap(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_unwrap(value) for value in node]
    return node


def _zoom(name: str) -> alt.Parameter:
    return alt.selection_interval(bind="scales", encodings=["x"], name=name)


# The same configuration for every chart. finish sets it, with the title and size, on the spec
# dict: each altair .properties() / .configure_*() call copies the whole chart, inline rows too.
CONFIG = {
    "font": FONT,
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "grid": True, "gridColor": "#eeeeee"},
    "legend": {"orient": "bottom", "labelFontSize": 11, "titleFontSize": 11, "symbolLimit": 20},
    "title": {"fontSize": 13, "anchor": "start"},
    "view": {"stroke": None},
}


def finish(chart: alt.TopLevelMixin, title: str, height: int = HEIGHT) -> dict:
    # Schema validation walks every inline data point (seconds for a long run); the specs are
    # fixed by this module and the browser test draws every chart, which catches a bad one.
    spec = _unwrap(chart.to_dict(validate=False))
    spec.pop("$schema", None)  # keeps every URL out of the report; vega-embed is told the mode
    spec.update(title=title, width=WIDTH, height=height)
    config = spec.setdefault("config", {})  # altair's theme: view.continuousWidth/Height
    for key, value in CONFIG.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return spec


def _x(field: str, title: str) -> alt.X:
    # steps are whole: a short run would otherwise get ticks at 0.5, 1.5, ... printed as "0 1 1 2"
    axis = alt.Axis(format="~s") if field == "tokens" else alt.Axis(format=",d", tickMinStep=1)
    return alt.X(f"{field}:Q", title=title, axis=axis)


# --------------------------------------------------------------------------- charts


def step_time_chart(
    steps: pl.DataFrame,
    window: tuple[int, int] | None,
    labels: Labels,
    phases: Sequence[tuple[str, int, int]] = (),
) -> dict | None:
    """Step time over steps: steady window shaded, phases as bands, excluded steps by reason.

    The y axis stops at 1.5x the steady p99 so a 60 s compile step does not flatten the line;
    markers above it sit on the top edge and their tooltip gives the real time.
    """
    df = steps.select("step", "step_time_s", "excluded").filter(
        pl.col("step_time_s").is_not_null() & pl.col("step_time_s").is_finite()
    )
    if df.is_empty():
        return None
    steady = df.filter(pl.col("excluded").is_null())["step_time_s"]
    ref = steady if steady.len() else df["step_time_s"]
    top = float(ref.quantile(0.99) or 0) * 1.5 or float(df["step_time_s"].max() or 1)
    y_title = f"{labels['step_time']} (s)"
    y_scale = alt.Scale(domain=[0, top], nice=False)
    layers: list[alt.Chart] = []

    if phases:
        # Phases and reasons are codes in the data; legends and tooltips show their names.
        bands = pl.DataFrame(
            {"phase": [labels.name("phase_", p[0]) for p in phases], "start": [p[1] for p in phases], "end": [p[2] for p in phases]}
        )
        names = [labels.name("phase_", p) for p in PHASE_COLORS]
        layers.append(
            alt.Chart(chart_data(bands))
            .mark_rect(opacity=0.5)
            .encode(
                x="start:Q",
                x2="end:Q",
                color=alt.Color("phase:N", title=labels["phase"], scale=alt.Scale(domain=names, range=list(PHASE_COLORS.values()))),
                tooltip=[alt.Tooltip("phase:N", title=labels["phase"]), alt.Tooltip("start:Q", title=labels["first_step"], format=",d"),
                         alt.Tooltip("end:Q", title=labels["last_step"], format=",d")],
            )
        )
    if window is not None:
        w = pl.DataFrame({"start": [window[0]], "end": [window[1]], "label": [labels["steady_window"]]})
        layers.append(
            alt.Chart(chart_data(w))
            .mark_rect(opacity=0.08, color=WINDOW, stroke=WINDOW, strokeOpacity=0.8, strokeDash=[4, 3])
            .encode(x="start:Q", x2="end:Q", tooltip=[alt.Tooltip("label:N", title=" ")])
        )
    line = downsample(df.select("step", "step_time_s"), "step", "step_time_s")
    layers.append(
        alt.Chart(chart_data(line))
        .mark_line(color=CURRENT, strokeWidth=1, clip=True)
        .encode(
            x=_x("step", labels["step"]),
            y=alt.Y("step_time_s:Q", title=y_title, scale=y_scale),
            tooltip=[alt.Tooltip("step:Q", title=labels["step"], format=",d"),
                     alt.Tooltip("step_time_s:Q", title=y_title, format=".4~s")],
        )
        .add_params(_zoom("zoom_step_time"))
    )
    excluded = thin(df.filter(pl.col("excluded").is_not_null()), MAX_MARKERS).with_columns(
        pl.min_horizontal(pl.col("step_time_s"), pl.lit(top)).alias("y")
    )
    if not excluded.is_empty():
        present = set(excluded["excluded"].to_list())
        reasons = [r for r in REASON_COLORS if r in present] + sorted(present - set(REASON_COLORS))
        names = {r: labels.name("reason_", r) for r in reasons}
        excluded = excluded.with_columns(pl.col("excluded").replace_strict(names, return_dtype=pl.Utf8).alias("reason"))
        layers.append(
            alt.Chart(chart_data(excluded))
            .mark_point(size=28, filled=True, opacity=0.85, clip=True)
            .encode(
                x="step:Q",
                y=alt.Y("y:Q", scale=y_scale),
                color=alt.Color(
                    "reason:N",
                    title=labels["excluded_reason"],
                    scale=alt.Scale(domain=list(names.values()), range=[REASON_COLORS.get(r, "#444444") for r in reasons]),
                ),
                tooltip=[alt.Tooltip("step:Q", title=labels["step"], format=",d"),
                         alt.Tooltip("step_time_s:Q", title=y_title, format=".4~s"),
                         alt.Tooltip("reason:N", title=labels["excluded_reason"])],
            )
        )
    chart = alt.layer(*layers).resolve_scale(color="independent")
    return finish(chart, labels["step_time"])


SMOOTH_POINTS = 1000  # smooth curves (smoothed loss, lr) lose nothing visible at this density


def _series_long(steps: pl.DataFrame, x: str, cols: Mapping[str, tuple[int, int]]) -> pl.DataFrame:
    """Long frame (x, v, k) from columns -> (series index, point cap), each downsampled on its own.

    Series names are not repeated per row (that doubled the file); ``_named`` looks them up by ``k``.
    """
    parts = []
    for col, (k, cap) in cols.items():
        if col not in steps.columns:
            continue
        part = downsample(steps.select(pl.col(x).cast(pl.Float64), pl.col(col).alias("v")), x, "v", cap)
        parts.append(part.with_columns(pl.lit(k, dtype=pl.Int64).alias("k")))
    parts = [p for p in parts if not p.is_empty()]
    if not parts:
        return pl.DataFrame(schema={x: pl.Float64, "v": pl.Float64, "k": pl.Int64})
    return pl.concat(parts)


def _named(chart: alt.Chart, names: Sequence[str]) -> alt.Chart:
    """Add the ``series`` field from a tiny lookup table keyed by ``k``."""
    lookup = alt.Data(values=[{"k": i, "series": n} for i, n in enumerate(names)])
    return chart.transform_lookup(lookup="k", from_=alt.LookupData(data=lookup, key="k", fields=["series"]))


def loss_chart(
    steps: pl.DataFrame,
    baseline: pl.DataFrame | None,
    labels: Labels,
    x: str = "step",
    baseline_name: str = "",
) -> dict | None:
    """Raw loss (faint) and smoothed, the baseline's smoothed loss, spikes and NaN steps."""
    cur = steps.filter(pl.col(x).is_not_null())
    if cur.filter(pl.col("loss").is_not_null()).is_empty():
        return None
    raw_name = labels.fmt("series_raw", loss=labels["loss"], run=labels["current"])
    smooth_name = labels.fmt("series_smoothed", loss=labels["loss"], run=labels["current"])
    base_name = f"{labels['baseline']} {baseline_name}".strip()
    # by tokens only the smoothed curves: it is there to compare with the baseline, and halves the size
    own = {"loss": (0, MAX_POINTS), "loss_smoothed": (1, SMOOTH_POINTS)} if x == "step" else {"loss_smoothed": (1, SMOOTH_POINTS)}
    long = _series_long(cur, x, own)
    if baseline is not None and x in baseline.columns:
        b = baseline.filter(pl.col(x).is_not_null())
        if not b.is_empty():
            long = pl.concat([long, _series_long(b, x, {"loss_smoothed": (2, SMOOTH_POINTS)})])
    domain = [raw_name, smooth_name] + ([base_name] if long.filter(pl.col("k") == 2).height else [])
    x_enc = _x(x, labels["tokens"] if x == "tokens" else labels["step"])
    lines = _named(alt.Chart(chart_data(long)), domain)
    lines = (
        lines
        .mark_line(clip=True)
        .encode(
            x=x_enc,
            y=alt.Y("v:Q", title=labels["loss"], scale=alt.Scale(zero=False)),
            color=alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom"), scale=alt.Scale(domain=domain, range=[CURRENT, CURRENT, BASELINE][: len(domain)])),
            opacity=alt.Opacity("series:N", legend=None,  # (ordinal: a nominal opacity is a point scale, spread over its range)
                                scale=alt.Scale(type="ordinal", domain=domain, range=[0.25, 1.0, 0.9][: len(domain)])),
            strokeDash=alt.StrokeDash(
                "series:N", legend=None, scale=alt.Scale(domain=domain, range=[[1, 0], [1, 0], [5, 3]][: len(domain)])
            ),
            tooltip=[alt.Tooltip(f"{x}:Q", title=labels["tokens"] if x == "tokens" else labels["step"], format=",d" if x == "step" else ".4~s"),
                     alt.Tooltip("v:Q", title=labels["loss"], format=".5~g"), alt.Tooltip("series:N", title=" ")],
        )
        .add_params(_zoom(f"zoom_loss_{x}"))
    )
    layers: list[alt.Chart] = [lines]
    layers += _marker_layers(cur, x, "loss", "loss_spike", labels)
    chart = alt.layer(*layers)
    title = labels["loss_by_tokens"] if x == "tokens" else labels["loss_by_step"]
    return finish(chart, title)


def _marker_layers(steps: pl.DataFrame, x: str, col: str, spike_col: str, labels: Labels) -> list[alt.Chart]:
    """Spikes as red points and NaN/Inf steps as vertical rules, from the full (not downsampled) data."""
    layers: list[alt.Chart] = []
    name = labels[SERIES_LABELS.get(col, col)]
    step_tip = alt.Tooltip("step:Q", title=labels["step"], format=",d")
    cols = list(dict.fromkeys([x, "step", col]))
    spikes = steps.filter(pl.col(spike_col).fill_null(False)).select(cols)
    if not spikes.is_empty():
        layers.append(
            alt.Chart(chart_data(spikes.with_columns(pl.lit(labels["spike"]).alias("marker"))))
            .mark_point(color=SPIKE, size=50, filled=True, shape="triangle-up", clip=True)
            .encode(
                x=f"{x}:Q",
                y=f"{col}:Q",
                tooltip=[step_tip, alt.Tooltip(f"{col}:Q", title=name, format=".5~g"), alt.Tooltip("marker:N", title=" ")],
            )
        )
    nonfinite = steps.filter(pl.col(col).is_not_null() & ~pl.col(col).is_finite()).select(list(dict.fromkeys([x, "step"])))
    if not nonfinite.is_empty():
        layers.append(
            alt.Chart(chart_data(nonfinite.with_columns(pl.lit(f"{name} NaN/Inf").alias("marker"))))
            .mark_rule(color="#000000", strokeDash=[2, 2], opacity=0.7)
            .encode(x=f"{x}:Q", tooltip=[step_tip, alt.Tooltip("marker:N", title=" ")])
        )
    return layers


SERIES_LABELS = {"loss": "loss", "grad_norm": "grad_norm"}  # step columns -> label keys


def grad_norm_chart(steps: pl.DataFrame, labels: Labels) -> dict | None:
    """Gradient norm with its spikes; drawn under the loss since it usually moves first."""
    if steps.filter(pl.col("grad_norm").is_not_null()).is_empty():
        return None
    line = downsample(steps.select("step", "grad_norm"), "step", "grad_norm")
    base = (
        alt.Chart(chart_data(line))
        .mark_line(color="#6a3d9a", strokeWidth=1, clip=True)
        .encode(
            x=_x("step", labels["step"]),
            y=alt.Y("grad_norm:Q", title=labels["grad_norm"], scale=alt.Scale(zero=False)),
            tooltip=[alt.Tooltip("step:Q", title=labels["step"], format=",d"),
                     alt.Tooltip("grad_norm:Q", title=labels["grad_norm"], format=".5~g")],
        )
        .add_params(_zoom("zoom_grad_norm"))
    )
    chart = alt.layer(base, *_marker_layers(steps, "step", "grad_norm", "grad_norm_spike", labels))
    return finish(chart, labels["grad_norm"], height=160)


def lr_chart(steps: pl.DataFrame, baseline: pl.DataFrame | None, labels: Labels, baseline_name: str = "") -> dict | None:
    if steps.filter(pl.col("lr").is_not_null()).is_empty():
        return None
    cur_name, base_name = labels["current"], f"{labels['baseline']} {baseline_name}".strip()
    long = _series_long(steps, "step", {"lr": (0, SMOOTH_POINTS)})
    if baseline is not None and not baseline.is_empty():
        long = pl.concat([long, _series_long(baseline, "step", {"lr": (1, SMOOTH_POINTS)})])
    names = [cur_name, base_name] if long.filter(pl.col("k") == 1).height else [cur_name]
    chart = (
        _named(alt.Chart(chart_data(long)), names)
        .mark_line(strokeWidth=1.5, clip=True)
        .encode(
            x=_x("step", labels["step"]),
            y=alt.Y("v:Q", title=labels["learning_rate"], axis=alt.Axis(format=".2~e")),
            color=alt.Color("series:N", title=None, scale=alt.Scale(domain=names, range=[CURRENT, BASELINE][: len(names)])),
            strokeDash=alt.StrokeDash("series:N", legend=None, scale=alt.Scale(domain=names, range=[[1, 0], [5, 3]][: len(names)])),
            tooltip=[alt.Tooltip("step:Q", title=labels["step"], format=",d"), alt.Tooltip("v:Q", title=labels["learning_rate"], format=".3~e"),
                     alt.Tooltip("series:N", title=" ")],
        )
        .add_params(_zoom("zoom_lr"))
    )
    return finish(chart, labels["learning_rate"], height=140)


def spike_height_chart(heights: Sequence[float], recoveries: Sequence[str], labels: Labels) -> dict | None:
    """Distribution of spike heights (relative rise over the rolling median), coloured by recovery."""
    if not heights:
        return None
    df = pl.DataFrame({"height": list(heights), "recovery": [labels.name("recovery_", r) for r in recoveries]})
    domain = [labels.name("recovery_", r) for r in ("fast", "slow", "none")]
    chart = (
        alt.Chart(chart_data(df))
        .mark_bar()
        .encode(
            x=alt.X("height:Q", bin=alt.Bin(maxbins=30), title=f"{labels['height']} (×)", axis=alt.Axis(format="%")),
            y=alt.Y("count():Q", title=labels["count"], stack=True),
            color=alt.Color("recovery:N", title=labels["recovery"],
                            scale=alt.Scale(domain=domain, range=["#9ecae1", "#fd8d3c", "#d62728"])),
            tooltip=[alt.Tooltip("count():Q", title=labels["count"]), alt.Tooltip("recovery:N", title=labels["recovery"])],
        )
    )
    return finish(chart, labels["spike_heights"], height=160)


def checkpoint_chart(saves: pl.DataFrame, labels: Labels) -> dict | None:
    """Cost per checkpoint save (seconds) at the step it happened."""
    df = saves.filter(pl.col("step").is_not_null() & pl.col("save_s").is_not_null())
    if df.is_empty():
        return None
    title = f"{labels['save_time']} (s)"
    chart = (
        alt.Chart(chart_data(df))
        .mark_bar(color="#e66101", width=4)
        .encode(
            x=_x("step", labels["step"]),
            y=alt.Y("save_s:Q", title=title),
            tooltip=[alt.Tooltip("step:Q", title=labels["step"], format=",d"), alt.Tooltip("save_s:Q", title=title, format=".3~s"),
                     alt.Tooltip("size:N", title=labels["size"])],
        )
        .add_params(_zoom("zoom_ckpt"))
    )
    return finish(chart, labels["checkpoints"], height=140)


def rank_chart(ranks: pl.DataFrame, labels: Labels) -> dict | None:
    """Median step time per rank; slow ranks in red."""
    df = ranks.filter(pl.col("median_step_time_s").is_not_null())
    if df.height < 2:
        return None
    title = f"{labels['step_time']} (s)"
    chart = (
        alt.Chart(chart_data(df))
        .mark_bar()
        .encode(
            # hundreds of ranks: labels that would overlap are left out, not drawn over each other
            x=alt.X("rank:O", title=labels["rank"], axis=alt.Axis(labelOverlap="greedy", labelAngle=0, labelSeparation=4)),
            y=alt.Y("median_step_time_s:Q", title=title, scale=alt.Scale(zero=False)),
            color=alt.condition("datum.slow", alt.value(SPIKE), alt.value(CURRENT)),
            tooltip=[alt.Tooltip("rank:O", title=labels["rank"]),
                     alt.Tooltip("median_step_time_s:Q", title=title, format=".4~s"),
                     alt.Tooltip("excess:Q", title=labels["excess"], format="+.1%")],
        )
    )
    return finish(chart, labels["per_rank"], height=140)


def line_chart(df: pl.DataFrame, y: str, title: str, L: Labels, color: str | None = None, height: int = 160,
               rule: float | None = None, rule_label: str = "", y_title: str = "") -> dict:
    """A line per step (one per `color` group), with a dashed threshold `rule` where there is one (the health section's charts)."""
    y_title = y_title or title
    enc = {"x": _x("step", L["step"]), "y": alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(zero=False)),
           "tooltip": [alt.Tooltip("step:Q", title=L["step"], format=",d"), alt.Tooltip(f"{y}:Q", title=y_title, format=".5~g")]}
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=None)
        enc["tooltip"].append(alt.Tooltip(f"{color}:N", title=""))
    layers = [alt.Chart(chart_data(df)).mark_line(strokeWidth=1.2, clip=True, point=df.height <= 60).encode(**enc)]
    if rule is not None:
        rules = pl.DataFrame({"threshold": [rule], "label": [rule_label]})
        layers.append(alt.Chart(chart_data(rules)).mark_rule(color="#d62728", strokeDash=[4, 3])
                      .encode(y="threshold:Q", tooltip=[alt.Tooltip("label:N", title="")]))
    return finish(alt.layer(*layers), title, height=height)


TREND_WIDTH = 268
TREND_HEIGHT = 110


NORMAL_BAND = "#2ca02c"  # the experiment's normal range behind a trend
UNUSUAL = "#d62728"  # a run outside it


def trend_chart(
    series: Sequence[tuple], labels: Labels, time_format: str, time_ticks: Sequence[float]
) -> dict:
    """Small multiples, one per figure, of an experiment's runs over time (UTC): each figure is
    (title, tick format, rows of t (ISO time), when (its text), v, run, text, unusual[, band]): the
    band (low, high) is the figure's normal range, drawn behind it, and the runs outside it ringed.
    Three to a row; `time_ticks` in ms since the epoch."""
    charts = []
    for i, (title, tick_format, rows, *rest) in enumerate(series):
        band = rest[0] if rest else None
        framed = {} if band is not None else {"title": title, "width": TREND_WIDTH, "height": TREND_HEIGHT}
        line = (
            alt.Chart(alt.Data(name=f"trend-{i}"), **framed)
            .mark_line(point=True, color=CURRENT, strokeWidth=1.5)
            .encode(
                x=alt.X("t:T", title=None, scale=alt.Scale(type="utc"), axis=alt.Axis(format=time_format, labelAngle=0, values=list(time_ticks), labelOverlap="greedy", labelFlush=True)),
                y=alt.Y("v:Q", title=None, scale=alt.Scale(zero=False), axis=alt.Axis(format=tick_format, tickCount=4)),
                tooltip=[alt.Tooltip("run:N", title=labels["run"]), alt.Tooltip("when:N", title=labels["trend_time"]),
                         alt.Tooltip("text:N", title=title)],
            )
        )
        if band is None:
            charts.append(line)
            continue
        # the experiment's normal range (analysis/history.py) behind the line; a run outside it ringed
        normal = alt.Chart(alt.Data(values=[{"low": band[0], "high": band[1]}])).mark_rect(
            color=NORMAL_BAND, opacity=0.18).encode(y="low:Q", y2="high:Q")
        ringed = line.mark_point(shape="circle", size=90, filled=False, color=UNUSUAL, strokeWidth=2).transform_filter(
            "datum.unusual")
        charts.append(alt.layer(normal, line, ringed, title=title, width=TREND_WIDTH, height=TREND_HEIGHT))
    spec = alt.concat(*charts, columns=3).to_dict(validate=False)
    # the rows go in after: altair walks inline rows in to_dict (most of a chart's time here)
    for part, (_, _, rows, *_rest) in zip(spec["concat"], series):
        part["data"] = {"values": rows}
        for child in part.get("layer", ()):  # a layer's line and rings take the part's rows
            if str((child.get("data") or {}).get("name", "")).startswith("trend-"):
                del child["data"]
    spec.pop("$schema", None)
    config = spec.setdefault("config", {})
    for key, value in CONFIG.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    config["title"] = {**config["title"], "fontSize": 12}
    return spec
