import polars as pl

from postmortem.report import charts
from postmortem.report.format import labels

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
    svg = charts.to_svg(spec)
    assert svg.startswith("<svg") and "Gradient norm" in svg
