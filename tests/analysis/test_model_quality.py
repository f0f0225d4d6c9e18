import numpy as np
import pytest

from postmortem.analysis import AnalysisOptions, analyze
from postmortem.analysis.types import Recovery

from .runs import make_run
from postmortem.words import english as en


def noisy_loss(n, seed=0, start=3.0):
    rng = np.random.default_rng(seed)
    return list(start + 0.01 * rng.standard_normal(n))


def test_mfu_from_checkpoint_params_and_peak():
    params = {"path": ["c.ckpt"] * 4, "name": ["embedding.word_embeddings", "embedding.position_embeddings",
                                                 "layers.0.w", "adam_m.layers.0.w"],
              "elements": [1000, 100, 9000, 9000], "role": ["model", "model", "model", "optimizer"]}
    ckpts = {"path": ["c.ckpt"], "rank": [0], "step": [10], "kind": ["train"]}
    run = make_run(step_time=[1.0] * 20, tables={"checkpoint_params": params, "checkpoints": ckpts},
                   settings={"global_batch_size": 2, "seq_length": 10, "num_layers": 2, "hidden_size": 4})
    a = analyze(run, options=AnalysisOptions(peak_tflops=1e-6, devices=2))
    m = a.mfu
    assert m.model.params.value == 10000  # without position embeddings, optimizer left out
    assert m.model.params_total.value == 10100
    assert m.model.params_non_embedding.value == 9000
    fpt = 6 * 10000 + 12 * 2 * 4 * 10
    assert m.flops_per_token.value == fpt
    assert m.flops_per_token_causal.value == 6 * 10000 + 6 * 2 * 4 * 10
    assert m.mfu.value == pytest.approx(fpt * 20 / (1e6 * 2))
    assert m.achieved_tflops_per_device.value == pytest.approx(fpt * 20 / 2 / 1e12)


def test_mfu_unknown_peak_keeps_achieved_tflops():
    run = make_run(step_time=[1.0] * 20, scalars={"mfu": [45.0] * 20},
                   settings={"global_batch_size": 2, "seq_length": 10, "num_layers": 2, "hidden_size": 4,
                             "vocab_size": 100, "device_num": 8})
    m = analyze(run).mfu
    assert m.mfu.value is None and "device" in en(m.mfu.reason)
    assert m.model.params.value == 12 * 2 * 16 + 400 and "estimate" in en(m.model.params.method)
    assert m.devices.value == 8 and m.achieved_tflops_per_device.value is not None
    assert m.logged["mfu"].value == pytest.approx(0.45)  # percent converted


def test_single_loss_spike_fast_recovery():
    loss = noisy_loss(300)
    loss[149] = 6.0  # step 150
    run = make_run(step_time=[1.0] * 300, scalars={"loss": loss})
    st = analyze(run).stability
    assert [s.step for s in st.loss.spikes] == [150]
    sp = st.loss.spikes[0]
    assert sp.recovery == Recovery.FAST and sp.recovery_steps == 1 and sp.duration == 1
    assert sp.height == pytest.approx((6.0 - sp.baseline) / sp.baseline)
    assert sp.score > 6


def test_merged_spike_without_recovery_and_grad_leads():
    loss = noisy_loss(200)
    loss[179:] = [9.0] * 21  # diverges at step 180
    grad = noisy_loss(200, seed=3, start=1.0)
    grad[177] = 50.0  # step 178 leads
    run = make_run(step_time=[1.0] * 200, scalars={"loss": loss, "grad_norm": grad})
    st = analyze(run).stability
    assert len(st.loss.spikes) == 1
    sp = st.loss.spikes[0]
    assert sp.step == 180 and sp.recovery == Recovery.NONE and sp.duration >= 2
    assert [s.step for s in st.grad_norm.spikes] == [178]
    assert st.grad_leads_loss.value == 1.0


def test_nan_from_step_40():
    loss = noisy_loss(100)
    loss[39:] = [float("nan")] * 61
    a = analyze(make_run(step_time=[1.0] * 100, scalars={"loss": loss}))
    assert a.stability.nan_steps == tuple(range(40, 101))
    assert a.stability.loss.spikes == ()
    assert a.steps.filter(a.steps["nonfinite"])["step"].to_list() == list(range(40, 101))


