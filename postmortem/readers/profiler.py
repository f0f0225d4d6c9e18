"""MindSpore profiler output: step breakdown, communication, memory.

Files read (names and units checked against the MindSpore 2.10 profiler source):

- ``step_trace_time.csv`` (Ascend): ``Step, Computing, Communication(Not Overlapped), Overlapped,
  Communication, Free, Stage, Bubble, Communication(Not Overlapped and Exclude Receive), Preparing``
  in microseconds -> PROFILE_STEPS (seconds).
- ``communication.json`` (Ascend): ``{"step<N>": {"collective"|"p2p": {"<op>@<group>":
  {"Communication Time Info": {"Elapse Time(ms)", "Wait Time(ms)", "Transit Time(ms)", ...},
  "Communication Bandwidth Info": {"<HCCS|PCIE|RDMA|SDMA>": {"Transit Size(MB)",
  "Transit Time(ms)", "Bandwidth(GB/s)", ...}}}}}}`` -> PROFILE_COMM. The per-group "Total Op Info"
  entry is a sum MindSpore adds; it is skipped. Bytes and bandwidth come from the transport with the
  largest size (transports of one op overlap; adding them would double count).
- ``memory_record.csv``: ``Component, Timestamp(us), Total Allocated(KB|MB), ...``. MindSpore 2.10
  writes MB computed as Byte / 1024 / 1000 (its ``KB_TO_MB = 1000``); older msprof files write KB.
- CPU ``FRAMEWORK/cpu_ms_memory_record_<r>.txt``: ``Timestamp(ns),Total Allocated(Byte),...``.
- ``trace_view.json``: claimed; only its events are counted (a cheap byte count of ``"ph":``).
- MindInsight-era ``step_trace_raw_<r>_detail_time.csv``: times in system-counter ticks, 10 ns each
  (100 MHz, the GPU parser's "unit of duration is 10ns"); the last row is an average (step ``-``).
- Any other file inside a ``*_ascend_ms/``, ``profiler/`` or ``PROF_*`` folder is claimed with no rows.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from .. import diagnostics as dg
from ..model import MEMORY, PROFILE_COMM, PROFILE_STEPS, Artifact, ReadResult, frame
from .base import Reader, rank_from_path

_DIR_RE = re.compile(r"(?:^|/)(?:[^/]*_ascend_ms|profiler|PROF_[^/]*|profiler_data)(?:/|$)", re.IGNORECASE)
_KNOWN = re.compile(
    r"(?:^|/)(?:step_trace_time\.csv|communication\.json|memory_record\.csv|trace_view\.json"
    r"|cpu_ms_memory_record_\d+\.txt|step_trace_raw_\d+_detail_time\.csv)$"
)
US, MS, NS, TICK = 1e-6, 1e-3, 1e-9, 1e-8
TRACE_VIEW_READ_LIMIT = 64 << 20  # count events in at most this many bytes


def _claims(artifact: Artifact) -> bool:
    rel = artifact.rel
    if _KNOWN.search(rel):
        # A stray communication.json outside profiler output is still profiler data by its name.
        return True
    return bool(_DIR_RE.search(rel))


def _rank(artifact: Artifact) -> int | None:
    """rank_N in the path, profiler_info_{r}.json beside the file, or _{r} in the file name."""
    r = artifact.rank if artifact.rank is not None else rank_from_path(artifact.rel)
    if r is not None:
        return r
    here = Path(artifact.path).parent
    for folder in (here, here.parent):
        infos = sorted(folder.glob("profiler_info_*.json"))
        if len(infos) == 1:
            m = re.search(r"profiler_info_(\d+)\.json$", infos[0].name)
            if m:
                return int(m.group(1))
    m = re.search(r"_(\d+)(?:_detail_time)?\.(?:csv|txt|json)$", artifact.rel)
    return int(m.group(1)) if m else None


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip().rstrip("\t"))
    except ValueError:
        return None


def _rows(path: str) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        return [h.strip() for h in header], list(reader)


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="profiler")
    name = artifact.rel.rsplit("/", 1)[-1]
    rank = _rank(artifact)
    try:
        if name == "step_trace_time.csv":
            result.tables["profile_steps"] = _step_trace_time(artifact, rank, result.diagnostics)
        elif re.fullmatch(r"step_trace_raw_\d+_detail_time\.csv", name):
            result.tables["profile_steps"] = _step_trace_raw(artifact, rank, result.diagnostics)
        elif name == "communication.json":
            result.tables["profile_comm"] = _communication(artifact, rank, result.diagnostics)
        elif name == "memory_record.csv":
            result.tables["memory"] = _memory_record(artifact, rank, result.diagnostics)
        elif re.fullmatch(r"cpu_ms_memory_record_\d+\.txt", name):
            result.tables["memory"] = _cpu_memory(artifact, rank, result.diagnostics)
        elif name == "trace_view.json":
            _trace_view(artifact, result)
    except (ValueError, KeyError, TypeError, IndexError, csv.Error) as exc:  # bad content, never raise
        result.diagnostics.append(dg.warning("profiler-unreadable", f"cannot parse: {exc}", artifact.rel))
    return result


def _col(header: list[str], *names: str) -> int | None:
    for n in names:
        if n in header:
            return header.index(n)
    return None


def _step_trace_time(artifact: Artifact, rank: int | None, diags: list) -> object:
    header, rows = _rows(artifact.path)
    cols = {
        "computing_s": ("Computing",),
        "comm_not_overlapped_s": ("Communication(Not Overlapped)",),
        "overlapped_s": ("Overlapped",),
        "communication_s": ("Communication",),
        "free_s": ("Free",),
        "bubble_s": ("Bubble",),
        "preparing_s": ("Preparing",),
    }
    idx = {k: _col(header, *v) for k, v in cols.items()}
    step_i = _col(header, "Step")
    if idx["computing_s"] is None:
        diags.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return frame({}, PROFILE_STEPS)
    out: dict[str, list] = {k: [] for k in (*cols, "step", "total_s")}
    for line_no, row in enumerate(rows, start=2):
        if not row:
            continue
        values = {k: (_float(row[i]) if i is not None and i < len(row) else None) for k, i in idx.items()}
        if values["computing_s"] is None:
            diags.append(dg.warning("profiler-row", "row without numbers skipped", artifact.rel, line_no))
            continue
        for k, v in values.items():
            out[k].append(v * US if v is not None else None)
        step = _float(row[step_i]) if step_i is not None and step_i < len(row) else None
        out["step"].append(int(step) if step is not None else None)
        # Step time as msprof-analyze defines it: the parts that do not overlap.
        parts = [values[k] for k in ("computing_s", "comm_not_overlapped_s", "free_s")]
        out["total_s"].append(sum(parts) * US if None not in parts else None)
    return frame({**out, "rank": rank, "file": artifact.rel}, PROFILE_STEPS)


def _step_trace_raw(artifact: Artifact, rank: int | None, diags: list) -> object:
    header, rows = _rows(artifact.path)
    need = ("step_num", "total", "iteration_interval", "fp_and_bp")
    if any(n not in header for n in need):
        diags.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return frame({}, PROFILE_STEPS)
    i_step, i_total, i_interval, i_fpbp = (header.index(n) for n in need)
    i_tail = _col(header, "tail")
    out: dict[str, list] = {"step": [], "computing_s": [], "preparing_s": [], "free_s": [], "total_s": []}
    for row in rows:
        if len(row) <= max(i_step, i_total, i_interval, i_fpbp) or not row[i_step].strip().isdigit():
            continue  # the last row is the average, step "-"
        interval = _float(row[i_interval])
        out["step"].append(int(row[i_step]))
        out["computing_s"].append(_tick(row[i_fpbp]))
        # iteration_interval is the gap between steps (data wait, host work): "preparing".
        out["preparing_s"].append(interval * TICK if interval is not None else None)
        out["free_s"].append(_tick(row[i_tail]) if i_tail is not None and i_tail < len(row) else None)
        out["total_s"].append(_tick(row[i_total]))
    diags.append(
        dg.info("profiler-step-trace-units", "step_trace_raw times read as 10 ns system-counter ticks", artifact.rel)
    )
    return frame({**out, "rank": rank, "file": artifact.rel}, PROFILE_STEPS)


def _tick(text: str) -> float | None:
    v = _float(text)
    return v * TICK if v is not None else None


def _communication(artifact: Artifact, rank: int | None, diags: list) -> object:
    try:
        with open(artifact.path, encoding="utf-8", errors="replace") as fh:
            data = json.load(fh)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        diags.append(dg.warning("profiler-json", f"communication.json does not parse: {exc}", artifact.rel))
        return frame({}, PROFILE_COMM)
    out: dict[str, list] = {k: [] for k in ("step", "op", "kind", "elapse_s", "wait_s", "transit_s", "bytes", "bandwidth_gbps")}
    if not isinstance(data, dict):
        return frame({}, PROFILE_COMM)
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
    return frame({**out, "rank": rank, "file": artifact.rel}, PROFILE_COMM)


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


def _memory_record(artifact: Artifact, rank: int | None, diags: list) -> object:
    header, rows = _rows(artifact.path)
    i_ts = _col(header, "Timestamp(us)")
    if i_ts is None:
        diags.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return frame({}, MEMORY)
    if "Total Allocated(MB)" in header:
        unit, names = 1024 * 1000, ("Total Allocated(MB)", "Total Reserved(MB)", "Total Active(MB)")
    else:
        unit, names = 1024, ("Total Allocated(KB)", "Total Reserved(KB)", "Total Active(KB)")
    idx = [_col(header, n) for n in names]
    i_comp = _col(header, "Component")
    out: dict[str, list] = {k: [] for k in ("time_s", "allocated_bytes", "reserved_bytes", "active_bytes", "component")}
    for row in rows:
        ts = _float(row[i_ts]) if i_ts < len(row) else None
        if ts is None:
            continue
        out["time_s"].append(ts * US)
        for key, i in zip(("allocated_bytes", "reserved_bytes", "active_bytes"), idx):
            v = _float(row[i]) if i is not None and i < len(row) else None
            out[key].append(v * unit if v is not None else None)
        out["component"].append(row[i_comp] if i_comp is not None and i_comp < len(row) else None)
    return frame({**out, "rank": rank, "file": artifact.rel}, MEMORY)


def _cpu_memory(artifact: Artifact, rank: int | None, diags: list) -> object:
    header, rows = _rows(artifact.path)
    if not header or header[0] != "Timestamp(ns)":
        diags.append(dg.warning("profiler-columns", f"unexpected header: {header[:4]}", artifact.rel, 1))
        return frame({}, MEMORY)
    out: dict[str, list] = {k: [] for k in ("time_s", "allocated_bytes", "reserved_bytes", "active_bytes")}
    for line_no, row in enumerate(rows, start=2):
        vals = [_float(x) for x in row[:4]]
        if len(vals) < 4 or vals[0] is None:
            diags.append(dg.warning("profiler-row", "malformed memory row skipped", artifact.rel, line_no))
            continue
        # integer ns timestamps exceed float precision only below 1 us: fine for memory curves
        out["time_s"].append(int(row[0]) * NS if row[0].strip().isdigit() else vals[0] * NS)
        out["allocated_bytes"].append(vals[1])
        out["reserved_bytes"].append(vals[2])
        out["active_bytes"].append(vals[3])
    return frame({**out, "component": "MindSpore", "rank": rank, "file": artifact.rel}, MEMORY)


def _trace_view(artifact: Artifact, result: ReadResult) -> None:
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


READER = Reader(name="profiler", claims=_claims, read=read)

