"""Hand-built Runs for the analysis tests (no readers involved)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from postmortem.model import TABLES, Run, Segment, Setting, empty, frame

REPO = Path(__file__).resolve().parents[2]


def scalar_rows(tag: str, steps: Any, values: Any, rank: int = 0) -> dict[str, list]:
    steps, values = list(steps), list(values)
    return {"step": steps, "tag": [tag] * len(steps), "raw_tag": [tag] * len(steps), "value": values,
            "rank": [rank] * len(steps), "source": ["test"] * len(steps), "file": ["test"] * len(steps)}


def settings_from(values: dict[str, Any], source: str = "test") -> dict[str, Setting]:
    return {k: v if isinstance(v, Setting) else Setting(v, source) for k, v in values.items()}


def make_run(
    name: str = "run",
    step_time: Any = None,
    *,
    first_step: int = 1,
    data_time: Any = None,
    in_step: Any = None,  # the callback's own timer per step (steps.in_step_s)
    source: str = "test",  # steps.source: "wall-clock:..." for e2e times, "timer:..." for a timer only
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
        inner = list(in_step) if in_step is not None else None
        gap = [e - i for e, i in zip(step_time, inner)] if inner is not None else None
        out["steps"] = frame({"step": steps, "rank": 0, "step_time_s": list(step_time),
                              "in_step_s": inner, "gap_s": gap,
                              "data_time_s": list(data_time) if data_time is not None else None,
                              "segment": list(segment) if segment is not None else 0, "source": source},
                             TABLES["steps"])
        if extra_steps:
            import polars as pl
            out["steps"] = pl.concat([out["steps"], *(frame(e, TABLES["steps"]) for e in extra_steps)])
    cols: dict[str, list] = {}
    for tag, vals in (scalars or {}).items():
        s, v = vals if isinstance(vals, tuple) else (steps[: len(vals)], vals)
        raw = tag.split("@")  # "samples_per_s@samples/s/p": the canonical tag as a source wrote it
        for k, col in scalar_rows(raw[0], s, v).items():
            cols.setdefault(k, []).extend(col)
        if len(raw) > 1:
            cols["raw_tag"][-len(list(v)):] = [raw[1]] * len(list(v))
    if cols:
        out["scalars"] = frame(cols, TABLES["scalars"])
    if events:
        keys = sorted({k for e in events for k in e})
        out["events"] = frame({k: [e.get(k) for e in events] for k in keys}, TABLES["events"])
    for k, cols_ in t.items():
        out[k] = frame(cols_, TABLES[k])
    segs = (Segment(0, int(steps[0]), int(steps[-1])),) if n else ()
    return Run(root="/nowhere/" + name, name=name, tables=out,
               settings=settings_from(settings or {}),
               inventory=(), segments=segs, ranks=(0,), diagnostics=())
