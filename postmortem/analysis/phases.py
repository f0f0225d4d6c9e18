"""Training phases from the lr series, events inside them, resources, checkpoint tax.

Phases: startup = the leading compile steps of the first launch; warmup = up to the first step
where lr reaches its peak (within 1e-6 relative); main = following steps while lr stays at the
peak; decay = from the first step after that where lr is below the peak. Empty phases are left
out (a cosine schedule right after warm-up has no main plateau). No lr -> one "main" phase.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..text import Text
from .profile import phase_comm_share
from .types import CheckpointFile, CheckpointSave, Figure, Phase, Phases, missing

PEAK_RTOL = 1e-6

RULE = Text("rule.phases", rtol=PEAK_RTOL)


MIN_MAIN_FRACTION = 0.01  # a plateau shorter than 1% of the run is not a phase


def _spans(steps: np.ndarray) -> np.ndarray:
    """The steps each row stands for: the step gap to the row before (the first row: the median gap)."""
    if steps.size < 2:
        return np.ones(steps.size)
    gaps = np.diff(steps).astype(np.float64)
    usual = float(np.median(gaps))
    if usual <= 1.0:  # a dense log: a row is a step (a hole in it, e.g. a replaced span, is not time)
        return np.ones(steps.size)
    return np.clip(np.concatenate([[usual], gaps]), 1.0, usual)


def share_of(part: float, whole: float) -> float | None:
    """part / whole where that is a share (in [0, 1]), else None: a wait made of negative gaps (an
    in-step timer longer than the wall-clock step) is a finding about the timer, never a share."""
    if not whole or whole <= 0 or not np.isfinite(part) or not np.isfinite(whole):
        return None
    x = float(part / whole)
    return x if 0.0 <= x <= 1.0 else None


def phase_bounds(steps: np.ndarray, reasons: np.ndarray, lr: pl.DataFrame) -> list[tuple[str, int, int]]:
    if steps.size == 0:
        return []
    first, last = int(steps[0]), int(steps[-1])
    lead = 0
    while lead < steps.size and reasons[lead] == "compile":  # a step or two
        lead += 1
    out: list[tuple[str, int, int]] = []
    if lead:
        out.append(("startup", first, int(steps[lead - 1])))
    start = int(steps[lead]) if lead < steps.size else last + 1
    if start > last:
        return out
    lr = lr.filter(pl.col("value").is_finite())
    if lr.is_empty():
        out.append(("main", start, last))
        return out
    s, v = lr["step"].to_numpy(), lr["value"].to_numpy()
    peak = v.max()
    at_peak = v >= peak * (1 - PEAK_RTOL)
    ip = int(np.argmax(at_peak))
    warm_end = int(s[ip]) if ip > 0 else start - 1
    below = np.flatnonzero(~at_peak[ip:])
    decay_start = int(s[ip + below[0]]) if below.size else last + 1
    # A peak held for a step or two is the top of the schedule, not a plateau: no "main" phase.
    if decay_start - 1 - warm_end < max(3, MIN_MAIN_FRACTION * (last - first + 1)):
        decay_start = warm_end + 1
    for name, a, b in (("warmup", start, warm_end), ("main", max(start, warm_end + 1), decay_start - 1),
                       ("decay", max(start, decay_start), last)):
        if a <= min(b, last):
            out.append((name, a, min(b, last)))
    return out


def checkpoint_files(checkpoints: pl.DataFrame) -> tuple[CheckpointFile, ...]:
    """Every checkpoint file read: a training file at a known step is a save (checkpoint_saves
    takes its step); the others (no step in the name or the file, interrupted, landscape) are listed too."""
    if checkpoints.is_empty():
        return ()
    rows = checkpoints.sort(["step", "path"], nulls_last=True).select(
        "path", "rank", "step", "bytes", "model_params", "kind").iter_rows()
    return tuple(CheckpointFile(path=path, rank=rank, step=step, bytes=size, params=params, kind=kind,
                                save=kind == "train" and step is not None)
                 for path, rank, step, size, params, kind in rows)


def checkpoint_saves(events: pl.DataFrame, checkpoints: pl.DataFrame, steps: np.ndarray, t: np.ndarray,
                     reasons: np.ndarray, median: float | None, timing: str) -> tuple[CheckpointSave, ...]:
    """One row per save, at the step it saved: its duration from its save event (matched by file:
    the event sits at the step whose e2e time holds the save, the saved step or the next), else the
    excess of the e2e step time over the median at that step and at the next one when the save
    spilled into it. A callback's own timer leaves the save out, so with only a timer the time is
    unknown. Save events without a checkpoint file (removed by keep_checkpoint_max) are kept too."""
    ev = events.filter(pl.col("kind") == "checkpoint_save").sort(["step", "rank"], nulls_last=True)
    ck = (checkpoints.filter(pl.col("kind") == "train").sort(["step", "rank", "path"], nulls_last=True)
          .unique(subset="step", keep="first", maintain_order=True))
    event_of: dict[str, tuple[int | None, float | None]] = {}
    for file, step, dur in ev.select("file", "step", "duration_s").iter_rows():
        if file is not None:
            event_of.setdefault(file, (step, dur))
    # (saved step, path, bytes, step the save landed in, duration from the event)
    entries = []
    for step, path, size in ck.select("step", "path", "bytes").iter_rows():
        if step is not None:
            landed, dur = event_of.get(path, (step, None))
            entries.append((step, path, size, landed, dur))
    files = set(checkpoints["path"].to_list())  # every rank's: another rank's save of a step is that step's
    seen_steps = {e[0] for e in entries}
    for file, step, dur in ev.select("file", "step", "duration_s").iter_rows():
        if file not in files and step not in seen_steps:
            seen_steps.add(step)
            entries.append((step, file, None, step, dur))
    landed_steps = {e[3] for e in entries}
    span = _spans(steps)
    what = Text("timing.logged" if timing == "logged" else "timing.e2e")
    saves = []
    for step, path, size, landed, dur in sorted(entries, key=lambda e: (e[0] is None, e[0] or 0)):
        i = int(np.searchsorted(steps, landed)) if landed is not None and steps.size else -1
        at_step = 0 <= i < steps.size and steps[i] == landed and np.isfinite(t[i])
        if dur is not None and np.isfinite(dur):
            save_s, method = float(dur), Text("method.save-event")
        elif timing == "timer":
            save_s, method = None, Text("reason.save-timer-only")
        elif at_step and reasons[i] == "compile":  # the step's excess is the compile's
            save_s, method = None, Text("reason.save-in-compile")
        elif at_step and median is not None:
            rows = [i]
            if i + 1 < steps.size and reasons[i + 1] == "checkpoint" and int(steps[i + 1]) not in landed_steps:
                rows.append(i + 1)
            # a row of a sparse log stands for the steps since the row before (its time is their mean)
            save_s = float(sum(max(0.0, t[j] - median) * span[j] for j in rows if np.isfinite(t[j])))
            method = (Text("method.save-step", timing=what, step=landed) if len(rows) == 1 else
                      Text("method.save-spilled", timing=what, step=landed, next=int(steps[rows[-1]])))
        else:
            save_s, method = None, Text("reason.save-unknown")
        saves.append(CheckpointSave(step=step, path=path, bytes=size, save_s=save_s, method=method))
    return tuple(saves)


def phases(
    series: pl.DataFrame,
    reasons: np.ndarray,
    lr: pl.DataFrame,
    events: pl.DataFrame,
    checkpoints: pl.DataFrame,
    profile: pl.DataFrame,
    memory: pl.DataFrame,
    tokens_per_step: float | None,
    median_step_time: float | None,
    timing: str = "logged",
) -> Phases:
    """``series``: the per-step frame (STEP_SERIES) with wall times for memory mapping, and
    ``wait_s``, each step's wait for data / host (the gap between steps or a logged data time).
    ``profile``: PROFILE_STEP_SERIES when the run's steps are the profile's own (a profile-only
    run), else empty: profiled steps have their own numbering, not the training steps'."""
    steps = series["step"].to_numpy()
    t = series["step_time_s"].fill_null(float("nan")).to_numpy()
    d = series["wait_s" if "wait_s" in series.columns else "data_time_s"].fill_null(float("nan")).to_numpy()
    wall = series["wall"].fill_null(float("nan")).to_numpy() if "wall" in series.columns else np.full(steps.size, np.nan)
    kept = reasons == ""
    mem = memory.filter(pl.col("allocated_bytes").is_finite())
    mem_t, mem_a = mem["time_s"].to_numpy(), mem["allocated_bytes"].to_numpy()
    stalls = steps[reasons == "data_stall"]

    out = []
    for name, a, b in phase_bounds(steps, reasons, lr):
        inside = (steps >= a) & (steps <= b)
        use = inside & kept & np.isfinite(t)
        if not use.any():
            use = inside & np.isfinite(t)
        med = float(np.median(t[use])) if use.any() else None
        both = inside & np.isfinite(t) & np.isfinite(d)
        share = share_of(d[both].sum(), t[both].sum()) if both.any() else None
        ev = events.filter(pl.col("step").is_between(a, b))
        counts = {k: n for k, n in ev.group_by("kind").len().sort("kind").iter_rows()}
        n_stall = int(((stalls >= a) & (stalls <= b)).sum())
        if n_stall:
            counts["stall"] = n_stall
        w = wall[inside & np.isfinite(wall)]
        max_alloc = None
        if mem_t.size and w.size and mem_t.min() > 1e9:  # absolute times: map samples to the phase
            lo, hi = w.min() - (med or 0.0), w.max()
            sel = mem_a[(mem_t >= lo) & (mem_t <= hi)]
            max_alloc = float(sel.max()) if sel.size else None
        out.append(Phase(
            name=name, start_step=a, end_step=b, rule=RULE, events=counts, step_time_median_s=med,
            tokens_per_s=tokens_per_step / med if tokens_per_step is not None and med else None,
            max_allocated_bytes=max_alloc, data_wait_share=share,
            comm_share=phase_comm_share(profile, a, b) if not profile.is_empty() else None,
        ))

    saves = checkpoint_saves(events, checkpoints, steps, t, reasons, median_step_time, timing)
    finite_w = wall[np.isfinite(wall)]
    if finite_w.size >= 2:
        first_t = t[np.isfinite(wall)][0]
        total = float(finite_w.max() - finite_w.min()) + (first_t if np.isfinite(first_t) else 0.0)
        total_how = Text("method.wall-span")
    else:  # each row's mean step time times the steps it stands for
        total, total_how = float(np.nansum(t * _spans(steps))), Text("method.sum-step-times")
    known = [s.save_s for s in saves if s.save_s is not None]
    if not saves:
        tax = missing(Text("reason.no-saves"), unit="fraction")
    elif not known or total <= 0:
        tax = missing(Text("reason.save-times-unknown"), unit="fraction")
    elif sum(known) > total:  # saves longer than the run they were part of: the durations or the span are wrong
        tax = missing(Text("reason.save-times-exceed", saves=float(sum(known)), total=total), unit="fraction")
    else:
        tax = Figure(sum(known) / total, unit="fraction", method=Text("method.checkpoint-tax", n=len(known), total=total_how))

    # Over the steady window, so a long compile step does not dilute it (all steps if none kept).
    both = np.isfinite(t) & np.isfinite(d) & kept
    if not both.any():
        both = np.isfinite(t) & np.isfinite(d)
    data_wait = share_of(d[both].sum(), t[both].sum()) if both.any() else None
    return Phases(phases=tuple(out), rule=RULE if lr.height else Text("rule.phases-no-lr"),
                  checkpoint_saves=saves, checkpoint_tax=tax, checkpoint_files=checkpoint_files(checkpoints),
                  reason=None if not lr.filter(pl.col("value").is_finite()).is_empty() else Text("reason.not-logged", tag="lr"),
                  data_wait_share=data_wait)
