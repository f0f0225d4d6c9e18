"""Each file's unit for tags written without one, settled by evidence (tags.UNIT_CHOICES).

A reader reads such a tag in its default unit. Here each (file, tag) is checked:

1. against the wall clock: a step timer is at most its step's wall-clock gap (a little more is
   noise) and rarely below a few percent of it (tags.TIMER_OVER_GAP). The gaps are the file's own
   (its events carry wall times), else the rank's other timed sources'.
2. else against another source of the same quantity that states its unit
   (tags.SOURCE_OVER_SOURCE).

The candidate whose reading is plausible is the file's unit: the default where it is, else the
only other one (candidates are 1000x apart, so at most one fits). A file read in another unit
than the default gets a warning with both readings; a file with nothing to check against, or
whose evidence fits no candidate, keeps the default with a note.

Rates per device or for all devices (settle_per_device, run level: it needs the merged settings):
MindFormers' TensorBoard ``throughput`` is samples/s per device; checked against the global batch.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..text import Text
from ..model import Setting
from ..tags import (
    CANONICAL_UNIT, PER_CANONICAL, PER_DEVICE_THROUGHPUT, SOURCE_OVER_SOURCE, STEP_TIMER, TIMER_OVER_GAP, UNIT_CHOICES,
    UnitChoice,
)
from .sources import AVERAGED_SOURCES, labels

_RAW_NAMES = sorted({raw for _, raw in UNIT_CHOICES})


def settle_units(scalars: pl.DataFrame) -> tuple[pl.DataFrame, list[Diagnostic]]:
    if scalars.is_empty():
        return scalars, []
    present = scalars.filter(pl.col("raw_tag").is_in(_RAW_NAMES))  # categorical: no strings made
    if present.is_empty():
        return scalars, []
    combos = present.select("file", "source", "raw_tag", "tag", "rank").unique().sort("rank", "file", "raw_tag")
    notes: list[Diagnostic] = []
    factors: dict[tuple[str, str], float] = {}
    # A file's evidence is its own rank's: each rank's rows, split once.
    combos = [row for row in combos.iter_rows() if (row[1], row[2]) in UNIT_CHOICES]
    by_rank = scalars.partition_by("rank", as_dict=True) if combos and scalars["rank"].n_unique() > 1 else None
    for file, source, raw, tag, rank in combos:
        choice = UNIT_CHOICES[(source, raw)]
        theirs = by_rank[(rank,)] if by_rank is not None else scalars
        rows = theirs.filter((pl.col("file") == file) & (pl.col("raw_tag") == raw)).select("step", "value", "wall_time")
        factor, note = _settle(choice, rows, theirs, file, raw, tag)
        if note is not None:
            notes.append(note)
        if factor != 1.0:
            factors[(file, raw)] = factor
    if not factors:
        return scalars, notes
    scale = pl.lit(1.0)
    for (file, raw), factor in factors.items():
        scale = pl.when((pl.col("file") == file) & (pl.col("raw_tag") == raw)).then(pl.lit(factor)).otherwise(scale)
    return scalars.with_columns(pl.col("value") * scale), notes


def _settle(choice: UnitChoice, rows: pl.DataFrame, scalars: pl.DataFrame, file: str, raw: str, tag: str
            ) -> tuple[float, Diagnostic | None]:
    """The factor that turns this file's values (read in the default unit) into seconds, and the
    note to make about it."""
    # value as read x factor = the value if `unit` were the file's unit
    factor = {unit: PER_CANONICAL[choice.default] / PER_CANONICAL[unit] for unit in choice.candidates}
    evidence = []
    if tag == STEP_TIMER:
        gap = _wall_gap_ratio(rows, scalars, file)
        if gap is not None:
            evidence.append((gap[0], TIMER_OVER_GAP, gap[1]))
    cross = _other_source_ratio(rows, scalars, file, tag)
    if cross is not None:
        evidence.append((cross[0], SOURCE_OVER_SOURCE, cross[1]))
    median = rows["value"].median()
    if not evidence or median is None:
        return 1.0, diag.info("unit-unchecked", path=file, tag=raw, default=choice.default, why=Text(f"unit-why.{choice.why}"))
    for ratio, (lo, hi), what in evidence:
        fits = [unit for unit in choice.candidates if lo <= ratio * factor[unit] <= hi]
        if not fits:
            continue
        unit = choice.default if choice.default in fits else fits[0]
        if unit == choice.default:
            return 1.0, None
        return factor[unit], diag.warning(
            "unit-by-evidence", path=file, tag=raw, unit=unit, default=choice.default, why=Text(f"unit-why.{choice.why}"),
            written=median * PER_CANONICAL[choice.default], as_unit=median * factor[unit], as_default=median,
            canonical=CANONICAL_UNIT[choice.default], evidence=what)
    ratio, _, what = evidence[0]
    return 1.0, diag.info("unit-undecided", path=file, tag=raw, candidates=list(choice.candidates), evidence=what,
                          ratio=ratio, default=choice.default, why=Text(f"unit-why.{choice.why}"))


def _wall_gap_ratio(rows: pl.DataFrame, scalars: pl.DataFrame, file: str) -> tuple[float, Text] | None:
    """Median over steps of (timer as read) / (wall-clock gap per step), and what the gaps were."""
    own = rows.filter(pl.col("wall_time").is_not_null())
    whose = "own"
    if own.height < 3:  # a log without timestamps: the rank's other timed sources' step ends
        own = (
            scalars.filter((pl.col("file") != file) & pl.col("wall_time").is_not_null()
                           & ~pl.col("source").is_in(AVERAGED_SOURCES))
            .group_by("step").agg(pl.col("wall_time").max())
            .join(rows.select("step", "value"), on="step")
        )
        whose = "others"
    own = own.group_by("step").agg(pl.col("value").last(), pl.col("wall_time").max()).sort("step")
    gaps = own.with_columns(
        (pl.col("wall_time").diff() / pl.col("step").diff()).alias("gap")
    ).filter((pl.col("step").diff() > 0) & (pl.col("gap") > 0) & pl.col("value").is_finite() & (pl.col("value") > 0))
    if gaps.height < 3:
        return None
    ratio = (gaps["value"] / gaps["gap"]).median()
    return float(ratio), Text(f"unit-evidence.gaps-{whose}", median=float(gaps["gap"].median()))


def _other_source_ratio(rows: pl.DataFrame, scalars: pl.DataFrame, file: str, tag: str) -> tuple[float, Text] | None:
    """Median over common steps of (this file's value) / (a unit-stating source's value)."""
    others = scalars.filter((pl.col("tag") == tag) & (pl.col("file") != file) & ~pl.col("source").is_in(AVERAGED_SOURCES))
    if others.is_empty():
        return None
    stated = [
        (source, raw) for source, raw in others.select("source", "raw_tag").unique().iter_rows()
        if (source, raw) not in UNIT_CHOICES
    ]
    if not stated:
        return None
    source, raw = sorted(stated)[0]
    theirs = others.filter((pl.col("source") == source) & (pl.col("raw_tag") == raw)).group_by("step").agg(pl.col("value").last())
    both = rows.group_by("step").agg(pl.col("value").last()).join(theirs, on="step", suffix="_other").filter(
        pl.col("value").is_finite() & (pl.col("value") > 0) & (pl.col("value_other") > 0))
    if both.height < 3:
        return None
    return float((both["value"] / both["value_other"]).median()), Text(
        "unit-evidence.source", source=source, tag=raw, median=float(both["value_other"].median()))


def settle_per_device(scalars: pl.DataFrame, steps: pl.DataFrame, settings: dict[str, Setting], ranks: int
                      ) -> tuple[pl.DataFrame, list[Diagnostic]]:
    """MindFormers' TensorBoard ``throughput`` is samples/s per device (tags.PER_DEVICE_THROUGHPUT).
    With several devices, check each file against the global batch: per device, value x the step's
    time is global_batch / devices; for all devices it is global_batch. A file that gives the
    total is divided by the devices, with both readings in a warning."""
    source, raw = PER_DEVICE_THROUGHPUT
    if raw not in set(labels(scalars["raw_tag"])):  # no pass over the rows when no file has the tag
        return scalars, []
    rows = scalars.filter((pl.col("source") == source) & (pl.col("raw_tag") == raw))
    if rows.is_empty():
        return scalars, []
    devices = _int_setting(settings, "device_num") or ranks
    batch = _int_setting(settings, "global_batch_size")
    if devices <= 1:
        return scalars, []
    notes: list[Diagnostic] = []
    if not batch:
        return scalars, [diag.info("throughput-unchecked", path=rows["file"].cast(pl.Utf8)[0], tag=raw, devices=devices)]
    timed = steps.select("rank", "step", pl.coalesce("in_step_s", "step_time_s").alias("t"))
    totals = []
    for (file,), part in rows.partition_by("file", as_dict=True).items():
        samples = part.join(timed, on=["rank", "step"]).select((pl.col("value") * pl.col("t")).alias("n"))["n"].median()
        if samples is None or samples <= 0:
            continue
        per_device, total = batch / devices, batch
        if abs(np.log(samples / total)) < abs(np.log(samples / per_device)):
            totals.append(file)
            notes.append(diag.warning("unit-by-evidence", path=file, variant="all-devices", tag=raw, devices=devices,
                                      samples=float(samples), batch=batch, per_device=per_device))
    if not totals:
        return scalars, notes
    fix = pl.col("file").cast(pl.Utf8).is_in([str(f) for f in totals]) & (pl.col("source") == source) & (pl.col("raw_tag") == raw)
    return scalars.with_columns(pl.when(fix).then(pl.col("value") / devices).otherwise(pl.col("value")).alias("value")), notes


def _int_setting(settings: dict[str, Setting], key: str) -> int | None:
    s = settings.get(key)
    try:
        return int(s.value) if s is not None and int(s.value) > 0 else None
    except (TypeError, ValueError):
        return None
