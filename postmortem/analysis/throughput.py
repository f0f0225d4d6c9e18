"""Steady-window throughput: robust e2e step time, and samples/tokens per second from it.

Sizes of a step (samples, tokens) come from the settings (global batch size x sequence length);
a rate the run logged itself (samples_per_s, tokens_per_s) times the step time gives them too,
which checks the settings and stands in for a missing sequence length.
"""

from __future__ import annotations


import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..model import Run
from ..text import Text
from .stats import robust_stats
from .types import AnalysisOptions, Figure, SteadyWindow, Throughput, missing
from .window import window_basis


def setting_figure(run: Run, key: str) -> Figure | None:
    s = run.settings.get(key)
    if s is None:
        return None
    try:
        value = float(s.value)
    except (TypeError, ValueError):
        return None
    return Figure(value, method=Text("method.setting", key=key), source=Text("source.setting", key=key, origin=s.source))


def _num(run: Run, key: str) -> tuple[float, Text] | None:
    f = setting_figure(run, key)
    return (f.value, f.source) if f is not None and f.value is not None else None


def global_batch_size(run: Run, options: AnalysisOptions) -> Figure:
    if options.global_batch_size is not None:
        return Figure(float(options.global_batch_size), method=GIVEN, source=OPTIONS, unit="samples")
    direct = setting_figure(run, "global_batch_size")
    if direct is not None:
        return Figure(direct.value, method=direct.method, source=direct.source, unit="samples")
    micro_key = "micro_batch_size" if _num(run, "micro_batch_size") else "batch_size"
    micro = _num(run, micro_key)
    if micro is None:
        return missing(Text("reason.no-batch-size"), unit="samples")
    parts: list[tuple[str, tuple[float, Text]]] = [(micro_key, micro)]
    for key in ("data_parallel", "gradient_accumulation_steps"):
        got = _num(run, key)
        if got is not None:
            parts.append((key, got))
    pipeline = _num(run, "pipeline_stage")
    if pipeline is not None and pipeline[0] > 1:
        mbn = _num(run, "micro_batch_num")
        if mbn is not None:
            parts.append(("micro_batch_num", mbn))
    value = float(np.prod([p[1][0] for p in parts]))
    missing_factors = [k for k in ("data_parallel", "gradient_accumulation_steps") if _num(run, k) is None]
    method = (Text("method.batch-product-assumed", factors=[name for name, _ in parts], assumed=missing_factors)
              if missing_factors else Text("method.batch-product", factors=[name for name, _ in parts]))
    return Figure(value, method=method, source=sources(*(p[1][1] for p in parts)), unit="samples")


GIVEN = Text("method.given")
OPTIONS = Text("source.options")


def sources(*parts: Text | None) -> Text | None:
    """Several inputs' sources as one."""
    known = [p for p in parts if p is not None]
    if len(known) <= 1:
        return known[0] if known else None
    return Text("source.list", items=known)


def batch_from_lineage(run: Run, options: AnalysisOptions) -> bool:
    """Whether the global batch size rests on lineage's batch_size alone (the dataset's batch
    operation, not necessarily the samples of a step)."""
    if options.global_batch_size is not None:
        return False
    key = next((k for k in ("global_batch_size", "micro_batch_size", "batch_size") if setting_figure(run, k)), None)
    return key is not None and run.settings[key].source == "lineage"


def seq_length(run: Run, options: AnalysisOptions) -> Figure:
    if options.seq_length is not None:
        return Figure(float(options.seq_length), method=GIVEN, source=OPTIONS, unit="tokens")
    f = setting_figure(run, "seq_length")
    if f is not None:
        return Figure(f.value, method=f.method, source=f.source, unit="tokens")
    return missing(Text("reason.no-setting", key="seq_length"), unit="tokens")


LOGGED_TOLERANCE = 0.20  # a size implied by a logged rate may differ this much from the settings'
TIMERS = {"step_time_s": "e2e", "in_step_s": "in-step"}  # the timers a logged rate may have been divided by


def timing_basis(steps: pl.DataFrame) -> str:
    """What steps.step_time_s holds (TIMING_BASES), by the sources of most timed rows."""
    timed = steps.filter(pl.col("step_time_s").is_finite())
    if timed.is_empty():
        return "none"
    src = timed["source"].fill_null("")
    counts = {"e2e": int(src.str.starts_with("wall-clock:").sum()), "timer": int(src.str.starts_with("timer:").sum())}
    counts["logged"] = timed.height - counts["e2e"] - counts["timer"]
    return max(counts, key=lambda k: (counts[k], k == "e2e"))


