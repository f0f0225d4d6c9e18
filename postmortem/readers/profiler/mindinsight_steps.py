"""Step time of MindInsight-era profiler folders -> PROFILE_STEPS (and the step trace's
communication ops -> PROFILE_COMM).

- ``step_trace_raw_<r>_detail_time.csv`` (MindSpore ``step_trace_parser``): one row per step in
  10 ns system-counter ticks, then one column triple per communication op
  (``stream_<s>_<i>_<Op>-op<n>``, ``..._start_point``, ``..._end_point``).
- ``ascend_cluster_analyse_<mode>_<stages>_<ranks>_<r>.csv`` (MindSpore's timeline generator, the
  figures MindInsight shows): per step in ms, then their average.

How the step is split, and where it differs from MindInsight's figures:
docs/formats/profiler-mindinsight.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import diagnostics as dg
from ...model import PROFILE_COMM, PROFILE_STEPS, Artifact, ReadResult, Setting, frame
from .common import MS, TICK, Durations, last_row_per_step, take_rows
from .mindinsight_files import csv_open

# Receive ops wait for the previous pipeline stage: the pipeline bubble. Send and Receive are the
# point-to-point kind; every other communication op is collective.
RECEIVE = "receive"
P2P = {"send", "receive"}


# --------------------------------------------------------------------------- step_trace_raw


@dataclass(frozen=True)
class _Op:
    name: str  # the duration column as written: stream_48_0_Receive-op663
    kind: str  # "p2p" | "collective"
    receive: bool
    duration: int  # column indexes
    start: int
    end: int


def _op_type(column: str) -> str:
    """Receive, AllReduce, ... from stream_48_0_Receive-op663; "parallel" where the writer did
    not know it (stream_10_parallel_0 before MindSpore 1.0, stream_10_0_parallel after)."""
    rest = column.split("_", 2)[2] if column.count("_") >= 2 else ""
    if re.fullmatch(r"parallel_\d+", rest):
        return "parallel"
    m = re.fullmatch(r"\d+_(.+)", rest)
    tail = m.group(1) if m else rest
    return re.sub(r"-op\d+$", "", tail.rsplit("/", 1)[-1]) or "parallel"


def _ops(header: list[str]) -> tuple[list[_Op], int]:
    """The op columns, and how many op durations lack their _start_point / _end_point."""
    index = {name: i for i, name in enumerate(header)}
    ops, unpaired = [], 0
    for name, i in index.items():
        if not name.startswith("stream_") or name.endswith(("_start_point", "_end_point")):
            continue
        start, end = index.get(name + "_start_point"), index.get(name + "_end_point")
        if start is None or end is None:
            unpaired += 1
            continue
        op_type = _op_type(name).lower()
        ops.append(_Op(name, "p2p" if op_type in P2P else "collective", op_type == RECEIVE, i, start, end))
    return ops, unpaired


def _covered(intervals: list[tuple[int, int]]) -> int:
    """Ticks covered by the union of [start, end) intervals."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def read_step_trace_raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    base = ("step_num", "start_point", "end_point", "total", "fp_point", "iteration_interval")
    if any(n not in header for n in base) or not ({"fp_and_bp", "fp"} & set(header)):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:9]))
        return
    i_step, i_start, i_end, i_total, i_fp, i_interval = (header.index(n) for n in base)
    ops, unpaired = _ops(header)
    if unpaired:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, variant="unpaired", n=unpaired))
    steps: dict[str, list] = {k: [] for k in ("step", "computing_s", "comm_not_overlapped_s", "communication_s",
                                               "bubble_s", "data_wait_s", "total_s")}
    comm: dict[str, list] = {k: [] for k in ("step", "op", "kind", "elapse_s")}
    skipped, odd_sums, odd_ops = [], 0, 0
    comm_row: list[int] = []
    bad = Durations()
    for line_no, row in lines:
        if len(row) != len(header):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="cells", cells=len(row), header=len(header)))
            continue
        label = row[i_step]
        if label == "-":
            continue  # the writer's average of all rows
        if not label.isdigit() or int(label) < 1:
            skipped.append(line_no)  # e.g. MindInsight's run_2: a row "0" of zeros but iteration_interval
            continue
        try:
            start, end, total, fp, interval = (int(row[i]) for i in (i_start, i_end, i_total, i_fp, i_interval))
            spans = [(op, int(row[op.start]), int(row[op.end]), int(row[op.duration])) for op in ops]
        except ValueError:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="ticks"))
            continue
        if not all([bad.ok(float(total), "total", TICK), bad.ok(float(interval), "iteration_interval", TICK)]):
            continue
        if total != end - start or fp - start != interval:
            odd_sums += 1
        step = int(label)
        # Communication counts inside [fp_point, end_point]; the gap before fp_point stays data wait.
        everything, not_receive = [], []
        for op, s, e, d in spans:
            if s == 0 and e == 0:
                continue  # the op did not run in this step (the writer fills zeros)
            odd_ops += e - s != d
            comm["step"].append(step)
            comm_row.append(len(steps["step"]))  # the steps row this op belongs to (a repeated step drops it)
            comm["op"].append(op.name)
            comm["kind"].append(op.kind)
            comm["elapse_s"].append(d * TICK)
            s, e = max(s, fp), min(e, end)
            if s < e:
                everything.append((s, e))
                if not op.receive:
                    not_receive.append((s, e))
        with_comm, collective = _covered(everything), _covered(not_receive)
        steps["step"].append(step)
        steps["data_wait_s"].append(interval * TICK)
        steps["bubble_s"].append((with_comm - collective) * TICK)
        steps["comm_not_overlapped_s"].append(collective * TICK)
        steps["communication_s"].append(with_comm * TICK)
        steps["computing_s"].append((end - fp - with_comm) * TICK)
        steps["total_s"].append(total * TICK)
    bad.warn(artifact.rel, result)
    if skipped:
        result.diagnostics.append(dg.info("profiler-step-trace-row", path=artifact.rel, offset=skipped[0], n=len(skipped)))
    if odd_sums:
        result.diagnostics.append(dg.warning("profiler-implausible", path=artifact.rel, variant="step-trace-sums", n=odd_sums))
    if odd_ops:
        result.diagnostics.append(dg.warning("profiler-implausible", path=artifact.rel, variant="step-trace-ops", n=odd_ops))
    if not steps["step"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    kept = last_row_per_step(steps["step"], artifact.rel, result)
    if kept is not None:  # a repeated step keeps its last row, and that row's operators
        steps = take_rows(steps, kept)
        keep = set(kept)
        comm = take_rows(comm, [i for i, r in enumerate(comm_row) if r in keep])
    result.tables["profile_steps"] = frame(
        {**steps, "rank": rank, "source": "step_trace_raw", "file": artifact.rel}, PROFILE_STEPS)
    if comm["step"]:
        result.tables["profile_comm"] = frame(
            {**comm, "rank": rank, "source": "step_trace_raw", "file": artifact.rel}, PROFILE_COMM)


# --------------------------------------------------------------------------- ascend_cluster_analyse

CLUSTER_NAME = re.compile(r"(?:ascend|gpu)_cluster_analyse_([a-z-]+)_(\d+)_(\d+)_(\d+)\.csv$")
# Column names as MindSpore wrote them, and as MindInsight's own test files spell them.
_CLUSTER_COLUMNS = {
    "computation": ("computation_time", "computation"),
    "comm_alone": ("communication_alone_time",),
    "receive_alone": ("receive_alone_time",),
    "collective_alone": ("collective_communication_alone_time", "collective_communication_time"),
    "stage": ("stage_time",),
}
_TICK_COLUMNS = ("iteration_interval", "fp_and_bp", "tail")
ROUNDING_MS = 1e-3  # the writer rounds each figure to 4 decimals


def read_cluster_analyse(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    name = CLUSTER_NAME.search(artifact.rel)
    if name:
        _, stages, rank_size, _ = name.groups()
        for key, value in (("pipeline_stage", int(stages)), ("device_num", int(rank_size))):
            result.settings[key] = Setting(value, f"profiler:{artifact.rel}")
        if rank is not None and rank >= int(rank_size):
            result.diagnostics.append(dg.warning("profiler-rank", path=artifact.rel, variant="rank-size", rank=rank, size=int(rank_size)))
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    rows = list(lines)
    idx = {k: next((header.index(n) for n in names if n in header), None) for k, names in _CLUSTER_COLUMNS.items()}
    ticks = all(n in header for n in _TICK_COLUMNS)
    if not ticks and (idx["computation"] is None or idx["comm_alone"] is None):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:5]))
        return
    if len(rows) > 1:
        rows = rows[:-1]  # the writer appends the average of the steps
    elif rows:
        result.diagnostics.append(dg.warning("profiler-cluster-rows", path=artifact.rel, offset=rows[0][0]))
    out: dict[str, list] = {k: [] for k in ("step", "computing_s", "comm_not_overlapped_s", "bubble_s",
                                             "data_wait_s", "total_s")}
    odd = 0
    for step, (line_no, row) in enumerate(rows, start=1):
        try:
            if ticks:
                interval, fp_bp, tail = (float(row[header.index(n)]) for n in _TICK_COLUMNS)
                values = {"data_wait_s": interval * TICK, "computing_s": (fp_bp + tail) * TICK,
                          "comm_not_overlapped_s": 0.0, "bubble_s": 0.0, "total_s": (interval + fp_bp + tail) * TICK}
            else:
                ms = {k: float(row[i]) if i is not None else None for k, i in idx.items()}
                values, bad = _cluster_partition(ms)
                odd += bad
        except (ValueError, IndexError):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        out["step"].append(step)
        for k in out:
            if k != "step":
                out[k].append(values.get(k))
    if odd:
        result.diagnostics.append(dg.warning("profiler-implausible", path=artifact.rel, variant="cluster-sums", n=odd))
    if not out["step"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    result.tables["profile_steps"] = frame(
        {**out, "rank": rank, "source": "cluster_analyse", "file": artifact.rel}, PROFILE_STEPS)


def _cluster_partition(ms: dict[str, float | None]) -> tuple[dict[str, float | None], bool]:
    """MindSpore's figures (ms) as the partition. Its step is computation + communication_alone;
    computation_time is that step minus the communication no compute covers, so it holds the
    data wait and idle time too. Receive and the other communication ops are split by where they
    are alone, so they add up to communication_alone."""
    computation, alone = ms["computation"], ms["comm_alone"]
    receive, collective, stage = ms["receive_alone"], ms["collective_alone"], ms["stage"]
    total = computation + alone
    bad = False
    if receive is None or collective is None:
        receive, collective = 0.0, alone  # no Receive op: MindSpore writes the two-column layout
    elif abs(receive + collective - alone) > ROUNDING_MS:
        bad = True
    if stage is not None and abs(total - receive - stage) > ROUNDING_MS:
        bad = True
    return {"computing_s": computation * MS, "comm_not_overlapped_s": collective * MS, "bubble_s": receive * MS,
            "total_s": total * MS}, bad
