"""MindSpore 2.x ``*_ascend_ms/`` (and torch_npu ``*_ascend_pt/``) profiler output.

Files read (names and units checked against the MindSpore 2.10 profiler source):

- ``step_trace_time.csv``: ``Step, Computing, Communication(Not Overlapped), Overlapped,
  Communication, Free, Stage, Bubble, Communication(Not Overlapped and Exclude Receive), Preparing``
  in microseconds -> PROFILE_STEPS (seconds).
- ``communication.json``: ``{"step<N>": {"collective"|"p2p": {"<op>@<group>":
  {"Communication Time Info": {"Elapse Time(ms)", "Wait Time(ms)", "Transit Time(ms)", ...},
  "Communication Bandwidth Info": {"<HCCS|PCIE|RDMA|SDMA>": {"Transit Size(MB)",
  "Transit Time(ms)", "Bandwidth(GB/s)", ...}}}}}}`` -> PROFILE_COMM. The per-group "Total Op Info"
  entry is a sum MindSpore adds; it is skipped. Bytes and bandwidth come from the transport with the
  largest size (transports of one op overlap; adding them would double count).
- ``memory_record.csv``: ``Component, Timestamp(us), Total Allocated(KB|MB), ...``. MindSpore 2.10
  writes MB computed as Byte / 1024 / 1000 (its ``KB_TO_MB = 1000``); older msprof files write KB.
- CPU ``FRAMEWORK/cpu_ms_memory_record_<r>.txt``: ``Timestamp(ns),Total Allocated(Byte),...``.
- ``trace_view.json``: only its events are counted (a cheap byte count of ``"ph":``).
"""

from __future__ import annotations

import json
import re

from ... import diagnostics as dg
from ...model import MEMORY, PROFILE_COMM, PROFILE_STEPS, Artifact, ReadResult, frame
from .common import MS, NS, US, Format, column, csv_rows, number

TRACE_VIEW_READ_LIMIT = 64 << 20  # count events in at most this many bytes


def _step_trace_time(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path)
    cols = {
        "computing_s": ("Computing",),
        "comm_not_overlapped_s": ("Communication(Not Overlapped)",),
        "overlapped_s": ("Overlapped",),
        "communication_s": ("Communication",),
        "free_s": ("Free",),
        "bubble_s": ("Bubble",),
        "preparing_s": ("Preparing",),
    }
    idx = {k: column(header, *v) for k, v in cols.items()}
    step_i = column(header, "Step")
    if idx["computing_s"] is None:
        result.diagnostics.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return
    out: dict[str, list] = {k: [] for k in (*cols, "step", "total_s")}
    for line_no, row in enumerate(rows, start=2):
        if not row:
            continue
        values = {k: (number(row[i]) if i is not None and i < len(row) else None) for k, i in idx.items()}
        if values["computing_s"] is None:
            result.diagnostics.append(dg.warning("profiler-row", "row without numbers skipped", artifact.rel, line_no))
            continue
        for k, v in values.items():
            out[k].append(v * US if v is not None else None)
        step = number(row[step_i]) if step_i is not None and step_i < len(row) else None
        out["step"].append(int(step) if step is not None else None)
        # Step time as msprof-analyze defines it: the parts that do not overlap.
        parts = [values[k] for k in ("computing_s", "comm_not_overlapped_s", "free_s")]
        out["total_s"].append(sum(parts) * US if None not in parts else None)
    result.tables["profile_steps"] = frame(
        {**out, "rank": rank, "source": "step_trace_time", "file": artifact.rel}, PROFILE_STEPS
    )


