"""One value per (tag, rank, step) from the most trusted source; disagreements become notes.

1. Later wins within a stream: the last row (in launch order) for every step.
2. One value per (tag, rank, step): the best source (sources.SOURCE_PRIORITY); between two streams
   of one source, the later launch.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..tags import CONFLICT_TOLERANCE, DEFAULT_TOLERANCE
from .sources import AVERAGED_SOURCES, source_rank


def one_value_per_step(scalars: pl.DataFrame) -> tuple[pl.Series, pl.Series, list[Diagnostic]]:
    """Row numbers of the scalars to keep, in (tag, rank, step) order; row numbers of each
    stream's latest rows (rule 1 only: every source's own view, for step-end times); conflicts.

    1. Later wins within a stream: the last row (in launch order) for every step. A log file is
       one stream whatever its line shapes (a resumed launch may print JSON where the first one
       printed key=value); the per-launch files of one source (summary, tensorboard) are one.
    2. One value per (tag, rank, step): the best source; between two streams of one source, the
       later launch.
    Both run on a narrow frame of integer codes; the wide table is gathered once. Polars hashes and
    sorts one Int64 column several times faster than several columns, so (tag, rank, step),
    (stream, tag, rank, step) and (tag, rank, step, preference) are packed into one each.
    """
    if scalars.is_empty():
        none = pl.Series("_i", [], dtype=pl.UInt32)
        return none, none, []
    keys = scalars.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"), "tag", "rank", "step", "source", "value", "_file_order", "_row",
    )
    # Rows arrive in discovery order, which is launch order unless stamps differ in digit count.
    if not keys["_file_order"].is_sorted():
        keys = keys.sort("_file_order", "_row", maintain_order=True)
    tag, tags = _category_codes(keys["tag"])  # SCALARS' text columns are categorical
    source, sources = _category_codes(keys["source"])
    file, files = _int_codes(keys["_file_order"])  # a file's launch order stands for the file
    rank, ranks = _int_codes(keys["rank"])
    step, steps = _int_codes(keys["step"])
    averaged = [code for code, name in enumerate(sources) if name in AVERAGED_SOURCES]
    logs = [code for code, name in enumerate(sources) if name and name.startswith("log:") and code not in averaged]
    # A stream as (file, source): per-epoch averages in their file, a log file whatever its line
    # shapes, any other source across its files.
    stream = (
        pl.when(pl.col("_source").is_in(averaged)).then(pl.col("_file") * len(sources) + pl.col("_source"))
        .when(pl.col("_source").is_in(logs)).then(pl.col("_file") * len(sources))
        .otherwise(pl.col("_source"))
    )
    tag_rank_step = [(pl.col("_tag"), len(tags)), (pl.col("_rank"), ranks), (pl.col("_step"), steps)]
    # Best first within a (tag, rank, step): the most trusted source, then the later launch (and
    # the source's code, so that no two streams ever tie).
    trust_of = np.array([source_rank(name) for name in sources], dtype=np.int64)  # by source code
    trusts = int(trust_of.max()) + 1
    trust = pl.lit(pl.Series(trust_of)).gather(pl.col("_source"))
    preference = (trust * files + (files - 1 - pl.col("_file"))) * len(sources) + pl.col("_source")
    keys = keys.with_columns(
        tag.alias("_tag"), source.alias("_source"), file.alias("_file"), rank.alias("_rank"), step.alias("_step")
    ).select(
        "_i", "_source", "value",
        _packed(tag_rank_step).alias("_step_key"),
        _packed([(stream, files * len(sources)), *tag_rank_step]).alias("_stream_key"),
        _packed([*tag_rank_step, (preference, trusts * files * len(sources))]).alias("_order_key"),
    )
    # Sorted (stably) by a key, the rows of one key are a run in launch order: comparing neighbours
    # finds a run's first or last row much faster than polars' hashing is_first/last_distinct.
    latest = keys.sort("_stream_key", maintain_order=True).filter(_last_of_run("_stream_key"))
    # (tag, rank, step) order, best first within each: the first row of each is kept.
    ordered = latest.sort("_order_key")
    notes = _conflicts(ordered.filter(~pl.col("_source").is_in(averaged)), scalars)
    return ordered.filter(_first_of_run("_step_key"))["_i"], latest["_i"], notes


def _first_of_run(key: str) -> pl.Expr:
    """In a frame sorted by `key`: the first row of each run of equal keys."""
    return pl.col(key).ne_missing(pl.col(key).shift(1))


def _last_of_run(key: str) -> pl.Expr:
    """In a frame sorted by `key`: the last row of each run of equal keys."""
    return pl.col(key).ne_missing(pl.col(key).shift(-1))


def _category_codes(values: pl.Series) -> tuple[pl.Series, list[str | None]]:
    """Int64 codes that order like the text of a categorical column (null first, as 0), and the
    text by code: the categories' ids looked up in a table, no string compares."""
    distinct = values.unique().drop_nulls().sort()  # a categorical sorts by its text
    ids = values.to_physical()
    lookup = np.zeros(int(ids.max() or 0) + 1, dtype=np.int64)
    lookup[distinct.to_physical().to_numpy()] = np.arange(1, distinct.len() + 1)
    return pl.Series(lookup).gather(ids).fill_null(0), [None, *distinct.to_list()]


