"""MindInsight-era flat ``profiler/`` folders (MindSpore 1.x - 2.2 on Ascend).

- ``step_trace_raw_<r>_detail_time.csv``: ``step_num, start_point, end_point, total, fp_point,
  bp_point, iteration_interval, fp_and_bp, tail``; times in system-counter ticks, 10 ns each
  (100 MHz, the GPU parser's "unit of duration is 10ns"); the last row is an average (step ``-``).
"""

from __future__ import annotations

import re

from ... import diagnostics as dg
from ...model import PROFILE_STEPS, Artifact, ReadResult, frame
from .common import TICK, Format, column, csv_rows, number


def _step_trace_raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path)
    need = ("step_num", "total", "iteration_interval", "fp_and_bp")
    if any(n not in header for n in need):
        result.diagnostics.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return
    i_step, i_total, i_interval, i_fpbp = (header.index(n) for n in need)
    i_tail = column(header, "tail")
    out: dict[str, list] = {"step": [], "computing_s": [], "preparing_s": [], "free_s": [], "total_s": []}
    for row in rows:
        if len(row) <= max(i_step, i_total, i_interval, i_fpbp) or not row[i_step].strip().isdigit():
            continue  # the last row is the average, step "-"
        interval = number(row[i_interval])
        out["step"].append(int(row[i_step]))
        out["computing_s"].append(_tick(row[i_fpbp]))
        # iteration_interval is the gap between steps (data wait, host work): "preparing".
        out["preparing_s"].append(interval * TICK if interval is not None else None)
        out["free_s"].append(_tick(row[i_tail]) if i_tail is not None and i_tail < len(row) else None)
        out["total_s"].append(_tick(row[i_total]))
    result.diagnostics.append(
        dg.info("profiler-step-trace-units", "step_trace_raw times read as 10 ns system-counter ticks", artifact.rel)
    )
    result.tables["profile_steps"] = frame(
        {**out, "rank": rank, "source": "step_trace_raw", "file": artifact.rel}, PROFILE_STEPS
    )


def _tick(text: str) -> float | None:
    v = number(text)
    return v * TICK if v is not None else None


FORMATS = (
    Format("step_trace_raw_<r>_detail_time.csv", re.compile(r"(?:^|/)step_trace_raw_\d+_detail_time\.csv$"),
           _step_trace_raw),
)
