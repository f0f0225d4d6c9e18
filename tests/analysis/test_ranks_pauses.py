"""Slow ranks from two ranks up; pauses (eval, saves, restarts) out of the steady window; save
times from the e2e step time, never from a timer that leaves the save out."""

import jsonschema
import numpy as np
import pytest

from postmortem.analysis import analyze
from postmortem.report.metrics_json import load_schema, to_metrics

from .runs import make_run
from postmortem.words import english as en


def two_ranks(slow_factor: float, n: int = 60):
    extra = [{"step": list(range(1, n + 1)), "rank": 1, "step_time_s": [slow_factor] * n, "segment": 0}]
    return analyze(make_run(step_time=[1.0] * n, extra_steps=extra))


def test_two_ranks_one_55_percent_slower_is_flagged():
    # the old rule (MAD of two medians) could never flag either of two ranks
    a = two_ranks(1.55)
    r = a.ranks
    assert r.slow_ranks == (1,)
    assert r.spread == pytest.approx((1.55 - 1.0) / 1.275)  # (max - min) / mean = 43%
    by_rank = {s.rank: s for s in r.ranks}
    assert by_rank[1].others_median_s == 1.0 and by_rank[1].excess == pytest.approx(0.55)
    assert by_rank[0].others_median_s == 1.55 and by_rank[0].excess == pytest.approx(1.0 / 1.55 - 1)
    assert not by_rank[0].slow
    m = to_metrics(a)
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["ranks"]["slow"] == [1]
    assert [(s["rank"], s["median_step_time_s"], s["slow"]) for s in m["ranks"]["stats"]] == [(0, 1.0, False), (1, 1.55, True)]
    assert "slow_ranks" in {str(f.kind) for f in a.findings}


def test_ranks_within_the_msprof_floor_are_not_flagged():
    # 1.00 vs 1.04: (max - min) / mean = 3.9% <= 5%, and 4% < the 5% threshold
    assert two_ranks(1.04).ranks.slow_ranks == ()
    # three ranks 1.00, 1.00, 1.06: rank 2 is 6% over the others' median, spread 5.8%: flagged
    extra = [{"step": list(range(1, 51)), "rank": r, "step_time_s": [t] * 50, "segment": 0}
             for r, t in ((1, 1.0), (2, 1.06))]
    assert analyze(make_run(step_time=[1.0] * 50, extra_steps=extra)).ranks.slow_ranks == (2,)


def test_one_slow_rank_among_many_and_a_noisy_majority():
    rng = np.random.default_rng(0)
    medians = list(1.0 + 0.03 * rng.standard_normal(15)) + [1.3]
    extra = [{"step": list(range(1, 41)), "rank": r, "step_time_s": [t] * 40, "segment": 0}
             for r, t in enumerate(medians[1:], start=1)]
    r = analyze(make_run(step_time=[medians[0]] * 40, extra_steps=extra)).ranks
    assert r.slow_ranks == (15,)


def test_evaluation_pauses_are_not_steps():
    # eval after steps 100 and 200: the log's eval events sit at those steps, the pause itself
    # falls into the next step's e2e time (the wall-clock gap that follows the event)
    t = [1.0] * 300
    t[100], t[200] = 31.0, 29.0  # steps 101 and 201
    run = make_run(step_time=t, source="wall-clock:test",
                   events=[{"kind": "eval", "step": 100}, {"kind": "eval", "step": 200}])
    ex = dict(analyze(run).throughput.window.excluded.iter_rows())
    assert {s: ex[s] for s in (100, 101, 200, 201)} == {100: "eval", 101: "eval", 200: "eval", 201: "eval"}
    assert analyze(run).throughput.step_time_s.value == 1.0


def test_pause_skip_and_restart_events_and_a_stall_seen_only_in_the_gap():
    n = 120
    e2e = [1.0] * n
    inner = [0.9] * n
    e2e[59] = 3.0  # step 60: the in-step timer says 0.9 s, the gap 2.1 s: a stall it cannot see
    e2e[79] = 5.0  # step 80: a pause event (e.g. a profiler dump)
    run = make_run(step_time=e2e, in_step=inner, source="wall-clock:test",
                   events=[{"kind": "pause", "step": 80, "detail": "profiler"}, {"kind": "skip", "step": 90},
                           {"kind": "restart", "step": 100}])
    a = analyze(run)
    ex = dict(a.throughput.window.excluded.iter_rows())
    assert ex[60] == "data_stall" and ex[80] == "pause" and ex[100] == "resume"
    # a skipped-data step took its time like any other: in the window, marked for the loss figures
    assert 90 not in ex and a.stability.skip_steps == (90,)
    assert 81 not in ex  # the next step was not slow: nothing spilled
    # the data wait that triage uses comes from the gap over the steady window: 0.1 / 1.0
    assert a.phases.data_wait_share == pytest.approx(0.1)
    assert {e.key: e.value for e in a.triage.evidence}["logged_data_wait_share"] == pytest.approx(0.1)
    assert a.throughput.gap_share.value == pytest.approx(0.1)
    assert a.throughput.in_step_time_s.value == pytest.approx(0.9)
    assert a.throughput.timing == "e2e"


def test_checkpoint_save_time_from_the_e2e_gap_and_unknown_with_a_timer_only():
    t = [1.0] * 100
    t[50] = 4.0  # the save after step 50 lands in step 51's e2e time
    ckpt = {"checkpoints": {"path": ["a.ckpt"], "rank": [0], "step": [50], "bytes": [123], "kind": ["train"]}}
    a = analyze(make_run(step_time=t, source="wall-clock:test", tables=ckpt))
    save = a.phases.checkpoint_saves[0]
    assert save.save_s == pytest.approx(3.0)  # (1.0 - 1.0) + (4.0 - 1.0)
    assert "steps 50 and 51" in en(save.method)
    assert dict(a.throughput.window.excluded.iter_rows())[51] == "checkpoint"
    # only the callback's timer: the save is not in it, so the time is unknown (not 0 s)
    timer = [1.0] * 100
    b = analyze(make_run(step_time=timer, source="timer:log:test", tables=ckpt))
    save = b.phases.checkpoint_saves[0]
    assert save.save_s is None and "timer" in en(save.method)
    assert b.phases.checkpoint_tax.value is None
    assert b.throughput.timing == "timer" and "timer" in en(b.throughput.step_time_s.method)


def test_compile_is_named_even_without_a_step_time():
    # wall-clock step times have no value for the first step of a launch (no previous step end)
    t = [float("nan")] + [1.0] * 59
    a = analyze(make_run(step_time=t, source="wall-clock:test"))
    assert dict(a.throughput.window.excluded.iter_rows())[1] == "compile"
