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


def one_value_per_step(scalars: pl.DataFrame, *, rules_everywhere: bool = False
                       ) -> tuple[pl.Series, pl.Series | None, list[Diagnostic]]:
    """Row numbers of the scalars to keep, in (rank, tag, step) order; row numbers of each
    stream's latest rows (rule 1 only: every source's own view, for step-end times), None when
    that is every row; conflicts.

    1. Later wins within a stream: the last row (in launch order) for every step. A log file is
       one stream whatever its line shapes (a resumed launch may print JSON where the first one
       printed key=value); the per-launch files of one source (summary, tensorboard) are one.
    2. One value per (tag, rank, step): the best source; between two streams of one source, the
       later launch.

    Most (tag, rank) series come from one source and hold each step once, in launch order: their
    rows are kept as they are, in one pass (a stable sort by the series' small code, a radix sort
    in numpy). The rules run only on the series where a step does not follow the one before
    (a repeat, a second source, a resumed launch), on a narrow frame of integer codes.
    rules_everywhere: run them on every series (the reference the tests compare with).
    """
    if scalars.is_empty():
        none = pl.Series("_i", [], dtype=pl.UInt32)
        return none, None, []
    keys = scalars.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"), "tag", "rank", "step", "source", "value", "_file_order", "_row",
    )
    # Rows arrive in discovery order, which is launch order unless stamps differ in digit count.
    if not keys["_file_order"].is_sorted():
        keys = keys.sort("_file_order", "_row", maintain_order=True)
    tag, tags = _category_codes(keys["tag"])  # SCALARS' text columns are categorical
    rank, ranks = _int_codes(keys["rank"])
    step, steps = _int_codes(keys["step"])
    series = rank * len(tags) + tag  # (rank, tag), ordered like them: the rows of a rank together
    by_series = _stable_order(series, len(tags) * ranks)
    ordered_series, ordered_steps = series[by_series], step[by_series]
    repeats = (ordered_steps[1:] <= ordered_steps[:-1]) & (ordered_series[1:] == ordered_series[:-1])
    row = keys["_i"].to_numpy()
    if not repeats.any() and not rules_everywhere:
        return pl.Series("_i", row[by_series]), None, []
    mixed = np.ones(len(series), dtype=bool) if rules_everywhere else np.isin(series, np.unique(ordered_series[1:][repeats]))
    plain = by_series[~mixed[by_series]]  # the other series' rows, in (rank, tag, step) order
    keep, latest, notes = _by_the_rules(keys.filter(pl.Series(mixed)), scalars, (tag[mixed], tags), (rank[mixed], ranks),
                                        (step[mixed], steps))
    kept = np.concatenate([row[plain], keep.to_numpy()])
    # each series is all plain or all mixed, each in step order: ordered by series, stably
    kept = kept[_stable_order(series_of(kept, row, series), len(tags) * ranks)]
    return pl.Series("_i", kept), pl.Series("_i", np.concatenate([row[plain], latest.to_numpy()])), notes


def series_of(rows: np.ndarray, row: np.ndarray, series: np.ndarray) -> np.ndarray:
    """The series code of each of `rows` (row numbers of `scalars`; `row`: the row number at each
    position of `series`)."""
    at = np.empty(len(row), dtype=np.int64)
    at[row] = np.arange(len(row))
    return series[at[rows]]


def _stable_order(codes: np.ndarray, count: int) -> np.ndarray:
    """The positions of `codes` (0 <= code < count) in code order, stably: numpy sorts 16-bit
    integers stably by radix, in one pass."""
    return np.argsort(codes.astype(np.uint16) if count <= 1 << 16 else codes, kind="stable")


def _by_the_rules(keys: pl.DataFrame, scalars: pl.DataFrame, tag, rank, step) -> tuple[pl.Series, pl.Series, list[Diagnostic]]:
    """Rules 1 and 2 on `keys` (every row of some (tag, rank) series, in launch order): the rows
    kept, in (tag, rank, step) order, the streams' latest rows, and the conflicts. `tag`, `rank`,
    `step`: each row's code and how many codes there are."""
    (tag, tags), (rank, ranks), (step, steps) = tag, rank, step
    source, sources = _category_codes(keys["source"])
    file, files = _int_codes(keys["_file_order"])  # a file's launch order stands for the file
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
        pl.Series("_tag", tag), pl.Series("_source", source), pl.Series("_file", file), pl.Series("_rank", rank),
        pl.Series("_step", step),
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


def _category_codes(values: pl.Series) -> tuple[np.ndarray, list[str | None]]:
    """Int64 codes that order like the text of a categorical column (null first, as 0), and the
    text by code: the categories' ids looked up in a table, no string compares."""
    physical = values.to_physical()
    null = int(physical.max() or 0) + 1  # a slot of its own for nulls
    ids = physical.fill_null(null).to_numpy()
    first = np.full(null + 1, -1, dtype=np.int64)  # id -> its first row
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    present = np.flatnonzero(first[:null] >= 0)
    names = values.gather(first[present]).to_list()
    by_name = sorted(range(len(names)), key=names.__getitem__)
    lookup = np.zeros(null + 1, dtype=np.int64)
    lookup[present[by_name]] = np.arange(1, len(names) + 1)
    return lookup[ids], [None, *(names[i] for i in by_name)]


def _int_codes(values: pl.Series) -> tuple[np.ndarray, int]:
    """Int64 codes that order like the integers (null first, as 0), and how many there can be."""
    lo, hi = values.min(), values.max()
    if lo is None:
        return np.zeros(values.len(), dtype=np.int64), 1
    if hi - lo < 1 << 31:  # steps, ranks, launch order: an offset is enough
        return values.cast(pl.Int64).fill_null(lo - 1).to_numpy() - (lo - 1), hi - lo + 2
    dense = values.rank("dense")  # 1..n in value order
    return dense.cast(pl.Int64).fill_null(0).to_numpy(), int(dense.max()) + 1


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
    bad = bad.hstack(scalars.select("rank", "tag", "step", "file", "source", "_file_order", "_row")[bad["_i"]]).with_columns(
        scalars["source"][bad["_best_i"]].alias("best_source")
    )
    notes = []
    # per rank and (tag, source, best source): how many steps, and the first one (in launch order within a step)
    for (_, tag, source, best_source), group in bad.sort("rank", "tag", "source", "step", "_file_order", "_row").group_by(
        ["rank", "tag", "source", "best_source"], maintain_order=True
    ):
        first = group.row(0, named=True)
        notes.append(
            diag.warning("source-conflict", path=first["file"], tag=tag, source=source, best=best_source,
                         steps=group.height, step=first["step"], value=first["value"], best_value=first["_best"])
        )
    return notes
