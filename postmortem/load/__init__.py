"""load_run(path) -> Run: read every artifact, join sources, stitch restarts, one value per step.

The rules, in order (each in its module):
1. Each claimed file is read by its reader, in parallel processes when there is enough work
   (parallel.py). Files are grouped by the rank their reader locates them at (files.py); a file
   that gives nothing and says nothing gets a warning (rank.py).
2. Zone-less log times are aligned with the sources that know UTC (clock.py).
3. Within one source stream (source, tag, rank), rows are ordered by launch (files with a launch
   stamp by it, other files by path) and by position in the file. A later file whose step counter
   restarted is moved onto global steps by matching wall times; a step that repeats after a
   restart is taken from the *later* launch; the replaced span is recorded (launches.py).
4. Tags written without a unit get each file's unit from the wall clock and the other sources
   (units.py).
5. The same quantity from several sources keeps one row per (tag, rank, step), from the most
   trustworthy source; disagreements become a diagnostic (one_value.py).
6. The per-step table: end-to-end times from the wall-clock gaps between step ends, the
   callbacks' own timers beside them, and their difference (steps.py).
7. Run-level: settings merged (settings.py); checkpoints get global steps, by the launch whose
   wall-clock span holds their save (checkpoints.py); evaluations and saves are put at the step
   whose e2e time holds them, with their durations (events.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from .. import workers as worker_processes
from ..diagnostics import Diagnostic
from ..discover import discover
from ..model import TABLES, InventoryEntry, Run, conform
from ..readers import all_readers
from ..readers.base import Reader
from .checkpoints import resolve_checkpoints
from .events import eval_events, place_pauses, restart_events
from .files import by_rank, file_order, natural_order
from .launches import segments_of_steps
from .parallel import load_ranks, warm_up
from .rank import concat
from .settings import merge_settings
from .units import settle_per_device

__all__ = ["load_run", "warm_up", "segments_of_steps"]


def load_run(
    path: str | Path, *, workers: int | None = None, readers: Sequence[Reader] | None = None,
    pool: worker_processes.Pool | None = None,
) -> Run:
    """Read every artifact of a run folder into one Run (see the module docstring for the rules).

    workers: processes that read ranks at most, this one included (default: one per core this
    process may use, workers.cores()); fewer for a small run. pool: worker processes already
    started (the build's helper), used instead of starting new ones if it has enough."""
    readers = tuple(readers) if readers is not None else all_readers()
    found = discover(path, readers)
    order = file_order(found.claimed)
    # Worker processes look readers up by name, so custom readers (tests) are read in-process.
    parallel_ok = readers == all_readers()
    parts = load_ranks(by_rank(found.claimed), order, *((workers, pool) if parallel_ok else (1, None)))

    tables = {name: concat([p.tables[name] for p in parts], TABLES[name]) for name in TABLES}
    settings, setting_notes = merge_settings([kv for p in parts for kv in p.settings_found])
    # The lowest rank's launches describe the run (every rank restarts together).
    segments = list(parts[0].segments) if parts else []
    inventory = [e for p in parts for e in p.inventory]
    inventory += [InventoryEntry(a.rel, None, a.size, 0, a.rank, "unclaimed") for a in found.unclaimed]
    inventory += [InventoryEntry(s.rel, None, s.size, 0, None, s.note) for s in found.skipped]
    diagnostics: list[Diagnostic] = [*found.diagnostics, *(d for p in parts for d in p.diagnostics)]
    diagnostics += (parts[0].restart_notes if parts else []) + setting_notes

    ranks_seen = tables["steps"]["rank"].n_unique()
    tables["scalars"], rate_notes = settle_per_device(tables["scalars"], tables["steps"], settings, ranks_seen)
    diagnostics += rate_notes
    events = tables["events"].drop("_file_order", "_row", strict=False)
    events = pl.concat([conform(events, TABLES["events"]), restart_events(segments), eval_events(tables["scalars"])])
    tables["checkpoints"], events, checkpoint_notes = resolve_checkpoints(tables["checkpoints"], events, settings, tables["steps"])
    tables["events"] = place_pauses(events, tables["steps"], tables["scalars"]).sort("step", "kind", nulls_last=True)
    diagnostics += checkpoint_notes
    local = sorted({rel for p in parts for rel in p.local_clock})
    ranks = sorted(
        {r for name in ("scalars", "steps", "checkpoints", "profile_steps") for r in tables[name]["rank"].drop_nulls().unique()}
    )
    return Run(
        root=str(Path(path)),
        name=Path(path).resolve().name,
        tables=tables,
        settings=settings,
        inventory=tuple(sorted(inventory, key=lambda e: natural_order(e.rel))),
        segments=tuple(segments),
        ranks=tuple(int(r) for r in ranks),
        diagnostics=tuple(_dedupe(diagnostics)),
        clock="local" if local else "utc",
    )


def _dedupe(items: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in items:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


# Names the benchmarks and older callers use.
_file_order = file_order
_by_rank = by_rank
_load_ranks = load_ranks
_segments = segments_of_steps
