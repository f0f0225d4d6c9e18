"""A hand-built Analysis (no loader, no analyzer) so report tests do not depend on other layers."""

from __future__ import annotations

import math

import polars as pl

from postmortem.analysis import types as t
from postmortem.diagnostics import error, warning
from postmortem.model import InventoryEntry

HOSTILE = "<script>alert(1)</script>"


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


def _fig(value, method="", unit="", source="") -> t.Figure:
    return t.Figure(value, method=method, unit=unit, source=source)


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
    window = t.SteadyWindow(6, n, n - excluded.height, excluded, counts, {"compile": "first step", "warmup": "until step time settles"})
    tps = 8 * 1024 / step_time
    throughput = t.Throughput(
        window=window,
        step_time=stats,
        step_time_s=_fig(step_time, "median e2e step time over the steady window", "s"),
        steps_per_s=_fig(1 / step_time, unit="1/s"),
        samples_per_s=_fig(8 / step_time, unit="samples/s"),
        tokens_per_s=_fig(tps, "global_batch x seq_length / step time", "tokens/s"),
        global_batch_size=_fig(8, source="settings:global_batch_size (config.yaml)"),
        seq_length=_fig(1024, source="settings:seq_length (config.yaml)"),
        tokens_per_step=_fig(8192),
        logged={"tokens_per_s": _fig(tps * 1.01)},
        rank=0,
    )
    size = t.ModelSize(
        params=_fig(124e6, source="checkpoint"),
        params_total=_fig(125e6),
        params_non_embedding=_fig(85e6),
        embedding_params=_fig(38e6),
        position_embedding_params=_fig(0.8e6),
        checkpoint=HOSTILE + ".ckpt" if hostile else "checkpoint/rank_0/gpt_1000.ckpt",
    )
    mfu = t.Mfu(
        model=size,
        flops_per_token=_fig(6 * 124e6 + 12 * 12 * 12 * 64 * 1024, "6N + 12·L·H·Q·T (PaLM)"),
        flops_per_token_causal=_fig(6 * 124e6 + 6 * 12 * 12 * 64 * 1024),
        peak_flops=t.missing("no peak known for device 'cpu'; pass --peak-tflops"),
        devices=_fig(1, source="settings:device_num"),
        mfu=t.missing("peak FLOPS unknown"),
        mfu_causal=t.missing("peak FLOPS unknown"),
        achieved_tflops_per_device=_fig(12.3),
        logged={},
        architecture={"num_layers": _fig(12), "hidden_size": _fig(768), "num_heads": _fig(12), "seq_length": _fig(1024)},
    )
    loss_spikes = tuple(
        t.Spike(s, s, 5.0, 2.1, 1.4 + i * 0.3, 9.0, 1, t.Recovery.FAST if i == 0 else t.Recovery.SLOW, 3 if i == 0 else 40)
        for i, s in enumerate((n // 3, n // 2))
    )
    spike_series = t.SpikeSeries(name, "robust z > 6 over previous 100", n, loss_spikes, ((2 * n) // 3,), 1.55, 1.67, 1.7, float(n // 6), {"fast": 1, "slow": 1, "none": 0})
    stability = t.Stability(spike_series, t.SpikeSeries("grad_norm", "robust z > 6", n, (), (), None, None, None, None, {}), ((2 * n) // 3,), (), _fig(1.0))
    convergence = t.Convergence(
        smoothing="EMA 0.95",
        initial_loss=_fig(10.0),
        final_smoothed_loss=_fig(2.05),
        min_smoothed_loss=_fig(2.0),
        convergence_step=_fig(float(n * 0.8)),
        convergence_tokens=_fig(n * 0.8 * 8192),
        convergence_hours=_fig(0.2),
        targets=(t.TimeToTarget(2.1, "baseline final smoothed loss", _fig(1500), _fig(1500 * 8192.0), _fig(0.21)),),
        aux_losses=(),
        eval_loss_last=t.missing("no eval loss logged"),
    )
    phases = t.Phases(
        phases=(
            t.Phase("startup", 1, 5, "leading compile steps", {"compile": 1}, 30.0, None, None, None, None),
            t.Phase("warmup", 6, n // 10, "lr rising", {}, step_time, tps, 3.2 * 1024**3, 0.02, None),
            t.Phase("main", n // 10 + 1, n, "lr falls", {"checkpoint_save": 4}, step_time, tps, 3.4 * 1024**3, 0.02, 0.31),
        ),
        rule="by lr schedule",
        checkpoint_saves=tuple(t.CheckpointSave(s, f"ckpt/{s}.ckpt", 1_500_000_000, 0.4, "step time minus median") for s in range(500, n + 1, 500)),
        checkpoint_tax=_fig(0.0016),
    )
    ranks = t.Ranks(
        (t.RankStat(0, n, step_time, False, 0.0), t.RankStat(1, n, step_time * 1.2, True, 0.2)),
        (1,),
        "rank median > 1.1 x median of ranks",
    )
    checks = (
        t.ConfigCheck("global_batch", t.CheckStatus.PASS, "8 = 1 x 8 x 1", {}),
        t.ConfigCheck(HOSTILE if hostile else "tp_divides_heads", t.CheckStatus.WARN, f"value {HOSTILE}" if hostile else "heads 12 not divisible by tp 5", {}),
    )
    findings = (
        t.Finding(t.FindingKind.LOSS_SPIKES, t.FindingSeverity.WARNING, "2 loss spikes; 1 recovered slowly"),
        t.Finding(t.FindingKind.NAN_LOSS, t.FindingSeverity.CRITICAL, f"NaN loss at step {(2 * n) // 3:,}"),
        t.Finding(t.FindingKind.COMM_BOUND, t.FindingSeverity.INFO, "Exposed communication is 31% of the step"),
    )
    diags = (
        warning("summary-truncated", "last record truncated", "summary/events.summary.1" if not hostile else HOSTILE, 1234),
        error("log-conflict", "two sources disagree on loss at step 10", "train.log", 10),
    )
    comparison = None
    base = None
    if baseline:
        base = make_analysis(n, run_id="gpt-tiny-base", baseline=False, step_time=step_time * 1.05)
        base = _replace_steps(base, _steps(n, lr_scale=1.0, loss_shift=0.1, step_time=step_time * 1.05))
        deltas = (
            t.Delta("tokens_per_s", "throughput", tps / 1.05, tps, tps - tps / 1.05, 0.05, True, "higher", "steady window", "bootstrap CI"),
            t.Delta("step_time_s", "throughput", step_time * 1.05, step_time, -step_time * 0.05, -0.0476, True, "lower", "steady window", "bootstrap CI"),
            t.Delta("mfu", "efficiency", None, None, None, None, None, "higher", "steady window", "", "peak FLOPS unknown"),
            t.Delta("final_smoothed_loss", "convergence", 2.15, 2.05, -0.1, -0.0465, False, "lower", "by step", "within run noise"),
            t.Delta("loss_spikes", "stability", 2, 2, 0, 0.0, None, "lower", "whole run", "count"),
        )
        verdicts = (
            t.FamilyVerdict("throughput", "improved", ("tokens_per_s",)),
            t.FamilyVerdict("efficiency", "unknown", ()),
            t.FamilyVerdict("convergence", "no significant change", ()),
            t.FamilyVerdict("stability", "regressed", ("nan_steps",)),
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
    return t.Analysis(
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


def _replace_steps(a: t.Analysis, steps: pl.DataFrame) -> t.Analysis:
    from dataclasses import replace

    return replace(a, steps=steps)


def inventory(hostile: bool = False) -> tuple[InventoryEntry, ...]:
    return (
        InventoryEntry("summary/events.summary.1", "mindspore_summary", 1024, 4000, 0),
        InventoryEntry("train.log", "textlog", 2048, 2000, None),
        InventoryEntry(HOSTILE if hostile else "notes.txt", None, 12, 0, None, "not claimed"),
    )
