"""Hand-built Runs for the analysis tests (no readers involved)."""

from __future__ import annotations

from typing import Any

import numpy as np

from postmortem.model import TABLES, Run, Segment, Setting, empty, frame


def scalar_rows(tag: str, steps: Any, values: Any, rank: int = 0) -> dict[str, list]:
    steps, values = list(steps), list(values)
    return {"step": steps, "tag": [tag] * len(steps), "raw_tag": [tag] * len(steps), "value": values,
            "rank": [rank] * len(steps), "source": ["test"] * len(steps), "file": ["test"] * len(steps)}


def make_run(
    name: str = "run",
    step_time: Any = None,
    *,
    first_step: int = 1,
    data_time: Any = None,
    segment: Any = None,
    scalars: dict[str, Any] | None = None,  # tag -> values aligned with the steps (or (steps, values))
    events: list[dict] | None = None,
    settings: dict[str, Any] | None = None,
    extra_steps: list[dict] | None = None,  # more ranks: dicts of STEPS columns
    tables: dict[str, Any] | None = None,
) -> Run:
    t = tables or {}
    out = {k: empty(s) for k, s in TABLES.items()}
    n = len(step_time) if step_time is not None else 0
    steps = np.arange(first_step, first_step + n)
    if step_time is not None:
        out["steps"] = frame({"step": steps, "rank": 0, "step_time_s": list(step_time),
                              "data_time_s": list(data_time) if data_time is not None else None,
                              "segment": list(segment) if segment is not None else 0, "source": "test"},
                             TABLES["steps"])
        if extra_steps:
            import polars as pl
            out["steps"] = pl.concat([out["steps"], *(frame(e, TABLES["steps"]) for e in extra_steps)])
    cols: dict[str, list] = {}
    for tag, vals in (scalars or {}).items():
        s, v = vals if isinstance(vals, tuple) else (steps[: len(vals)], vals)
        for k, col in scalar_rows(tag, s, v).items():
            cols.setdefault(k, []).extend(col)
    if cols:
        out["scalars"] = frame(cols, TABLES["scalars"])
    if events:
        keys = sorted({k for e in events for k in e})
        out["events"] = frame({k: [e.get(k) for e in events] for k in keys}, TABLES["events"])
    for k, cols_ in t.items():
        out[k] = frame(cols_, TABLES[k])
    segs = (Segment(0, int(steps[0]), int(steps[-1])),) if n else ()
    return Run(root="/nowhere/" + name, name=name, tables=out,
               settings={k: Setting(v, "test") for k, v in (settings or {}).items()},
               inventory=(), segments=segs, ranks=(0,), diagnostics=())
