"""Operators and FLOPs of MindInsight-era profiler folders.

- ``aicore_intermediate_<r>_type.csv`` / ``_detail.csv`` (MindSpore ``Integrator``) -> PROFILE_OPS.
  Two layouts, told apart by the header: before MindSpore 1.6-ish ``execution_time`` is the mean
  time of one call (ms) and the type file sums those per type (graph mode runs an op once a step,
  so the figures are one step's); later ``total_time`` and ``execution_frequency`` are totals over
  the profiled steps.
- ``aicpu_intermediate_<r>.csv`` (``DataPreProcessParser``): one row per AI CPU call, ms.
- ``flops_summary_<r>.json`` (``FlopsParser``) -> PROFILE_SUMMARY: MFLOP, GFLOPS, percent.

Units and meanings: docs/formats/profiler-mindinsight.md.
"""

from __future__ import annotations

import math
import re

from ... import diagnostics as dg
from ...model import PROFILE_OPS, PROFILE_SUMMARY, Artifact, ReadResult, frame
from .common import MS, Durations, number
from .mindinsight_files import csv_open, json_file

PERCENT_ROUNDING = 0.02  # the writer rounds percent to 2 decimals


def _column(header: list[str], *names: str) -> int | None:
    return next((header.index(n) for n in names if n in header), None)


def _op_type(full_name: str) -> str:
    """Conv2D from Default/.../conv1-Conv2d/Conv2D-op91."""
    return re.sub(r"-op\d+$", "", full_name.rsplit("/", 1)[-1])


def read_aicore_type(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    i_type = _column(header, "op_type", "kernel_type")
    i_total, i_mean = _column(header, "total_time"), _column(header, "execution_time")
    i_calls, i_pct = _column(header, "execution_frequency"), _column(header, "percent")
    if i_type is None or (i_total is None and i_mean is None) or i_calls is None:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    out: dict[str, list] = {k: [] for k in ("type", "calls", "total_s")}
    percents = []
    bad, i_ms = Durations(), i_total if i_total is not None else i_mean
    for line_no, row in lines:
        ms, calls = _finite(row, i_ms), _finite(row, i_calls)
        if ms is None or calls is None or i_type >= len(row):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        if not bad.ok(ms, header[i_ms], MS):
            continue
        out["type"].append(row[i_type])
        out["calls"].append(int(calls))
        out["total_s"].append(ms * MS)
        percents.append(number(_cell(row, i_pct)))
    bad.warn(artifact.rel, result)
    _check_percent(out["total_s"], percents, artifact, result)
    _ops_table(out, rank, "aicore_type", "AI_CORE", artifact, result)


def read_aicore_detail(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    i_name = _column(header, "full_op_name", "full_kernel_name")
    i_mean, i_calls = _column(header, "execution_time"), _column(header, "execution_frequency")
    if i_name is None or i_mean is None:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:3]))
        return
    out: dict[str, list] = {k: [] for k in ("type", "name", "calls", "total_s")}
    bad = Durations()
    for line_no, row in lines:
        mean = _finite(row, i_mean)
        # Without a frequency column the mean call is one step's call (graph mode).
        calls = _finite(row, i_calls) if i_calls is not None else 1.0
        if mean is None or calls is None or i_name >= len(row):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        if not bad.ok(mean, header[i_mean], MS):
            continue
        out["type"].append(_op_type(row[i_name]))
        out["name"].append(row[i_name])
        out["calls"].append(int(calls))
        out["total_s"].append(mean * calls * MS)
    bad.warn(artifact.rel, result)
    _ops_table(out, rank, "aicore_detail", "AI_CORE", artifact, result)


