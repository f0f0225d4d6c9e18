"""Loss figures that survive spikes and sparse logs: smoothing by steps, the final loss level,
convergence and its "not converged" reasons."""

import math

import numpy as np
import pytest

from postmortem.analysis import AnalysisOptions, analyze
from postmortem.analysis.convergence import final_level, smooth
from postmortem.load import load_run

from .runs import REPO, make_run
from postmortem.words import english as en


def plateau_loss(n: int, level: float = 6.21, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(level + 0.02 * rng.standard_normal(n))


def test_smoothing_counts_steps_not_values():
    import polars as pl

    # one value every 200 steps: each 50-step window holds one value, so smoothed == value
    sparse = pl.DataFrame({"step": [200, 400, 600, 800], "value": [4.0, 3.0, 2.5, 2.0]})
    assert smooth(sparse, 50)["smoothed"].to_list() == [4.0, 3.0, 2.5, 2.0]
    # a value every step: the window is the last 50 steps (s-49..s)
    dense = pl.DataFrame({"step": list(range(1, 101)), "value": [float(s) for s in range(1, 101)]})
    sm = smooth(dense, 50)["smoothed"].to_list()
    assert sm[99] == pytest.approx(sum(range(51, 101)) / 50)  # steps 51..100
    assert sm[9] == pytest.approx(sum(range(1, 11)) / 10)  # a short history at the start
    # a value every 10 steps: 5 values per window
    tens = pl.DataFrame({"step": list(range(10, 210, 10)), "value": [float(s) for s in range(10, 210, 10)]})
    assert smooth(tens, 50)["smoothed"][-1] == pytest.approx((160 + 170 + 180 + 190 + 200) / 5)


def test_two_x25_spikes_leave_the_final_loss_and_the_smoothed_curve_alone():
    # the issue: a 6.21 plateau with two x25 spikes in the last 50 values read 6.89 and
    # "convergence regressed"; spikes are left out of the smoothed loss and of the final level
    n = 600
    clean = plateau_loss(n)
    spiky = list(clean)
    spiky[569], spiky[584] = 25 * 6.21, 25 * 6.21  # steps 570 and 585
    opts = AnalysisOptions(global_batch_size=8, seq_length=128)
    a = analyze(make_run("spiky", step_time=[1.0] * n, scalars={"loss": spiky}), options=opts)
    b = analyze(make_run("clean", step_time=[1.0] * n, scalars={"loss": clean}), options=opts)
    assert [s.step for s in a.stability.loss.spikes] == [570, 585]
    assert a.convergence.left_out["spike"] == (570, 585)
    se = a.convergence.final_loss_se.value  # 2.6 x 0.02 / sqrt(58 tail values) ~ 0.007
    assert se == pytest.approx(2.6 * 0.02 / math.sqrt(58), rel=0.3)
    assert a.convergence.final_smoothed_loss.value == pytest.approx(6.21, abs=3 * se)
    # the trailing mean of the last 50 values that the old rule used: lifted by 2 x 24 x 6.21 / 50
    assert np.mean(spiky[-50:]) == pytest.approx(6.21 + 2 * 24 * 6.21 / 50, abs=0.01)
    smoothed = a.steps.filter(a.steps["step"] == 600)["loss_smoothed"][0]
    assert smoothed == pytest.approx(np.mean([v for i, v in enumerate(spiky[550:600]) if i + 551 not in (570, 585)]))
    assert a.steps.filter(a.steps["step"] == 570)["loss_smoothed"][0] is None  # the spike has no smoothed value
    verdicts = {v.family: v.verdict for v in analyze(make_run("spiky", step_time=[1.0] * n, scalars={"loss": spiky}),
                                                     make_run("clean", step_time=[1.0] * n, scalars={"loss": clean}),
                                                     opts).comparison.verdicts}
    assert verdicts["convergence"] != "regressed"
    assert b.convergence.status == "not_converged" and b.convergence.status_code == "no_drop"  # flat from step 1


def test_sparse_lossmonitor_log_final_loss_is_where_the_run_ended():
    # ms-models-c3d-lossmonitor-log/train.log (LossMonitor, 223 steps per epoch, epochs 4-28 elided):
    # epochs 1, 2, 3, 29, 30 -> global steps 223, 446, 669, 6467, 6690
    steps = [223, 446, 669, 6467, 6690]
    loss = [2.8705792, 1.8403366, 1.4866445, 0.3037338, 0.2176594]
    per_step_ms = [332.464, 269.439, 273.972, 271.018, 269.644]
    run = make_run("c3d", step_time=[t / 1000 for t in per_step_ms], scalars={"loss": (steps, loss)})
    run.tables["steps"] = run.tables["steps"].with_columns(run.tables["steps"]["step"].replace_strict(
        dict(zip(range(1, 6), steps))))
    c = analyze(run).convergence
    # the old rule: trailing mean of the last 50 values = mean of all five = 1.344
    assert sum(loss) / 5 == pytest.approx(1.3438, abs=1e-4)
    # last 10% of steps 223..6690: 6468 steps, 647 of them, from step 6044: steps 6467 and 6690;
    # the line through (6467, 0.3037338) and (6690, 0.2176594) read at 6690 is 0.2176594
    assert c.final_smoothed_loss.value == pytest.approx(0.2176594)
    assert "6,044–6,690" in en(c.final_smoothed_loss.method)
    assert c.final_loss_se.value is None and "only 2" in en(c.final_loss_se.reason)
    # the smoothed loss (one value per 50-step window) is 0.3037 at 6467: outside 2% of 0.2177
    assert c.status == "not_converged" and c.status_code == "still_moving"
    assert c.status_evidence["entered_step"] == 6690 and "6,690" in en(c.convergence_step.reason)


def test_a_run_that_never_came_down_is_not_converged():
    # samples/profiler-cpu: 12 steps, loss 4.859 -> 4.832 (the old rule said "converged at step 1")
    a = analyze(load_run(REPO / "samples" / "profiler-cpu"))
    c = a.convergence
    assert c.initial_loss.value == pytest.approx(4.859152, abs=1e-6)
    assert c.status == "not_converged" and c.status_code == "no_drop"
    assert c.convergence_step.value is None and "never came down" in en(c.convergence_step.reason)
    # start level: median of the 12 values (the first 50 steps); band: 2% of the final level
    values = sorted([4.859152, 4.862511, 4.851968, 4.848331, 4.863372, 4.857122, 4.846107, 4.86047, 4.84448,
                     4.847674, 4.833968, 4.831582])
    assert c.status_evidence["initial"] == pytest.approx((values[5] + values[6]) / 2, abs=1e-5)
    assert c.status_evidence["initial"] - c.final_smoothed_loss.value < 0.02 * c.final_smoothed_loss.value
    kinds = {str(f.kind): f for f in a.findings}
    assert kinds["not_converged"].params["code"] == "no_drop"


def test_one_late_spike_does_not_erase_convergence():
    n = 1000
    steps = np.arange(1, n + 1)
    rng = np.random.default_rng(4)
    loss = 2.0 + 3.0 * np.exp(-steps / 80.0) + 0.01 * rng.standard_normal(n)
    late = loss.copy()
    late[997] = 40.0  # step 998, two steps before the end
    opts = AnalysisOptions(global_batch_size=1, seq_length=1)
    c0 = analyze(make_run(step_time=[1.0] * n, scalars={"loss": list(loss)}), options=opts).convergence
    c1 = analyze(make_run(step_time=[1.0] * n, scalars={"loss": list(late)}), options=opts).convergence
    assert c0.status == c1.status == "converged"
    assert c1.left_out["spike"] == (998,)
    # the spike also leaves the tail's fit: the level moves a little, the band edge a step or two
    assert abs(c1.convergence_step.value - c0.convergence_step.value) <= 3
    assert c1.final_smoothed_loss.value == pytest.approx(c0.final_smoothed_loss.value, abs=1e-3)


def test_convergence_step_tokens_and_time_to_target():
    n = 1000
    steps = np.arange(1, n + 1)
    f = lambda s: 2.0 + 3.0 * np.exp(-s / 100.0)  # noqa: E731
    loss = f(steps)
    run = make_run(step_time=[1.0] * n, scalars={"loss": list(loss), "lm_loss": list(loss * 0.9)},
                   settings={"global_batch_size": 4, "seq_length": 100})
    a = analyze(run, options=AnalysisOptions(smoothing_window=1, target_loss=2.5, convergence_tolerance=0.02))
    c = a.convergence
    # tail: steps 901..1000 (100 values); thirds of 33: medians at steps 917 and 984 (f is monotone)
    slope = (f(984) - f(917)) / (984 - 917)
    intercept = np.median(loss[900:] - slope * steps[900:])
    level = intercept + slope * 1000
    assert c.final_smoothed_loss.value == pytest.approx(level)
    assert level == pytest.approx(f(1000), abs=1e-4)
    # window 1: smoothed = loss; it stays within 2% of the level from the first s with f(s) - level <= 0.02 level
    expected = int(steps[np.flatnonzero(np.abs(loss - level) > 0.02 * level)[-1] + 1])
    # by hand: 3 exp(-s/100) + 2 - level <= 0.02 level  <=>  s >= -100 ln((1.02 level - 2) / 3)
    assert expected == math.ceil(-100 * math.log((1.02 * level - 2) / 3))
    assert c.status == "converged" and c.convergence_step.value == expected
    assert c.convergence_tokens.value == expected * 400
    assert c.convergence_hours.value == pytest.approx((expected - 1) / 3600)
    t = c.targets[0]
    s = int(np.ceil(-100 * math.log(0.5 / 3)))
    assert t.step.value == s and t.tokens.value == s * 400
    assert t.hours.value == pytest.approx((s - 1) / 3600)
    assert [x.tag for x in c.aux_losses] == ["lm_loss"]
    assert c.aux_losses[0].final_smoothed == pytest.approx(0.9 * level, rel=1e-6)


def test_resistant_line_by_hand():
    # y = 10 - x at x = 1..9, but 30 at x = 5. Thirds of 3: medians (2, 8) and (8, 2): slope -1;
    # residuals y + x: 10 everywhere but 35 at x = 5 -> intercept 10; level at x = 9: 1
    y = np.array([9.0, 8.0, 7.0, 6.0, 30.0, 4.0, 3.0, 2.0, 1.0])
    level, se = final_level(np.arange(1, 10), y)
    assert level == pytest.approx(1.0)
    assert se == 0.0  # 9 values give a noise estimate: the MAD of the residuals, 0 here
    assert final_level(np.array([5]), np.array([3.0])) == (3.0, None)


def test_loss_that_ends_in_nan_has_no_final_level():
    loss = [3.0 - 0.01 * i for i in range(80)] + [float("nan")] * 20
    c = analyze(make_run(step_time=[1.0] * 100, scalars={"loss": loss})).convergence
    assert c.final_smoothed_loss.value is None and "91–100" in en(c.final_smoothed_loss.reason)
    assert c.status == "not_converged" and c.status_code == "nonfinite_end"
    assert c.left_out["nonfinite"] == tuple(range(81, 101))


CONFORMANCE = REPO / "tests" / "fixtures" / "conformance"


def test_c3d_lossmonitor_log_read_end_to_end():
    # the real log, through the text reader and loading: the final loss is where the run ended
    a = analyze(load_run(CONFORMANCE / "ms-models-c3d-lossmonitor-log"))
    c = a.convergence
    assert a.steps.filter(a.steps["loss"].is_not_null())["step"].to_list() == [223, 446, 669, 6467, 6690]
    assert c.final_smoothed_loss.value == pytest.approx(0.2176594, abs=1e-6)
    assert c.status == "not_converged" and c.status_code == "still_moving"


def test_mindformers_monitor_log_final_loss_and_still_falling():
    # 5 steps: the last 10% of steps 1..5 is step 5 alone (loss 8.867); 10.649 -> 8.867 is still falling
    c = analyze(load_run(CONFORMANCE / "mf-docs-llama2-13b-log")).convergence
    assert c.final_smoothed_loss.value == pytest.approx(8.867)
    assert c.status_code == "still_moving"
