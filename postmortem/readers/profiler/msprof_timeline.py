"""CANN msprof's ``msprof_*.json`` timeline, streamed: only the events that make a step's breakdown.

The file is a Chrome-trace array of events (``ts`` µs, written as a string by CANN 8's writer,
``dur`` µs). Of its tracks, postmortem takes what msprof-analyze takes for its cluster step trace
(cluster_analyse/analysis/msprof_step_trace_time_adapter.py):

- the "Overlap Analysis" track: events named ``Computing``, ``Communication``,
  ``Communication(Not Overlapped)`` and ``Free`` (msprof's overlap_analysis_processor.cpp: unions
  of compute tasks, of communication ops, communication minus compute, and the gaps where the
  device does neither; Computing + Communication(Not Overlapped) + Free spans first to last task);
- ``hcom_receive*`` communication operators: the receives, counted as pipeline bubble;
- "Step Trace" ``Iteration <N>`` events (ts, dur), when step trace was collected: each overlap
  event is counted in the iteration its start falls in. msprof-analyze sums the whole file into
  one row instead;
- ``process_name`` / ``process_labels`` metadata, for the device (``NPU <id>``) of each pid.

The file can be GBs: it is read in chunks and only objects whose ``"name"`` is one of those are
decoded (a byte search finds them; the object around a hit is decoded with the json module).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

from .. import guard
from .common import US, Durations, open_text

CHUNK = 16 << 20
MAX_EVENT = 64 << 20  # an object that does not decode within this many bytes is broken
_HIT = re.compile(
    rb'"name"\s*:\s*"(Computing|Communication|Communication\(Not Overlapped\)|Free|hcom_receive[^"]*'
    rb'|Iteration \d+|process_name|process_labels)"'
)
_OVERLAP = {"Computing": "computing", "Communication": "communication",
            "Communication(Not Overlapped)": "cno", "Free": "free"}
_DECODER = json.JSONDecoder()


@dataclass
class Timeline:
    """What one file gave: per device (None = unknown) the summed µs, per iteration where known."""

    sums: dict[tuple[int | None, int | None], dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    iterations: int = 0
    outside: int = 0  # overlap events that fell in no iteration
    events: int = 0  # overlap + receive events taken
    broken: int = 0  # hits whose object did not decode
    bad: Durations = field(default_factory=Durations)  # durations refused at the door


def _object_start(buf: bytes, hit: int, floor: int) -> int:
    """The '{' of the top-level event holding the hit: one whose previous non-space is '[' or ','."""
    i = hit
    while True:
        i = buf.rfind(b"{", floor, i)
        if i < 0:
            return -1
        j = i - 1
        while j >= floor and buf[j] in b" \t\r\n":
            j -= 1
        # floor is the start of the buffer (an event start) or the end of the last decoded event
        if j < floor or buf[j] in b"[,":
            return i


def _num(v: object) -> float | None:
    try:
        return float(v)  # CANN 8 writes ts as a string
    except (TypeError, ValueError):
        return None


def read_timeline(path: str) -> Timeline:
    out = Timeline()
    labels: dict[int, str] = {}  # pid -> "NPU 0", "CPU", ...
    names: dict[int, str] = {}  # pid -> process name
    iters: dict[int, list[tuple[float, float, int]]] = defaultdict(list)  # pid -> (start, end, id)
    taken: list[tuple[int, str, float, float]] = []  # (pid, kind, ts, dur)
    with guard.open_file(path, "rb") as fh:
        buf = b""
        while True:
            chunk = fh.read(CHUNK)
            eof = not chunk
            buf += chunk
            keep = _scan(buf, eof, out, labels, names, iters, taken)
            if eof:
                break
            buf = buf[keep:]
    _aggregate(out, labels, names, iters, taken)
    return out


def _scan(buf: bytes, eof: bool, out: Timeline, labels, names, iters, taken) -> int:
    """Handle the events of buf; return where the next buffer must start (an event start)."""
    # latin-1 maps bytes 1:1 to characters, so json's offsets are byte offsets; the names
    # searched for are ASCII.
    text = buf.decode("latin-1")
    done = 0
    for m in _HIT.finditer(buf):
        if m.start() < done:
            continue  # inside an object already decoded
        start = _object_start(buf, m.start(), done)
        if start < 0:
            continue
        try:
            obj, end = _DECODER.raw_decode(text, start)
        except ValueError:
            if not eof and len(buf) - start < MAX_EVENT:
                return start  # the object goes on in the next chunk
            out.broken += 1
            continue
        done = end
        _take(obj, m.group(1).decode(), labels, names, iters, taken)
    if eof:
        return len(buf)
    # A hit may straddle the chunk end: start the next buffer at the last event start before it.
    tail = max(done, len(buf) - 4096)
    start = _object_start(buf, len(buf), tail)
    return start if start >= 0 else tail


def _take(obj: object, name: str, labels, names, iters, taken) -> None:
    if not isinstance(obj, dict) or obj.get("name") != name:
        return  # the hit was inside another object's args
    pid = obj.get("pid")
    args = obj.get("args") if isinstance(obj.get("args"), dict) else {}
    if name == "process_labels":
        labels[pid] = str(args.get("labels", ""))
    elif name == "process_name":
        names[pid] = str(args.get("name", ""))
    elif obj.get("ph") == "X":
        ts, dur = _num(obj.get("ts")), _num(obj.get("dur"))
        if ts is None or dur is None:
            return
        if name.startswith("Iteration "):
            iters[pid].append((ts, ts + dur, int(name.split()[1])))
        elif name in _OVERLAP:
            taken.append((pid, _OVERLAP[name], ts, dur))
        else:
            taken.append((pid, "receive", ts, dur))


def _device(pid, labels: dict) -> int | None:
    m = re.fullmatch(r"NPU (\d+)", labels.get(pid, ""))
    return int(m.group(1)) if m else None


def _aggregate(out: Timeline, labels, names, iters, taken) -> None:
    # Iterations per device (the Step Trace track is its own pid on the same device).
    per_device: dict[int | None, list[tuple[float, float, int]]] = defaultdict(list)
    for pid, spans in iters.items():
        per_device[_device(pid, labels)].extend(spans)
    for spans in per_device.values():
        spans.sort()
    out.iterations = sum(len(s) for s in per_device.values())
    for pid, kind, ts, dur in taken:
        if not out.bad.ok(dur, "dur", US):
            continue
        if kind == "receive" and names.get(pid) not in (None, "Communication") and not names.get(pid, "").endswith(
                "Communication"):
            continue  # host-side API events of the same name
        device = _device(pid, labels)
        spans = per_device.get(device) or (per_device.get(None) if len(per_device) == 1 else None)
        step = None
        if spans:
            i = bisect_right(spans, (ts, float("inf"), 0)) - 1
            if i < 0 or ts >= spans[i][1]:
                out.outside += 1
                continue
            step = spans[i][2]
        out.sums[(device, step)][kind] += dur
        out.events += 1


# --------------------------------------------------------------------------- per-iteration exports
# Older CANN (MindSpore 1.x/2.0 era) exports device_N/timeline/<kind>_<device>_<model>_<iteration>.json,
# one file per iteration and kind. Of those, three carry what no other file does:
#
# - step_trace_*: "Iteration <N>" events (ts, dur µs; args "FP Start", "BP End", "Iteration End" µs,
#   "Iteration Time(ns)"), the same points msprof's step_trace csv prints. msprof writes the whole
#   capture's iterations into every file of the kind (the files are byte-identical).
# - task_time_*: the device's tasks ("Ascend Hardware" process), name = the task's operator,
#   args "Task Type" (AI_CORE, AI_CPU, NOTIFY_WAIT, ...), dur µs.
# - hccl_*: per communication operator, its span on the "Communication Kernel" thread and its
#   tasks per plane ("Plane <n>" threads: Notify_Wait, Memcpy, Reduce_Inline, RDMASend, with args
#   "transport type", "link type", "size(Byte)", "src rank", "dst rank").


def load_events(path: str) -> list[dict]:
    """The event objects of a small Chrome-trace file (a per-iteration export); ValueError if it
    is not an array of objects."""
    with open_text(path) as fh:  # the guard, the BOM stripped
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError("not a JSON array of trace events")
    return [e for e in data if isinstance(e, dict)]


def _process_names(events: list[dict]) -> dict[object, str]:
    return {e.get("pid"): str((e.get("args") or {}).get("name", "")) for e in events
            if e.get("ph") == "M" and e.get("name") == "process_name" and isinstance(e.get("args"), dict)}


def _thread_names(events: list[dict]) -> dict[tuple[object, object], str]:
    return {(e.get("pid"), e.get("tid")): str((e.get("args") or {}).get("name", "")) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and isinstance(e.get("args"), dict)}


@dataclass
class Iteration:
    step: int
    start_us: float
    total_us: float
    fp_us: float | None
    end_us: float | None


def iterations(events: list[dict]) -> list[Iteration]:
    """The "Iteration <N>" events of a step_trace (or msprof) timeline."""
    out = []
    for e in events:
        name = e.get("name")
        if e.get("ph") != "X" or not isinstance(name, str) or not re.fullmatch(r"Iteration \d+", name):
            continue
        ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        if ts is None or dur is None:
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        fp, end = _num(args.get("FP Start")), _num(args.get("Iteration End"))
        out.append(Iteration(int(name.split()[1]), ts, dur, fp, end))
    return out


_COMPUTE_TASK = re.compile(r"^(?:AI_CORE|AI_CPU|AI_VECTOR_CORE|AIV|MIX_\w+|KERNEL_\w+|FFTS_PLUS|WRITE_BACK|DSA\w*)$")


@dataclass
class Tasks:
    """task_time events: the compute tasks (name, task type, µs) and how many others were left."""

    rows: list[tuple[str, str, float]] = field(default_factory=list)
    other: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # task type -> count


def tasks(events: list[dict]) -> Tasks:
    out = Tasks()
    procs = _process_names(events)
    for e in events:
        if e.get("ph") != "X" or procs.get(e.get("pid"), "Ascend Hardware") != "Ascend Hardware":
            continue
        dur = _num(e.get("dur"))
        name = e.get("name")
        if dur is None or not isinstance(name, str):
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        kind = str(args.get("Task Type", ""))
        if _COMPUTE_TASK.match(kind):
            out.rows.append((name, kind, dur))
        else:
            out.other[kind or "?"] += 1
    return out


@dataclass
class CommOp:
    """One communication operator of an hccl timeline, figured as msprof's communication_parser does."""

    name: str
    start_us: float
    elapse_us: float
    wait_us: float = 0.0  # Notify_Wait on the master plane
    sync_us: float = 0.0  # Notify_Wait before the first transfer of the master plane
    transit_us: float = 0.0  # transfer tasks (SDMA off the chip, RDMA) on the master plane
    bytes: float = 0.0  # every plane's transfers
    link_us: float = 0.0  # every plane's transfer time (bandwidth = bytes / link_us)
    links: set[str] = field(default_factory=set)
    pairs: dict[tuple[int, int, str], list[float]] = field(default_factory=dict)  # (src, dst, link) -> [bytes, µs]