def _int_codes(values: pl.Series) -> tuple[pl.Series, int]:
    """Int64 codes that order like the integers (null first, as 0), and how many there can be."""
    lo, hi = values.min(), values.max()
    if lo is None:
        return pl.zeros(values.len(), pl.Int64, eager=True), 1
    if hi - lo < 1 << 31:  # steps, ranks, launch order: an offset is enough
        return (values.cast(pl.Int64) - lo + 1).fill_null(0), hi - lo + 2
    dense = values.rank("dense")  # 1..n in value order
    return dense.cast(pl.Int64).fill_null(0), int(dense.max()) + 1


def _packed(codes: list[tuple[pl.Expr, int]]) -> pl.Expr:
    """One key that groups and sorts like the given code columns (each with how many codes it can
    have): an Int64 when all fit in 63 bits (always, for real runs), else a struct of them."""
    size = 1
    for _, n in codes:
        size *= n
    if size >= 1 << 63:
        return pl.struct([expr.alias(f"_{i}") for i, (expr, _) in enumerate(codes)])
    key = codes[0][0]
    for expr, n in codes[1:]:
        key = key * n + expr
    return key


def _conflicts(ordered: pl.DataFrame, scalars: pl.DataFrame) -> list[Diagnostic]:
    """Steps where two per-step sources disagree on the same quantity (beyond print rounding, or
    for timers beyond what each leaves out: tags.CONFLICT_TOLERANCE).

    `ordered`: the per-step sources' rows (row `_i` of `scalars`, `_source` code, value) in
    (tag, rank, step) order, the best source first within each.
    """
    per_step = ordered.filter(pl.col("value").is_finite())
    # the best row of each (tag, rank, step) is the first one
    best = pl.when(_first_of_run("_step_key")).then(pl.int_range(pl.len())).forward_fill()
    # The strictest tolerance first (on the narrow frame), then each tag's own on the few rows left.
    strictest = min(DEFAULT_TOLERANCE, *CONFLICT_TOLERANCE.values())
    bad = (
        per_step.with_columns(best.alias("_best_row"))
        .with_columns(
            pl.col("value").gather(pl.col("_best_row")).alias("_best"),
            pl.col("_source").gather(pl.col("_best_row")).alias("_best_source"),
            pl.col("_i").gather(pl.col("_best_row")).alias("_best_i"),
        )
        .filter((pl.col("_source") != pl.col("_best_source"))
                & ((pl.col("value") - pl.col("_best")).abs() > pl.max_horizontal(pl.lit(1e-3), strictest * pl.col("_best").abs())))
    )
    if not bad.is_empty():
        tags = scalars["tag"][bad["_i"]].cast(pl.Utf8)
        relative = tags.replace_strict(CONFLICT_TOLERANCE, default=DEFAULT_TOLERANCE, return_dtype=pl.Float64)
        bad = bad.filter((pl.col("value") - pl.col("_best")).abs() > pl.max_horizontal(pl.lit(1e-3), relative * pl.col("_best").abs()))
    if bad.is_empty():
        return []
    bad = bad.hstack(scalars.select("tag", "step", "file", "source", "_file_order", "_row")[bad["_i"]]).with_columns(
        scalars["source"][bad["_best_i"]].alias("best_source")
    )
    notes = []
    # per (tag, source, best source): how many steps, and the first one (in launch order within a step)
    for (tag, source, best_source), group in bad.sort("tag", "source", "step", "_file_order", "_row").group_by(
        ["tag", "source", "best_source"], maintain_order=True
    ):
        first = group.row(0, named=True)
        notes.append(
            diag.warning("source-conflict", path=first["file"], tag=tag, source=source, best=best_source,
                         steps=group.height, step=first["step"], value=first["value"], best_value=first["_best"])
        )
    return notes
