"""load_run(path) -> Run: read every artifact, join sources, stitch restarts, one value per step.

The rules, in order:
1. Each claimed file is read by its reader (in parallel processes when there is enough work).
2. Within one source stream (source, tag, rank), rows are ordered by launch (summary files by the
   stamp in their name, other files by path) and by position in the file. A step that repeats
   after a restart is taken from the *later* launch; the replaced span is recorded on the segment.
3. The same quantity from several sources (loss in the summary and in a log) keeps one row per
   (tag, rank, step), from the most trustworthy source (SOURCE_PRIORITY); disagreements between
   sources become a diagnostic.
4. The per-step table takes end-to-end step times from a per-step logged time where one exists,
   else from the differences of wall times between consecutive step ends.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from . import diagnostics as diag
from . import workers as worker_processes
from .diagnostics import Diagnostic
from .discover import Claimed, discover
from .model import (
    TABLES,
    Artifact,
    InventoryEntry,
    ReadResult,
    Run,
    Segment,
    Setting,
    conform,
    empty,
    packed,
    unpacked,
)
from .readers import all_readers
from .readers.base import Reader

# Lower index wins when two sources give the same tag at the same step.
SOURCE_PRIORITY = (
    "summary",
    "tensorboard",
    "log:kv",
    "log:json",
    "log:mindformers",
    "log:pynative",
    "log:flops",
    "log:lossmonitor",
    "log:timemonitor",
)
# Per-epoch averages: usable when nothing per-step exists, never compared against per-step values.
AVERAGED_SOURCES = ("log:timemonitor",)

# Settings from a config file beat lineage, which beats what logs print.
SETTING_PRIORITY = ("flag", "config", "derived", "lineage", "meta.json", "log")

# A worker process for each this much input: below it, the worker's start costs more than it saves.
_PARALLEL_MIN_BYTES = 32 * 1024 * 1024


def load_run(
    path: str | Path, *, workers: int | None = None, readers: Sequence[Reader] | None = None,
    pool: worker_processes.Pool | None = None,
) -> Run:
    """Read every artifact of a run folder into one Run (see the module docstring for the rules).

    workers: processes that read ranks at most, this one included (default: one per core this
    process may use, workers.cores()); fewer for a small run (_processes). pool: worker processes
    already started (the build's helper), used instead of starting new ones if it has enough."""
    readers = tuple(readers) if readers is not None else all_readers()
    found = discover(path, readers)
    order = _file_order([c.artifact for c in found.claimed])
    # Worker processes look readers up by name, so custom readers (tests) are read in-process.
    parallel_ok = readers == all_readers()
    parts = _load_ranks(_by_rank(found.claimed), order, *((workers, pool) if parallel_ok else (1, None)))

    tables = {name: _concat([p.tables[name] for p in parts], TABLES[name]) for name in TABLES}
    settings, setting_notes = _merge_settings([kv for p in parts for kv in p.settings_found])
    # The lowest rank's launches describe the run (every rank restarts together).
    segments = list(parts[0].segments) if parts else []
    inventory = [e for p in parts for e in p.inventory]
    inventory += [InventoryEntry(a.rel, None, a.size, 0, a.rank, "not claimed by any reader") for a in found.unclaimed]
    inventory += [InventoryEntry(s.rel, None, s.size, 0, None, s.note) for s in found.skipped]
    diagnostics = [*found.diagnostics, *(d for p in parts for d in p.diagnostics)]
    diagnostics += (parts[0].restart_notes if parts else []) + setting_notes

    tables["events"] = _events(tables["events"], segments)
    tables["checkpoints"], tables["events"] = _resolve_checkpoint_steps(tables["checkpoints"], tables["events"], settings)
    ranks = sorted(
        {r for name in ("scalars", "steps", "checkpoints", "profile_steps") for r in tables[name]["rank"].drop_nulls().unique()}
    )
    return Run(
        root=str(Path(path)),
        name=Path(path).resolve().name,
        tables=tables,
        settings=settings,
        inventory=tuple(sorted(inventory, key=lambda e: _natural_order(e.rel))),
        segments=tuple(segments),
        ranks=tuple(int(r) for r in ranks),
        diagnostics=tuple(_dedupe(diagnostics)),
    )


@dataclass
class _RankPart:
    """What one rank's files give once read and joined (every join rule works within a rank)."""

    tables: dict[str, pl.DataFrame]
    settings_found: list[tuple[str, Setting]]
    inventory: list[InventoryEntry]
    diagnostics: list[Diagnostic]
    segments: list[Segment]
    restart_notes: list[Diagnostic]


def _load_rank(jobs: list[tuple[Reader | str, Artifact]], order: dict[str, int]) -> _RankPart:
    """Read one rank's files and join them: launches, one value per step, per-step times."""
    results = [_read_one(job) for job in jobs]
    tables, settings_found, inventory, diagnostics = _gather(jobs, results, order)
    scalars_all, renumber_notes = _renumber_restarted_counters(tables["scalars"])
    segments, restart_notes = _launches(scalars_all)
    keep, conflict_notes = _one_value_per_step(scalars_all)
    tables["scalars"] = scalars_all[keep].drop("_file_order", "_row")
    tables["steps"] = _steps(tables["scalars"], segments)
    return _RankPart(tables, settings_found, inventory, diagnostics + renumber_notes + conflict_notes,
                     segments, restart_notes)


def _load_ranks(
    groups: list[list[Claimed]], order: dict[str, int], workers: int | None, pool: worker_processes.Pool | None
) -> list[_RankPart]:
    """One part per rank, in rank order. Ranks are shared with worker processes when there is
    enough work: the pool given (the build's helper) when it has workers enough, else new ones."""
    orders = [{c.artifact.rel: order[c.artifact.rel] for c in group} for group in groups]
    here = [([(c.reader, c.artifact) for c in group], o) for group, o in zip(groups, orders)]
    total = sum(c.artifact.size for group in groups for c in group)
    processes = _processes(len(groups), total, workers if workers is not None else worker_processes.cores())
    if processes < 2:
        return [_load_rank(*job) for job in here]
    if pool is not None and processes - 1 <= pool.workers:
        return _load_ranks_shared(here, pool)
    # More cores than the pool has workers (a many-core host): new workers; the pool is left to
    # its other work (the PDF).
    with worker_processes.Pool(processes - 1) as own:
        return _load_ranks_shared(here, own)


def _processes(ranks: int, total_bytes: int, cores: int) -> int:
    """Processes worth reading `ranks` ranks of `total_bytes` with, this one included: one per
    core at most, one per rank, and one more per _PARALLEL_MIN_BYTES of input (a worker's start
    costs about what reading that much does)."""
    by_size = 1 + total_bytes // _PARALLEL_MIN_BYTES if _PARALLEL_MIN_BYTES else ranks
    return max(1, min(cores, ranks, by_size))


def _load_ranks_shared(jobs: list[tuple[list[tuple[Reader, Artifact]], dict[str, int]]], pool: worker_processes.Pool) -> list[_RankPart]:
    """The ranks shared between this process and the pool's workers: the workers take them from
    the front, this process from the back, until they meet (worker_processes.Claims). Working here
    too saves a process start and half of the parts' trips back (packed, then unpacked here). The
    pool may be busy with other work (a baseline): then this process reads every rank."""
    parts: list[_RankPart | None] = [None] * len(jobs)
    batch = pool.claims.start(len(jobs))
    with _parts_folder() as folder:
        futures = [
            pool.submit(_load_rank_if_free, batch, i, ([(reader.name, art) for reader, art in files], order), folder)
            for i, (files, order) in enumerate(jobs)
        ]
        pending = dict(zip(futures, range(len(jobs))))

        def collect(done: list[Future]) -> None:
            for future in done:
                i = pending.pop(future)
                part = None if future.cancelled() else future.result()
                if part is not None:
                    part.tables = unpacked(part.tables)
                    parts[i] = part

        while (i := pool.claims.from_back(batch)) is not None:
            futures[i].cancel()  # not sent to a worker yet, usually: it never needs to be
            parts[i] = _load_rank(*jobs[i])
            collect([f for f in pending if f.done()])  # unpacked while the workers go on
        # Only the workers' ranks are waited for: a task of ours that reached a worker returns
        # None whenever that worker gets to it, which may be after other work it was given.
        theirs = pool.claims.workers_part(batch)
        for future in futures[theirs:]:
            future.cancel()
        collect([f for f in futures[:theirs] if f in pending])
    return parts


def warm_up() -> None:
    """In a worker started ahead of its work (workers.Pool.warm_up): the imports and the set-ups
    that reading the first rank would otherwise pay (~0.1 s): the readers, the text-log result
    for no handed-back lines, and polars' first numpy series, row selection and multi-key sort."""
    from .readers.textlog import _nothing_handed_back

    all_readers()
    _nothing_handed_back()
    table = pl.DataFrame({"a": [2, 1], "b": [0.5, 1.5]})
    table[np.array([1, 0])].sort("a", "b")


@contextlib.contextmanager
def _parts_folder():
    """A new temp folder where workers leave the tables they send back (model.packed), or "" when
    none can be made: then the tables travel through the pipe."""
    try:
        folder = tempfile.TemporaryDirectory(prefix="postmortem-parts-")
    except OSError:
        yield ""
        return
    with folder as path:
        yield path


def _load_rank_if_free(
    batch: int, i: int, job: tuple[list[tuple[str, Artifact]], dict[str, int]], folder: str
) -> _RankPart | None:
    """In a worker: rank i, read and joined, unless the parent took it first (readers travel by
    name); its tables go back as files in `folder`."""
    if not worker_processes.claims().from_front(batch, i):
        return None
    part = _load_rank(*job)
    part.tables = packed(part.tables, folder)
    return part


def _by_rank(claimed: Sequence[Claimed]) -> list[list[Claimed]]:
    """Files grouped by the rank their rows will carry: the path's, a summary file's device id,
    else rank 0 (a single-rank run, or a run-level file such as the config)."""
    from .readers.mindspore_summary import file_rank

    groups: dict[int, list[Claimed]] = {}
    for c in claimed:
        rank = file_rank(c.artifact)
        groups.setdefault(rank if rank is not None else 0, []).append(c)
    return [groups[r] for r in sorted(groups)]


def _gather(
    jobs: list[tuple[Reader | str, Artifact]], results: list[ReadResult], order: dict[str, int]
) -> tuple[dict[str, pl.DataFrame], list[tuple[str, Setting]], list[InventoryEntry], list[Diagnostic]]:
    """Concatenate what the readers returned: tables (scalars and events tagged with their launch
    order), settings as found, the inventory of the files, and the readers' diagnostics."""
    diagnostics: list[Diagnostic] = []
    inventory: list[InventoryEntry] = []
    parts: dict[str, list[pl.DataFrame]] = {name: [] for name in TABLES}
    settings_found: list[tuple[str, Setting]] = []
    for (reader, art), result in zip(jobs, results):
        diagnostics.extend(result.diagnostics)
        name = reader if isinstance(reader, str) else reader.name
        inventory.append(InventoryEntry(art.rel, name, art.size, result.rows(), art.rank))
        settings_found.extend(result.settings.items())
        for name, table in result.tables.items():
            if name not in TABLES or table is None or table.is_empty():
                continue
            table = conform(table, TABLES[name])
            if name in _ORDERED:
                table = table.with_columns(
                    pl.lit(order[art.rel], dtype=pl.Int64).alias("_file_order"),
                    pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"),
                )
            parts[name].append(table)

    tables = {name: _fill_rank(_concat(parts[name], TABLES[name])) for name in TABLES}
    for name in _ORDERED:  # an empty table has no launch-order columns yet
        if "_file_order" not in tables[name].columns:
            tables[name] = tables[name].with_columns(
                pl.lit(None, pl.Int64).alias("_file_order"), pl.lit(None, pl.Int64).alias("_row")
            )
    return tables, settings_found, inventory, diagnostics


_ORDERED = ("scalars", "events")  # tables whose rows carry (_file_order, _row) until load is done


# --------------------------------------------------------------------------- reading


def _read_one(job: tuple[Reader | str, Artifact]) -> ReadResult:
    reader, artifact = job
    if isinstance(reader, str):
        reader = next(r for r in all_readers() if r.name == reader)
    return _safe_read(reader, artifact)


def _safe_read(reader: Reader, artifact: Artifact) -> ReadResult:
    try:
        return reader.read(artifact)
    except OSError as exc:
        slug = "file-unreadable"
        message = f"cannot read: {exc.strerror or exc}"
    except Exception as exc:  # a reader bug must not lose the rest of the run
        slug = "reader-failed"
        message = f"{reader.name} reader failed: {type(exc).__name__}: {exc}"
    return ReadResult(reader=reader.name, diagnostics=[diag.error(slug, message, artifact.rel)])


def _file_order(artifacts: Sequence[Artifact]) -> dict[str, int]:
    """Launch order of files: discovery (path) order, with summary files among themselves ordered
    by the stamp in their name. Only the order within one stream matters, so keeping every other
    file where discovery put it lets the usual case skip a sort of all rows."""
    from .readers.mindspore_summary import summary_stamp

    order = {a.rel: i for i, a in enumerate(artifacts)}
    stamped = [a for a in artifacts if summary_stamp(Path(a.rel).name) is not None]
    slots = sorted(order[a.rel] for a in stamped)
    by_stamp = sorted(stamped, key=lambda a: (summary_stamp(Path(a.rel).name), a.rel))
    order.update({a.rel: slot for slot, a in zip(slots, by_stamp)})
    return order


def _natural_order(text: str) -> tuple[list[str | int], str]:
    """Sort key that puts rank_2 before rank_10: runs of digits compare as numbers."""
    parts = re.split(r"(\d+)", text)  # text, digits, text, ...: the odd places are digits
    return [int(p) if i % 2 else p for i, p in enumerate(parts)], text


def _concat(frames: list[pl.DataFrame], schema: dict) -> pl.DataFrame:
    if not frames:
        return empty(schema)
    return pl.concat(frames, how="diagonal_relaxed")


def _fill_rank(table: pl.DataFrame) -> pl.DataFrame:
    """Files without a rank in their path belong to a single-rank run: rank 0."""
    return table.with_columns(pl.col("rank").fill_null(0)) if "rank" in table.columns and table.height else table


# --------------------------------------------------------------------------- restarts

# Sources that open a new file per launch. When a resumed launch restarts its step counter
# (MindSpore's Model.train with initial_epoch counts cur_step_num from 1 again, and so does the
# summary it writes), its file's steps are local to the launch.
_FILE_PER_LAUNCH = ("summary", "tensorboard")


def _renumber_restarted_counters(scalars: pl.DataFrame) -> tuple[pl.DataFrame, list[Diagnostic]]:
    """Map launch-local steps onto global steps by matching wall times with a global-step source.

    A later file of a per-launch source whose steps go back is either a resume that repeats global
    steps (kept as is: the later launch wins) or a restarted counter. Another source that logged
    global steps at the same wall times tells which, and by how much to shift.
    """
    notes: list[Diagnostic] = []
    if scalars.is_empty():
        return scalars, notes
    files = (
        scalars.filter(pl.col("source").is_in(_FILE_PER_LAUNCH))
        .group_by("source", "rank", "file")
        .agg(pl.col("_file_order").first(), pl.col("step").min().alias("first"), pl.col("step").max().alias("last"))
        .sort("source", "rank", "_file_order")
    )
    shifts: dict[str, int] = {}
    for (source, rank), group in files.group_by(["source", "rank"], maintain_order=True):
        seen_last = None
        for row in group.iter_rows(named=True):
            shift = 0
            if seen_last is not None and row["first"] < seen_last:
                shift = _offset_from_wall_time(scalars, source, rank, row["file"])
                if shift > 0:
                    shifts[row["file"]] = shift
                    notes.append(diag.info(
                        "step-counter-restarted",
                        f"{source} steps in this file restart at {row['first']} (a resumed launch counting from 1); "
                        f"shifted by {shift} to global steps by matching wall times with other sources",
                        row["file"],
                    ))
            seen_last = max(seen_last or 0, row["last"] + shift)
    if not shifts:
        return scalars, notes
    offset = pl.col("file").replace_strict(shifts, default=0, return_dtype=pl.Int64)
    return scalars.with_columns((pl.col("step") + offset).alias("step")), notes


def _offset_from_wall_time(scalars: pl.DataFrame, source: str, rank: int, file: str) -> int:
    mine = (
        scalars.filter((pl.col("file") == file) & pl.col("wall_time").is_not_null())
        .group_by("step").agg(pl.col("wall_time").max()).sort("wall_time")
    )
    reference = (
        scalars.filter(
            (pl.col("source") != source) & (pl.col("rank") == rank) & pl.col("wall_time").is_not_null()
            & ~pl.col("source").is_in(AVERAGED_SOURCES)
        )
        .group_by("step", "source").agg(pl.col("wall_time").max())
        .sort("wall_time")
    )
    if mine.height < 3 or reference.is_empty():
        return 0
    gaps = mine["wall_time"].diff().drop_nulls()
    tolerance = max(float(gaps.median() or 0.0) / 2, 0.002)
    matched = mine.join_asof(
        reference.select(pl.col("step").alias("ref_step"), "wall_time"), on="wall_time",
        strategy="nearest", tolerance=tolerance,
    ).drop_nulls("ref_step")
    if matched.height < max(3, mine.height // 2):
        return 0
    offsets = (matched["ref_step"] - matched["step"]).value_counts(sort=True)
    best, count = offsets.row(0)
    # Accept only a clear answer: most matched steps agree on one shift.
    return int(best) if count >= 0.6 * matched.height and best > 0 else 0




def _launches(scalars: pl.DataFrame) -> tuple[list[Segment], list[Diagnostic]]:
    """Launches of the run, from where the primary stream's steps go back (a resume)."""
    if scalars.is_empty():
        return [], []
    segments = _segments(_primary_stream(scalars)["step"].to_numpy())
    notes = [
        diag.info(
            "run-resumed",
            f"launch {seg.index + 1} resumed at step {seg.first_step}; steps {seg.discarded[0]}-{seg.discarded[1]} "
            "of the earlier launch were replaced",
        )
        for seg in segments[1:]
        if seg.discarded
    ]
    return segments, notes


def _primary_stream(scalars: pl.DataFrame) -> pl.DataFrame:
    """The rows that best show launch order: loss (else anything) of the lowest rank, best source."""
    scalars = scalars.select("rank", "tag", "source", "step", "_file_order", "_row")
    rank0 = scalars.filter(pl.col("rank") == scalars["rank"].min())
    for tag in ("loss", "step_time", "lr"):
        rows = rank0.filter(pl.col("tag") == tag)
        if not rows.is_empty():
            break
    else:
        rows = rank0.filter(pl.col("tag") == rank0["tag"][0])
    best = min(rows["source"].unique().to_list(), key=_source_rank)
    return rows.filter(pl.col("source") == best).sort("_file_order", "_row")


def _segments(steps: Sequence[int] | np.ndarray) -> list[Segment]:
    """Split a launch-ordered step sequence where it goes back (a resume from a checkpoint).

    A step equal to the last one is a duplicate write (the summary writer can emit a step twice),
    not a restart: only going strictly back starts a new launch.
    """
    steps = np.asarray(steps)
    if not steps.size:
        return []
    # Within a launch steps never go back, so a launch ends where a step is below the one before.
    starts = [0, *(np.flatnonzero(np.diff(steps) < 0) + 1).tolist()]
    ends = [*starts[1:], steps.size]
    bounds = [(int(steps[start]), int(steps[end - 1])) for start, end in zip(starts, ends)]
    segments: list[Segment] = []
    previous_last = None
    for index, (lo, hi) in enumerate(bounds):
        discarded = (lo, previous_last) if previous_last is not None and lo <= previous_last else None
        segments.append(Segment(index=index, first_step=lo, last_step=hi, discarded=discarded))
        previous_last = hi
    return segments


def _segment_of(step: pl.Expr, segments: Sequence[Segment]) -> pl.Expr:
    """The last launch whose first step is <= step (later launches win overlapping steps)."""
    expr = pl.lit(0, dtype=pl.Int32)
    for seg in segments[1:]:
        expr = pl.when(step >= seg.first_step).then(pl.lit(seg.index, dtype=pl.Int32)).otherwise(expr)
    return expr


# --------------------------------------------------------------------------- sources


def _source_rank(source: str | None) -> int:
    if source is None:
        return len(SOURCE_PRIORITY) + 1
    try:
        return SOURCE_PRIORITY.index(source)
    except ValueError:
        return len(SOURCE_PRIORITY)


def _one_value_per_step(scalars: pl.DataFrame) -> tuple[pl.Series, list[Diagnostic]]:
    """Row numbers of the scalars to keep, in (tag, rank, step) order, and source conflicts.

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
        return pl.Series("_i", [], dtype=pl.UInt32), []
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
    trust_of = np.array([_source_rank(name) for name in sources], dtype=np.int64)  # by source code
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
    return ordered.filter(_first_of_run("_step_key"))["_i"], notes


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
    """Steps where two per-step sources disagree on the same quantity (beyond print rounding).

    `ordered`: the per-step sources' rows (row `_i` of `scalars`, `_source` code, value) in
    (tag, rank, step) order, the best source first within each.
    """
    per_step = ordered.filter(pl.col("value").is_finite())
    # the best row of each (tag, rank, step) is the first one
    best = pl.when(_first_of_run("_step_key")).then(pl.int_range(pl.len())).forward_fill()
    tolerance = pl.max_horizontal(pl.lit(1e-3), 5e-3 * pl.col("_best").abs())
    bad = (
        per_step.with_columns(best.alias("_best_row"))
        .with_columns(
            pl.col("value").gather(pl.col("_best_row")).alias("_best"),
            pl.col("_source").gather(pl.col("_best_row")).alias("_best_source"),
            pl.col("_i").gather(pl.col("_best_row")).alias("_best_i"),
        )
        .filter((pl.col("_source") != pl.col("_best_source")) & ((pl.col("value") - pl.col("_best")).abs() > tolerance))
    )
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
            diag.warning(
                "source-conflict",
                f"{tag}: {source} disagrees with {best_source} at {group.height} step(s), first at step "
                f"{first['step']} ({first['value']:.6g} vs {first['_best']:.6g}); {best_source} is used",
                first["file"],
            )
        )
    return notes


# --------------------------------------------------------------------------- per-step table


def _steps(scalars: pl.DataFrame, segments: Sequence[Segment]) -> pl.DataFrame:
    # One pass to split by rank: filtering the whole table once per rank would be quadratic in ranks.
    # Only the columns used here are split and filtered (not the file and raw tag strings).
    by_rank = scalars.select("step", "tag", "value", "wall_time", "rank", "source").partition_by("rank", maintain_order=False)
    frames = [_steps_of_rank(part, segments) for part in sorted(by_rank, key=lambda f: f["rank"][0])]
    frames = [f for f in frames if not f.is_empty()]
    return conform(pl.concat(frames) if frames else None, TABLES["steps"])


def _steps_of_rank(scalars: pl.DataFrame, segments: Sequence[Segment]) -> pl.DataFrame:
    seg = _segment_of(pl.col("step"), segments)
    logged = (
        scalars.filter((pl.col("tag") == "step_time") & ~pl.col("source").is_in(AVERAGED_SOURCES))
        .select("step", "rank", pl.col("value").alias("step_time_s"), "source")
    )
    clock = _wall_clock_steps(scalars, segments)
    if logged.height >= max(1, clock.height // 2):
        steps = logged.join(clock.select("step", "wall_time"), on="step", how="left")
    elif not clock.is_empty():
        steps = clock
    else:
        # Only per-epoch averages: each step of the epoch gets the epoch's mean (marked by source).
        steps = scalars.filter(pl.col("tag") == "step_time").select(
            "step", "rank", pl.col("value").alias("step_time_s"), "source", pl.lit(None, pl.Float64).alias("wall_time")
        )
    data = scalars.filter(pl.col("tag") == "data_time").select("step", pl.col("value").alias("data_time_s"))
    steps = steps.join(data, on="step", how="left") if not data.is_empty() else steps
    return conform(steps.with_columns(seg.alias("segment")).sort("step"), TABLES["steps"])


def _wall_clock_steps(scalars: pl.DataFrame, segments: Sequence[Segment]) -> pl.DataFrame:
    """Step time as the gap between consecutive step ends, from the densest stream with wall times."""
    timed = scalars.filter(pl.col("wall_time").is_not_null() & ~pl.col("source").is_in(AVERAGED_SOURCES))
    if timed.is_empty():
        return pl.DataFrame(schema={"step": pl.Int64, "rank": pl.Int32, "step_time_s": pl.Float64, "source": pl.Utf8, "wall_time": pl.Float64})
    counts = timed.group_by("tag", "source").len().sort(["len", "tag"], descending=[True, False])
    tag, source = counts.row(0)[:2]
    stream = timed.filter((pl.col("tag") == tag) & (pl.col("source") == source)).sort("step")
    seg = _segment_of(pl.col("step"), segments)
    # Sampled streams (collect_freq > 1) give the mean time of the steps in between.
    return (
        stream.with_columns(seg.alias("_seg"))
        .with_columns(
            (
                pl.col("wall_time").diff().over("_seg") / pl.col("step").diff().over("_seg")
            ).alias("step_time_s")
        )
        .select("step", "rank", "step_time_s", pl.lit(f"wall-clock:{source}").alias("source"), "wall_time")
    )


# --------------------------------------------------------------------------- events, checkpoints, settings


def _events(events: pl.DataFrame, segments: Sequence[Segment]) -> pl.DataFrame:
    events = events.drop("_file_order", "_row", strict=False) if events.columns else events
    restarts = [
        {
            "kind": "restart",
            "step": seg.first_step,
            "rank": 0,
            "detail": f"launch {seg.index + 1} resumed at step {seg.first_step}"
            + (f"; steps {seg.discarded[0]}-{seg.discarded[1]} of the earlier launch replaced" if seg.discarded else ""),
            "source": "load",
        }
        for seg in segments[1:]
    ]
    extra = conform(pl.DataFrame(restarts), TABLES["events"]) if restarts else empty(TABLES["events"])
    return pl.concat([conform(events, TABLES["events"]), extra]).sort("step", "kind", nulls_last=True)


def _steps_per_epoch(checkpoints: pl.DataFrame, settings: dict[str, Setting]) -> int | None:
    """Steps per epoch: a setting, else dataset size / batch, else what checkpoint names imply."""
    for key in ("steps_per_epoch", "sink_size"):
        s = settings.get(key)
        if s is not None and _positive_int(s.value):
            return int(s.value)
    size, batch = settings.get("train_dataset_size"), settings.get("batch_size")
    if size is not None and batch is not None and _positive_int(size.value) and _positive_int(batch.value):
        return int(size.value) // int(batch.value)
    # A checkpoint whose global step is known and whose name gives (epoch, step in epoch).
    known = checkpoints.filter(
        pl.col("step").is_not_null() & (pl.col("epoch") > 1) & pl.col("step_in_epoch").is_not_null()
    ).select(((pl.col("step") - pl.col("step_in_epoch")) / (pl.col("epoch") - 1)).alias("spe"))
    known = known.filter((pl.col("spe") > 0) & (pl.col("spe") == pl.col("spe").round()))
    if known.is_empty():
        return None
    return int(known["spe"].mode().sort()[-1])


def _positive_int(value) -> bool:
    try:
        return int(value) > 0
    except (TypeError, ValueError):
        return False


def _resolve_checkpoint_steps(
    checkpoints: pl.DataFrame, events: pl.DataFrame, settings: dict[str, Setting]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Global step of each checkpoint; checkpoint saves get their step.

    append_info's step_num counts from 1 again in a resumed launch (MindSpore's cur_step_num), so
    where the name's (epoch, step in epoch) gives a later global step, the name wins.
    """
    if checkpoints.is_empty():
        return checkpoints, events
    per_epoch = _steps_per_epoch(checkpoints, settings)
    if per_epoch:
        from_name = (pl.col("epoch") - 1) * per_epoch + pl.col("step_in_epoch")
        use_name = from_name.is_not_null() & (pl.col("step").is_null() | (from_name > pl.col("step")))
        checkpoints = checkpoints.with_columns(
            pl.when(use_name).then(from_name).otherwise(pl.col("step")).alias("step"),
            pl.when(use_name).then(pl.lit(f"name ({per_epoch} steps per epoch)")).otherwise(pl.col("step_source")).alias("step_source"),
        )
    steps = checkpoints.select(pl.col("path").alias("file"), pl.col("step").alias("_ckpt_step"))
    events = (
        events.join(steps, on="file", how="left")
        .with_columns(
            pl.when(pl.col("kind") == "checkpoint_save").then(pl.coalesce("_ckpt_step", "step")).otherwise(pl.col("step")).alias("step")
        )
        .drop("_ckpt_step")
    )
    return checkpoints.sort("rank", "step", "path", nulls_last=True), conform(events, TABLES["events"])


def _setting_rank(source: str) -> int:
    for i, prefix in enumerate(SETTING_PRIORITY):
        if source.startswith(prefix):
            return i
    return len(SETTING_PRIORITY)


def _merge_settings(found: list[tuple[str, Setting]]) -> tuple[dict[str, Setting], list[Diagnostic]]:
    chosen: dict[str, Setting] = {}
    notes = []
    for key, setting in sorted(found, key=lambda kv: (kv[0], _setting_rank(kv[1].source), kv[1].source)):
        if key not in chosen:
            chosen[key] = setting
        elif _differs(chosen[key].value, setting.value):
            notes.append(
                diag.info(
                    "setting-conflict",
                    f"{key}: {chosen[key].source} says {chosen[key].value!r}, {setting.source} says {setting.value!r}; "
                    f"using {chosen[key].source}",
                )
            )
    return dict(sorted(chosen.items())), notes


def _differs(a, b) -> bool:
    try:
        return abs(float(a) - float(b)) > 1e-9 * max(1.0, abs(float(a)))
    except (TypeError, ValueError):
        return str(a) != str(b)


def _dedupe(items: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in items:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out
