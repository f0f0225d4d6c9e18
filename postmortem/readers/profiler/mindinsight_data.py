"""The data pipeline (MindData) of MindInsight-era profiler folders -> PROFILE_DATA, and the host
CPU figures -> PROFILE_SUMMARY.

- ``minddata_pipeline_raw_<r>.csv`` (MindSpore ``MinddataPipelineParser``): one row per dataset
  operator with its output queue's sampled sizes.
- ``device_queue_profiling_<r>.txt`` (sink mode) / ``dataset_iterator_profiling_<r>.txt``
  (non-sink): ``type extra batch value [timestamp]`` per line (MindSpore ``MinddataProfilingAnalyzer``):
  type 0 is a time in ms (extra 0: getting the batch from the pipeline, 1: pushing it to the
  device, 2: the whole batch), type 1 a queue size (extra: the queue's capacity); timestamps in ms.
- ``minddata_aicpu_<r>.txt``: ``GetNext_dequeue_wait start_us end_us queue_size`` per device GetNext.
- ``minddata_cpu_utilization_<r>.json``: host CPU samples in percent.

Units and meanings: docs/formats/profiler-mindinsight.md.
"""

from __future__ import annotations

import json
import math
from statistics import fmean

from ... import diagnostics as dg
from ...model import PROFILE_DATA, PROFILE_SUMMARY, Artifact, ReadResult, frame
from .common import MS, US, number, open_text
from .mindinsight_files import csv_open, json_file

DATA_COLUMNS = ("stage", "op_type", "workers", "queue_usage", "queue_empty_share", "time_s", "samples",
                "parent_stage")


def _rows() -> dict[str, list]:
    return {k: [] for k in DATA_COLUMNS}


def _add(out: dict[str, list], **values) -> None:
    for k in DATA_COLUMNS:
        out[k].append(values.get(k))


def _data_table(out: dict[str, list], rank: int | None, source: str, artifact: Artifact, result: ReadResult) -> None:
    if not out["stage"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="data"))
        return
    result.tables["profile_data"] = frame({**out, "rank": rank, "source": source, "file": artifact.rel}, PROFILE_DATA)


def read_pipeline_raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    need = ("op_id", "op_type", "num_workers", "output_queue_size", "output_queue_usage_rate", "parent_id")
    if any(n not in header for n in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    i = {n: header.index(n) for n in need}
    ops = []
    for line_no, row in lines:
        if len(row) < len(header):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="short"))
            continue
        sizes = _int_list(row[i["output_queue_size"]])
        workers = number(row[i["num_workers"]])
        usage = number(row[i["output_queue_usage_rate"]])
        ops.append({
            "op_id": row[i["op_id"]], "op_type": row[i["op_type"]], "parent_id": row[i["parent_id"]],
            "workers": int(workers) if workers is not None and math.isfinite(workers) else None,
            # usage = mean sampled size / capacity, as the writer computed it; empty for inline ops
            "queue_usage": usage,
            "queue_empty_share": sum(s == 0 for s in sizes) / len(sizes) if sizes else None,
            "samples": len(sizes) if sizes else None,
        })
    name = {op["op_id"]: f"{op['op_type']}(id={op['op_id']})" for op in ops}
    out = _rows()
    for op in ops:
        _add(out, stage=name[op["op_id"]], parent_stage=name.get(op["parent_id"]), **{
            k: op[k] for k in ("op_type", "workers", "queue_usage", "queue_empty_share", "samples")})
    _data_table(out, rank, "minddata_pipeline", artifact, result)


def _int_list(text: str) -> list[int]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    return [v for v in value if isinstance(v, (int, float))] if isinstance(value, list) else []


def _records(artifact: Artifact, result: ReadResult, fields: int) -> list[list[float]]:
    """The whitespace-separated numeric lines of a text trace (at least `fields` numbers each)."""
    records, bad = [], []
    with open_text(artifact, result) as fh:
        for line_no, line in enumerate(fh, start=1):
            cells = line.split()
            if not cells:
                continue
            values = [number(c) for c in cells]
            if len(values) < fields or any(v is None or not math.isfinite(v) for v in values[:fields]):
                bad.append(line_no)
                continue
            records.append(values)
    if bad:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=bad[0], variant="not-record",
                                             n=len(bad)))
    return records


def _after_first_batch(values: list[tuple[float, float]]) -> list[float]:
    """Values of batches after the first (warm-up), as MindSpore's own analyzer averages them;
    the first one where it is the only one."""
    later = [v for batch, v in values if batch >= 2]
    return later or [v for _, v in values]


