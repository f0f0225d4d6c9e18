"""Tokens per step from the run's own logged rates, lineage's batch size checked against them,
figures that cannot be right flagged, and labels that say what they hold."""

from datetime import datetime, timezone

import jsonschema
import numpy as np
import pytest

from postmortem.analysis import AnalysisOptions, analyze
from postmortem.report.metrics_json import dumps, load_schema, to_metrics
from postmortem.analysis.types import FindingSeverity
from postmortem.model import Setting
from postmortem.report.viewmodel import build_view

from .runs import make_run
from postmortem.words import english as en

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def step_times(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return list(0.05 * (1 + 0.05 * rng.standard_normal(n)))


def test_tokens_per_step_from_logged_tokens_per_s_when_seq_length_is_missing():
    t = step_times()
    run = make_run(step_time=t, settings={"global_batch_size": 8},
                   scalars={"tokens_per_s": [256 / x for x in t]})  # the callback: batch x seq / step time
    tp = analyze(run).throughput
    assert tp.seq_length.value is None
    assert tp.tokens_per_step.value == 256  # 256 / t x t, rounded to the whole token
    assert "logged tokens_per_s × the e2e step time" in en(tp.tokens_per_step.method)
    assert "no seq_length" in en(tp.tokens_per_step.method) and en(tp.tokens_per_step.source) == "logged tokens_per_s"
    assert tp.tokens_per_s.value == pytest.approx(256 / tp.step_time_s.value)


def test_logged_rate_divided_by_the_in_step_timer_is_recognised():
    t = step_times()
    gaps = np.random.default_rng(1).uniform(0.005, 0.02, len(t))  # data waits between steps
    inner = [x - g for x, g in zip(t, gaps)]  # the callback timed only the step, not the gap before it
    run = make_run(step_time=t, in_step=inner, source="wall-clock:test", settings={"global_batch_size": 8},
                   scalars={"tokens_per_s": [256 / x for x in inner]})
    tp = analyze(run).throughput
    assert tp.tokens_per_step.value == 256 and "in-step timer" in en(tp.tokens_per_step.method)


def test_lineage_batch_size_1_contradicted_by_logged_samples_per_s():
    # a GeneratorDataset yielding whole batches: lineage says batch_size 1, each step has 8 samples
    t = step_times()
    run = make_run(step_time=t, settings={"batch_size": Setting(1, "lineage")},
                   scalars={"samples_per_s": [8 / x for x in t]})
    a = analyze(run)
    tp = a.throughput
    assert tp.global_batch_size.value == 8 and "lineage's batch size 1 is contradicted" in en(tp.global_batch_size.method)
    assert tp.samples_per_s.value == pytest.approx(8 / tp.step_time_s.value)  # not 1 / step time
    notes = [d for d in a.diagnostics if d.slug == "batch-size-contradicted"]
    assert len(notes) == 1 and "the logged figure is used" in en(notes[0].text)


def test_config_batch_size_contradicted_is_kept_with_a_warning_and_per_device_rates_are_not_used():
    t = step_times()
    run = make_run(step_time=t, settings={"global_batch_size": Setting(16, "config:config.yaml")},
                   scalars={"samples_per_s": [8 / x for x in t]})
    a = analyze(run)
    assert a.throughput.global_batch_size.value == 16
    assert any(d.slug == "batch-size-contradicted" and "kept" in en(d.text) for d in a.diagnostics)
    # MindFormers' samples/s/p is per device: it says nothing about the global batch
    per_device = make_run(step_time=t, settings={"batch_size": Setting(1, "lineage")},
                          scalars={"samples_per_s@samples/s/p": [8 / x for x in t]})
    b = analyze(per_device)
    assert b.throughput.global_batch_size.value == 1 and not [d for d in b.diagnostics if d.slug == "batch-size-contradicted"]


ARCH = {"global_batch_size": 8, "seq_length": 128, "num_layers": 2, "hidden_size": 64, "num_heads": 4,
        "vocab_size": 1000, "device_num": 1}


def mfu_run(target_mfu: float):
    """A run whose MFU comes out at target_mfu: the peak is chosen for it."""
    t = [0.1] * 100
    run = make_run(step_time=t, settings=ARCH)
    probe = analyze(run, options=AnalysisOptions(peak_tflops=1.0)).mfu
    peak = probe.mfu.value / target_mfu  # TFLOPS
    return analyze(run, options=AnalysisOptions(peak_tflops=peak)), peak


def test_mfu_above_100_percent_is_an_error_and_flagged_in_the_headline():
    a, peak = mfu_run(2.68)
    assert a.mfu.mfu.value == pytest.approx(2.68)
    assert a.flag("mfu") is not None and a.flag("mfu").check == "mfu_range"
    errors = [f for f in a.findings if f.severity == FindingSeverity.ERROR]
    assert len(errors) == 1 and str(errors[0].kind) == "implausible"
    # both figures: the MFU and what it is held against, with the inputs behind it
    assert "MFU 268.0% is above 100%" in en(errors[0].text) and "4.47 GFLOPS" in en(errors[0].text)  # the peak: 4.47e9 FLOP/s
    assert "low_mfu" not in {str(f.kind) for f in a.findings}
    view = build_view(a, generated_at=NOW, version="test")
    stat = next(s for s in view.summary.stats if s.key == "mfu")
    assert stat.value == "268.0% (implausible)" and stat.tone == "error" and "above 100%" in stat.reason
    zh = build_view(a, lang="zh", generated_at=NOW, version="test")
    stat = next(s for s in zh.summary.stats if s.key == "mfu")
    assert stat.value == "268.0% (不可信)" and "高于 100%" in stat.reason
    m = to_metrics(a)
    jsonschema.Draft202012Validator(load_schema()).validate(m)
    assert m["mfu"]["value"] == pytest.approx(2.68)
    assert m["plausibility"][0]["check"] == "mfu_range" and m["plausibility"][0]["figures"] == ["mfu"]
    assert any(f["severity"] == "error" for f in m["findings"])
    dumps(m)


def test_mfu_below_a_tenth_of_a_percent_is_an_error():
    a, _ = mfu_run(0.0005)
    assert a.flag("mfu").against == "mfu_min" and a.flag("mfu").against_value == 0.001
    assert en(a.findings[0].text).startswith("MFU 0.05% is below 0.1%")  # the percentage keeps its digits
    a, _ = mfu_run(0.4)
    assert a.plausibility == ()


def test_logged_step_under_a_tenth_of_its_wall_clock_gap():
    t = [1.0] * 100
    inner = [0.05] * 100  # e.g. a timer in the wrong unit, or 20 steps per wall time
    a = analyze(make_run(step_time=t, in_step=inner, source="wall-clock:test", settings={"global_batch_size": 8}))
    p = a.flag("step_time_s")
    assert p is not None and p.check == "step_vs_gap" and p.value == 0.05 and p.against_value == 1.0
    assert a.flag("tokens_per_s") is p
    msg = next(en(f.text) for f in a.findings if str(f.kind) == "implausible")
    assert "50.0 ms" in msg and "1.00 s" in msg


def test_tokens_per_s_that_contradicts_the_logged_tokens_per_s():
    t = [0.5] * 100
    # settings say 8 x 1024 tokens a step; the run itself logged 8 x 128 / step time
    run = make_run(step_time=t, settings={"global_batch_size": 8, "seq_length": 1024},
                   scalars={"tokens_per_s": [1024 / x for x in t]})
    a = analyze(run)
    p = a.flag("tokens_per_s")
    assert p is not None and p.check == "tokens_vs_logged"
    assert p.value == pytest.approx(8192 / 0.5) and p.against_value == pytest.approx(2048)
    assert "8.00×" in next(en(f.text) for f in a.findings if str(f.kind) == "implausible")
    # the same tokens a step, divided by an in-step timer: only the timers differ, nothing flagged
    inner = [0.3] * 100
    ok = make_run(step_time=t, in_step=inner, source="wall-clock:test",
                  settings={"global_batch_size": 8, "seq_length": 1024}, scalars={"tokens_per_s": [8192 / x for x in inner]})
    assert analyze(ok).plausibility == ()


def test_flagged_figure_is_not_judged_against_the_baseline():
    cur, _ = mfu_run(2.68)
    run = make_run(step_time=[0.1] * 100, settings=ARCH)
    base = analyze(run, options=AnalysisOptions(peak_tflops=cur.options.peak_tflops))
    from postmortem.analysis.compare import compare

    c = compare(cur, base, {}, {})
    d = c.delta("mfu")
    assert d.significant is None and en(d.reason) == "implausible in both runs"


def test_efficiency_is_unknown_when_mfu_is_unknown_in_both_runs():
    ckpt = {"checkpoints": {"path": ["a.ckpt"], "rank": [0], "step": [50], "kind": ["train"]}}
    t = [1.0] * 100
    t[49] = 2.0
    runs = [make_run(name, step_time=t, tables=ckpt) for name in ("cur", "base")]
    c = analyze(runs[0], runs[1]).comparison
    assert c.delta("checkpoint_tax").significant is False  # judged, no change
    eff = next(v for v in c.verdicts if v.family == "efficiency")
    assert eff.verdict == "unknown" and eff.unjudged == ("mfu",)


def test_labels_say_what_they_hold():
    n = 400
    steps = np.arange(1, n + 1)
    loss = list(2.0 + 3.0 * np.exp(-steps / 40.0))
    t = [1.0] * n
    t[99] = t[199] = t[200] = 30.0  # excluded: 100 (outlier), 200-201 (outlier): 3 steps in 2 ranges
    run = make_run(step_time=t, source="wall-clock:test", scalars={"loss": loss},
                   settings={"global_batch_size": 1, "seq_length": 1})
    a = analyze(run, options=AnalysisOptions(smoothing_window=1))
    view = build_view(a, generated_at=NOW, version="test")
    sections = {s.id: s for s in view.sections}
    para = sections["throughput"].blocks[0].text
    excluded = a.throughput.window.excluded.height
    assert f"{excluded} steps excluded in" in para and "ranges" in para
    ranges = next(b for b in sections["throughput"].blocks if getattr(b, "id", "") == "excluded-steps")
    assert ranges.caption == "Excluded step ranges" and ranges.columns[:2] == ("Step range", "Steps")
    conv = next(b for b in sections["convergence"].blocks if getattr(b, "id", "") == "convergence")
    row = next(r for r in conv.rows if r[0].text == "Time to converge (wall clock)")
    hours = a.convergence.convergence_hours.value
    assert hours is not None and row[1].text.endswith("min")  # ~3 minutes of 1 s steps, shown in minutes
    assert not any(r[0].text == "Hours" for r in conv.rows)


def test_a_callback_timer_alone_is_said_so():
    a = analyze(make_run(step_time=[1.0] * 50, source="timer:log:test", settings={"global_batch_size": 8}))
    view = build_view(a, generated_at=NOW, version="test")
    stat = next(s for s in view.summary.stats if s.key == "step_time_s")
    assert stat.label == "Step time, callback timer (median)"
    throughput = next(s for s in view.sections if s.id == "throughput")
    said = [b.text for b in throughput.blocks if getattr(b, "kind", "") == "paragraph"]
    assert any("callback's own timer" in text and "not counted" in text for text in said)
    # with e2e times beside the timer, both are shown side by side
    e2e = analyze(make_run(step_time=[1.0] * 50, in_step=[0.8] * 50, source="wall-clock:test"))
    rows = {r[0].text: r[1].text for r in next(b for b in next(s for s in build_view(
        e2e, generated_at=NOW, version="test").sections if s.id == "throughput").blocks
        if getattr(b, "id", "") == "throughput").rows}
    assert rows["Step time, e2e (median)"] == "1.00 s" and rows["Step time, in-step timer (median)"] == "800 ms"
    assert rows["Gap between steps (share of e2e)"] == "20.0%"