def last_per_step(df: pl.DataFrame) -> pl.DataFrame:
    """Sorted by step, the last row of each step (cheaper than unique(maintain_order=True))."""
    df = df.sort("step", maintain_order=True)
    return df.filter(pl.col("step") != pl.col("step").shift(-1).fill_null(-(2**62)))


def one_rank_per_tag(scalars: pl.DataFrame, where: pl.Expr, rank: int | None = None) -> pl.DataFrame:
    """The rows `where` holds, of one rank per tag: `rank` where it logged the tag, else the tag's
    lowest; in one pass that copies only the rows taken, not every rank's (thousands of ranks)."""
    has = (pl.col("rank") == rank).any() if rank is not None else pl.lit(False)
    per_tag = scalars.lazy().filter(where).group_by("tag").agg(pl.col("rank").min().alias("low"), has.alias("has")).collect()
    taken = []
    for tag, low, mine in per_tag.iter_rows():
        chosen = rank if mine else low  # None: no row of the tag has a rank, all of them are taken
        taken.append((pl.col("tag") == tag) & (pl.col("rank") == chosen if chosen is not None else pl.lit(True)))
    return scalars.filter(where & pl.any_horizontal(taken)) if taken else scalars.clear()


def logged_medians(scalars: pl.DataFrame, window: SteadyWindow, tags: tuple[str, ...],
                   kept_steps: np.ndarray | None = None) -> dict[str, Figure]:
    """Median over the steady steps of what the run logged itself (one rank per tag). A tag
    logged at none of the kept steps (another stream's steps) falls back to the window's range."""
    out: dict[str, Figure] = {}
    if window.start_step is None:
        return out
    df = one_rank_per_tag(scalars, pl.col("tag").is_in(list(tags))
                          & pl.col("step").is_between(window.start_step, window.end_step) & pl.col("value").is_finite())
    for (tag,), part in sorted(df.partition_by("tag", as_dict=True).items()):
        where = "method.logged-median-window"
        if kept_steps is not None and kept_steps.size:
            inside = part.filter(pl.col("step").is_in(pl.Series(kept_steps, dtype=pl.Int64).implode()))
            if not inside.is_empty():
                part, where = inside, "method.logged-median-steady"
        out[str(tag)] = Figure(float(part["value"].median()), method=Text(where, n=part.height),
                               source=Text("source.scalars", tag=str(tag)))
    return out


def logged_per_step(scalars: pl.DataFrame, kept: pl.DataFrame, tag: str, rank: int | None) -> Figure | None:
    """What one step holds (samples or tokens) by a logged per-second rate: the median of rate x
    step time over the steady steps (`kept`: their rows of the steps table), with the timer (e2e
    or in-step) that keeps the product most constant: the one the callback divided by.
    Per-device rates (raw tag ".../p") are left out."""
    if kept.is_empty():
        return None
    per_device = pl.col("raw_tag").is_in([r for r in scalars["raw_tag"].unique().to_list() if r and r.endswith("/p")])
    df = one_rank_per_tag(scalars, (pl.col("tag") == tag) & pl.col("value").is_finite() & (pl.col("value") > 0) & ~per_device,
                          rank)
    if df.is_empty():
        return None
    rate_step, rate = df["step"].to_numpy(), df["value"].to_numpy()
    if rate_step.size > 1 and not np.all(np.diff(rate_step) > 0):  # one value per step, sorted
        df = last_per_step(df)
        rate_step, rate = df["step"].to_numpy(), df["value"].to_numpy()
    step = kept["step"].to_numpy()
    at = np.minimum(np.searchsorted(rate_step, step), rate_step.size - 1)
    matched = rate_step[at] == step
    best: tuple[float, float, str, int] | None = None  # (spread, median, timer, n)
    for column, name in TIMERS.items():
        timer = kept[column].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        p = rate[at[matched]] * timer[matched]
        p = p[np.isfinite(p) & (p > 0)]
        if p.size == 0:
            continue
        med = float(np.median(p))
        spread = float(np.median(np.abs(p - med))) / med
        if best is None or spread < best[0]:
            best = (spread, med, name, int(p.size))
    if best is None:
        return None
    spread, med, name, n = best
    unit = "samples" if tag == "samples_per_s" else "tokens"
    return Figure(med, method=Text("method.logged-per-step", tag=tag, timer=Text(f"timer.{name}"), n=n, spread=spread),
                  source=Text("source.scalars", tag=tag), unit=unit)