def _communication(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    try:
        with open(artifact.path, encoding="utf-8", errors="replace") as fh:
            data = json.load(fh)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        result.diagnostics.append(dg.warning("profiler-json", f"communication.json does not parse: {exc}", artifact.rel))
        return
    out: dict[str, list] = {k: [] for k in ("step", "op", "kind", "elapse_s", "wait_s", "transit_s", "bytes", "bandwidth_gbps")}
    if not isinstance(data, dict):
        return
    for step_key, kinds in data.items():
        m = re.fullmatch(r"step(\d*)", str(step_key))
        if not m or not isinstance(kinds, dict):
            continue
        step = int(m.group(1)) if m.group(1) else None
        for kind, ops in kinds.items():
            if not isinstance(ops, dict):
                continue
            for op, info in ops.items():
                if op.startswith("Total Op Info") or not isinstance(info, dict):
                    continue
                t = info.get("Communication Time Info") or {}
                size_mb, bw = _largest_transport(info.get("Communication Bandwidth Info") or {})
                out["step"].append(step)
                out["op"].append(op)
                out["kind"].append(kind)
                out["elapse_s"].append(_ms(t.get("Elapse Time(ms)")))
                out["wait_s"].append(_ms(t.get("Wait Time(ms)")))
                out["transit_s"].append(_ms(t.get("Transit Time(ms)")))
                # msprof's MB is 1024 * 1024 bytes
                out["bytes"].append(size_mb * 1024 * 1024 if size_mb is not None else None)
                out["bandwidth_gbps"].append(bw)
    result.tables["profile_comm"] = frame({**out, "rank": rank, "file": artifact.rel}, PROFILE_COMM)


def _ms(v: object) -> float | None:
    return float(v) * MS if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _largest_transport(bw_info: dict) -> tuple[float | None, float | None]:
    best: tuple[float | None, float | None] = (None, None)
    for transport in bw_info.values():
        if not isinstance(transport, dict):
            continue
        size = transport.get("Transit Size(MB)")
        if isinstance(size, (int, float)) and (best[0] is None or size > best[0]):
            bw = transport.get("Bandwidth(GB/s)")
            best = (float(size), float(bw) if isinstance(bw, (int, float)) else None)
    return best


def _memory_record(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path)
    i_ts = column(header, "Timestamp(us)")
    if i_ts is None:
        result.diagnostics.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return
    if "Total Allocated(MB)" in header:
        unit, names = 1024 * 1000, ("Total Allocated(MB)", "Total Reserved(MB)", "Total Active(MB)")
    else:
        unit, names = 1024, ("Total Allocated(KB)", "Total Reserved(KB)", "Total Active(KB)")
    idx = [column(header, n) for n in names]
    i_comp = column(header, "Component")
    out: dict[str, list] = {k: [] for k in ("time_s", "allocated_bytes", "reserved_bytes", "active_bytes", "component")}
    for row in rows:
        ts = number(row[i_ts]) if i_ts < len(row) else None
        if ts is None:
            continue
        out["time_s"].append(ts * US)
        for key, i in zip(("allocated_bytes", "reserved_bytes", "active_bytes"), idx):
            v = number(row[i]) if i is not None and i < len(row) else None
            out[key].append(v * unit if v is not None else None)
        out["component"].append(row[i_comp] if i_comp is not None and i_comp < len(row) else None)
    result.tables["memory"] = frame({**out, "rank": rank, "file": artifact.rel}, MEMORY)


def _cpu_memory(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path)
    if not header or header[0] != "Timestamp(ns)":
        result.diagnostics.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return
    out: dict[str, list] = {k: [] for k in ("time_s", "allocated_bytes", "reserved_bytes", "active_bytes")}
    for line_no, row in enumerate(rows, start=2):
        vals = [number(x) for x in row[:4]]
        if len(vals) < 4 or vals[0] is None:
            result.diagnostics.append(dg.warning("profiler-row", "malformed memory row skipped", artifact.rel, line_no))
            continue
        # integer ns timestamps exceed float precision only below 1 us: fine for memory curves
        out["time_s"].append(int(row[0]) * NS if row[0].strip().isdigit() else vals[0] * NS)
        out["allocated_bytes"].append(vals[1])
        out["reserved_bytes"].append(vals[2])
        out["active_bytes"].append(vals[3])
    result.tables["memory"] = frame({**out, "component": "MindSpore", "rank": rank, "file": artifact.rel}, MEMORY)


def _trace_view(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """Count trace events without parsing the JSON (it can be hundreds of MB)."""
    count = 0
    tail = b""
    read = 0
    with open(artifact.path, "rb") as fh:
        while read < TRACE_VIEW_READ_LIMIT:
            chunk = fh.read(8 << 20)
            if not chunk:
                break
            read += len(chunk)
            # 4 carried bytes cannot hold the 5-byte pattern, so nothing is counted twice
            count += (tail + chunk).count(b'"ph":')
            tail = chunk[-4:]
        else:
            result.diagnostics.append(
                dg.info("profiler-trace-partial", f"events counted in the first {read} bytes only", artifact.rel)
            )
    result.diagnostics.append(dg.info("profiler-trace-events", f"{count} trace events", artifact.rel))


def _name(file_name: str) -> re.Pattern[str]:
    return re.compile(r"(?:^|/)" + file_name + "$")


FORMATS = (
    Format("step_trace_time.csv", _name(r"step_trace_time\.csv"), _step_trace_time),
    Format("communication.json", _name(r"communication\.json"), _communication),
    Format("memory_record.csv", _name(r"memory_record\.csv"), _memory_record),
    Format("cpu_ms_memory_record_<r>.txt", _name(r"cpu_ms_memory_record_\d+\.txt"), _cpu_memory),
    Format("trace_view.json", _name(r"trace_view\.json"), _trace_view),
)
