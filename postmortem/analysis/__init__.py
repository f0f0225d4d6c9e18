"""The analysis layer: pure functions of a ``Run``; ``analyze`` is the one entry point.

Single-rank series (step time, loss, ...) come from one rank: for step times the rank with the
most steps (lowest id on ties); for scalars the lowest rank that logged the tag. Other ranks only
feed ``ranks`` (slow-rank detection) and the profile/memory sums.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import polars as pl

from .. import diagnostics as dg
from ..model import STEPS, Run
from .compare import compare
from .configcheck import config_checks
from .convergence import AUX_TAGS, StepClock, convergence, smooth
from .diagnosis import diagnose
from .domains import comm_domains
from .failure import judge as judge_failure
from .history import PastRun, history
from .identity import identity, implied_settings
from .findings import findings
from .health import health
from .layout import strategy_layout
from .mfu import mfu
from .phases import phases
from .plausibility import plausibility
from .profile import profile, profile_step_times
from .ranks import layout as rank_layout
from .ranks import ranks
from .stability import stability
from .throughput import batch_from_lineage, global_batch_size, last_per_step, seq_length, throughput
from .triage import triage
from .types import PROFILE_STEP_SERIES, STEP_SERIES, Analysis, AnalysisOptions, BaselineAnalysis
from .window import exclusion_reasons, steady_window

__all__ = ["analyze", "analyze_baseline", "Analysis", "AnalysisOptions", "BaselineAnalysis"]


def primary_steps(run: Run) -> tuple[pl.DataFrame, int | None]:
    """One row per step of the rank with the most steps, sorted by step."""
    steps = run.tables["steps"]
    if steps.is_empty():
        st = run.series("step_time")  # no joined steps table: fall back on a logged step time
        if st.is_empty():
            return steps, None
        steps = pl.DataFrame({"step": st["step"], "step_time_s": st["value"], "wall_time": st["wall_time"]})
        steps = steps.with_columns(pl.lit(0, pl.Int32).alias("segment"), pl.lit(0, pl.Int32).alias("rank"))
        steps = steps.select([pl.col(c).cast(t) if c in steps.columns else pl.lit(None, t).alias(c)
                              for c, t in STEPS.items()])
    # narrow first: a group-by of the whole frame copies every column
    counts = steps.select("rank").group_by("rank").len().sort(["len", "rank"], descending=[True, False], nulls_last=True)
    rank = counts["rank"][0]
    one = steps.filter(pl.col("rank") == rank) if rank is not None else steps.filter(pl.col("rank").is_null())
    return last_per_step(one), rank


def tag_series(scalars: pl.DataFrame, tags: tuple[str, ...]) -> dict[str, pl.DataFrame]:
    """(step, value, wall_time) per tag from its lowest rank, like Run.series but in one pass."""
    # Each tag's lowest rank first (a pass that copies nothing), then only its rows are taken.
    wanted = pl.col("tag").is_in(list(tags))
    rank = pl.col("rank").fill_null(-1)
    lowest = scalars.lazy().filter(wanted).group_by("tag").agg(rank.min().alias("low")).collect()
    taken = [(pl.col("tag") == tag) & (rank == low) for tag, low in lowest.iter_rows()]
    df = scalars.filter(wanted & pl.any_horizontal(taken)) if taken else scalars.clear()
    parts = {t: last_per_step(g).select("step", "value", "wall_time")
             for (t,), g in df.partition_by("tag", as_dict=True).items()}
    empty = scalars.select("step", "value", "wall_time").clear()
    return {t: parts.get(t, empty) for t in tags}


def wait_source(steps: pl.DataFrame, scalars: pl.DataFrame) -> str:
    """Who wrote the records the wait between steps comes from: the in-step timer's source (the
    gap is the step's time beyond it), else a logged data time's: "callback" (postmortem's callback
    measures it in the training process), "summary" (summary / TensorBoard scalars), or "log"."""
    named = steps["in_step_source"].drop_nulls() if "in_step_source" in steps.columns else pl.Series([], dtype=pl.Utf8)
    if named.is_empty():
        named = scalars.filter(pl.col("tag") == "data_time")["source"].cast(pl.Utf8).drop_nulls()
    if named.is_empty():
        return "log"
    top = str(named.mode().sort()[0])
    if top.startswith("callback"):
        return "callback"
    if top.startswith(("summary", "tensorboard")):
        return "summary"
    return "log"


def _steps_of(df: pl.DataFrame) -> set[int]:
    return set(df["step"].drop_nulls().to_list())


def _event_steps(run: Run, kind: str) -> set[int]:
    return _steps_of(run.tables["events"].filter(pl.col("kind") == kind))


def analyze_baseline(baseline: Run, options: AnalysisOptions) -> BaselineAnalysis:
    """A baseline as ``analyze`` compares against it, for when it is better made beforehand: the
    build makes it in a helper process while this one reads the run (and sends back only this)."""
    own = analyze(baseline, None, dataclasses.replace(options, run_id=None, experiment=None))
    return BaselineAnalysis(own, {**baseline.settings, **implied_settings(own.throughput.implied, baseline.settings)})


def _with_profile_steps(run: Run) -> tuple[Run, list[dg.Diagnostic]]:
    """A run without training step times takes them from its profile (e2e = the profiled step's
    total, in the profiler's own step numbering); a run with them keeps its own."""
    if not run.tables["steps"].is_empty() or run.tables["profile_steps"].is_empty():
        return run, []
    steps = profile_step_times(run.tables["profile_steps"])
    if steps.is_empty():
        return run, []
    note = dg.info("steps-from-profile", sources=sorted(set(steps["source"].to_list())))
    return dataclasses.replace(run, tables={**run.tables, "steps": steps}), [note]


def analyze(
    run: Run, baseline: Run | BaselineAnalysis | None = None, options: AnalysisOptions = AnalysisOptions(),
    past: Sequence[PastRun] | None = None,
) -> Analysis:
    """``past``: the experiment's earlier archived runs, newest first (pastruns.py), for what is
    normal for it (history.py); None: no history asked (a baseline's own analysis)."""
    run, profile_notes = _with_profile_steps(run)
    scalars = run.tables["scalars"]
    steps, rank = primary_steps(run)
    series_by_tag = tag_series(scalars, ("loss", "grad_norm", "lr", "overflow", "eval_loss", *AUX_TAGS))
    loss, grad, lr = series_by_tag["loss"], series_by_tag["grad_norm"], series_by_tag["lr"]

    nonfinite = (_steps_of(loss.filter(~pl.col("value").is_finite()))
                 | _steps_of(grad.filter(~pl.col("value").is_finite())))
    overflow = _event_steps(run, "overflow") | _steps_of(series_by_tag["overflow"].filter(pl.col("value") > 0))
    ckpt_steps = _event_steps(run, "checkpoint_save") | _steps_of(
        run.tables["checkpoints"].filter(pl.col("kind") == "train"))

    skipped = _event_steps(run, "skip")
    reasons = exclusion_reasons(
        steps, checkpoint_steps=ckpt_steps, eval_steps=_event_steps(run, "eval"),
        compile_steps=_event_steps(run, "compile"), nonfinite_steps=nonfinite, overflow_steps=overflow,
        pause_steps=_event_steps(run, "pause"), skip_steps=skipped,
        restart_steps=_event_steps(run, "restart"),
    )
    window = steady_window(steps, reasons)
    tp, throughput_notes = throughput(steps, reasons, window, global_batch_size(run, options), seq_length(run, options),
                           scalars, options, rank, batch_from_lineage(run, options))
    stab = stability(loss, grad, tuple(sorted(overflow)), options.spike_window, options.spike_z, tuple(sorted(skipped)))

    def spike_steps(series: tuple) -> list[int]:
        return [s for sp in series for s in range(sp.step, sp.end_step + 1)]

    loss_spike_steps = tuple(spike_steps(stab.loss.spikes))
    # the loss figures leave out the spikes and the skipped-data steps (the loss of a batch the update left out)
    loss_left_out = tuple(sorted({*loss_spike_steps, *skipped}))

    # ---- the per-step series (union of timed steps and loss steps)
    gap = pl.coalesce(pl.col("gap_s"), pl.col("step_time_s") - pl.col("in_step_s"))
    timed = steps.select(
        "step", "segment", "step_time_s", "in_step_s", gap.alias("gap_s"), "data_time_s",
        pl.col("wall_time").alias("wall"), pl.Series("excluded", reasons, dtype=pl.Utf8).replace("", None),
    )
    sm = smooth(loss, options.smoothing_window, loss_left_out).select(
        "step", pl.col("smoothed").alias("loss_smoothed"))
    per = (
        timed.join(loss.select("step", pl.col("value").alias("loss")), on="step", how="full", coalesce=True)
        .join(sm, on="step", how="left")
        .join(grad.select("step", pl.col("value").alias("grad_norm")), on="step", how="left")
        .join(lr.select("step", pl.col("value").alias("lr")), on="step", how="left")
        .sort("step")
    )
    t = per["step_time_s"].fill_null(float("nan")).to_numpy()
    wall = per["wall"].fill_null(float("nan")).to_numpy()
    if np.isfinite(wall).sum() >= 2:
        elapsed = wall - wall[np.isfinite(wall)][0]
    else:
        elapsed = np.cumsum(np.nan_to_num(t, nan=0.0))
        elapsed = np.where(np.isfinite(t), elapsed - (t[np.isfinite(t)][0] if np.isfinite(t).any() else 0.0), np.nan)
    tps = tp.tokens_per_step.value

    per = per.with_columns(
        (pl.col("step").cast(pl.Float64) * tps if tps is not None else pl.lit(None, pl.Float64)).alias("tokens"),
        pl.Series("elapsed_s", elapsed).fill_nan(None),
        pl.col("step").is_in(pl.Series(spike_steps(stab.loss.spikes), dtype=pl.Int64).implode()).alias("loss_spike"),
        pl.col("step").is_in(pl.Series(spike_steps(stab.grad_norm.spikes), dtype=pl.Int64).implode())
        .alias("grad_norm_spike"),
        pl.col("step").is_in(pl.Series(sorted(stab.nan_steps), dtype=pl.Int64).implode()).alias("nonfinite"),
    )
    series = per.select([pl.col(c).cast(t) for c, t in STEP_SERIES.items()])

    if isinstance(baseline, Run):
        baseline = analyze_baseline(baseline, options)
    base_analysis = baseline.analysis if baseline is not None else None
    clock = StepClock(series, tps)
    aux = {tag: series_by_tag[tag] for tag in AUX_TAGS}
    conv = convergence(loss, aux, series_by_tag["eval_loss"], clock, options,
                       base_analysis.convergence.final_smoothed_loss.value if base_analysis else None,
                       loss_spike_steps, tuple(sorted(skipped)))

    device = options.device or run.setting("device")
    prof, rank_profiles, stragglers = profile(run, str(device) if device else None)
    if prof is not None:
        t = run.tables
        prof = dataclasses.replace(prof, domains=comm_domains(t["profile_comm"], t["comm_groups"], t["profile_steps"],
                                                              run.settings, t["profile_freq"], t["profile_free"]))
    # per-phase communication shares only where the run's steps are the profile's own
    phase_profile = prof.steps if prof is not None and profile_notes else pl.DataFrame(schema=PROFILE_STEP_SERIES)
    # each step's wait for data / host: the gap between steps or a logged data time (the larger)
    waits = per.with_columns(pl.max_horizontal("gap_s", "data_time_s").alias("wait_s"))
    ph = phases(waits, reasons_for(per, series), lr, run.tables["events"], run.tables["checkpoints"],
                phase_profile, run.tables["memory"], tps, tp.step_time_s.value, tp.timing)
    kept_steps = (series.filter(pl.col("excluded").is_null() & pl.col("step_time_s").is_not_null())["step"].to_numpy()
                  if window.basis in ("steady", "few") else np.array(window.used_steps, dtype=np.int64))
    rk = ranks(run.tables["steps"], kept_steps, profile=rank_profiles, stragglers=stragglers,
               layout=rank_layout(run.settings, run.tables["profile_steps"].select("rank", "file")))
    logged_wait = ph.data_wait_share if not profile_notes else None  # profile-made steps: their wait is the profile's own
    tri = triage(prof, stragglers, logged_wait, {k: run.setting(k) for k in ("pipeline_stage", "micro_batch_num")},
                 base_analysis.triage if base_analysis else None, wait_source(steps, scalars))
    saves = [s.save_s for s in ph.checkpoint_saves if s.save_s is not None]
    trained = int(series.filter(pl.col("step_time_s").is_not_null() | pl.col("loss").is_not_null()).height)
    checks = config_checks(run, tp.step_time_s.value, float(np.median(saves)) if saves else None, options.devices, trained)
    m = mfu(run, options, tp, window, kept_steps)

    settings = {**run.settings, **implied_settings(tp.implied, run.settings)}  # the batch the logged rates imply
    # each table's distinct steps first, by the streaming engine: the in-memory one builds a hash
    # table as long as the column (millions of rows at thousands of ranks)
    steps_seen = pl.concat([t.lazy().select(pl.col("step").unique()).collect(engine="streaming")["step"]
                            for t in (run.tables["steps"], scalars)]).drop_nulls()
    step_range = (int(steps_seen.min()), int(steps_seen.max()), int(steps_seen.n_unique())) if steps_seen.len() else None
    run_health = health(run)
    analysis = Analysis(
        run_id=options.run_id or run.name, experiment=options.experiment, options=options, steps=series,
        step_range=step_range, throughput=tp, mfu=m, convergence=conv, stability=stab, phases=ph, ranks=rk,
        config_checks=checks, findings=(), diagnostics=(*run.diagnostics, *profile_notes, *throughput_notes), baseline=base_analysis,
        plausibility=plausibility(tp, m), profile=prof, triage=tri, identity=identity(settings), health=run_health,
        strategy=strategy_layout(run),
        failure=judge_failure(run.tables, healthy_step=run_health.resume.step if run_health and run_health.resume else None),
    )
    if baseline is not None:
        comparison = compare(analysis, baseline.analysis, settings, baseline.settings)
        analysis = dataclasses.replace(analysis, comparison=comparison)
    if past is not None:
        values = {k: v.value for k, v in settings.items()}
        analysis = dataclasses.replace(analysis, history=history(analysis, past, values, options.history_runs))
    analysis = dataclasses.replace(analysis, findings=findings(analysis, run))
    return dataclasses.replace(analysis, diagnosis=diagnose(analysis))


def reasons_for(per: pl.DataFrame, series: pl.DataFrame) -> np.ndarray:
    """Exclusion reasons aligned with the per-step frame ("" = kept or untimed)."""
    return series["excluded"].fill_null("").to_numpy().astype(str)
