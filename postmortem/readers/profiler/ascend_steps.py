"""Step-time breakdown of MindSpore 2.x / torch_npu: ``step_trace_time.csv`` and the same sums
from ``trace_view.json``'s Overlap Analysis tracks, mapped to one partition of the step.

Both writers sum the Overlap Analysis tracks of each step: Computing (device busy computing),
Communication (busy communicating), Communication(Not Overlapped) (communicating while not
computing) and Free (neither). Over a step's device span Computing + Communication(Not
Overlapped) + Free covers the span once (msprof-analyze's step time is exactly this sum).
Bubble is the writer's sum of point-to-point op durations (torch_npu: hcom_receive*; MindSpore:
send, receive and BatchSendRecv), which may partly run under compute; its exposed part is
inside Communication(Not Overlapped), so the partition takes

    bubble_s              = min(Bubble, Communication(Not Overlapped))
    comm_not_overlapped_s = Communication(Not Overlapped) - bubble_s   (the writer's "... and Exclude Receive")
    overlapped_s          = Communication - Communication(Not Overlapped)   (beside the partition)
    preparing_s           = Preparing, on the first profiled step only
    total_s               = computing_s + comm_not_overlapped_s + bubble_s + free_s (+ preparing_s)

Preparing (host step start to the step's first device task) lies outside the device span only
in the first profiled step; in later steps that gap is inside Free (MindSpore clips Free to the
step, torch_npu counts it in the previous step's Free), so it is not added again there.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import diagnostics as dg
from ...model import PROFILE_STEPS, Artifact, ReadResult, frame
from .common import US, Durations, column, csv_rows, last_row_per_step, number


@dataclass(frozen=True)
class Parts:
    """One step as the writer sums it, µs."""

    step: int | None
    computing: float
    comm_not_overlapped: float
    communication: float | None
    free: float
    bubble: float | None
    preparing: float | None


def profile_steps(parts: list[Parts], rank: int | None, source: str, artifact: Artifact,
                  result: ReadResult) -> None:
    """Fill result.tables["profile_steps"] with the partition of each step (module docstring)."""
    if not parts:
        return
    first = min(range(len(parts)), key=lambda i: (parts[i].step is None, parts[i].step or 0))
    out: dict[str, list] = {k: [] for k in (
        "step", "computing_s", "comm_not_overlapped_s", "overlapped_s", "communication_s", "free_s", "bubble_s",
        "preparing_s", "total_s")}
    clipped = later_preparing = 0
    for i, p in enumerate(parts):
        bubble = min(p.bubble or 0.0, p.comm_not_overlapped)
        clipped += (p.bubble or 0.0) > p.comm_not_overlapped + 1e-6
        preparing = p.preparing if i == first else None
        later_preparing += i != first and (p.preparing or 0.0) > 0
        out["step"].append(p.step)
        out["computing_s"].append(p.computing * US)
        out["comm_not_overlapped_s"].append((p.comm_not_overlapped - bubble) * US)
        out["bubble_s"].append(bubble * US)
        out["free_s"].append(p.free * US)
        out["communication_s"].append(p.communication * US if p.communication is not None else None)
        out["overlapped_s"].append(
            (p.communication - p.comm_not_overlapped) * US if p.communication is not None else None)
        out["preparing_s"].append(preparing * US if preparing is not None else None)
        out["total_s"].append((p.computing + p.comm_not_overlapped + p.free + (preparing or 0.0)) * US)
    if clipped:
        result.diagnostics.append(dg.info("profiler-bubble-overlapped", path=artifact.rel, n=clipped))
    if later_preparing:
        result.diagnostics.append(dg.info("profiler-preparing-in-free", path=artifact.rel, n=later_preparing))
    result.tables["profile_steps"] = frame({**out, "rank": rank, "source": source, "file": artifact.rel}, PROFILE_STEPS)


_COLUMNS = {
    "computing": "Computing",
    "comm_not_overlapped": "Communication(Not Overlapped)",
    "communication": "Communication",
    "free": "Free",
    "bubble": "Bubble",
    "preparing": "Preparing",
}


def read_step_trace_time(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    idx = {k: column(header, v) for k, v in _COLUMNS.items()}
    i_step = column(header, "Step")
    if any(idx[k] is None for k in ("computing", "comm_not_overlapped", "free")):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    i_device = column(header, "Device_id")
    devices = set()
    parts = []
    bad = Durations()
    for line_no, row in enumerate(rows, start=2):
        if not row:
            continue
        v = {k: (number(row[i]) if i is not None and i < len(row) else None) for k, i in idx.items()}
        if any(v[k] is None for k in ("computing", "comm_not_overlapped", "free")):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        if not all([bad.ok(v[k], _COLUMNS[k], US) for k in _COLUMNS]):  # a list: every column counted
            continue
        step = number(row[i_step]) if i_step is not None and i_step < len(row) else None
        if i_device is not None and i_device < len(row):
            devices.add(row[i_device].strip())
        parts.append(Parts(int(step) if step is not None and step.is_integer() else None, v["computing"],
                           v["comm_not_overlapped"], v["communication"], v["free"], v["bubble"], v["preparing"]))
    bad.warn(artifact.rel, result)
    if len(devices) <= 1:
        parts = unique_steps(parts, artifact.rel, result)
    if not parts:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    if len(devices) > 1:
        result.diagnostics.append(dg.warning("profiler-devices", path=artifact.rel, n=len(devices), devices=sorted(devices)))
    profile_steps(parts, rank, "step_trace_time", artifact, result)


def unique_steps(parts: list[Parts], rel: str, result: ReadResult) -> list[Parts]:
    """One row per step, in step order. A step written twice keeps its last row (common.last_row_per_step,
    the rule of every step-time file); the repeats and an out-of-order file are warned."""
    if not parts or any(p.step is None for p in parts):
        return parts
    kept = last_row_per_step([p.step for p in parts], rel, result)
    ordered = all(a.step < b.step for a, b in zip(parts, parts[1:]))
    if kept is None and not ordered:
        result.diagnostics.append(dg.info("profiler-steps-unordered", path=rel))
    if kept is None and ordered:
        return parts
    return sorted((parts[i] for i in kept) if kept is not None else parts, key=lambda p: p.step)
