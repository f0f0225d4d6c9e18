"""What is normal for an experiment (analysis/history.py), on real archives built from the sample
runs: the baseline sample built several times under other run ids, then the changed sample (peak
lr 6e-3, a data stall, a restart) and the baseline sample again."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from postmortem import archive
from postmortem.analysis.history import MIN_RUNS, judge
from postmortem.cli import main
from postmortem.config import BuildSettings
from postmortem.pipeline import build_report

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def _build(root: Path, sample: str, run_id: str, **kw) -> dict:
    settings = replace(BuildSettings(out=str(root), experiment="tiny", run_id=run_id, formats=("json",)), **kw)
    result = build_report(str(SAMPLES / sample), settings)
    return json.loads((result.folder / "metrics.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def archive_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    for i in range(1, MIN_RUNS + 1):
        _build(root, "gpt-tiny-base", f"base-{i}")
    return root


@pytest.fixture(scope="module")
def changed(archive_root) -> dict:
    return _build(archive_root, "gpt-tiny-lr2x", "lr2x")


def test_too_few_runs_judge_nothing_and_say_why(tmp_path):
    _build(tmp_path, "gpt-tiny-base", "a")
    m = _build(tmp_path, "gpt-tiny-base", "b")
    f = m["history"]["figures"]["step_time_s"]
    assert f["runs"] == ["a"] and f["unusual"] is None and f["low"] is None
    assert f["reason"] == f"not judged: 1 comparable run, {MIN_RUNS} needed"
    assert not [x for x in m["findings"] if x["kind"] == "unusual"]


def test_a_slower_run_is_unusual_with_its_range_runs_and_trend(changed):
    h = changed["history"]
    assert h["wanted"] == 10 and h["considered"] == MIN_RUNS
    step = h["figures"]["step_time_s"]
    assert step["runs"] == [f"base-{i}" for i in range(1, MIN_RUNS + 1)]  # oldest first
    assert step["unusual"] is True and step["direction"] == "above" and step["worse"] is True
    assert step["low"] < step["median"] < step["high"] < step["value"]
    assert step["trend"] == "flat"  # the same run five times
    tokens = h["figures"]["tokens_per_s"]
    assert tokens["unusual"] is True and tokens["direction"] == "below" and tokens["worse"] is True
    found = [f for f in changed["findings"] if f["kind"] == "unusual"]
    # one finding for the step time; the rates that follow it are in the section's table only
    assert {f["evidence"]["figure"] for f in found} == {"step_time_s", "data_wait_share"}
    text = next(f["message"] for f in found if f["evidence"]["figure"] == "step_time_s")
    assert "above its normal range" in text and "base-1 … base-5" in text and "flat" in text


def test_runs_of_another_learning_rate_are_kept_apart_for_the_loss_not_for_the_step_time(changed):
    figures = changed["history"]["figures"]
    spikes = figures["loss_spikes"]
    assert spikes["unusual"] is None and spikes["runs"] == []  # a lr change can move the loss: kept apart
    assert {k for a in spikes["kept_apart"] for k in a["settings"]} >= {"learning_rate"}
    assert figures["step_time_s"]["kept_apart"] == []  # it cannot slow a step


def test_the_same_run_again_is_within_its_range(archive_root, changed):
    m = _build(archive_root, "gpt-tiny-base", "base-again")
    figures = m["history"]["figures"]
    assert figures["step_time_s"]["unusual"] is False
    # the range rests on the runs that finished before this one: the changed sample's log ends later
    assert figures["step_time_s"]["runs"] == [f"base-{i}" for i in range(1, MIN_RUNS + 1)]
    loss = figures["loss_at_equal_tokens"]
    assert loss["unusual"] is False and loss["aligned_tokens"] > 0 and len(loss["runs"]) == MIN_RUNS
    assert not [f for f in m["findings"] if f["kind"] == "unusual"]


def test_metrics_json_validates_with_its_history_block(changed):
    jsonschema = pytest.importorskip("jsonschema")
    from postmortem.report.metrics_json import load_schema

    jsonschema.validate(changed, load_schema())
    assert changed["schema_version"] == "1.5"


def test_fail_on_regression_against_history(archive_root, changed, capsys):
    args = ["build", str(SAMPLES / "gpt-tiny-lr2x"), "--out", str(archive_root), "--experiment", "tiny", "--run-id", "lr2x",
            "--format", "json", "--fail-on-regression", "--against", "history"]
    assert main(args) == 1
    assert "unusual for this experiment: " in capsys.readouterr().err
    few = [*args[:-2], "--against", "history", "--history-runs", "3"]
    assert main([*few[:few.index("lr2x")], "lr2x-few", *few[few.index("lr2x") + 1:]]) == 0  # 3 runs: too few to judge
    assert main([*args[:-2], "--against", "nowhere"]) == 2


def test_the_weekly_digest_puts_unusual_runs_after_failures(archive_root, changed):
    from datetime import UTC, datetime

    from postmortem import weekly

    digest = weekly.collect(archive_root, weekly.parse_period(None, "5000d", datetime.now(UTC)))
    ranks = [a.rank for a in digest.attention if a.run_id == "lr2x"]
    assert 3 in ranks and ranks == sorted(ranks)  # failures (2) first, then unusual (3), then other warnings
    assert digest.unusual_count == 1
    md = weekly.render_markdown(digest)
    unusual = next(line for line in md.splitlines() if "unusual this week" in line)
    assert "lr2x" in unusual and "step time" in unusual and "tokens/s" not in unusual
    assert md.index("**failure**") < md.index("unusual this week")


def test_the_dashboard_draws_the_normal_band_and_rings_the_unusual_run(archive_root, changed):
    from postmortem.report.dashboard import experiment_points, trend_chart
    from postmortem.words import labels

    points = experiment_points(archive.list_runs(archive_root, "tiny"))
    chart, _ = trend_chart(points, labels("en"), "t")
    layered = [part for part in chart.spec["concat"] if "layer" in part]
    assert layered, "a trend with a normal range is drawn over its band"
    band = layered[0]["layer"][0]
    assert band["mark"]["type"] == "rect" and band["data"]["values"][0]["low"] < band["data"]["values"][0]["high"]
    rows = layered[0]["data"]["values"]
    assert [r["run"] for r in rows if r["unusual"]] == ["lr2x"]


def test_judge_floors_a_range_of_identical_runs():
    same = [(f"r{i}", 2.0) for i in range(MIN_RUNS)]
    f = judge("step_time_s", 2.01, same)
    assert (f.low, f.high, f.unusual) == (pytest.approx(1.98), pytest.approx(2.02), False)  # ± 1 %: no wiggle is news
    assert judge("step_time_s", 2.05, same).unusual is True
    zero = [(f"r{i}", 0.0) for i in range(MIN_RUNS)]
    assert judge("loss_spikes", 1.0, zero).unusual is False and judge("loss_spikes", 2.0, zero).worse is True
    rising = [(f"r{i}", 1.0 + 0.1 * i + 0.01 * (-1) ** i) for i in range(MIN_RUNS)]
    assert judge("step_time_s", 1.2, rising).trend == "rising"
    noisy = [(f"r{i}", v) for i, v in enumerate((1.0, 1.1, 0.95, 1.05, 1.0))]
    assert judge("step_time_s", 1.0, noisy).trend == "flat"


def test_the_window_and_the_gate_are_project_settings(tmp_path):
    from postmortem.config import load_settings
    from postmortem.errors import InputError

    (tmp_path / "postmortem.toml").write_text('history_runs = 20\nagainst = "history"\n', encoding="utf-8")
    s = load_settings(None, {}, cwd=tmp_path)
    assert s.analysis.history_runs == 20 and s.against == "history"
    assert load_settings(None, {"history_runs": 7}, cwd=tmp_path).analysis.history_runs == 7  # the flag wins
    with pytest.raises(InputError) as bad:
        load_settings(None, {"history_runs": 0}, cwd=tmp_path)
    assert bad.value.slug == "bad-option"
