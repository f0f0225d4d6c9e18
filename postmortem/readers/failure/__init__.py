"""The failure reader: what a dying job left, as incidents (one table row each), per file and rank.

It reads every log a job writes (training and worker logs, msrun's scheduler.log, MindFormers'
output/log/rank_N/{info,error}.log, CANN's plog and device logs where a user copied them in) and
the fault-tolerance leftovers (MindFormers' abnormal_global_norm.json). A log is also read by the
text-log reader, which takes its training records; this reader sees the same file beside it
(discover.py's witnesses) and takes only its incidents, so its error lines are judged once, in
analysis/failure.py, and the report's plain "error lines in the logs" finding stands back
whenever a failure is judged.

TrainFaultTolerance's ttp_saved_checkpoints-step_N/ folders hold checkpoints: the checkpoint
reader claims their files, and analysis/failure.py's resume_point reads their step from the folder.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatch

import polars as pl

from ... import diagnostics as dg
from ...model import INCIDENTS, Artifact, ReadResult, frame
from .. import guard
from ..base import Reader, rank_from_path
from . import codes
from .scan import last_time, scan

MAX_JSON_BYTES = 8 << 20
_LOGS = ("*.log", "*.txt", "*.out", "*.log.*", "stdout*", "stderr*")
_FAULT_TOLERANCE = ("abnormal_global_norm.json",)
_DEVICE_DIR = re.compile(r"(?:^|/)device-(\d+)/")

# Ranks another rank's error names: HCCL's notify-wait timeout and its cluster heartbeat
# (MindCluster / HCCL troubleshooting: "Heartbeat Lost Occurred" = the named rank's process exited).
_HEARTBEAT = re.compile(r"deviceId\[(\d+)\][^\n]{0,40}Heartbeat Lost|"
                        r"Cluster Exception Location\[IP/ID\]:\[[^/\]]*/(\d+)\][^\n]{0,200}?Heartbeat Lost")
_REMOTE = re.compile(r"remote rank\s*:?\s*\[(\d+)\]|check root rank: (\d+)")
# msrun's launcher names the workers that stopped answering the scheduler (process_entity/_api.py)
_TIMED_OUT_NODES = re.compile(r"Time out nodes are \[\s*'?(\d+)'?|Timed out node list is: \[const vector\]\{(\d+)\}")


def claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1].lower()
    return name in _FAULT_TOLERANCE or any(fnmatch(name, p) for p in _LOGS)


def source_of(rel: str) -> str:
    low = rel.lower()
    name = low.rsplit("/", 1)[-1]
    if name in _FAULT_TOLERANCE:
        return "fault-tolerance"
    if "/plog/" in f"/{low}" or name.startswith("plog-"):
        return "plog"
    if _DEVICE_DIR.search(low) or name.startswith("device-"):
        return "device"
    return "log"


def file_rank(artifact: Artifact) -> int | None:
    """The rank the file's path names (rank_N/, worker_N.log), else a CANN log's device folder."""
    if artifact.rank is not None:
        return artifact.rank
    rank = rank_from_path(artifact.rel)
    if rank is None:
        m = _DEVICE_DIR.search(artifact.rel)
        rank = _device_rank(int(m.group(1))) if m else None
    return rank


def _device_rank(device: int) -> int | None:
    """A device number as a rank (one process per device): device 0 is also every single-process
    job's, so it names no rank by itself."""
    return device if device > 0 else None


# The process's own rank where its path does not say: HCCL's "rankNum[8], rank[0]", a RANK_ID.
_OWN_RANK = re.compile(rb"rankNum\[\d+\],\s*rank\[(\d+)\]|\brank\[(\d+)\]|\bRANK_ID\s*[=:]\s*(\d+)")
# A step the incident's own text gives (the silent check's "step=[5]", "step: 12")
_STEP = re.compile(r"\bstep\s*[=:]\s*\[?\s*(\d+)\s*\]?(?!\s*/)")


# The rank a line itself names as its writer's: torchrun's "[rank1]: " prefix, torch_npu's
# "(PID:6038, Device:0, RankID:3)", its "NPU out of memory ... (NPU 2; ...)" (one process per NPU).
_LINE_RANK = re.compile(r"^\[rank(\d+)\]:|RankID:(\d+)\)|\(NPU (\d+);")
_PID = re.compile(r"^\s*(?:\[rank\d+\]:\s*)?\[[A-Z]+\] [A-Z_]+\((\d+)[:,]|\[PID: (\d+)\]|\(PID:(\d+),")
_PID_B = re.compile(rb"\[[A-Z]+\] [A-Z_]+\((\d+)[:,]")
# msrun's launcher names the worker process that died ("Worker process 14466 exit with exception")
_WORKER_EXIT = re.compile(r"Worker process (\d+) exit")
# MindSpore's CPU ring collectives name the rank they waited for ("wait receiving [1,16] failed")
_RING_WAIT = re.compile(r"wait receiving \[(\d+),")