_TRANSFER = ("Memcpy", "Reduce_Inline", "RDMASend", "RDMA_SEND")
_NO_RANK = 4294967295  # 2**32 - 1: a task with no peer


def comm_ops(events: list[dict]) -> list[CommOp]:
    threads = _thread_names(events)
    spans = sorted(
        (CommOp(str(e["name"]), ts, dur) for e in events
         if e.get("ph") == "X" and threads.get((e.get("pid"), e.get("tid"))) == "Communication Kernel"
         and isinstance(e.get("name"), str)
         and (ts := _num(e.get("ts"))) is not None and (dur := _num(e.get("dur"))) is not None),
        key=lambda o: o.start_us)
    if not spans:
        return []
    starts = [o.start_us for o in spans]
    seen_transfer: set[int] = set()
    for e in sorted((e for e in events if e.get("ph") == "X"), key=lambda e: _num(e.get("ts")) or 0.0):
        plane = threads.get((e.get("pid"), e.get("tid")), "")
        if not plane.startswith("Plane "):
            continue
        ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        if ts is None or dur is None:
            continue
        i = bisect_right(starts, ts) - 1
        if i < 0 or ts > spans[i].start_us + spans[i].elapse_us:
            continue
        op = spans[i]
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        master = plane == "Plane 0"
        name = str(e.get("name", ""))
        link = str(args.get("link type", ""))
        transport = str(args.get("transport type", ""))
        transfer = name in _TRANSFER and (transport == "RDMA" or (transport == "SDMA" and link != "ON_CHIP"))
        if transfer:
            size = _num(args.get("size(Byte)")) or 0.0
            kind = "RDMA" if transport == "RDMA" else (link if link in ("HCCS", "PCIE", "SIO") else "SDMA")
            op.bytes += size
            op.link_us += dur
            op.links.add(kind)
            src, dst = _num(args.get("src rank")), _num(args.get("dst rank"))
            if src is not None and dst is not None and dst != _NO_RANK:
                acc = op.pairs.setdefault((int(src), int(dst), kind), [0.0, 0.0])
                acc[0] += size
                acc[1] += dur
            if master:
                op.transit_us += dur
                seen_transfer.add(i)
        elif master and name == "Notify_Wait":
            op.wait_us += dur
            if i not in seen_transfer:
                op.sync_us += dur
    return spans
