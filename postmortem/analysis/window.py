"""The steady window: which steps count for throughput, and why each other step does not.

Every step gets at most one exclusion reason, the first that matches in ``ORDER``. The location
``m`` and scale ``s`` used by the rules are the median and the scaled MAD (x 1.4826) of the e2e
step time over all steps that are not compile/missing; the tolerance is ``max(3 s, 5% of m)`` so
a perfectly constant run (MAD 0) still has a sensible band.

Pauses are not steps: evaluation, checkpoint saves, other pauses and restarts arrive as events at
the step whose e2e time holds them (and may spill into the next step's gap); stalls show in the
gap between steps (e2e - in-step timer) or in a logged data time, where the in-step timer cannot
see them.

Only marks that cost time exclude a step from the time figures (``ORDER``): compile, evaluation,
a pause, a resume's warm-up, a data stall, and a checkpoint save where the step's time holds it:
a wall-clock step time (and an epoch timer such as TimeMonitor's, which ends after the step-end
callbacks that save) always does; a callback's own per-step timer (``timer:`` rows: MindFormers'
per_step_time stops before CheckpointMonitor runs) does not. A loss-scale overflow (whether the
update was applied or dropped), a skipped-data step and a NaN/Inf loss took their step's time like
any other: they stay in the window and stay marked for the loss figures (``LOSS_MARKS``, in
stability and convergence).

The window never silently empties (``window_basis``): fewer than ``FEW_STEPS`` kept steps still
give the figure, with a few-steps caveat and the steps it rests on; with no kept step, the timed
steps that carry marks give it, with a caveat naming the marks the figure holds; "—" only when no
step is timed at all.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..text import Text
from .stats import MAD_SCALE
from .types import EXCLUDED, SteadyWindow

WARMUP_RUN = 5  # consecutive in-band steps that end warm-up
STALL_K = 5.0  # data-time excess over its median, in scaled MADs, that makes a data stall
# ... and at least this share of the median step: a wait that adds less than half a step is the
# pipeline's ordinary jitter (the samples' baseline has 3-5 ms waits in 15 ms steps), not a stall
STALL_FLOOR = 0.5
OUTLIER_K = 6.0  # slow-side step time outliers left after all other rules

ORDER = ("compile", "missing", "checkpoint", "eval", "pause", "resume", "warmup", "data_stall", "outlier")
# Marks that take no time of their own: the step stays in the time window, marked for the loss figures.
LOSS_MARKS = ("nan", "overflow", "skip")
FEW_STEPS = 5  # fewer kept steps than this: the figure carries the few-steps caveat
# Step-time sources whose value is a callback's own per-step timer: it stops before a save runs.
TIMER_PREFIX = "timer:"

# Each reason's rule: the catalogue's rule.exclude.<reason>, with the thresholds as parameters.
RULES = {
    "missing": Text("rule.exclude.missing"),
    "compile": Text("rule.exclude.compile"),
    "checkpoint": Text("rule.exclude.checkpoint"),
    "eval": Text("rule.exclude.eval"),
    "pause": Text("rule.exclude.pause"),
    "resume": Text("rule.exclude.resume", run=WARMUP_RUN),
    "warmup": Text("rule.exclude.warmup", run=WARMUP_RUN),
    "data_stall": Text("rule.exclude.data_stall", k=STALL_K, floor=STALL_FLOOR),
    "outlier": Text("rule.exclude.outlier", k=OUTLIER_K),
}


def location_scale(step_time: np.ndarray, usable: np.ndarray) -> tuple[float, float, float]:
    """(median, scaled MAD, tolerance) of the usable step times."""
    x = step_time[usable]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(np.median(x))
    s = float(np.median(np.abs(x - m))) * MAD_SCALE
    return m, s, max(3.0 * s, 0.05 * m)


def _first_settled(in_band: np.ndarray) -> int | None:
    """Index of the first run of WARMUP_RUN in-band steps (shorter segments: all of them)."""
    k = min(WARMUP_RUN, in_band.size)
    if k == 0:
        return None
    runs = np.convolve(in_band.astype(np.int64), np.ones(k, dtype=np.int64), mode="valid")
    hits = np.flatnonzero(runs == k)
    return int(hits[0]) if hits.size else None


def exclusion_reasons(
    steps: pl.DataFrame,
    *,
    checkpoint_steps: set[int] | frozenset[int] = frozenset(),
    eval_steps: set[int] | frozenset[int] = frozenset(),
    compile_steps: set[int] | frozenset[int] = frozenset(),
    nonfinite_steps: set[int] | frozenset[int] = frozenset(),
    overflow_steps: set[int] | frozenset[int] = frozenset(),
    pause_steps: set[int] | frozenset[int] = frozenset(),
    skip_steps: set[int] | frozenset[int] = frozenset(),
    restart_steps: set[int] | frozenset[int] = frozenset(),
) -> np.ndarray:
    """One reason per row of ``steps`` (sorted by step, one row per step); "" = kept.
    ``nonfinite_steps``, ``overflow_steps`` and ``skip_steps`` are loss marks: accepted so callers
    pass every mark they have, they exclude nothing from the time figures (module doc)."""
    n = steps.height
    step = steps["step"].to_numpy()
    t = _floats(steps, "step_time_s")
    d = _floats(steps, "data_time_s")
    gap = _floats(steps, "gap_s")
    seg = steps["segment"].fill_null(0).to_numpy()

    def member(values: set[int] | frozenset[int]) -> np.ndarray:
        return np.isin(step, np.fromiter(values, dtype=np.int64, count=len(values)))

    missing = ~np.isfinite(t)
    first_of_segment = np.ones(n, dtype=bool)
    first_of_segment[1:] = seg[1:] != seg[:-1]
    m, s, tol = location_scale(t, ~missing & ~(first_of_segment | member(compile_steps)))
    # The first record of a launch holds its compile where the launch starts there (the training's
    # first step, a resumed launch) or its time shows it; a log that starts mid-run (an excerpt, a
    # rotated file) starts with an ordinary step, which is not called a compile.
    launch = first_of_segment & ((step <= 1) | (seg > 0) | ~np.isfinite(t) | (t > m + tol))
    compile_ = launch | member(compile_steps)
    slow = np.isfinite(t) & (t > m + tol)
    in_band = np.isfinite(t) & (np.abs(t - m) <= tol)

    def with_spill(hit: np.ndarray) -> np.ndarray:
        spill = np.zeros(n, dtype=bool)
        spill[1:] = hit[:-1] & slow[1:]
        return hit | spill

    warmup = np.zeros(n, dtype=bool)
    resume = np.zeros(n, dtype=bool)
    starts = np.flatnonzero(first_of_segment)
    ends = np.append(starts[1:], n)
    for start, end in zip(starts, ends):  # a handful of segments
        begin = start + 1  # after the compile step
        settled = _first_settled(in_band[begin:end])
        if settled:
            target = resume if seg[start] > 0 else warmup
            target[begin : begin + settled] = True

    floor = STALL_FLOOR * m if np.isfinite(m) else 0.0
    stall = _excess(d, floor) | _excess(gap, floor)
    outlier = np.isfinite(t) & (t > m + max(OUTLIER_K * s, 0.10 * m))

    # a save is in the step's time unless that time is a per-step timer that stopped before it
    source = (steps["source"].cast(pl.Utf8).fill_null("").to_numpy().astype(str) if "source" in steps.columns
              else np.full(n, ""))
    holds_save = ~np.char.startswith(source, TIMER_PREFIX)
    masks = {
        "missing": missing,
        "compile": compile_,
        "checkpoint": with_spill(member(checkpoint_steps) & holds_save),
        "eval": with_spill(member(eval_steps)),
        "pause": with_spill(member(pause_steps)),
        "resume": resume | member(restart_steps),
        "warmup": warmup,
        "data_stall": stall,
        "outlier": outlier,
    }
    conditions = [masks[r] for r in ORDER]
    return np.select(conditions, list(ORDER), default="")


def _floats(steps: pl.DataFrame, column: str) -> np.ndarray:
    return steps[column].cast(pl.Float64).fill_null(float("nan")).to_numpy()


def _excess(x: np.ndarray, floor: float) -> np.ndarray:
    """Values above their median by more than max(STALL_K x scaled MAD, floor)."""
    finite = x[np.isfinite(x)]
    if not finite.size:
        return np.zeros(x.size, dtype=bool)
    md = float(np.median(finite))
    sd = float(np.median(np.abs(finite - md))) * MAD_SCALE
    return np.isfinite(x) & (x - md > max(STALL_K * sd, floor))


def window_basis(steps: pl.DataFrame, reasons: np.ndarray) -> tuple[np.ndarray, str]:
    """(mask of the rows the time figures rest on, basis): "steady" (kept steps, FEW_STEPS or
    more), "few" (1..FEW_STEPS-1 kept steps), "marked" (no kept step: the timed steps that carry
    only marks other than compile; else the compile steps too), "none" (no timed step)."""
    if steps.is_empty():
        return np.zeros(0, dtype=bool), "none"
    timed = np.isfinite(_floats(steps, "step_time_s")) & (_floats(steps, "step_time_s") > 0)
    kept = timed & (reasons == "")
    if kept.sum() >= FEW_STEPS:
        return kept, "steady"
    if kept.any():
        return kept, "few"
    marked = timed & (reasons != "compile")
    if marked.any():
        return marked, "marked"
    return timed, ("marked" if timed.any() else "none")


def steady_window(steps: pl.DataFrame, reasons: np.ndarray) -> SteadyWindow:
    step = steps["step"].to_numpy()
    excluded_mask = reasons != ""
    excluded = pl.DataFrame(
        {"step": step[excluded_mask], "reason": reasons[excluded_mask].tolist()}, schema=EXCLUDED
    )
    counts = {r: c for r, c in excluded.group_by("reason").len().sort("reason").iter_rows()}
    use, basis = window_basis(steps, reasons)
    used = step[use]
    if used.size == 0:
        why = "reason.no-step-data" if steps.is_empty() else "reason.no-timed-step"
        return SteadyWindow(None, None, 0, excluded, counts, dict(RULES), reason=Text(why), basis="none")
    caveat = None
    if basis == "few":
        caveat = Text("caveat.few-steps", n=int(used.size), need=FEW_STEPS, steps=[int(s) for s in used])
    elif basis == "marked":
        marks = {str(r): int((reasons[use] == r).sum()) for r in ORDER if (reasons[use] == r).any()}
        more = Text("caveat.more", n=int(used.size) - FEW_STEPS) if used.size > FEW_STEPS else None
        caveat = Text("caveat.marked-steps", n=int(used.size), steps=[int(s) for s in used[:FEW_STEPS]], more=more,
                      marks=[Text(f"mark.{r}", n=c) for r, c in marks.items()])
    return SteadyWindow(int(used.min()), int(used.max()), int(used.size), excluded, counts, dict(RULES),
                        basis=basis, used_steps=tuple(int(s) for s in used) if basis != "steady" else (), caveat=caveat)


def excluded_ranges(excluded: pl.DataFrame) -> list[tuple[int, int, str]]:
    """Consecutive excluded steps with the same reason as (first, last, reason) ranges."""
    if excluded.is_empty():
        return []
    df = excluded.sort("step")
    new = (pl.col("step").diff() != 1) | (pl.col("reason") != pl.col("reason").shift())
    runs = (df.with_columns(new.fill_null(True).cum_sum().alias("_run"))
            .group_by("_run", maintain_order=True)
            .agg(pl.col("step").first().alias("first"), pl.col("step").last().alias("last"),
                 pl.col("reason").first()))
    return [(int(a), int(b), str(r)) for a, b, r in runs.select("first", "last", "reason").iter_rows()]