def test_phases_warmup_then_cosine():
    n = 1000
    steps = np.arange(1, n + 1)
    lr = np.where(steps <= 100, 1e-4 * steps / 100, 0.5e-4 * (1 + np.cos(np.pi * (steps - 100) / 900)))
    run = make_run(step_time=[1.0] * n, scalars={"lr": list(lr)},
                   events=[{"kind": "checkpoint_save", "step": 500, "duration_s": 10.0}])
    ph = analyze(run).phases
    assert [(p.name, p.start_step, p.end_step) for p in ph.phases] == [
        ("startup", 1, 1), ("warmup", 2, 100), ("decay", 101, 1000)]
    assert ph.phases[2].events == {"checkpoint_save": 1}
    assert ph.checkpoint_saves[0].save_s == 10.0
    assert ph.checkpoint_tax.value == pytest.approx(10.0 / 1000.0)


def test_phases_plateau_and_no_lr():
    lr = [1e-3 * s / 10 for s in range(1, 11)] + [1e-3] * 40 + [5e-4] * 50
    ph = analyze(make_run(step_time=[1.0] * 100, scalars={"lr": lr})).phases
    assert [(p.name, p.start_step, p.end_step) for p in ph.phases] == [
        ("startup", 1, 1), ("warmup", 2, 10), ("main", 11, 50), ("decay", 51, 100)]
    ph2 = analyze(make_run(step_time=[1.0] * 10)).phases
    assert [p.name for p in ph2.phases] == ["startup", "main"] and en(ph2.reason) == "no lr logged"


def test_checkpoint_save_time_from_step_time_and_profile_triage():
    t = [1.0] * 100
    t[49] = 4.0
    prof = {"rank": [0, 0], "step": [10, 11], "computing_s": [0.6, 0.6], "comm_not_overlapped_s": [0.3, 0.3],
            "free_s": [0.1, 0.1], "overlapped_s": [0.2, 0.2]}
    run = make_run(step_time=t, tables={"profile_steps": prof, "checkpoints": {
        "path": ["a.ckpt"], "rank": [0], "step": [50], "bytes": [123], "kind": ["train"]}})
    a = analyze(run)
    ph = a.phases
    assert ph.checkpoint_saves[0].save_s == pytest.approx(3.0) and ph.checkpoint_saves[0].bytes == 123
    # no total given: the step is the sum of its parts, 0.6 + 0.3 + 0.1 = 1.0 s; exposed 0.3 / 1.0
    assert a.profile.breakdown.comm_share == pytest.approx(0.3) and a.profile.breakdown.comm_flag
    assert a.profile.breakdown.total_basis == "parts"
    assert a.triage.verdict == "communication-bound" and a.triage.reason == "comm_exposed"


def test_slow_rank_named():
    extra = [{"step": list(range(1, 51)), "rank": r, "step_time_s": [1.3 if r == 3 else 1.0] * 50, "segment": 0}
             for r in (1, 2, 3)]
    a = analyze(make_run(step_time=[1.0] * 50, extra_steps=extra))
    assert a.ranks.slow_ranks == (3,)
    assert a.ranks.ranks[3].excess == pytest.approx(0.3)


def test_config_checks():
    run = make_run(step_time=[1.0] * 10, settings={
        "global_batch_size": 64, "micro_batch_size": 2, "data_parallel": 4, "gradient_accumulation_steps": 2,
        "pipeline_stage": 4, "micro_batch_num": 2, "num_heads": 12, "hidden_size": 768, "model_parallel": 8,
        "save_checkpoint_steps": 10})
    checks = {c.name: c.status.value for c in analyze(run).config_checks}
    # the run trained 10 steps: what would have refused the launch says the settings read are not
    # the run's (a warning), never that the job cannot start (before launch they fail: test_check.py)
    assert checks == {
        "layout": "unknown",  # no device count
        "global_batch": "warn",  # 2*4*2 = 16 != 64 (the accumulation does not count under a pipeline)
        "pipeline": "warn",
        "num_heads_divisible": "warn",
        "hidden_size_divisible": "pass",
        "checkpoint_interval": "warn",
        "checkpoint_disk": "unknown",  # no vocabulary for the parameter count
    }
