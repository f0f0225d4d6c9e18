import numpy as np
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.peaks import peak_flops
from postmortem.analysis.window import exclusion_reasons

from .runs import make_run
from postmortem.words import english as en

SETTINGS = {"global_batch_size": 8, "seq_length": 1024}


def reasons_of(a):
    return dict(a.throughput.window.excluded.iter_rows())


def test_checkpoint_step_excluded_and_median_exact():
    t = [1.0] * 200
    t[99] = 5.0  # step 100 saves a checkpoint
    run = make_run(step_time=t, settings=SETTINGS,
                   events=[{"kind": "checkpoint_save", "step": 100}])
    a = analyze(run)
    r = reasons_of(a)
    assert r == {1: "compile", 100: "checkpoint"}
    assert a.throughput.step_time_s.value == 1.0
    assert a.throughput.tokens_per_s.value == pytest.approx(8 * 1024)
    assert a.throughput.samples_per_s.value == pytest.approx(8.0)
    assert a.throughput.window.start_step == 2 and a.throughput.window.end_step == 200


def test_checkpoint_spill_warmup_stall_and_resume():
    t = [30.0, 3.0, 2.0, 1.5] + [1.0] * 96 + [1.0] * 100
    t[49], t[50] = 4.0, 3.0  # save at step 50 spills into 51
    data = [0.01] * 200
    t[79], data[79] = 2.0, 1.0  # step 80 waits for data
    seg = [0] * 120 + [1] * 80
    t[120], t[121], t[122] = 20.0, 2.5, 1.8  # relaunch: compile then transient
    run = make_run(step_time=t, data_time=data, segment=seg, settings=SETTINGS,
                   events=[{"kind": "checkpoint_save", "step": 50}])
    r = reasons_of(analyze(run))
    assert r == {1: "compile", 2: "warmup", 3: "warmup", 4: "warmup", 50: "checkpoint", 51: "checkpoint",
                 80: "data_stall", 121: "compile", 122: "resume", 123: "resume"}


def test_nan_and_overflow_steps_stay_in_the_time_window_and_marked_for_the_loss():
    t = [1.0] * 60
    loss = [2.0] * 60
    loss[30] = float("nan")
    run = make_run(step_time=t, scalars={"loss": loss}, settings=SETTINGS,
                   events=[{"kind": "overflow", "step": 40}])
    a = analyze(run)
    r = reasons_of(a)
    assert 31 not in r and 40 not in r  # they took their step's time like any other
    assert a.stability.nan_steps == (31,) and a.stability.overflow_steps == (40,)
    assert a.convergence.left_out["nonfinite"] == (31,)


def test_batch_from_parallel_settings_and_unknown_seq():
    run = make_run(step_time=[1.0] * 20, settings={"micro_batch_size": 2, "data_parallel": 4,
                                                    "gradient_accumulation_steps": 3})
    tp = analyze(run).throughput
    assert tp.global_batch_size.value == 24
    assert "data_parallel" in en(tp.global_batch_size.method)
    assert tp.tokens_per_s.value is None and "seq_length" in en(tp.tokens_per_s.reason)
    assert tp.samples_per_s.value == pytest.approx(24.0)


def test_robust_stats_and_deterministic_ci():
    rng = np.random.default_rng(1)
    t = list(1.0 + 0.01 * rng.standard_normal(500))
    run = make_run(step_time=t, settings=SETTINGS)
    s1, s2 = analyze(run).throughput.step_time, analyze(run).throughput.step_time
    assert s1 == s2
    assert s1.median_ci_low <= s1.median <= s1.median_ci_high
    assert s1.p10 < s1.median < s1.p90 <= s1.p99


def test_exclusion_reasons_empty():
    run = make_run(step_time=[])
    assert exclusion_reasons(run.tables["steps"]).size == 0
    a = analyze(run)
    assert a.throughput.step_time_s.value is None and a.throughput.step_time_s.reason


def test_peaks():
    v, note = peak_flops("H100-SXM5-80GB", "bf16")
    assert v == 989e12 and "datasheet" in en(note)
    assert peak_flops("Ascend910B2", "bf16")[0] == 376e12
    assert peak_flops("910B", "bf16")[0] is None  # ambiguous family
    assert peak_flops("910A", "bf16")[0] is None  # no bf16 on 910A
    assert peak_flops("mystery", "bf16")[0] is None