PER_DEVICE = "/device"  # a rate's unit suffix: printed per device (as_printed)


def as_printed(scalars: pl.DataFrame, logged: dict[str, Figure], tags: tuple[str, ...], why: Figure, unit: str) -> Figure:
    """The steady median of a rate the run printed itself (``logged``), as its throughput where no
    batch size makes one: in the unit printed (a per-device rate stays per device, said so), with
    why the computed rate is missing."""
    for tag in tags:
        f = logged.get(tag)
        if f is None or f.value is None or not f.value > 0:
            continue
        raw = scalars.filter(pl.col("tag") == tag)["raw_tag"].cast(pl.Utf8).drop_nulls()
        printed = str(raw.mode().sort()[0]) if raw.len() else tag
        per_device = printed.endswith("/p") or tag == "throughput" or "per card" in printed or "per_card" in printed
        return Figure(f.value, method=Text("method.rate-as-printed" + ("/device" if per_device else ""), printed=printed,
                                           inner=f.method, why=why.reason),
                      source=f.source, unit=unit + (PER_DEVICE if per_device else ""))
    return why


def _whole(x: float, within: float) -> float:
    """x rounded to a whole number when it is that close (relative) to one: sizes are counts."""
    r = float(round(x))
    return r if r >= 1 and abs(x - r) <= within * x else x


def _off(a: float, b: float) -> bool:
    return max(a, b) > (1 + LOGGED_TOLERANCE) * min(a, b)


def batch_and_tokens(gbs: Figure, seq: Figure, samples: Figure | None, tokens: Figure | None,
                     gbs_from_lineage: bool) -> tuple[Figure, Figure, list[Diagnostic]]:
    """(global batch size, tokens per step, diagnostics): the settings' sizes cross-checked
    against the sizes the logged rates imply. Lineage's batch_size is the dataset's batch
    operation, which a dataset yielding whole batches reports as 1: where the logged throughput
    contradicts it, the logged figure is used. Other settings are kept, with a warning."""
    notes: list[Diagnostic] = []
    implied = samples
    if implied is None and tokens is not None and seq.value:
        implied = Figure(tokens.value / seq.value, method=Text("method.per-seq-length", inner=tokens.method),
                         source=tokens.source, unit="samples")
    if implied is not None:
        implied = Figure(_whole(implied.value, 0.05), method=implied.method, source=implied.source, unit="samples")
    if gbs.value is None and implied is not None:
        gbs = Figure(implied.value, method=Text("method.implied-no-batch", inner=implied.method),
                     source=implied.source, unit="samples")
    elif gbs.value is not None and implied is not None and _off(gbs.value, implied.value):
        if gbs_from_lineage:
            notes.append(diag.warning("batch-size-contradicted", variant="lineage", batch=gbs.value,
                                      implied=implied.value, method=implied.method))
            gbs = Figure(implied.value, method=Text("method.implied-lineage-contradicted", inner=implied.method,
                                                    batch=gbs.value), source=implied.source, unit="samples")
        else:
            notes.append(diag.warning("batch-size-contradicted", batch=gbs.value, source=gbs.source or gbs.method,
                                      implied=implied.value, method=implied.method))

    if gbs.value is not None and seq.value is not None:
        tps = Figure(gbs.value * seq.value, method=Text("method.gbs-x-seq"), unit="tokens",
                     source=sources(gbs.source, seq.source))
    elif tokens is not None:
        why = Text("reason.no-setting", key="seq_length") if seq.value is None else Text("reason.batch-unknown")
        tps = Figure(_whole(tokens.value, 0.01), method=Text("method.with-why", inner=tokens.method, why=why),
                     source=tokens.source, unit="tokens")
    else:
        tps = missing(gbs.reason or seq.reason or Text("reason.unknown"), unit="tokens")
    return gbs, tps, notes


