"""Operators of MindSpore 2.x / torch_npu profiles: ``kernel_details.csv`` and ``op_statistic.csv``.

``kernel_details.csv`` has one row per device kernel (a real cluster profile: millions of rows,
a GB per rank), so it is read by polars, only the five columns used, and aggregated here per
(step, type, core, name) into PROFILE_OPS. Per file (one rank) the names of the TOP_NAMES
largest operators are kept and every other name is summed into a row named "(other)" of its
(step, type, core), so the sums per type and per step stay exact.

``op_statistic.csv`` is CANN's per-type summary of the same kernels without communication
(HCCL) ops; it is read only where no kernel_details.csv lies beside it (else it would count the
same kernels twice). Units and column sets per writer version: docs/formats/profiler-ascend.md.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

from ... import diagnostics as dg
from ...model import PROFILE_OPS, Artifact, ReadResult, conform
from .. import guard
from .ascend_csv import header_of, num, row_by_row, scan
from .common import US, Durations, checked_durations, sound_csv

# Operator names kept per rank: NAMED_ROWS // steps, within [MIN_NAMES, MAX_NAMES]; every other
# name is summed into "(other)" of its (step, type, core). Bounds a rank's rows whatever its steps.
NAMED_ROWS, MIN_NAMES, MAX_NAMES = 20_000, 20, 200
OTHER = "(other)"

# Column names as the writers spell them (MindSpore 2.x "Step ID", torch_npu "Step Id").
_STEP = ("Step Id", "Step ID")
_NAME, _TYPE, _CORE, _DUR = "Name", "Type", "Accelerator Core", "Duration(us)"


def read_kernel_details(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header = header_of(artifact.path)
    missing = [c for c in (_NAME, _TYPE, _DUR) if c not in header]
    if missing:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, variant="missing", missing=list(missing),
                   header=header[:6]))
        return
    step = next((c for c in _STEP if c in header), None)
    core = _CORE if _CORE in header else None
    try:
        with warnings.catch_warnings(record=True) as caught:  # polars warns (and skips) where a chunk is malformed
            warnings.simplefilter("always")
            kernels = _scan(artifact.path, step, core).collect()
        if caught:
            raise ValueError(str(caught[0].message))
    except (pl.exceptions.PolarsError, ValueError) as exc:
        wanted = [c for c in (step, _TYPE, core, _NAME, _DUR) if c]
        kernels = _from_strings(row_by_row(artifact, wanted, result, exc), step, core)
    if kernels.is_empty():
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="kernels"))
        return
    no_duration = kernels["dur"].null_count()
    if no_duration:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="no-duration", n=no_duration, of=kernels.height,
                   column="Duration(us)"))
    # polars reads a name whose bytes are not UTF-8 (or an empty one) as null: counted, never silent
    unnamed = max(kernels["name"].null_count(), kernels["type"].null_count())
    if unnamed:
        result.diagnostics.append(dg.warning("profiler-utf8", path=artifact.rel, variant="names", n=unnamed))
    if step is None:
        result.diagnostics.append(dg.info("profiler-no-step", path=artifact.rel))
    bad = Durations()
    kernels = checked_durations(kernels, "dur", _DUR, bad)
    bad.warn(artifact.rel, result)
    if kernels["dur"].null_count() == kernels.height:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="kernels"))
        return
    result.tables["profile_ops"] = _finish(_aggregate(kernels.drop_nulls("dur")), rank, "kernel_details", artifact.rel)


def _scan(path: str, step: str | None, core: str | None) -> pl.LazyFrame:
    """The five columns used, parsed by polars: names as categoricals (a few thousand distinct
    values over millions of rows), numbers that do not parse as null."""
    types = {_NAME: pl.Categorical, _TYPE: pl.Categorical, _DUR: pl.Float64}
    if step:
        types[step] = pl.Int64
    if core:
        types[core] = pl.Categorical
    frame = pl.scan_csv(guard.checked(path), infer_schema=False, schema_overrides=types, ignore_errors=True,
                        truncate_ragged_lines=True, encoding="utf8-lossy")
    return frame.select(
        (pl.col(step) if step else pl.lit(None, pl.Int64)).alias("step"),
        pl.col(_TYPE).alias("type"),
        (pl.col(core) if core else pl.lit(None, pl.Categorical)).alias("core"),
        pl.col(_NAME).alias("name"),
        (pl.col(_DUR) * US).alias("dur"),
    )


def _from_strings(rows: pl.DataFrame, step: str | None, core: str | None) -> pl.DataFrame:
    return rows.select(
        (num(step).cast(pl.Int64) if step else pl.lit(None, pl.Int64)).alias("step"),
        pl.col(_TYPE).cast(pl.Categorical).alias("type"),
        (pl.col(core) if core else pl.lit(None, pl.Utf8)).cast(pl.Categorical).alias("core"),
        pl.col(_NAME).cast(pl.Categorical).alias("name"),
        (num(_DUR) * US).alias("dur"),
    )


def _aggregate(kernels: pl.DataFrame) -> pl.DataFrame:
    """Per (step, type, core, name): calls, total and longest call; names beyond the largest
    (NAMED_ROWS over the file's steps) summed into "(other)" per (step, type, core)."""
    steps = max(1, kernels["step"].n_unique())
    keep = min(MAX_NAMES, max(MIN_NAMES, NAMED_ROWS // steps))
    top = (kernels.group_by("name").agg(pl.col("dur").sum())
           .sort(["dur", "name"], descending=[True, False]).head(keep)["name"].implode())
    name = pl.when(pl.col("name").is_in(top)).then(pl.col("name").cast(pl.Utf8)).otherwise(pl.lit(OTHER))
    return kernels.group_by("step", "type", "core", name.alias("name")).agg(
        pl.len().alias("calls"), pl.col("dur").sum().alias("total_s"), pl.col("dur").max().alias("max_s"))


def _finish(ops: pl.DataFrame, rank: int | None, source: str, rel: str) -> pl.DataFrame:
    ops = ops.sort(["step", "total_s", "type", "name"], descending=[False, True, False, False], nulls_last=True)
    return conform(ops.with_columns(pl.lit(rank, pl.Int32).alias("rank"), pl.lit(source).alias("source"),
                                    pl.lit(rel).alias("file")), PROFILE_OPS)


# ---------------------------------------------------------------------------------- op_statistic


_OP_STAT = {"OP Type": "type", "Core Type": "core", "Count": "calls", "Total Time(us)": "total", "Max Time(us)": "max"}


def read_op_statistic(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if sound_csv(Path(artifact.path).with_name("kernel_details.csv"), (_NAME, _TYPE, _DUR)):
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="op-statistic"))
        return
    header = header_of(artifact.path)
    if any(c not in header for c in ("OP Type", "Count", "Total Time(us)")):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    columns = [c for c in _OP_STAT if c in header]
    try:
        stats = scan(artifact.path, columns).collect()
    except pl.exceptions.PolarsError as exc:
        stats = row_by_row(artifact, columns, result, exc)
    stats = stats.rename(lambda c: _OP_STAT[c])
    ops = stats.select(
        pl.lit(None, pl.Int64).alias("step"),
        pl.col("type"),
        (pl.col("core") if "core" in stats.columns else pl.lit(None, pl.Utf8)).alias("core"),
        pl.lit(OTHER).alias("name"),
        num("calls").cast(pl.Int64).alias("calls"),
        (num("total") * US).alias("total_s"),
        ((num("max") * US) if "max" in stats.columns else pl.lit(None, pl.Float64)).alias("max_s"),
    )
    bad = ops.filter(pl.col("total_s").is_null() | pl.col("calls").is_null()).height
    if bad:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="count", n=bad))
    ops = ops.filter(pl.col("total_s").is_not_null() & pl.col("calls").is_not_null())
    checks = Durations()
    ops = checked_durations(ops, "total_s", "Total Time(us)", checks)
    if "max" in stats.columns:
        ops = checked_durations(ops, "max_s", "Max Time(us)", checks)
    checks.warn(artifact.rel, result)
    if ops.is_empty():
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="operators"))
        return
    result.tables["profile_ops"] = _finish(ops, rank, "op_statistic", artifact.rel)
