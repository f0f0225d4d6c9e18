import polars as pl

from postmortem.report import charts, svg as pictures
from postmortem.words import labels

from fixtures import _steps


def test_downsample_caps_points_and_keeps_extremes():
    n = 250_000
    df = pl.DataFrame({"step": range(n), "v": [1.0] * n}).with_columns(
        pl.when(pl.col("step") == 123_457).then(50.0).when(pl.col("step") == 7).then(-3.0).otherwise(pl.col("v")).alias("v")
    )
    out = charts.downsample(df, "step", "v")
    assert out.height <= charts.MAX_POINTS
    assert out["v"].max() == 50.0 and out["v"].min() == -3.0
    assert out["step"].is_sorted()


def test_small_series_untouched_and_nonfinite_dropped_from_lines():
    df = pl.DataFrame({"step": [1, 2, 3], "v": [1.0, float("nan"), 2.0]})
    assert charts.downsample(df, "step", "v")["step"].to_list() == [1, 3]


def test_loss_chart_keeps_every_spike_and_nan_marker_exactly():
    steps = _steps(20_000)
    spec = charts.loss_chart(steps, None, labels("en"))
    layers = spec["layer"]
    spike_layer = next(l for l in layers if l["mark"].get("shape") == "triangle-up")
    rule_layer = next(l for l in layers if l["mark"]["type"] == "rule")
    assert sorted(r["step"] for r in spike_layer["data"]["values"]) == sorted(steps.filter(pl.col("loss_spike"))["step"].to_list())
    assert [r["step"] for r in rule_layer["data"]["values"]] == [13_333]
    assert len(layers[0]["data"]["values"]) <= 2 * charts.MAX_POINTS  # raw + smoothed


def test_values_are_valid_json_numbers():
    rows = charts.values(pl.DataFrame({"x": [1.0, float("nan"), float("inf"), 0.123456789]}))
    assert [r["x"] for r in rows] == [1.0, None, None, 0.12346]


def test_step_time_chart_marks_exclusions_by_reason():
    spec = charts.step_time_chart(_steps(2000), (6, 2000), labels("en"), [("startup", 1, 5), ("main", 6, 2000)])
    marker = spec["layer"][-1]
    reasons = {r["excluded"] for r in marker["data"]["values"]}
    assert reasons == {"compile", "warmup", "checkpoint", "nan"}
    # the y axis is clamped; the compile step (30 s) sits on the top edge with its real value kept
    compile_row = next(r for r in marker["data"]["values"] if r["excluded"] == "compile")
    assert compile_row["step_time_s"] == 30.0 and compile_row["y"] < 30.0


def test_svg_renders():
    spec = charts.grad_norm_chart(_steps(500), labels("en"))
    svg = pictures.to_svg(spec)
    assert svg.startswith("<svg") and "Gradient norm" in svg


def _by_series(rows, key="k"):
    out = {}
    for r in rows:
        out.setdefault(r.get(key), []).append(r)
    return out


def test_paper_lines_keep_each_series_ends_and_extremes_per_printed_pixel():
    steps = _steps(20_000)
    spec = charts.loss_chart(steps, None, labels("en"))
    before = [dict(r) for r in spec["layer"][0]["data"]["values"]]
    paper = pictures.for_paper(spec)
    assert spec["layer"][0]["data"]["values"] == before  # the HTML's spec is not touched
    after = paper["layer"][0]["data"]["values"]
    series_before, series_after = _by_series(before), _by_series(after)
    assert series_before.keys() == series_after.keys()
    raw = series_before[0]
    assert len(raw) > 2 * pictures.PAPER_BUCKETS  # the raw loss (2,000 rows here) is thinned ...
    for k, rows in series_after.items():
        full = series_before[k]
        assert len(rows) <= max(2 * pictures.PAPER_BUCKETS + 2, len(full))
        assert rows[0] == full[0] and rows[-1] == full[-1]
        assert [r["step"] for r in rows] == sorted(r["step"] for r in rows)
        values = [r["v"] for r in full if r["v"] is not None]
        kept = [r["v"] for r in rows if r["v"] is not None]
        assert max(kept) == max(values) and min(kept) == min(values)  # a spike still shows
    assert len(series_after[0]) < len(raw)  # ... to at most two points per slice
    # the spike, NaN and rule layers keep every row
    assert paper["layer"][1:] == spec["layer"][1:]


