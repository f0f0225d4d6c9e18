"""Configuration checks on the run's settings: each passes, warns, fails, or cannot be told."""

from __future__ import annotations

from typing import Any

import polars as pl

from ..model import Run
from ..text import Text
from .types import Check, CheckStatus, ConfigCheck

CKPT_MIN_INTERVAL_S = 300.0  # saving more often than every 5 minutes costs a visible share


def _num(run: Run, key: str) -> float | None:
    try:
        v = run.setting(key)
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _unknown(name: Check, missing: list[str]) -> ConfigCheck:
    return ConfigCheck(name, CheckStatus.UNKNOWN, Text("check.needs", keys=missing), {"missing": missing})


def check_global_batch(run: Run) -> ConfigCheck:
    name = Check.GLOBAL_BATCH
    gbs, micro = _num(run, "global_batch_size"), _num(run, "micro_batch_size") or _num(run, "batch_size")
    dp = _num(run, "data_parallel")
    missing = [k for k, v in (("global_batch_size", gbs), ("micro_batch_size", micro), ("data_parallel", dp)) if v is None]
    if missing:
        return _unknown(name, missing)
    acc = _num(run, "gradient_accumulation_steps") or 1.0
    pp = _num(run, "pipeline_stage") or 1.0
    mbn = _num(run, "micro_batch_num") if pp > 1 else None
    expected = micro * dp * acc * (mbn or 1.0)
    ev: dict[str, Any] = {"global_batch_size": gbs, "micro_batch_size": micro, "data_parallel": dp,
                          "gradient_accumulation_steps": acc, "micro_batch_num": mbn, "expected": expected}
    if abs(expected - gbs) < 1e-9:
        return ConfigCheck(name, CheckStatus.PASS, Text("check.batch-equal", batch=gbs, product=expected), ev)
    return ConfigCheck(name, CheckStatus.FAIL, Text("check.batch-differs", batch=gbs, product=expected), ev)


def check_pipeline(run: Run) -> ConfigCheck:
    name = Check.PIPELINE
    pp = _num(run, "pipeline_stage")
    if pp is None or pp <= 1:
        return ConfigCheck(name, CheckStatus.PASS if pp is not None else CheckStatus.UNKNOWN,
                           Text("check.no-pipeline") if pp is not None else Text("check.needs", keys=["pipeline_stage"]),
                           {"pipeline_stage": pp})
    mbn = _num(run, "micro_batch_num")
    if mbn is None:
        return _unknown(name, ["micro_batch_num"])
    ev = {"pipeline_stage": pp, "micro_batch_num": mbn, "bubble_fraction": (pp - 1) / (mbn + pp - 1)}
    if mbn < pp:
        return ConfigCheck(name, CheckStatus.FAIL, Text("check.micro-below-stages", micro=mbn, stages=pp), ev)
    if mbn < 4 * pp:  # bubble (p-1)/(m+p-1) stays above ~20% below 4x
        return ConfigCheck(name, CheckStatus.WARN, Text("check.micro-bubble", micro=mbn, stages=pp,
                                                        bubble=ev["bubble_fraction"]), ev)
    return ConfigCheck(name, CheckStatus.PASS, Text("check.micro-ok", micro=mbn, stages=pp), ev)


def check_divisible(run: Run, key: str) -> ConfigCheck:
    name = Check.NUM_HEADS if key == "num_heads" else Check.HIDDEN_SIZE
    v, mp = _num(run, key), _num(run, "model_parallel")
    missing = [k for k, x in ((key, v), ("model_parallel", mp)) if x is None]
    if missing:
        return _unknown(name, missing)
    ev = {key: v, "model_parallel": mp}
    if mp > 0 and v % mp == 0:
        return ConfigCheck(name, CheckStatus.PASS, Text("check.divisible", value=v, by=mp), ev)
    return ConfigCheck(name, CheckStatus.FAIL, Text("check.not-divisible", value=v, by=mp), ev)


def _interval_from_checkpoints(run: Run) -> float | None:
    """Steps between saves as the checkpoints on disk show them (most common gap)."""
    steps = (
        run.tables["checkpoints"].filter(pl.col("kind") == "train")["step"].drop_nulls().unique().sort()
    )
    gaps = steps.diff().drop_nulls()
    gaps = gaps.filter(gaps > 0)
    return float(gaps.mode().min()) if not gaps.is_empty() else None


def check_checkpoint_interval(run: Run, median_step_time_s: float | None, save_s: float | None) -> ConfigCheck:
    name = Check.CHECKPOINT_INTERVAL
    every = _num(run, "save_checkpoint_steps") or _interval_from_checkpoints(run)
    missing = [k for k, x in (("save_checkpoint_steps", every), ("step_time", median_step_time_s)) if x is None]
    if missing:
        return _unknown(name, missing)
    interval = every * median_step_time_s
    ev = {"save_checkpoint_steps": every, "median_step_time_s": median_step_time_s, "interval_s": interval,
          "median_save_s": save_s}
    if save_s is not None and interval > 0 and save_s / interval > 0.05:
        return ConfigCheck(name, CheckStatus.WARN, Text("check.save-costly", save=save_s, share=save_s / interval,
                                                        interval=interval), ev)
    if interval < CKPT_MIN_INTERVAL_S:
        return ConfigCheck(name, CheckStatus.WARN, Text("check.save-often", interval=interval, limit=CKPT_MIN_INTERVAL_S), ev)
    return ConfigCheck(name, CheckStatus.PASS, Text("check.save-every", interval=interval), ev)


def config_checks(run: Run, median_step_time_s: float | None, median_save_s: float | None) -> tuple[ConfigCheck, ...]:
    return (
        check_global_batch(run),
        check_pipeline(run),
        check_divisible(run, "num_heads"),
        check_divisible(run, "hidden_size"),
        check_checkpoint_interval(run, median_step_time_s, median_save_s),
    )
