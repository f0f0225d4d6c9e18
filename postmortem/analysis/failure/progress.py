"""How far the run got: its last step and loss, whether it trained on after an error, a hang, the
checkpoint to resume from and what was lost since."""

from __future__ import annotations

import polars as pl

from .types import ResumePoint
from .words import _TTP

# A run whose progress stops this long before its files do hangs (and at least this many step times).
HANG_AFTER_S = 1800.0
HANG_STEPS = 30
# ... but files that go quiet for longer than this after the last step and speak again were
# relaunched (or cut by an excerpt): no job sits half a day in a hang that nobody ends.
HANG_AT_MOST_S = 12 * 3600.0
# A run trained on after an error (a caught exception, a launch that died and was resumed) when it
# logged this many steps ending later than the error (by this much, or three step times): a rank
# that logs a step or two while another dies is not training on.
TRAINED_ON_STEPS = 3
AFTER_ERROR_S = 1.0
# A lone ERROR line (no Ascend code, no exception, no traceback) after which its file goes on for
# this many lines was not fatal: a library's complaint the job worked around (a dying process
# writes its traceback or teardown right after, within a few lines).
WENT_ON_LINES = 10


def resume_point(checkpoints: pl.DataFrame, last_step: int | None, healthy_step: int | None = None) -> ResumePoint | None:
    """The checkpoint to resume from: the latest step every saving rank wrote completely (an
    interrupted save, a .tmp, is no checkpoint), no later than the last step logged, and no later
    than the last save MindFormers' health record calls healthy where it keeps one (a later save
    carries the embedding norm's surge). TrainFaultTolerance's ttp_saved_checkpoints-step_N/ folder
    gives its files' step where they state none."""
    if checkpoints.is_empty():
        return None
    ck = checkpoints.filter(pl.col("kind") == "train").with_columns(
        pl.coalesce("step", pl.col("path").str.extract(_TTP.pattern, 1).cast(pl.Int64)).alias("_step"),
        pl.col("path").str.contains(_TTP.pattern).alias("_ttp"),
    ).filter(pl.col("_step").is_not_null())
    for bound in (last_step, healthy_step):
        if bound is not None:
            ck = ck.filter(pl.col("_step") <= bound)
    if ck.is_empty():
        return None
    per = ck.group_by("_step").agg(pl.col("rank").n_unique().alias("ranks"), pl.col("_ttp").any().alias("ttp"),
                                   pl.col("path").sort_by("rank", "path").first().alias("path"))
    most = per["ranks"].max()
    best = per.filter(pl.col("ranks") == most).sort("_step").row(-1, named=True)
    return ResumePoint(best["path"], int(best["_step"]), "ttp" if best["ttp"] else "checkpoint", int(best["ranks"]))


def _progress(run_tables: dict) -> tuple[int | None, dict[int, tuple[int, float | None]]]:
    """The last step logged by any rank, and each rank's last step with its wall time."""
    steps = run_tables["steps"].select("rank", "step", "wall_time")
    scalars = run_tables["scalars"].select("rank", "step", "wall_time")
    both = pl.concat([steps, scalars]).drop_nulls("step")
    if both.is_empty():
        return None, {}
    per = both.group_by("rank").agg(pl.col("step").max().alias("last"), pl.col("wall_time").max().alias("wall"))
    return int(both["step"].max()), {r: (int(s), w) for r, s, w in per.iter_rows()}


def _loss_at(scalars: pl.DataFrame, step: int | None, rank: int | None) -> float | None:
    loss = scalars.filter((pl.col("tag") == "loss") & pl.col("step").is_not_null())
    if loss.is_empty() or step is None:
        return None
    if rank is not None and (loss["rank"] == rank).any():
        loss = loss.filter(pl.col("rank") == rank)
    else:
        loss = loss.filter(pl.col("rank") == loss["rank"].min())
    loss = loss.filter(pl.col("step") <= step).sort("step")
    return float(loss["value"][-1]) if loss.height else None


def _stalled(last_wall: float | None, files_end: float | None, med: float | None) -> float | None:
    """How long the files went on after progress stopped, where that makes a hang: the last step
    long before the files' last word (HANG_AFTER_S, and HANG_STEPS step times)."""
    if last_wall is None or files_end is None:
        return None  # steps without times (LossMonitor's lines) cannot tell a hang
    stalled = files_end - last_wall
    return stalled if max(HANG_AFTER_S, HANG_STEPS * (med or 0.0)) <= stalled <= HANG_AT_MOST_S else None


def _last_finite_step(scalars: pl.DataFrame, last: int, rank: int | None) -> int:
    """The last step whose loss is a number, where the last step's loss is NaN/Inf."""
    loss = scalars.filter((pl.col("tag") == "loss") & pl.col("step").is_not_null() & (pl.col("step") <= last))
    if rank is not None and (loss["rank"] == rank).any():
        loss = loss.filter(pl.col("rank") == rank)
    at_last = loss.filter(pl.col("step") == last)["value"]
    if at_last.len() == 0 or at_last.is_finite().any():
        return last
    finite = loss.filter(pl.col("value").is_finite())["step"]
    return int(finite.max()) if finite.len() else last


def _median_step_s(steps: pl.DataFrame) -> float | None:
    t = steps["step_time_s"].drop_nulls()
    return float(t.median()) if t.len() else None


def _trained_on(root: dict, last_wall: float | None, steps: pl.DataFrame, scalars: pl.DataFrame, rows: list[dict]) -> bool:
    """The run logged steps well after its first error, or its errors name later steps (a check
    that only reports and lets training go on): it did not die of it."""
    if root["step"] is not None and any(r["step"] is not None and r["step"] > root["step"] and r["file"] == root["file"]
                                        for r in rows):
        return True
    if root["wall_time"] is None or last_wall is None:
        return False
    med = _median_step_s(steps) or 0.0
    walls = pl.concat([steps.select("step", "wall_time"), scalars.select("step", "wall_time")]).drop_nulls()
    later = walls.filter(pl.col("wall_time") > root["wall_time"] + max(AFTER_ERROR_S, 3 * med))["step"].n_unique()
    return later >= TRAINED_ON_STEPS


def went_on(row: dict, file_lines: dict[str, int], rows: list[dict]) -> bool:
    """A plain error line its process wrote past: lines of its own file follow it well after its
    context (the lines the reader kept with it), and none of them is a fatal incident."""
    if row["level"] != "error" or row["code"] or row["runtime_code"] is not None or row["exception"]:
        return False
    if any(r["file"] == row["file"] and r["line"] is not None and row["line"] is not None and r["line"] > row["line"]
           and (r["level"] != "error" or r["code"] or r["exception"]) for r in rows):
        return False
    context = row["context"] or ""
    if "Traceback" in context or row["named_rank"] is not None:
        return False
    end = file_lines.get(row["file"])
    if end is None or row["line"] is None:
        return False
    return end - row["line"] - context.count("\n") - 1 >= WENT_ON_LINES


def _hours_lost(steps: pl.DataFrame, resume: ResumePoint | None, last_step: int | None) -> float | None:
    if resume is None or last_step is None:
        return None
    walls = steps.filter(pl.col("step").is_in([resume.step, last_step])).group_by("step").agg(pl.col("wall_time").max())
    w = dict(walls.iter_rows())
    if w.get(resume.step) is None or w.get(last_step) is None:
        return None
    return max(0.0, (w[last_step] - w[resume.step]) / 3600.0)
