"""load_run(path) -> Run: read every artifact, join sources, stitch restarts, one value per step.

The rules, in order (each in its module):
1. Each claimed file is read by its reader. Files are grouped by the rank their reader locates
   them at (files.py), and consecutive ranks are read and joined in batches, each as one job
   (rank.py: the rules below run once over a batch's frame, grouped by rank), shared with the
   session's helper processes when there is one (parallel.Session.share); a file that gives
   nothing and says nothing gets a warning (rank.py).
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
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ..diagnostics import Diagnostic
from ..discover import discover
from ..model import TABLES, InventoryEntry, Run, conform
from ..readers import all_readers
from ..readers import witnesses as default_witnesses
from ..readers.base import Reader
from .checkpoints import resolve_checkpoints, shape_settings
from .events import eval_events, place_pauses, restart_events
from .files import by_rank, file_order, natural_order
from .launches import segments_of_steps
from .rank import batches, concat, load_ranks, rank_files
from .settings import merge_settings
from .strategy import strategy_settings
from .units import settle_per_device

if TYPE_CHECKING:
    from ..parallel import Session

__all__ = ["load_run", "warm_up", "segments_of_steps"]

# Ranks are read and joined in batches of about this much input, or this many ranks: one job each
# for the session's processes, each joined in one pass; a batch's intermediate tables are what a
# process holds besides the run's.
BATCH_BYTES = 16 * 1024 * 1024
BATCH_RANKS = 64


def load_run(path: str | Path, *, session: Session | None = None, readers: Sequence[Reader] | None = None,
             witnesses: Sequence[Reader] | None = None) -> Run:
    """Read every artifact of a run folder into one Run (see the module docstring for the rules).

    session: the processes to read ranks with (parallel.Session); without one, all are read here.
    witnesses: the readers that read a file beside the one that claims it (readers.witnesses())."""
    readers = tuple(readers) if readers is not None else all_readers()
    seen_by = tuple(witnesses) if witnesses is not None else default_witnesses()
    found = discover(path, readers, seen_by)
    order = file_order(found.claimed)
    jobs = batches([rank_files(group, order, rank) for rank, group in by_rank(found.claimed)], BATCH_BYTES, BATCH_RANKS)
    if session is not None:
        parts = session.share(load_ranks, jobs, sizes=[sum(c.artifact.size for r in b for c in r.files) for b in jobs])
    else:
        parts = [load_ranks(b) for b in jobs]

    tables = {name: concat([p.tables[name] for p in parts], TABLES[name]) for name in TABLES}
    found_settings = [kv for p in parts for kv in p.settings_found]
    layout, layout_notes = strategy_settings(tables["strategy"])  # the layout the strategy files hold
    found_settings += layout
    settings, setting_notes = merge_settings(found_settings)
    shape, shape_notes = shape_settings(tables["checkpoint_params"], tables["checkpoints"], settings)
    if shape:  # the model's shape from checkpoint tensors, below what a config file says
        settings, setting_notes = merge_settings(found_settings + shape)
    setting_notes += shape_notes + layout_notes
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


def warm_up() -> None:
    """In a helper started ahead of its work (parallel.Session's warm_up): the imports and the
    set-ups that reading the first rank would otherwise pay (~0.1 s): the readers, the text-log
    result for no handed-back lines, and polars' first numpy series, row selection and sort."""
    from ..readers.textlog import _nothing_handed_back

    all_readers()
    _nothing_handed_back()
    table = pl.DataFrame({"a": [2, 1], "b": [0.5, 1.5]})
    table[np.array([1, 0])].sort("a", "b")
