"""The verdict first (analysis/diagnosis.py) and the run's identity (analysis/identity.py), on the
shipped samples (the changed run doubled the learning rate, 0.003 → 0.006, and ran on a busier
host) and on small made-up runs for the rules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.identity import effects, explaining_order, group, per_run
from postmortem.analysis.types import Action, Family, FindingSeverity, SettingGroup, Side, Symptom, Verdict
from postmortem.load import load_run

from .runs import make_run

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def lr2x():
    return analyze(load_run(str(SAMPLES / "gpt-tiny-lr2x")), load_run(str(SAMPLES / "gpt-tiny-base")))


def test_slower_run_says_its_step_time_the_data_wait_that_grew_and_that_the_lr_cannot_explain_it(lr2x):
    slower = lr2x.diagnosis.problems[0]
    assert slower.symptom == Symptom.SLOWER and slower.family == Family.THROUGHPUT
    step = next(q for q in slower.quantities if q.key == "step_time_s")
    # the steady medians of the two runs' e2e step times (metrics.json throughput.steady.step_time_s)
    assert step.baseline == pytest.approx(lr2x.baseline.throughput.step_time_s.value)
    assert step.current == pytest.approx(lr2x.throughput.step_time_s.value) and step.current > step.baseline
    # what points at the layer: the logged data wait share, 6.2% of the step in the baseline, 15.6% here
    assert slower.cause.key == "logged_data_wait_share"
    assert slower.cause.baseline == pytest.approx(0.0619, abs=5e-4) and slower.cause.current == pytest.approx(0.1557, abs=5e-4)
    assert slower.bottleneck == Verdict.DATA and slower.side == Side.DATA
    # the one setting that changed cannot slow a step: the environment first, then the data playbook
    assert [(s.key, s.explains) for s in slower.settings] == [("learning_rate", False)]
    assert slower.actions[:2] == (Action.CHECK_ENVIRONMENT, Action.DATA_WORKERS)
    assert slower.evidence == ("throughput", "profile")


def test_less_stable_run_is_explained_by_the_lr_change(lr2x):
    unstable = next(p for p in lr2x.diagnosis.problems if p.symptom == Symptom.LESS_STABLE)
    assert [(q.key, q.baseline, q.current) for q in unstable.quantities] == [("loss_spikes", 0, 1), ("grad_norm_spikes", 0, 2)]
    assert [(s.key, s.explains) for s in unstable.settings] == [("learning_rate", True)]
    assert unstable.actions[0] == Action.CHECK_LR  # the lr changed: it is the first suspect
    assert unstable.params["step"] == 150 and 0 < unstable.params["lr_share"] < 1  # the spike came before the lr peak


def test_only_settings_that_can_cause_something_are_listed_as_changed(lr2x):
    # last_loss and model_path changed too, and user.peak_lr repeats learning_rate: none is a cause
    assert {c.key for c in lr2x.comparison.settings.changed} >= {"learning_rate", "user.peak_lr", "last_loss", "model_path"}
    assert [c.key for c in lr2x.diagnosis.changed] == ["learning_rate"]
    assert lr2x.diagnosis.baseline_id == lr2x.comparison.baseline_id


def test_problems_come_most_severe_first(lr2x):
    order = {FindingSeverity.CRITICAL: 0, FindingSeverity.ERROR: 1, FindingSeverity.WARNING: 2, FindingSeverity.INFO: 3}
    ranks = [order[p.severity] for p in lr2x.diagnosis.problems]
    assert ranks == sorted(ranks) and lr2x.diagnosis.problems[-1].symptom == Symptom.LOSS_BETTER


def test_without_a_baseline_what_stands_out_in_the_run():
    n = 200
    loss = list(np.linspace(5.0, 2.0, n))
    loss[120] = float("nan")
    a = analyze(make_run(step_time=[0.5] * n, scalars={"loss": loss, "lr": [1e-4] * n}))
    first = a.diagnosis.problems[0]
    assert first.symptom == Symptom.NAN and first.severity == FindingSeverity.CRITICAL
    assert first.params["step"] == 121 and first.params["lr_share"] == pytest.approx(1.0)  # steps count from 1
    assert first.actions[0] == Action.CHECK_DATA and a.diagnosis.baseline_id is None and first.settings == ()


def test_what_a_change_of_each_setting_can_move():
    assert effects("learning_rate") == {Family.CONVERGENCE, Family.STABILITY}  # cannot slow a step
    assert {Family.THROUGHPUT, Family.EFFICIENCY} <= effects("micro_batch_num")
    assert {Family.THROUGHPUT, Family.EFFICIENCY} <= effects("num_parallel_workers")
    assert Family.THROUGHPUT in effects("optimizer")  # another optimizer has another state
    assert effects("model_path") == effects("last_loss") == effects("full_model_flops") == frozenset()
    assert group("user.peak_lr") == SettingGroup.OPTIMIZER and per_run("lineage.dataset_graph")


def test_the_diff_is_ordered_by_what_can_explain_a_change():
    keys = ["model_path", "framework_version", "dataset", "seq_length", "data_parallel", "learning_rate", "last_loss",
            "global_batch_size", "shard_model_flops"]
    assert sorted(keys, key=explaining_order) == ["learning_rate", "data_parallel", "global_batch_size", "seq_length",
                                                  "dataset", "framework_version", "last_loss", "model_path",
                                                  "shard_model_flops"]


def test_identity_lists_the_settings_grouped_in_reading_order(lr2x):
    rows = lr2x.identity.settings
    groups = [r.group for r in rows]
    assert groups.index(SettingGroup.FRAMEWORK) < groups.index(SettingGroup.MODEL) < groups.index(SettingGroup.OPTIMIZER)
    assert groups[-1] == SettingGroup.RUN  # the run's own values last
    lr = next(r for r in rows if r.key == "learning_rate")
    assert lr.value == 0.006 and lr.source == "config:config.yaml" and lr.group == SettingGroup.OPTIMIZER
    # versions looked for and not in the sample's files: said, not left out
    assert lr2x.identity.versions == {"framework_version": None, "mindformers_version": None, "cann_version": None}
