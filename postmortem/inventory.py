"""What `postmortem inspect` shows: the inventory of a loaded run as plain data."""

from __future__ import annotations

from collections import Counter, defaultdict

import polars as pl

from .archive import diagnostic_dict
from .model import Run


def describe(run: Run) -> dict:
    """A JSON-ready description of everything read from a run folder."""
    readers: dict[str, dict] = defaultdict(lambda: {"files": 0, "bytes": 0, "rows": 0})
    for entry in run.inventory:
        key = entry.reader or "(unclaimed)"
        readers[key]["files"] += 1
        readers[key]["bytes"] += entry.size
        readers[key]["rows"] += entry.rows

    scalars = run.tables["scalars"]
    tags = []
    if not scalars.is_empty():
        summary = (
            scalars.select("tag", "step", "source", "value").group_by("tag")  # narrow first: grouping copies the frame
            .agg(
                pl.len().alias("rows"),
                pl.col("step").min().alias("first_step"),
                pl.col("step").max().alias("last_step"),
                pl.col("source").unique().sort().alias("sources"),
                (~pl.col("value").is_finite()).sum().alias("non_finite"),
            )
            .sort("tag")
        )
        tags = summary.to_dicts()

    steps = run.tables["steps"]
    ckpts = run.tables["checkpoints"]
    severity = Counter(str(d.severity) for d in run.diagnostics)
    return {
        "run": run.name,
        "root": run.root,
        "steps": {
            "first": _int(steps["step"].min()) if not steps.is_empty() else _int(scalars["step"].min()),
            "last": _int(steps["step"].max()) if not steps.is_empty() else _int(scalars["step"].max()),
            "count": steps["step"].n_unique() if not steps.is_empty() else scalars["step"].n_unique(),
        },
        "ranks": list(run.ranks),
        "readers": dict(sorted(readers.items())),
        "tags": tags,
        "segments": [
            {"index": s.index, "first_step": s.first_step, "last_step": s.last_step,
             "discarded": list(s.discarded) if s.discarded else None}
            for s in run.segments
        ],
        "checkpoints": ckpts.select("path", "rank", "step", "bytes", "tensors", "model_params", "kind").to_dicts(),
        "settings": {k: v.to_dict() for k, v in run.settings.items()},
        "files": [
            {"path": e.rel, "reader": e.reader, "bytes": e.size, "rows": e.rows, "rank": e.rank, "note": e.note}
            for e in run.inventory
        ],
        "diagnostics": {"counts": dict(sorted(severity.items())), "items": [diagnostic_dict(d) for d in run.diagnostics]},
    }


def _int(value) -> int | None:
    return None if value is None else int(value)
