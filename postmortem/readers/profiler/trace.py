"""``trace_view.json`` (Chrome trace of MindSpore 2.x / torch_npu), streamed in bounded memory.

A cluster trace is GBs, so it is never loaded whole. The file is read in blocks of bytes; a
regex finds the few events this reader needs by their names and decodes just those with the C
JSON decoder (``raw_decode`` from the ``{`` before the match); every other event is only
counted, by its ``"ph"`` key. Memory is a block plus TAIL bytes plus the times of the Overlap
Analysis events (16 bytes each), whatever the file's size.

What is taken (meanings from MindSpore's ascend_step_trace_time_viewer and torch_npu's
_trace_step_time_parser, which build step_trace_time.csv from the same events):

- ``process_name`` metadata: which pid is "Overlap Analysis" and which is "HCCL".
- ``ProfilerStep#N`` complete events (host side, MindSpore's and torch_npu's step markers).
- Overlap Analysis complete events named Computing / Communication / Communication(Not
  Overlapped) / Free: the device timeline split by what it did (µs).
- HCCL complete events named ``hcom_receive*``: point-to-point receives (the pipeline bubble).

Each step's window runs from its ProfilerStep start to the next step's start (the device runs
behind the host, so its work for step N starts after the host's step N starts); the last window
ends at its ProfilerStep end. An event belongs to the window its start falls in, as torch_npu
assigns them. docs/formats/profiler-ascend.md has the arithmetic and where this differs.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ... import diagnostics as dg
from ...text import Text
from .. import guard
from ...model import Artifact, ReadResult
from .common import US, Durations

BLOCK = 8 << 20  # bytes read at a time
TAIL = 1 << 20  # an event this long or longer at a block's end may be missed (events are < 10 kB)
BACK = 64 << 10  # how far before a matched name the event's "{" may be

OVERLAP = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")
_NAMES = re.compile(
    rb'"name"\s*:\s*"(Computing|Communication|Communication\(Not Overlapped\)|Free|ProfilerStep#\d+|process_name|'
    rb'hcom_receive[^"]*)"'
)
_PH = re.compile(rb'"ph"\s*:\s*"([A-Za-z])"')
_DECODER = json.JSONDecoder()


@dataclass
class Trace:
    """What one pass over a trace_view.json found. Times are integer ns (exact), durations µs."""

    phases: Counter = field(default_factory=Counter)  # events by "ph"
    process: dict[int, str] = field(default_factory=dict)  # pid -> process name
    steps: dict[int, tuple[int, float]] = field(default_factory=dict)  # step -> (start ns, dur µs)
    # per pid, per Overlap Analysis name: (start ns, dur µs) arrays
    overlap: dict[int, dict[str, tuple[array, array]]] = field(default_factory=dict)
    receive: dict[int, tuple[array, array]] = field(default_factory=dict)  # per pid: hcom_receive events
    unreadable: int = 0  # matched names whose event did not decode
    complete: bool = True  # the file ends with its closing "]" (or "}")
    bad: Durations = field(default_factory=Durations)  # durations refused at the door


def scan(path: str) -> Trace:
    """One pass in blocks. Each block is scanned up to its last "}" before the TAIL (no "ph" or
    "name" key spans a "}"), so every key is seen once; the rest is carried to the next block."""
    trace = Trace()
    phases: Counter = Counter()
    with guard.open_file(path, "rb") as fh:
        buf, at, eof = b"", 0, False
        while not eof:
            block = fh.read(BLOCK)
            eof = not block
            buf += block
            limit = len(buf) if eof else buf.rfind(b"}", at, max(at, len(buf) - TAIL)) + 1
            if limit <= at:
                if len(buf) - at < 4 * TAIL:
                    continue
                limit = len(buf) - TAIL  # no "}" in MBs: not a trace of small events; keep memory bounded
            phases.update(_PH.findall(buf, at, limit))
            for m in _NAMES.finditer(buf, at, limit):
                event = _event_at(buf, m.start())
                if event is None:
                    trace.unreadable += 1
                elif event.get("name") == m.group(1).decode():  # else: inside another event's args
                    _take(event, trace)
            keep = max(0, limit - BACK)
            buf, at = buf[keep:], limit - keep
        trace.complete = buf.rstrip().endswith((b"]", b"}"))
    trace.phases = Counter({ph.decode(): n for ph, n in phases.items()})
    return trace


def _event_at(buf: bytes, at: int) -> dict | None:
    """The JSON object that holds position `at`: from the nearest "{" before it, going back past
    nested objects that close before it (an "args": {...} written before "name")."""
    start = at
    for _ in range(4):
        start = buf.rfind(b"{", max(0, at - BACK), start)
        if start < 0:
            return None
        decoded = _decode_from(buf, start)
        if decoded is None:
            return None
        obj, end = decoded
        if end > len(buf[start:at].decode("utf-8", errors="replace")):
            return obj if isinstance(obj, dict) else None
    return None


def _decode_from(buf: bytes, start: int) -> tuple[object, int] | None:
    """The JSON value starting at buf[start], decoded from a window that grows until it holds
    the value (most events are a few hundred bytes)."""
    size = 4096
    while True:
        window = buf[start:start + size]
        try:
            return _DECODER.raw_decode(window.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            if size >= TAIL or start + size >= len(buf):
                return None
            size *= 16


def _take(event: dict, trace: Trace) -> None:
    name, ph, pid = event.get("name"), event.get("ph"), event.get("pid")
    if ph == "M":
        if name == "process_name" and isinstance(event.get("args"), dict):
            trace.process[_int(pid)] = str(event["args"].get("name"))
        return
    if ph != "X":
        return
    ts, dur = _ns(event.get("ts")), _float(event.get("dur"))
    if ts is None or dur is None:
        trace.unreadable += 1
        return
    if not trace.bad.ok(dur, "dur", US):
        return
    if name.startswith("ProfilerStep#"):
        step = int(name[len("ProfilerStep#"):])
        trace.steps.setdefault(step, (ts, dur))
    elif name.startswith("hcom_receive"):
        times = trace.receive.setdefault(_int(pid), (array("q"), array("d")))
        times[0].append(ts)
        times[1].append(dur)
    else:
        times = trace.overlap.setdefault(_int(pid), {}).setdefault(name, (array("q"), array("d")))
        times[0].append(ts)
        times[1].append(dur)


def _int(v: object) -> int:
    try:
        return int(v)  # pids are numbers or numeric strings
    except (TypeError, ValueError):
        return -1


def _float(v: object) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _ns(v: object) -> int | None:
    """A µs timestamp ("1704161511420306.491" or a number) as exact integer ns."""
    whole, _, frac = str(v).strip().partition(".")
    if whole.isdigit() and (not frac or frac.isdigit()):
        return int(whole) * 1000 + int((frac + "000")[:3])
    f = _float(v)
    return int(round(f * 1000)) if f is not None else None


# ------------------------------------------------------------------------------ steps


@dataclass(frozen=True)
class StepSums:
    """One step of the Overlap Analysis tracks, µs (what step_trace_time.csv would hold)."""

    step: int | None
    computing: float
    communication: float
    comm_not_overlapped: float
    free: float
    receive: float
    preparing: float | None  # first device task after the step's start


def step_sums(trace: Trace) -> tuple[list[StepSums], dict[str, float]]:
    """Per-step sums of the first Overlap Analysis process, and what fell outside every step
    (µs by track, "before" the first step / "after" the last)."""
    pid = min((p for p, n in trace.process.items() if n == "Overlap Analysis" and p in trace.overlap),
              default=min(trace.overlap, default=None))
    if pid is None:
        return [], {}
    tracks = {name: (np.frombuffer(ts, dtype=np.int64), np.frombuffer(dur, dtype=np.float64))
              for name, (ts, dur) in trace.overlap[pid].items()}
    hccl = [p for p, n in trace.process.items() if n == "HCCL"]
    recv = [trace.receive[p] for p in hccl if p in trace.receive] or list(trace.receive.values())[:1]
    if recv:
        tracks["receive"] = (np.frombuffer(recv[0][0], dtype=np.int64), np.frombuffer(recv[0][1], dtype=np.float64))
    if not trace.steps:  # no step markers: the whole trace is one step without a number
        return [StepSums(None, *(_total(tracks, n) for n in (*OVERLAP, "receive")), None)], {}
    steps = sorted(trace.steps.items(), key=lambda kv: kv[1][0])
    starts = np.array([s for _, (s, _) in steps], dtype=np.int64)
    last_end = steps[-1][1][0] + int(round(steps[-1][1][1] * 1000))
    sums: dict[str, np.ndarray] = {}
    first_task = np.full(len(steps), np.iinfo(np.int64).max, dtype=np.int64)
    outside: dict[str, float] = {}
    for name, (ts, dur) in tracks.items():
        window = np.searchsorted(starts, ts, side="right") - 1
        inside = (window >= 0) & (ts <= last_end)
        sums[name] = np.bincount(window[inside], weights=dur[inside], minlength=len(steps))
        if (~inside).any():
            outside[name] = float(dur[~inside].sum())
        if name in ("Computing", "Communication") and inside.any():
            np.minimum.at(first_task, window[inside], ts[inside])
    rows = []
    for i, (step, (start, _)) in enumerate(steps):
        prep = (first_task[i] - start) / 1000 if first_task[i] != np.iinfo(np.int64).max else None
        rows.append(StepSums(step, *(float(sums[n][i]) if n in sums else 0.0 for n in (*OVERLAP, "receive")), prep))
    return rows, outside


def _total(tracks: dict, name: str) -> float:
    return float(tracks[name][1].sum()) if name in tracks else 0.0


def read(artifact: Artifact, rank: int | None, result: ReadResult, *, steps_beside: bool) -> list[StepSums]:
    """Scan the file, report its event counts; the per-step sums unless a step_trace_time.csv
    with the same figures lies beside it (steps_beside)."""
    trace = scan(artifact.path)
    total = sum(trace.phases.values())
    if total == 0:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="events"))
        return []
    by_phase = [f"{ph} {n}" for ph, n in trace.phases.most_common()]  # event phases as the trace names them
    result.diagnostics.append(dg.info("profiler-trace-events", path=artifact.rel, n=total, phases=by_phase))
    if not trace.complete:
        result.diagnostics.append(dg.warning("profiler-trace-truncated", path=artifact.rel))
    if trace.unreadable:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="trace-events", n=trace.unreadable))
    trace.bad.warn(artifact.rel, result)
    if not trace.overlap:
        return []
    if steps_beside:
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="trace-steps"))
        return []
    rows, outside = step_sums(trace)
    if len({p for p, n in trace.process.items() if n == "Overlap Analysis"}) > 1:
        result.diagnostics.append(dg.warning("profiler-devices", path=artifact.rel, variant="trace"))
    if outside:
        spent = [Text("clause.named-duration", name=name, seconds=us * 1e-6) for name, us in sorted(outside.items())]
        result.diagnostics.append(dg.info("profiler-outside-steps", path=artifact.rel, spent=spent))
    return rows