def _line_rank(text: str) -> int | None:
    m = _LINE_RANK.search(text)
    if m is None:
        return None
    return _device_rank(int(m.group(3))) if m.group(3) is not None else _first(m)


def _first(m: re.Match | None) -> int | None:
    return int(next(g for g in m.groups() if g is not None)) if m else None


def _own_rank(data: bytes) -> int | None:
    """The one rank the file names as its own; a file naming several (a launcher's log, msrun's
    console echoing every worker) has none."""
    found = {int(next(g for g in m.groups() if g is not None)) for m in _OWN_RANK.finditer(data)}
    return found.pop() if len(found) == 1 else None


def named_rank(text: str) -> tuple[int | None, str | None]:
    """A rank the text names as the one that failed first, and how it names it."""
    m = _HEARTBEAT.search(text)
    if m:
        return int(m.group(1) or m.group(2)), "heartbeat_lost"
    m = _TIMED_OUT_NODES.search(text)
    if m:
        return int(m.group(1) or m.group(2)), "timed_out_node"
    m = _REMOTE.search(text) or _RING_WAIT.search(text)
    if m:
        return _first(m), "remote_rank"
    return None, None


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="failure")
    source = source_of(artifact.rel)
    if source == "fault-tolerance":
        return _read_global_norms(artifact, result)
    with guard.open_file(artifact.path, "rb") as fh:
        data = fh.read()
    rows = {c: [] for c in ("line", "wall_time", "level", "code", "runtime_code", "exception", "text", "context",
                            "named_rank", "named_how", "step", "pid", "named_pid", "rank")}
    incidents = scan(data)
    for inc in incidents:
        whole = f"{inc.text}\n{inc.context}"
        rank_named, how = named_rank(whole)
        step = _STEP.search(inc.text)
        values = (inc.line, inc.wall_time, inc.level, codes.first_code(inc.text) or codes.first_code(inc.context),
                  codes.runtime_code(whole), inc.exception, inc.text, inc.context, rank_named, how,
                  int(step.group(1)) if step else None, _first(_PID.search(inc.text)),
                  _first(_WORKER_EXIT.search(inc.text)), _line_rank(inc.text))
        for column, value in zip(rows, values):
            rows[column].append(value)
    end = last_time(data)  # the files' last word: a hang is progress that stops long before it
    head_pid = _first(_PID_B.search(data, 0, 4096))
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)  # an end row's line: the file's last
    for column, value in zip(rows, (lines, end, "end", None, None, None, "", "", None, None, None, head_pid, None, None)):
        rows[column].append(value)
    rank = file_rank(artifact)
    if rank is None and incidents:
        rank = _own_rank(data)
    n = len(rows["line"])
    rows["rank"] = [own if own is not None else rank for own in rows["rank"]]  # a line's own rank, else the file's
    rows.update(file=[artifact.rel] * n, source=[source] * n)
    # one DataFrame call in the schema's order (model.frame's repeated constants and a select cost
    # several times the scan itself: bench/failure_scan.py)
    result.tables["incidents"] = pl.DataFrame({c: rows[c] for c in INCIDENTS}, schema=INCIDENTS, strict=False)
    return result


def _read_global_norms(artifact: Artifact, result: ReadResult) -> ReadResult:
    """MindFormers' abnormal_global_norm.json: {global step: [global norms]} of the steps whose
    global norm passed the threshold (callback.py's abnormal global norm check); training stops
    there and the fast recovery starts."""
    try:
        if artifact.size > MAX_JSON_BYTES:
            raise ValueError("too large")
        with guard.open_file(artifact.path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8", errors="replace"))
        items = sorted((int(k), v) for k, v in doc.items()) if isinstance(doc, dict) else []
    except (ValueError, TypeError, AttributeError) as exc:
        result.diagnostics.append(dg.warning("failure-record-unreadable", path=artifact.rel, detail=str(exc)[:200]))
        return result
    if not items:
        result.diagnostics.append(dg.info("failure-record-empty", path=artifact.rel))
        return result
    n = len(items)
    result.tables["incidents"] = frame({
        "step": [k for k, _ in items], "level": ["abnormal_global_norm"] * n,
        "text": [json.dumps({str(k): v}) for k, v in items], "context": [""] * n,
        "rank": file_rank(artifact), "file": artifact.rel, "source": "fault-tolerance",
    }, INCIDENTS)
    return result


READER = Reader(name="failure", claims=claims, read=read)

__all__ = ["READER", "claims", "named_rank", "read"]
