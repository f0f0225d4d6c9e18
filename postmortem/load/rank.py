"""Ranks: their files read, then joined over one frame of many ranks (every join rule works within
a rank, by group-by on the rank column: a batch of ranks costs one pass, not one per rank).

Order of the joins, each in its own module:
clock.py (zone-less log times onto UTC) -> launches.py (restarted counters onto global steps)
-> units.py (each file's unit by evidence) -> launches.py (where launches start)
-> one_value.py (one value per step) -> steps.py (the per-step table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..discover import Claimed
from ..model import TABLES, Artifact, InventoryEntry, ReadResult, Segment, Setting, conform, empty
from ..readers.base import Reader
from .clock import align_local_clocks
from .duplicates import one_source_per_launch
from .launches import launches_by_rank, renumber_restarted_counters
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
    rank: int = 0  # the rank its reader locates its files at (files.by_rank)


def rank_files(group: list[Claimed], order: dict[str, int], rank: int = 0) -> RankFiles:
    return RankFiles(tuple(group), {c.artifact.rel: order[c.artifact.rel] for c in group}, rank)


def batches(ranks: list[RankFiles], max_bytes: int, max_ranks: int) -> list[tuple[RankFiles, ...]]:
    """Consecutive ranks in batches of about `max_bytes` of input and at most `max_ranks` ranks:
    a batch is one job, joined in one pass; its size bounds the memory its intermediate tables take."""
    out: list[tuple[RankFiles, ...]] = []
    batch: list[RankFiles] = []
    size = 0
    for rank in ranks:
        batch.append(rank)
        size += sum(c.artifact.size for c in rank.files)
        if size >= max_bytes or len(batch) >= max_ranks:
            out.append(tuple(batch))
            batch, size = [], 0
    if batch:
        out.append(tuple(batch))
    return out


def load_rank(rank: RankFiles) -> RankPart:
    """Read one rank's files and join them (load_ranks of one)."""
    return load_ranks((rank,))


def load_ranks(ranks: Sequence[RankFiles]) -> RankPart:
    """Read the files of some ranks and join them over one frame: clocks, launches, units, one
    value per step, steps. The part's segments and restart notes are its first rank's."""
    jobs: list[tuple[Reader, Artifact]] = []
    results: list[ReadResult] = []
    order: dict[str, int] = {}
    for rank in ranks:
        mine = [(c.reader, c.artifact) for c in rank.files]
        read = [_safe_read(reader, artifact) for reader, artifact in mine]
        one_source_per_launch(mine, read)  # copies of one log are found within a rank
        jobs += mine
        results += read
        order.update(rank.order)
    tables, settings_found, inventory, diagnostics, local = _gather(jobs, results, order)
    beside = [_safe_read(w, c.artifact) for rank in ranks for c in rank.files for w in c.witnesses]
    _add_witnessed(tables, diagnostics, beside)
    scalars, events, clock_notes, unaligned = align_local_clocks(tables["scalars"], tables["events"], local)
    scalars, _, renumber_notes = renumber_restarted_counters(scalars)
    scalars, unit_notes = settle_units(scalars)
    segments, restart_notes = launches_by_rank(scalars)
    keep, latest, conflict_notes = one_value_per_step(scalars)
    tables["scalars"] = scalars.drop("_file_order", "_row")[keep]
    tables["events"] = events
    tables["steps"] = steps_table(scalars, latest, tables["scalars"], segments)
    notes = clock_notes + renumber_notes + unit_notes + conflict_notes
    first = ranks[0].rank if ranks else 0
    return RankPart(tables, settings_found, inventory, _by_rank(diagnostics + notes, ranks), segments.get(first, []),
                    restart_notes.get(first, []), unaligned)


def _by_rank(notes: list[Diagnostic], ranks: Sequence[RankFiles]) -> list[Diagnostic]:
    """The notes of a batch, a rank's together (in the batch's rank order), each rank's in the
    order they were made: by the file they are about (a note about no file of the batch stays
    after the one before it)."""
    index = {c.artifact.rel: i for i, rank in enumerate(ranks) for c in rank.files}
    keys, last = [], 0
    for note in notes:
        last = index.get(note.path, last)
        keys.append(last)
    return [notes[i] for i in sorted(range(len(notes)), key=keys.__getitem__)]


def _gather(
    jobs: list[tuple[Reader, Artifact]], results: list[ReadResult], order: dict[str, int]
) -> tuple[dict[str, pl.DataFrame], list[tuple[str, Setting]], list[InventoryEntry], list[Diagnostic], list[str]]:
    """Concatenate what the readers returned: tables (scalars and events tagged with their launch
    order), settings as found, the inventory of the files, the readers' diagnostics (and a warning
    for a file that gave nothing and said nothing), and the files whose clock is local."""
    diagnostics: list[Diagnostic] = []
    inventory: list[InventoryEntry] = []
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in TABLES}
    orders: dict[str, list[int]] = {name: [] for name in _ORDERED}  # each part's file's launch order
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
            parts[table_name].append(conform(table, TABLES[table_name]))
            if table_name in _ORDERED:
                orders[table_name].append(order[art.rel])

    tables = {name: _fill_rank(concat(parts[name], TABLES[name], rechunk=True), name) for name in TABLES}
    for name in _ORDERED:
        # Each row's file (its launch order) and its position in the file, for all files at once.
        lengths = np.array([p.height for p in parts[name]], dtype=np.int64)
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        tables[name] = tables[name].with_columns(
            pl.Series("_file_order", np.repeat(np.array(orders[name], dtype=np.int32), lengths), dtype=pl.Int32),
            pl.Series("_row", (np.arange(int(lengths.sum()), dtype=np.int64) - starts).astype(np.int32), dtype=pl.Int32),
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


def concat(frames: list[pl.DataFrame], schema: dict, *, rechunk: bool = False) -> pl.DataFrame:
    """rechunk: into one chunk per column (a table of many files' small parts, worked on next);
    else the parts' chunks are kept (a few big parts, copied for nothing)."""
    if not frames:
        return empty(schema)
    if len(frames) == 1:
        return frames[0]
    if all(f.schema == frames[0].schema for f in frames):  # conformed tables: their chunks are appended, not copied
        return pl.concat(frames, how="vertical", rechunk=rechunk)
    return pl.concat(frames, how="diagonal_relaxed", rechunk=rechunk)


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
