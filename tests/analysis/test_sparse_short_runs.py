"""Issue 22: judgement on sparse and short runs - the window never silently empties, stability at
any log density, no impossible shares, one measure per word.

The real runs: ``tests/fixtures/window/`` (MindSpore 2.10 CPU trainings made by
``make_window_runs.py``, with what the training measured in ``<run>.expected.json``) and the real
pasted logs of ``tests/fixtures/conformance/`` (MindYOLO issue 402, the MindFormers skip-data doc).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.types import Action, AnalysisOptions, Recovery, Symptom
from postmortem.load import load_run
from postmortem.words import labels
from postmortem.report.metrics_json import to_metrics
from postmortem.report.verdict import verdict_lines
from shares import shares_outside

from .runs import make_run

FIX = Path(__file__).resolve().parents[1] / "fixtures"
WINDOW = FIX / "window"
CONF = FIX / "conformance"


def facts(name: str) -> dict:
    return json.loads((WINDOW / f"{name}.expected.json").read_text())


@pytest.fixture(scope="module")
def explosion():
    return analyze(load_run(str(WINDOW / "sparse-explosion")))


@pytest.fixture(scope="module")
def epoch_ckpt():
    return analyze(load_run(str(WINDOW / "epoch-ckpt")))


@pytest.fixture(scope="module")
def mindyolo():
    return analyze(load_run(str(CONF / "mindyolo-issue402-log")))


@pytest.fixture(scope="module")
def skipdata():
    return analyze(load_run(str(CONF / "mf-docs-skipdata-log")))


# --------------------------------------------------------------------------- real MindSpore runs


def test_a_sparse_log_whose_loss_explodes_leads_the_verdict_with_the_explosion(explosion):
    logged = {r["step"]: r["loss"] for r in facts("sparse-explosion")["logged"]}
    assert sorted(logged) == [100, 200, 300, 400, 500]  # one value every 100 steps: too few for the dense spike rule
    e = explosion.stability.explosions[0]
    assert (e.tag, e.step, e.recovered_step) == ("loss", 300, None)
    assert e.before == pytest.approx(logged[200], rel=1e-6) and e.value == pytest.approx(logged[300], rel=1e-6)
    assert e.ratio >= 10
    # one count of spikes: the level shift is a spike too, though its neighbours share its level
    assert [(s.step, s.recovery) for s in explosion.stability.loss.spikes] == [(300, Recovery.NONE)]
    first = explosion.diagnosis.problems[0]
    assert first.symptom == Symptom.EXPLODED and first.params["step"] == 300
    # §5.2's order of checks: data, learning rate, precision / loss scale, optimizer state
    assert first.actions[:3] == (Action.CHECK_DATA, Action.CHECK_LR, Action.CHECK_LOSS_SCALE)
    assert Action.CHECK_OPTIMIZER_STATE in first.actions
    en, zh = verdict_lines(explosion, "en")[0], verdict_lines(explosion, "zh")[0]
    assert "exploded at step 300" in en and "→ 450.8" in en
    assert "第 300 步 loss 爆炸" in zh
    assert explosion.convergence.status != "converged"


def test_an_epoch_log_that_saves_every_epoch_still_gives_a_step_time_with_its_caveat(epoch_ckpt):
    f = facts("epoch-ckpt")
    saved = [s["step"] for s in f["saves"]]
    assert saved == [40, 80, 120, 160, 200, 240]  # every logged step holds a save
    # ... inside its epoch as the training measured it: TimeMonitor's epoch time holds the save
    assert all(e["begin"] <= s["start"] <= s["end"] <= e["end"] for s, e in zip(f["saves"], f["epochs_measured"]))
    w = epoch_ckpt.throughput.window
    assert w.steps_kept == len(w.used_steps) == 5 and w.basis == "marked"
    assert dict(w.excluded.iter_rows())[80] == "checkpoint"  # TimeMonitor's epoch timer ends after the save
    assert w.used_steps == (80, 120, 160, 200, 240)
    tp = epoch_ckpt.throughput.step_time_s
    lines = [x for x in (WINDOW / "epoch-ckpt" / "train.log").read_text().splitlines() if x.startswith("Train epoch time:")]
    # TimeMonitor's per-step averages, from the log itself: epoch k ends at step 40 k
    per_step = {40 * (k + 1): float(x.split("per step time:")[1].split("ms")[0]) / 1000 for k, x in enumerate(lines)}
    assert tp.value == pytest.approx(np.median([per_step[s] for s in w.used_steps]))
    assert tp.caveat is not None and tp.caveat.key == "caveat.marked-steps"
    L = labels("en")
    assert "checkpoint save (5 steps)" in L.text(tp.caveat) and "includes that time" in L.text(tp.caveat)
    assert "checkpoint" in labels("zh").text(tp.caveat)
    assert 0.0 <= epoch_ckpt.phases.checkpoint_tax.value <= 1.0


def test_a_checkpoint_step_timed_by_a_per_step_timer_stays_in_the_window():
    t = [1.0] * 40
    events = [{"kind": "checkpoint_save", "step": s} for s in (10, 20, 30)]
    timer = analyze(make_run(step_time=t, source="timer:log:mindformers", events=events))
    wall = analyze(make_run(step_time=t, source="wall-clock:test", events=events))
    assert not set(dict(timer.throughput.window.excluded.iter_rows())) & {10, 20, 30}
    assert {10, 20, 30} <= set(dict(wall.throughput.window.excluded.iter_rows()))


# --------------------------------------------------------------------------- the real pasted logs


def test_mindyolo_issue_402_gives_a_step_time_with_its_caveat_and_flags_the_explosion(mindyolo):
    w = mindyolo.throughput.window
    # every logged step carried "overflow, still update": they took their time and stay in the window
    assert w.basis == "few" and w.used_steps == (200, 300, 400)
    assert dict(w.excluded.iter_rows()) == {100: "compile"}
    # e2e: the wall-clock gaps between the "step time" lines over 100 steps: 65.441, 69.418, 66.074 s
    assert mindyolo.throughput.step_time_s.value == pytest.approx(0.66074, rel=1e-3)
    assert mindyolo.throughput.step_time_s.caveat.key == "caveat.few-steps"
    assert "rests on 3 logged steps only (200, 300, 400" in labels("en").text(mindyolo.throughput.step_time_s.caveat)
    e = mindyolo.stability.explosions[0]
    assert (e.step, e.end_step, e.before, e.value) == (300, 400, 8.8465, 8712.5938)
    assert verdict_lines(mindyolo, "en")[0].startswith("[critical] Loss exploded at step 300: 8.847 → 8,713")
    overflow = next(f for f in mindyolo.findings if f.kind == "overflows")
    assert overflow.variant == "applied" and overflow.params["count"] == 4


def test_the_skip_data_log_gives_a_step_time_from_its_one_skipped_step(skipdata):
    w = skipdata.throughput.window
    assert w.basis == "few" and w.used_steps == (2,) and skipdata.stability.skip_steps == (1, 2)
    assert skipdata.throughput.step_time_s.value == pytest.approx(7.637)
    assert skipdata.convergence.final_smoothed_loss.reason.key == "reason.only-skipped-loss"


def test_no_timed_step_is_the_only_empty_window():
    a = analyze(make_run(step_time=None, scalars={"loss": ([1, 2, 3], [3.0, 2.0, 1.0])}))
    assert a.throughput.window.basis == "none" and a.throughput.step_time_s.value is None
    assert a.throughput.step_time_s.reason is not None


# --------------------------------------------------------------------------- stability at any density


def test_too_few_loss_values_are_not_judged():
    a = analyze(make_run(step_time=[1.0] * 2, scalars={"loss": ([100, 200], [5.0, 6.0])}))
    cv = a.convergence
    assert cv.status == "unknown" and cv.status_code == "too_few"
    assert labels("en").text(cv.convergence_step.reason).startswith("too few loss values (2) to judge")
    assert not any(p.symptom == Symptom.NOT_CONVERGED for p in a.diagnosis.problems)


def test_a_sparse_spike_is_judged_against_its_neighbours_and_recovers_in_logged_values():
    steps = list(range(100, 1100, 100))
    loss = [3.0, 2.9, 2.8, 2.7, 8.0, 2.6, 2.5, 2.45, 2.4, 2.35]  # a 3x spike at step 500, back at step 600
    a = analyze(make_run(step_time=[1.0] * 10, scalars={"loss": (steps, loss)}))
    (s,) = a.stability.loss.spikes
    assert (s.step, s.recovery, s.recovery_values, s.recovery_steps) == (500, Recovery.FAST, 1, 100)
    assert not a.stability.explosions  # 8.0 < 10x the level


def test_a_level_of_zero_is_no_level():
    a = analyze(make_run(step_time=[1.0] * 4, scalars={"loss": [0.0, 0.0, 0.0, 5.0]}))
    assert not a.stability.explosions


def test_a_spike_at_the_same_step_in_the_baseline_points_at_a_data_sample():
    def run(name, lr):
        loss = list(np.linspace(3.0, 2.0, 60))
        loss[40] = 60.0  # the same step in both: seed, data order and batch unchanged
        return make_run(name, step_time=[1.0] * 60, scalars={"loss": loss}, settings={"learning_rate": lr})

    a = analyze(run("cur", 2e-4), run("base", 1e-4))
    first = a.diagnosis.problems[0]
    assert first.symptom == Symptom.EXPLODED and first.params["same_step_sample"] is True
    assert first.actions[0] == Action.CHECK_DATA
    L = labels("en")
    from postmortem.report.verdict import verdict_block

    block = verdict_block(a, L, {"stability"})
    assert any("fixed bad sample at a fixed step" in line for line in block.items[0].lines)
    zh = verdict_block(a, labels("zh"), {"stability"})
    assert any("固定的坏样本" in line for line in zh.items[0].lines)


def test_largest_is_the_relative_excursion_in_the_verdict_and_the_findings():
    rng = np.random.default_rng(1)
    loss = list(np.where(np.arange(300) < 100, 4.0, 1.0) + rng.normal(0, 0.01, 300))
    loss[60] += 0.6  # +15% at the level 4: the larger robust z ...
    loss[270] += 0.4  # ... +40% at the level 1: the larger relative excursion
    a = analyze(make_run(step_time=[1.0] * 300, scalars={"loss": loss}))
    spikes = {s.step: s for s in a.stability.loss.spikes}
    assert set(spikes) == {61, 271} and spikes[61].score > spikes[271].score and spikes[271].height > spikes[61].height
    finding = next(f for f in a.findings if f.kind == "loss_spikes")
    problem = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SPIKES)
    assert finding.params["largest_step"] == problem.params["step"] == 271


# --------------------------------------------------------------------------- no impossible numbers


def test_a_timer_longer_than_its_step_is_a_timer_finding_never_a_share():
    n = 40
    e2e = [1.0] * n
    inner = [1.08] * n  # the in-step timer says 1.08 s of a 1.0 s step
    a = analyze(make_run(step_time=e2e, in_step=inner, source="wall-clock:test"))
    assert a.throughput.gap_share.value is None and a.throughput.gap_share.reason.key == "reason.negative-gap"
    assert a.phases.data_wait_share is None
    assert any(p.check == "timer_vs_wall" for p in a.plausibility)
    assert "logged_data_wait_share" not in {e.key for e in a.triage.evidence}
    assert a.triage.verdict == "unknown"
    assert shares_outside(to_metrics(a)) == []


def test_a_share_below_its_mark_names_no_bottleneck():
    n = 60
    rng = np.random.default_rng(2)
    base = make_run("base", step_time=list(1.0 + rng.normal(0, 0.002, n)), in_step=[0.98] * n, source="wall-clock:test")
    cur = make_run("cur", step_time=list(1.1 + rng.normal(0, 0.002, n)), in_step=[1.03] * n, source="wall-clock:test")
    a = analyze(cur, base, AnalysisOptions(run_id="cur"))
    slower = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SLOWER)
    wait = {e.key: e for e in a.triage.evidence}["logged_data_wait_share"]
    assert wait.value - wait.baseline >= 0.02 and wait.value < wait.threshold  # grew, yet below its 10% mark
    assert slower.bottleneck is None and slower.cause is None


def test_the_share_checker_finds_what_is_outside():
    doc = {"throughput": {"steady": {"gap_share": -0.079, "data_wait_share": 0.2}}, "checkpoint_tax": 1.4,
           "profile": {"shares": {"compute": 0.7, "idle": -0.1}},
           "diagnosis": {"problems": [{"cause": {"key": "logged_data_wait_share", "current": -0.079, "baseline": 0.01}}]},
           "baseline": {"deltas": {"checkpoint_tax": {"baseline": 0.01, "current": 0.02, "delta": 0.01, "rel": -3.0}}},
           "mfu": {"value": 1.7}}
    found = shares_outside(doc)
    assert len(found) == 4 and any("gap_share = -0.079" in f for f in found) and any(".idle" in f for f in found)
    assert not any("mfu" in f for f in found)  # MFU above 100% stays a flagged figure, not a share


@pytest.mark.parametrize("folder", [WINDOW / "sparse-explosion", WINDOW / "epoch-ckpt", CONF / "mindyolo-issue402-log",
                                    CONF / "mf-docs-skipdata-log"])
def test_the_real_runs_have_no_share_outside_0_1(folder):
    import jsonschema

    from postmortem.report.metrics_json import dumps, load_schema

    m = json.loads(dumps(to_metrics(analyze(load_run(str(folder))))))
    jsonschema.Draft202012Validator(load_schema()).validate(m)  # the window's basis, the explosions: in the contract
    assert shares_outside(m) == []
    assert m["throughput"]["window"]["basis"] in ("few", "marked") and m["throughput"]["window"]["caveat"]


def test_a_divergence_leads_the_verdict_against_a_baseline_too():
    rng = np.random.default_rng(3)
    base_loss = list(np.linspace(3.0, 2.0, 200) + rng.normal(0, 0.005, 200))
    loss = list(base_loss)
    for i in range(150, 200):
        loss[i] = 4.0 + rng.normal(0, 0.005)  # up 2x at step 151 and never back: below the 10x of an explosion
    base = make_run("base", step_time=list(1.0 + rng.normal(0, 0.01, 200)), scalars={"loss": base_loss})
    cur = make_run("cur", step_time=list(1.0 + rng.normal(0, 0.01, 200)), scalars={"loss": loss})
    a = analyze(cur, base, AnalysisOptions(run_id="cur"))
    assert not a.stability.explosions
    first = a.diagnosis.problems[0]
    assert first.symptom == Symptom.DIVERGED and first.params["step"] == 151
    assert first.actions[:2] == (Action.CHECK_DATA, Action.CHECK_LR)  # §5.2's order


def test_a_changed_setting_that_can_explain_an_explosion_moves_its_check_first():
    loss = list(np.linspace(3.0, 2.0, 60))
    base = make_run("base", step_time=[1.0] * 60, scalars={"loss": loss}, settings={"loss_scale": 1024})
    loss = list(loss)
    loss[40:] = [80.0] * 20
    cur = make_run("cur", step_time=[1.0] * 60, scalars={"loss": loss}, settings={"loss_scale": 65536})
    first = analyze(cur, base).diagnosis.problems[0]
    assert first.symptom == Symptom.EXPLODED and not first.params["same_step_sample"]
    assert first.actions[:2] == (Action.CHECK_LOSS_SCALE, Action.CHECK_PRECISION)  # the precision change first
    assert first.actions[2] == Action.CHECK_DATA  # then §5.2's order