def read_aicpu(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    i_type = _column(header, "op_type", "kernel_type", "node_type_name")
    i_total = _column(header, "total_time", "total_time(ms)")
    if i_type is None or i_total is None:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:3]))
        return
    per_type: dict[str, list[float]] = {}
    bad = Durations()
    for line_no, row in lines:
        ms = _finite(row, i_total)
        if ms is None or i_type >= len(row):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        if not bad.ok(ms, header[i_total], MS):
            continue
        per_type.setdefault(row[i_type], []).append(ms * MS)
    out = {"type": list(per_type), "calls": [len(v) for v in per_type.values()],
           "total_s": [sum(v) for v in per_type.values()], "max_s": [max(v) for v in per_type.values()]}
    out["name"] = out["type"]  # AI CPU rows carry the op type only
    bad.warn(artifact.rel, result)
    _ops_table(out, rank, "aicpu", "AI_CPU", artifact, result)


def _cell(row: list[str], i: int | None) -> str | None:
    return row[i] if i is not None and i < len(row) else None


def _finite(row: list[str], i: int | None) -> float | None:
    v = number(_cell(row, i))
    return v if v is not None and math.isfinite(v) else None


def _check_percent(totals: list[float], percents: list[float | None], artifact: Artifact, result: ReadResult) -> None:
    whole = sum(totals)
    if whole <= 0 or None in percents:
        return
    off = [p for t, p in zip(totals, percents) if abs(100 * t / whole - p) > PERCENT_ROUNDING]
    if off:
        result.diagnostics.append(dg.warning("profiler-implausible", path=artifact.rel, variant="type-percent", n=len(off),
                                             total=float(sum(percents))))


def _ops_table(out: dict[str, list], rank: int | None, source: str, core: str, artifact: Artifact,
               result: ReadResult) -> None:
    if not out["type"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="operators"))
        return
    result.tables["profile_ops"] = frame(
        {**out, "rank": rank, "core": core, "source": source, "file": artifact.rel}, PROFILE_OPS)


# --------------------------------------------------------------------------- flops_summary

# key as written -> (key, factor to the unit, unit). FLOPs are MFLOP (task FLOPs * 1e-6), FLOPS
# GFLOP/s (the mean over ops of each op's own rate), FLOPS_Utilization percent.
_FLOPS_KEYS = {
    "FLOPs": ("total_flops", 1e6, "FLOP"),
    "cube_FLOPs": ("cube_flops", 1e6, "FLOP"),
    "vec_FLOPs": ("vector_flops", 1e6, "FLOP"),
    "FLOPS": ("mean_op_flops_per_s", 1e9, "FLOP/s"),
    "cube_FLOPS": ("mean_op_cube_flops_per_s", 1e9, "FLOP/s"),
    "vec_FLOPS": ("mean_op_vector_flops_per_s", 1e9, "FLOP/s"),
    "FLOPS_Utilization": ("flops_utilization", 0.01, "fraction"),
}


def read_flops_summary(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    data = json_file(artifact, result)
    if data is None:
        return
    if not isinstance(data, dict):
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="not-object"))
        return
    out: dict[str, list] = {"key": [], "value": [], "unit": []}
    unknown = []
    for raw, value in data.items():
        if raw not in _FLOPS_KEYS or not isinstance(value, (int, float)) or isinstance(value, bool):
            unknown.append(raw)
            continue
        key, factor, unit = _FLOPS_KEYS[raw]
        out["key"].append(key)
        out["value"].append(float(value) * factor)
        out["unit"].append(unit)
    if "total_flops" not in out["key"] and {"cube_flops", "vector_flops"} <= set(out["key"]):
        out["key"].append("total_flops")  # newer writers split cube and vector; MindInsight adds them
        out["value"].append(sum(v for k, v in zip(out["key"], out["value"]) if k in ("cube_flops", "vector_flops")))
        out["unit"].append("FLOP")
    if unknown:
        result.diagnostics.append(dg.info("profiler-keys", path=artifact.rel, keys=[str(k) for k in unknown]))
    util = dict(zip(out["key"], out["value"])).get("flops_utilization")
    if util is not None and not 0 <= util <= 1:
        result.diagnostics.append(dg.warning("profiler-implausible", path=artifact.rel, variant="flops-utilization",
                                             value=util))
    if not out["key"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="flops"))
        return
    result.tables["profile_summary"] = frame(
        {**out, "rank": rank, "source": "flops_summary", "file": artifact.rel}, PROFILE_SUMMARY)