def test_paper_thinning_is_per_slice_min_and_max():
    # 10,000 points over x 0..9999: each of the slices keeps its lowest and highest point only
    rows = [{"step": i, "v": float((i * 7919) % 1000)} for i in range(10_000)]
    spec = {"data": {"values": rows}, "mark": {"type": "line"},
            "encoding": {"x": {"field": "step", "type": "quantitative"}, "y": {"field": "v", "type": "quantitative"}}}
    out = pictures.for_paper(spec)["data"]["values"]
    assert len(out) <= 2 * pictures.PAPER_BUCKETS + 2
    width = 9999 / pictures.PAPER_BUCKETS
    slices = {}
    for r in rows:
        slices.setdefault(min(int(r["step"] / width), pictures.PAPER_BUCKETS - 1), []).append(r["v"])
    kept = {}
    for r in out:
        kept.setdefault(min(int(r["step"] / width), pictures.PAPER_BUCKETS - 1), []).append(r["v"])
    for b, vs in slices.items():
        assert min(vs) in kept[b] and max(vs) in kept[b]


def test_paper_keeps_data_any_other_mark_draws_and_gaps():
    rows = [{"step": i, "v": None if i == 5000 else float(i % 17)} for i in range(10_000)]
    enc = {"x": {"field": "step", "type": "quantitative"}, "y": {"field": "v", "type": "quantitative"}}
    shared = {"data": {"values": rows}, "layer": [{"mark": "line", "encoding": enc}, {"mark": "point", "encoding": enc}]}
    assert pictures.for_paper(shared) == shared  # the points would lose rows: not thinned
    alone = pictures.for_paper({**shared, "layer": shared["layer"][:1]})
    assert {"step": 5000, "v": None} in alone["data"]["values"]  # a gap in the line stays a gap
    assert len(alone["data"]["values"]) < len(rows)


def test_weasyprint_svg_drops_hidden_elements_and_fades_fills_only():
    svg = ('<svg><text x="1" opacity="0">10,000</text><text x="2" opacity="1">20,000</text>'
           '<path class="foreground" d="" display="none"/>'
           '<path d="M0,0h1v1Z" fill="#878787" stroke-width="2" opacity="0.85"/>'
           '<path d="M0,0L5,5" stroke="#1f5fa8" opacity="0.25"/>'
           '<path d="M0,0h1v1Z" fill="#2ca02c" stroke="#2ca02c" opacity="0.08"/>'
           '<rect width="3" height="3" fill="#e4dcf0" opacity="0.5"/></svg>')
    out = pictures.for_weasyprint(svg)
    assert "10,000" not in out and '<text x="2" opacity="1">20,000</text>' in out and "display" not in out
    assert '<path d="M0,0h1v1Z" fill="#878787" stroke-width="2" fill-opacity="0.85"/>' in out  # fill only: same paint
    assert '<path d="M0,0L5,5" stroke="#1f5fa8" opacity="0.25"/>' in out  # a stroke may overlap itself: kept a group
    assert 'stroke="#2ca02c" opacity="0.08"' in out  # fill and stroke overlap: kept a group
    assert '<rect width="3" height="3" fill="#e4dcf0" fill-opacity="0.5"/>' in out


def test_paper_svg_is_the_static_picture_of_the_chart():
    spec = charts.step_time_chart(_steps(5000), (6, 5000), labels("en"), [("startup", 1, 5), ("main", 6, 5000)])
    plain = pictures.to_svg(pictures.for_paper(spec))
    paper = pictures.paper_svg(spec)
    size = r'<svg [^>]*width="(\d+)" height="(\d+)"'
    import re

    assert re.search(size, paper).groups() == re.search(size, plain).groups()  # laid out alike
    assert 'aria-roledescription="point"' in plain and 'aria-roledescription="point"' not in paper  # no label per point
    assert ' opacity="0"' in plain and ' opacity="0"' not in paper  # labels vega hid are left out
    assert paper.count("<text") == plain.count("<text") - len(re.findall(r'<text [^>]* opacity="0"', plain))
    # vl-convert numbers clip paths on from the charts its process drew before; on paper each
    # chart's own from 1, so the SVG depends on the chart only
    assert pictures.paper_svg(spec) == paper and "clip1" in paper
    clips = sorted(set(re.findall(r'id="(clip\d+)"', paper)))
    assert clips == sorted(f"clip{i + 1}" for i in range(len(clips)))
    assert set(re.findall(r"url\(#(clip\d+)\)", paper)) <= set(clips)


def test_the_loss_lines_are_drawn_at_their_own_opacities():
    # raw 0.25, smoothed 1.0, baseline 0.9: a nominal opacity on vega-lite's default point scale spread
    # them over [0.25, 1.0] instead (the smoothed line at 0.625)
    import re

    steps = _steps(3000)
    base = steps.with_columns(pl.col("loss_smoothed") * 1.03)
    svg = pictures.to_svg(pictures.for_paper(charts.loss_chart(steps, base, labels("en"))))
    opacities = set(re.findall(r' opacity="([\d.]+)"', svg))
    assert {"0.25", "1", "0.9"} <= opacities and "0.625" not in opacities
