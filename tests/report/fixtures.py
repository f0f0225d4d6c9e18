"""A hand-built Analysis (no loader, no analyzer) so report tests do not depend on other layers."""

from __future__ import annotations

import math

import polars as pl

from postmortem.analysis import types as t
from postmortem.diagnostics import error, warning
from dataclasses import replace

from postmortem.analysis.diagnosis import diagnose
from postmortem.analysis.identity import identity
from postmortem.model import InventoryEntry, Setting
from postmortem.text import Text

HOSTILE = "<script>alert(1)</script>"
SPIKE_RULE = Text("rule.spikes", window=100, history=20, k=6.0, z=6.0, fast=20)
PHASE_RULE = Text("rule.phases", rtol=0.01)
BOOT = Text("method.bootstrap", low=-0.03, high=-0.02, rel=0.01)


def _steps(n: int, lr_scale: float = 1.0, loss_shift: float = 0.0, step_time: float = 0.5) -> pl.DataFrame:
    rows = []
    smoothed = None
    for s in range(1, n + 1):
        loss = 8.0 * math.exp(-s / (n / 4)) + 2.0 + loss_shift + 0.05 * math.sin(s * 1.7)
        spike = s in (n // 3, n // 2)
        if spike:
            loss += 3.0
        nonfinite = s == (2 * n) // 3
        if nonfinite:
            loss = float("nan")
        smoothed = loss if smoothed is None or math.isnan(loss) else 0.95 * smoothed + 0.05 * loss
        excluded = "compile" if s == 1 else "warmup" if s <= 5 else "checkpoint" if s % 500 == 0 else "nan" if nonfinite else None
        st = 30.0 if s == 1 else step_time * (1.8 if s % 500 == 0 else 1.0) + 0.01 * math.sin(s)
        rows.append(
            {
                "step": s,
                "segment": 0,
                "tokens": float(s * 8 * 1024),
                "elapsed_s": s * step_time,
                "step_time_s": st,
                "data_time_s": 0.01,
                "excluded": excluded,
                "loss": loss,
                "loss_smoothed": smoothed,
                "grad_norm": 1.0 + (5.0 if spike else 0.0) + 0.1 * math.cos(s),
                "lr": lr_scale * 1e-4 * min(1.0, s / (n / 10)),
                "loss_spike": spike,
                "grad_norm_spike": spike,
                "nonfinite": nonfinite,
            }
        )
    return pl.DataFrame(rows, schema=t.STEP_SERIES)


def _fig(value, method: Text | None = None, unit="", source: Text | None = None) -> t.Figure:
    return t.Figure(value, method=method, unit=unit, source=source)


def _setting(key: str) -> Text:
    return Text("source.setting", key=key, origin="config.yaml")


def make_analysis(
    n: int = 2000,
    *,
    run_id: str = "gpt-tiny-lr2x",
    hostile: bool = False,
    baseline: bool = True,
    step_time: float = 0.5,
) -> t.Analysis:
    name = HOSTILE if hostile else "loss"
    steps = _steps(n, lr_scale=2.0, step_time=step_time)
    stats = t.RobustStats(n - 10, step_time, step_time, step_time, 0.005, 0.01, 0.49, 0.51, 0.52, 0.48, 0.9, 0.498, 0.502)
    excluded = steps.filter(pl.col("excluded").is_not_null()).select("step", pl.col("excluded").alias("reason"))
    counts = {r: int(c) for r, c in excluded.group_by("reason").len().sort("reason").iter_rows()}
    window = t.SteadyWindow(6, n, n - excluded.height, excluded, counts, {"compile": Text("rule.exclude.compile"), "warmup": Text("rule.exclude.warmup", run=5, k=3.0)})
    tps = 8 * 1024 / step_time
    throughput = t.Throughput(
        window=window,
        step_time=stats,
        step_time_s=_fig(step_time, Text("method.step-time-e2e"), "s"),
        steps_per_s=_fig(1 / step_time, Text("method.inverse-step-time"), unit="1/s"),
        samples_per_s=_fig(8 / step_time, Text("method.samples-rate"), unit="samples/s"),
        tokens_per_s=_fig(tps, Text("method.tokens-rate"), "tokens/s"),
        global_batch_size=_fig(8, Text("method.setting", key="global_batch_size"), source=_setting("global_batch_size")),
        seq_length=_fig(1024, Text("method.setting", key="seq_length"), source=_setting("seq_length")),
        tokens_per_step=_fig(8192, Text("method.gbs-x-seq")),
        logged={"tokens_per_s": _fig(tps * 1.01, Text("method.logged-median-window", n=1990), source=Text("source.scalars", tag="tokens_per_s"))},
        rank=0,
    )
    size = t.ModelSize(
        params=_fig(124e6, Text("method.params-palm"), source=Text("source.checkpoint", path="checkpoint/rank_0/gpt_1000.ckpt")),
        params_total=_fig(125e6, Text("method.params-total")),
        params_non_embedding=_fig(85e6, Text("method.params-non-embedding")),
        embedding_params=_fig(38e6, Text("method.params-embedding")),
        position_embedding_params=_fig(0.8e6, Text("method.params-position")),
        checkpoint=HOSTILE + ".ckpt" if hostile else "checkpoint/rank_0/gpt_1000.ckpt",
    )
    mfu = t.Mfu(
        model=size,
        flops_per_token=_fig(6 * 124e6 + 12 * 12 * 12 * 64 * 1024, Text("method.flops-palm")),
        flops_per_token_causal=_fig(6 * 124e6 + 6 * 12 * 12 * 64 * 1024, Text("method.flops-causal")),
        peak_flops=t.missing(Text("reason.no-peak", why=Text("reason.device-not-in-table", device="cpu"))),
        devices=_fig(1, Text("method.setting", key="device_num"), source=_setting("device_num")),
        mfu=t.missing(Text("reason.device-unknown")),
        mfu_causal=t.missing(Text("reason.device-unknown")),
        achieved_tflops_per_device=_fig(12.3, Text("method.achieved")),
        logged={},
        architecture={k: _fig(v, Text("method.setting", key=k), source=_setting(k)) for k, v in (("num_layers", 12), ("hidden_size", 768), ("num_heads", 12), ("seq_length", 1024))},
    )
    loss_spikes = tuple(
        t.Spike(s, s, 5.0, 2.1, 1.4 + i * 0.3, 9.0, 1, t.Recovery.FAST if i == 0 else t.Recovery.SLOW, 3 if i == 0 else 40)
        for i, s in enumerate((n // 3, n // 2))
    )
    spike_series = t.SpikeSeries(name, SPIKE_RULE, n, loss_spikes, ((2 * n) // 3,), 1.55, 1.67, 1.7, float(n // 6), {"fast": 1, "slow": 1, "none": 0})
    stability = t.Stability(spike_series, t.SpikeSeries("grad_norm", SPIKE_RULE, n, (), (), None, None, None, None, {}), ((2 * n) // 3,), (), _fig(1.0, Text("method.grad-leads", window=5)))
    convergence = t.Convergence(
        smoothing=Text("method.smoothing", window=50, spikes=2, nonfinite=1),
        initial_loss=_fig(10.0, Text("method.first-loss")),
        final_smoothed_loss=_fig(2.05, Text("method.final-level", n=180, tail=0.1, start=1801, last=2000)),
        min_smoothed_loss=_fig(2.0, Text("method.min-smoothed")),
        convergence_step=_fig(float(n * 0.8), Text("method.first-below-target")),
        convergence_tokens=_fig(n * 0.8 * 8192, Text("method.step-x-tokens")),
        convergence_hours=_fig(0.2, Text("method.elapsed")),
        targets=(t.TimeToTarget(2.1, "baseline", _fig(1500, Text("method.first-below-target")), _fig(1500 * 8192.0, Text("method.step-x-tokens")), _fig(0.21, Text("method.elapsed"))),),
        aux_losses=(),
        eval_loss_last=t.missing(Text("reason.not-logged", tag="eval_loss")),
    )
    phases = t.Phases(
        phases=(
            t.Phase("startup", 1, 5, PHASE_RULE, {"compile": 1}, 30.0, None, None, None, None),
            t.Phase("warmup", 6, n // 10, PHASE_RULE, {}, step_time, tps, 3.2 * 1024**3, 0.02, None),
            t.Phase("main", n // 10 + 1, n, PHASE_RULE, {"checkpoint_save": 4}, step_time, tps, 3.4 * 1024**3, 0.02, 0.31),
        ),
        rule=PHASE_RULE,
        checkpoint_saves=tuple(t.CheckpointSave(s, f"ckpt/{s}.ckpt", 1_500_000_000, 0.4, Text("method.save-step", timing="e2e", step=s)) for s in range(500, n + 1, 500)),
        checkpoint_tax=_fig(0.0016, Text("method.checkpoint-tax", n=n // 500, total=n * step_time)),
    )
    ranks = t.Ranks(
        (t.RankStat(0, n, step_time, False, 0.0), t.RankStat(1, n, step_time * 1.2, True, 0.2)),
        (1,),
        Text("rule.slow-ranks", k=3.0, threshold=0.1, spread=0.05),
    )
    checks = (
        t.ConfigCheck(t.Check.GLOBAL_BATCH, t.CheckStatus.PASS, Text("check.batch-equal", batch=8, product=8), {}),
        t.ConfigCheck(t.Check.NUM_HEADS, t.CheckStatus.WARN, Text("check.needs", keys=HOSTILE) if hostile
                      else Text("check.not-divisible", value=12, by=5), {}),
    )
    findings = (
        t.Finding(t.FindingKind.LOSS_SPIKES, t.FindingSeverity.WARNING, {"count": 2, "not_fast": 1, "largest_step": n // 2, "height_max": 1.7, "tag": name}, "slow"),
        t.Finding(t.FindingKind.NAN_LOSS, t.FindingSeverity.CRITICAL, {"count": 1, "first_step": (2 * n) // 3}),
        t.Finding(t.FindingKind.COMM_BOUND, t.FindingSeverity.INFO, {"comm_share": 0.31, "threshold": 0.25}),
    )
    diags = (
        warning("summary-truncated", path="summary/events.summary.1" if not hostile else HOSTILE, offset=1234, left=12, at=1234),
        error("source-conflict", path="train.log", offset=10, tag="loss", source="train.log", best="summary", steps=1, step=10,
              value=2.5, best_value=2.4),
    )
    comparison = None
    base = None
    if baseline:
        base = make_analysis(n, run_id="gpt-tiny-base", baseline=False, step_time=step_time * 1.05)
        base = _replace_steps(base, _steps(n, lr_scale=1.0, loss_shift=0.1, step_time=step_time * 1.05))
        deltas = (
            t.Delta("tokens_per_s", t.Family.THROUGHPUT, tps / 1.05, tps, tps - tps / 1.05, 0.05, True, t.Better.HIGHER, t.Alignment.STEADY_WINDOW, BOOT),
            t.Delta("step_time_s", t.Family.THROUGHPUT, step_time * 1.05, step_time, -step_time * 0.05, -0.0476, True, t.Better.LOWER, t.Alignment.STEADY_WINDOW, BOOT),
            t.Delta("mfu", t.Family.EFFICIENCY, None, None, None, None, None, t.Better.HIGHER, t.Alignment.STEADY_WINDOW, Text("method.any-change"), Text("reason.missing-in-both")),
            t.Delta("final_smoothed_loss", t.Family.CONVERGENCE, 2.15, 2.05, -0.1, -0.0465, False, t.Better.LOWER, t.Alignment.BY_STEP, Text("method.loss-noise", limit=0.02)),
            t.Delta("loss_spikes", t.Family.STABILITY, 2, 2, 0, 0.0, None, t.Better.LOWER, t.Alignment.WHOLE_RUN, Text("method.any-change")),
            t.Delta("nan_steps", t.Family.STABILITY, 0, 1, 1, None, True, t.Better.LOWER, t.Alignment.WHOLE_RUN, Text("method.any-change")),
        )
        verdicts = (
            t.FamilyVerdict(t.Family.THROUGHPUT, t.Outcome.IMPROVED, ("tokens_per_s",)),
            t.FamilyVerdict(t.Family.EFFICIENCY, t.Outcome.UNKNOWN, ()),
            t.FamilyVerdict(t.Family.CONVERGENCE, t.Outcome.NO_CHANGE, ()),
            t.FamilyVerdict(t.Family.STABILITY, t.Outcome.REGRESSED, ("nan_steps",)),
        )
        settings = t.SettingsDiff(
            added=(t.SettingChange("dataset", None, HOSTILE if hostile else "wiki-103"),),
            removed=(),
            changed=(
                t.SettingChange("learning_rate", 1e-4, 2e-4),
                t.SettingChange("framework_version", "2.9.0", HOSTILE if hostile else "2.10.0"),
            ),
        )
        comparison = t.Comparison("gpt-tiny-base", deltas, verdicts, settings)
    settings = {
        "framework": Setting("MindSpore", "config:config.yaml"), "framework_version": Setting("2.10.0", "log:train.log"),
        "num_layers": Setting(12, "config:config.yaml"), "hidden_size": Setting(768, "config:config.yaml"),
        "seq_length": Setting(1024, "config:config.yaml"), "dataset": Setting(HOSTILE if hostile else "wiki-103", "config:config.yaml"),
        "learning_rate": Setting(2e-4 if baseline else 1e-4, "config:config.yaml"), "optimizer": Setting("AdamWeightDecay", "config:config.yaml"),
        "global_batch_size": Setting(8, "derived:config:config.yaml"), "data_parallel": Setting(1, "config:config.yaml"),
        "last_loss": Setting(2.05, "lineage"),
    }
    analysis = t.Analysis(
        identity=identity(settings),
        run_id=HOSTILE if hostile else run_id,
        experiment="gpt-tiny",
        options=t.AnalysisOptions(),
        steps=steps,
        step_range=(1, n, n),
        throughput=throughput,
        mfu=mfu,
        convergence=convergence,
        stability=stability,
        phases=phases,
        ranks=ranks,
        config_checks=checks,
        findings=findings,
        diagnostics=diags,
        comparison=comparison,
        baseline=base,
    )
    return replace(analysis, diagnosis=diagnose(analysis))  # the verdict is a pure function of the rest


def _replace_steps(a: t.Analysis, steps: pl.DataFrame) -> t.Analysis:
    from dataclasses import replace

    return replace(a, steps=steps)


def inventory(hostile: bool = False) -> tuple[InventoryEntry, ...]:
    return (
        InventoryEntry("summary/events.summary.1", "mindspore_summary", 1024, 4000, 0),
        InventoryEntry("train.log", "textlog", 2048, 2000, None),
        InventoryEntry(HOSTILE if hostile else "notes.txt", None, 12, 0, None, "not claimed"),
    )
