"""One rank: its files read, then joined (every join rule works within a rank).

Order of the joins, each in its own module:
clock.py (zone-less log times onto UTC) -> launches.py (restarted counters onto global steps)
-> units.py (each file's unit by evidence) -> launches.py (where launches start)
-> one_value.py (one value per step) -> steps.py (the per-step table).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..discover import Claimed
from ..model import TABLES, Artifact, InventoryEntry, ReadResult, Segment, Setting, conform, empty
from ..readers.base import Reader
from .clock import align_local_clocks
from .duplicates import one_source_per_launch
from .launches import launches, renumber_restarted_counters
from .one_value import one_value_per_step
from .steps import steps_table
from .units import settle_units

_ORDERED = ("scalars", "events")  # tables whose rows carry (_file_order, _row) until load is done


@dataclass
class RankPart:
    """What one rank's files give once read and joined."""

    tables: dict[str, pl.DataFrame]
    settings_found: list[tuple[str, Setting]]
    inventory: list[InventoryEntry]
    diagnostics: list[Diagnostic]
    segments: list[Segment]
    restart_notes: list[Diagnostic]
    local_clock: list[str] = field(default_factory=list)  # files whose wall times stay local (no zone, not aligned)


@dataclass(frozen=True)
class RankFiles:
    """One rank's files, each with its reader, and their launch order (files.file_order): a job
    that a helper process can do (it pickles: readers are module-level functions)."""

    files: tuple[Claimed, ...]
    order: dict[str, int]


def rank_files(group: list[Claimed], order: dict[str, int]) -> RankFiles:
    return RankFiles(tuple(group), {c.artifact.rel: order[c.artifact.rel] for c in group})


def load_rank(rank: RankFiles) -> RankPart:
    """Read one rank's files and join them: clocks, launches, units, one value per step, steps."""
    jobs = [(c.reader, c.artifact) for c in rank.files]
    results = [_safe_read(reader, artifact) for reader, artifact in jobs]
    one_source_per_launch(jobs, results)
    tables, settings_found, inventory, diagnostics, local = _gather(jobs, results, rank.order)
    beside = [_safe_read(w, c.artifact) for c in rank.files for w in c.witnesses]
    _add_witnessed(tables, diagnostics, beside)
    scalars, events, clock_notes, unaligned = align_local_clocks(tables["scalars"], tables["events"], local)
    scalars, _, renumber_notes = renumber_restarted_counters(scalars)
    scalars, unit_notes = settle_units(scalars)
    segments, restart_notes = launches(scalars)
    keep, latest, conflict_notes = one_value_per_step(scalars)
    tables["scalars"] = scalars.drop("_file_order", "_row")[keep]
    tables["events"] = events
    tables["steps"] = steps_table(scalars, latest, tables["scalars"], segments)
    notes = clock_notes + renumber_notes + unit_notes + conflict_notes
    return RankPart(tables, settings_found, inventory, diagnostics + notes, segments, restart_notes, unaligned)


def _gather(
    jobs: list[tuple[Reader, Artifact]], results: list[ReadResult], order: dict[str, int]
) -> tuple[dict[str, pl.DataFrame], list[tuple[str, Setting]], list[InventoryEntry], list[Diagnostic], list[str]]:
    """Concatenate what the readers returned: tables (scalars and events tagged with their launch
    order), settings as found, the inventory of the files, the readers' diagnostics (and a warning
    for a file that gave nothing and said nothing), and the files whose clock is local."""
    diagnostics: list[Diagnostic] = []
    inventory: list[InventoryEntry] = []
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in TABLES}
    settings_found: list[tuple[str, Setting]] = []
    local: list[str] = []
    for (reader, art), result in zip(jobs, results):
        name = reader.name
        diagnostics.extend(result.diagnostics or _nothing_taken(name, art, result))
        inventory.append(InventoryEntry(art.rel, name, art.size, result.rows(), art.rank))
        settings_found.extend(result.settings.items())
        if result.clock == "local":
            local.append(art.rel)
        for table_name, table in result.tables.items():
            if table_name not in TABLES or table is None or table.is_empty():
                continue
            table = conform(table, TABLES[table_name])
            if table_name in _ORDERED:
                table = table.with_columns(
                    pl.lit(order[art.rel], dtype=pl.Int32).alias("_file_order"),
                    pl.int_range(pl.len(), dtype=pl.Int32).alias("_row"),
                )
            parts[table_name].append(table)

    tables = {name: _fill_rank(concat(parts[name], TABLES[name]), name) for name in TABLES}
    for name in _ORDERED:  # an empty table has no launch-order columns yet
        if "_file_order" not in tables[name].columns:
            tables[name] = tables[name].with_columns(
                pl.lit(None, pl.Int32).alias("_file_order"), pl.lit(None, pl.Int32).alias("_row")
            )
    return tables, settings_found, inventory, diagnostics, local


def _add_witnessed(tables: dict[str, pl.DataFrame], diagnostics: list[Diagnostic], results: list[ReadResult]) -> None:
    """What the witnesses read beside a file's own reader: their tables (the failure reader's
    incidents) and their diagnostics. The file's inventory entry is its own reader's."""
    parts: dict[str, list[pl.DataFrame]] = {}
    for result in results:
        diagnostics.extend(result.diagnostics)
        for name, table in result.tables.items():
            if name in TABLES and name not in _ORDERED and table is not None and not table.is_empty():
                if table.schema != TABLES[name]:
                    table = conform(table, TABLES[name])
                parts.setdefault(name, []).append(table)
    for name, found in parts.items():  # one concat per table, not one per file
        tables[name] = concat([tables[name], *found], TABLES[name])


def _nothing_taken(reader: str, art: Artifact, result: ReadResult) -> list[Diagnostic]:
    """A claimed file that gave no rows and no settings, and whose reader said nothing why."""
    if result.rows() or result.settings:
        return []
    return [diag.warning(f"{reader}-nothing-read", path=art.rel, variant="empty" if art.size == 0 else "")]


def concat(frames: list[pl.DataFrame], schema: dict) -> pl.DataFrame:
    if not frames:
        return empty(schema)
    return pl.concat(frames, how="diagonal_relaxed")


_RANK_SAID = ("incidents",)  # tables whose null rank means "the files do not say" (analysis/failure.py decides)


def _fill_rank(table: pl.DataFrame, name: str = "") -> pl.DataFrame:
    """Files without a rank in their path belong to a single-rank run: rank 0."""
    if name not in _RANK_SAID and "rank" in table.columns and table["rank"].null_count():
        return table.with_columns(pl.col("rank").fill_null(0))
    return table


def _safe_read(reader: Reader, artifact: Artifact) -> ReadResult:
    try:
        return reader.read(artifact)
    except OSError as exc:
        note = diag.error("file-unreadable", path=artifact.rel, variant="read", detail=exc.strerror or str(exc))
    except Exception as exc:  # a reader bug must not lose the rest of the run
        note = diag.error("reader-failed", path=artifact.rel, reader=reader.name, detail=f"{type(exc).__name__}: {exc}")
    return ReadResult(reader=reader.name, diagnostics=[note])