def read_device_trace(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    sink = "device_queue_profiling" in artifact.rel.rsplit("/", 1)[-1]
    stage = "device_queue" if sink else "iterator"
    times: dict[int, list[tuple[float, float]]] = {0: [], 1: [], 2: []}
    queue = []  # (batch, capacity, size, timestamp)
    for rec in _records(artifact, result, 4):
        kind, extra, batch, value = rec[:4]
        if kind == 0 and int(extra) in times:
            times[int(extra)].append((batch, value))
        elif kind == 1:
            queue.append((batch, extra, value, rec[4] if len(rec) > 4 else None))
    out = _rows()
    if queue:
        batch_ms = times[2]
        if not sink:  # the iterator writes no batch time: the gaps between its queue records are
            stamps = [(b, ts) for b, _, _, ts in queue if ts is not None]
            batch_ms = [(b, ts - prev) for (b, ts), (_, prev) in zip(stamps[1:], stamps)]
        per_batch = _after_first_batch(batch_ms)
        _add(out, stage=stage, op_type=stage, samples=len(queue),
             queue_usage=fmean(size / cap for _, cap, size, _ in queue) if all(c > 0 for _, c, _, _ in queue) else None,
             queue_empty_share=sum(size == 0 for _, _, size, _ in queue) / len(queue),
             time_s=fmean(per_batch) * MS if per_batch else None)
    for extra, part in ((0, "get"), (1, "push")):
        if times[extra]:
            _add(out, stage=f"{stage}.{part}", op_type=stage, samples=len(times[extra]),
                 time_s=fmean(_after_first_batch(times[extra])) * MS)
    _data_table(out, rank, "minddata_device_trace", artifact, result)


def read_minddata_aicpu(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    waits, sizes = [], []
    with open_text(artifact, result) as fh:
        for line in fh:
            cells = line.split()
            if len(cells) >= 4 and cells[0].startswith("GetNext"):
                start, end, size = number(cells[1]), number(cells[2]), number(cells[3])
                if None not in (start, end, size):
                    waits.append((end - start) * US)
                    sizes.append(size)
    out = _rows()
    if waits:
        _add(out, stage="get_next", op_type="get_next", samples=len(waits), time_s=fmean(waits),
             queue_empty_share=sum(s == 0 for s in sizes) / len(sizes))
    _data_table(out, rank, "minddata_aicpu", artifact, result)


def read_cpu_utilization(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    data = json_file(artifact, result)
    if data is None:
        return
    if not isinstance(data, dict):
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="not-object"))
        return
    out: dict[str, list] = {"key": [], "value": [], "unit": []}

    def put(key: str, value: float | None, unit: str) -> None:
        if value is not None:
            out["key"].append(key)
            out["value"].append(value)
            out["unit"].append(unit)

    host = data.get("device_info") if isinstance(data.get("device_info"), dict) else {}
    for raw, key in (("user_utilization", "host_cpu_user"), ("sys_utilization", "host_cpu_sys"),
                     ("io_utilization", "host_cpu_io_wait"), ("idle_utilization", "host_cpu_idle")):
        samples = _numbers(host.get(raw))
        # The writer's first sample is always 0: a share needs two readings of /proc/stat.
        samples = samples[1:] if len(samples) > 1 else samples
        put(key, fmean(samples) / 100 if samples else None, "fraction")
    process = data.get("process_info") if isinstance(data.get("process_info"), dict) else {}
    user, sys_ = _numbers(process.get("user_utilization")), _numbers(process.get("sys_utilization"))
    if user and len(user) == len(sys_):
        put("process_cpu_cores", fmean(u + s for u, s in zip(user, sys_)) / 100, "cores")
    count = data.get("cpu_processor_num")
    put("cpu_count", float(count) if isinstance(count, (int, float)) and not isinstance(count, bool) else None, "count")
    ops = data.get("op_info")
    if isinstance(ops, list) and ops:
        result.diagnostics.append(dg.info("profiler-not-read", path=artifact.rel, variant="dataset-op-cpu", n=len(ops)))
    if not out["key"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="cpu"))
        return
    result.tables["profile_summary"] = frame(
        {**out, "rank": rank, "source": "minddata_cpu_utilization", "file": artifact.rel}, PROFILE_SUMMARY)


def _numbers(value: object) -> list[float]:
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, (int, float)) and not isinstance(v, bool)]