def throughput(
    steps: pl.DataFrame,
    reasons: np.ndarray,
    window: SteadyWindow,
    gbs: Figure,
    seq: Figure,
    scalars: pl.DataFrame,
    options: AnalysisOptions,
    rank: int | None = None,
    gbs_from_lineage: bool = False,
) -> tuple[Throughput, list[Diagnostic]]:
    keep = window_basis(steps, reasons)[0]  # the kept steps; few or marked ones rather than none (window.py)
    caveat = window.caveat
    t = steps["step_time_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    inner = steps["in_step_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    gap = steps["gap_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    gap = np.where(np.isfinite(gap), gap, t - inner)  # the contract's gap, else from both timers
    timing = timing_basis(steps)
    stats = robust_stats(t[keep], options.bootstrap_resamples, options.seed)
    method = Text({"timer": "method.step-time-timer", "logged": "method.step-time-logged"}.get(timing, "method.step-time-e2e"))
    if stats is None or stats.median <= 0:
        reason = window.reason or Text("reason.no-usable-step-time")
        step_time = missing(reason, unit="s")
        per_s = missing(reason, unit="steps/s")
    else:
        step_time = Figure(stats.median, method=method, source=Text("source.step-times", timing=timing), unit="s",
                           caveat=caveat)
        per_s = Figure(1.0 / stats.median, method=Text("method.inverse-step-time"), unit="steps/s", caveat=caveat)

    inner_kept = inner[keep & np.isfinite(inner)] if timing != "timer" else inner[:0]
    if inner_kept.size:
        in_step = Figure(float(np.median(inner_kept)), source=Text("source.in-step-timer"), unit="s",
                         method=Text("method.in-step-median"))
    else:
        in_step = missing(Text("reason.timer-only" if timing == "timer" else "reason.no-in-step-timer"), unit="s")
    both = keep & np.isfinite(t) & np.isfinite(gap)
    share = float(gap[both].sum() / t[both].sum()) if both.any() and t[both].sum() > 0 else None
    if share is not None and share < 0:  # the in-step timer ran longer than the step: a finding about the timer (plausibility.py), no share
        gap_share = missing(Text("reason.negative-gap", share=share, n=int(both.sum())), unit="fraction")
    elif share is not None:
        gap_share = Figure(min(share, 1.0), unit="fraction", method=Text("method.gap-share", n=int(both.sum())))
    else:
        gap_share = missing(in_step.reason or Text("reason.no-in-step-timer"), unit="fraction")

    kept = steps.filter(pl.Series(keep, dtype=pl.Boolean)) if steps.height else steps
    kept_steps = kept["step"].to_numpy()
    samples = logged_per_step(scalars, kept, "samples_per_s", rank)
    tokens = logged_per_step(scalars, kept, "tokens_per_s", rank)
    gbs, tokens_per_step, notes = batch_and_tokens(gbs, seq, samples, tokens, gbs_from_lineage)

    def rate(size: Figure, unit: str, what: str) -> Figure:
        if per_s.value is None:
            return missing(per_s.reason or Text("reason.no-step-time"), unit=unit)
        if size.value is None:
            return missing(size.reason or Text(f"reason.{what}-unknown"), unit=unit)
        return Figure(size.value * per_s.value, method=Text(f"method.{what}-rate"), unit=unit, caveat=caveat)

    logged = logged_medians(scalars, window, ("throughput", "samples_per_s", "tokens_per_s",
                                              "tflops_per_device", "step_time"), kept_steps)
    samples_rate, tokens_rate = rate(gbs, "samples/s", "samples"), rate(tokens_per_step, "tokens/s", "tokens")
    # where no size gives a rate, the run's own printed rate is its throughput, in the unit it printed
    samples_rate = samples_rate if samples_rate.known else as_printed(scalars, logged, ("samples_per_s", "throughput"),
                                                                      samples_rate, "samples/s")
    tokens_rate = tokens_rate if tokens_rate.known else as_printed(scalars, logged, ("tokens_per_s",), tokens_rate, "tokens/s")
    tp = Throughput(
        window=window,
        step_time=stats,
        step_time_s=step_time,
        steps_per_s=per_s,
        samples_per_s=samples_rate,
        tokens_per_s=tokens_rate,
        global_batch_size=gbs,
        seq_length=seq,
        tokens_per_step=tokens_per_step,
        logged=logged,
        rank=rank,
        timing=timing,
        in_step_time_s=in_step,
        gap_share=gap_share,
        implied={k: f for k, f in (("samples_per_step", samples), ("tokens_per_step", tokens)) if f is not None},
    )
    return tp, notes
