"""The data pipeline in MindSpore profiles -> PROFILE_DATA.

- ``minddata_pipeline_raw_<r>.csv`` (MindSpore's MindData profiler: 1.x MinddataPipelineParser and
  2.x MindDataPipelineRawViewer write the same columns): one row per dataset operator,
  ``op_id, op_type, num_workers, output_queue_size, output_queue_average_size,
  output_queue_length, output_queue_usage_rate, sample_interval, parent_id, children_id``;
  ``output_queue_size`` is the list of sampled queue fills (one per ``sample_interval`` ms),
  ``output_queue_usage_rate`` = average fill / ``output_queue_length`` (0-1).
- ``dataset.csv`` (2.x MsDatasetViewer): ``Operation, Stage, Occurrences, Avg. time (us),
  Custom Info``: the framework's ``Dataset::<operation>::<stage>`` ranges, counted and averaged.
"""

from __future__ import annotations

import ast

from ... import diagnostics as dg
from ...model import PROFILE_DATA, Artifact, ReadResult, frame
from .common import US, column, csv_rows, number

_COLS = ("stage", "op_type", "workers", "queue_usage", "queue_empty_share", "time_s", "samples")


def read_pipeline_raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    need = ("op_id", "op_type", "output_queue_size", "output_queue_usage_rate")
    if any(n not in header for n in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    i_id, i_type, i_sizes, i_usage = (header.index(n) for n in need)
    i_workers = column(header, "num_workers")
    out: dict[str, list] = {k: [] for k in _COLS}
    for line_no, row in enumerate(rows, start=2):
        if len(row) <= max(i_id, i_type, i_sizes, i_usage):
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="short"))
            continue
        sizes = _int_list(row[i_sizes])
        workers = number(row[i_workers]) if i_workers is not None and i_workers < len(row) else None
        op_type = row[i_type].strip()
        # the queue fills as the writer sampled them: none for an op without an output queue
        out["stage"].append(f"{op_type}(id={row[i_id].strip()})")
        out["op_type"].append(op_type)
        out["workers"].append(int(workers) if workers is not None else None)
        out["queue_usage"].append(number(row[i_usage]))
        out["queue_empty_share"].append(sizes.count(0) / len(sizes) if sizes else None)
        out["time_s"].append(None)
        out["samples"].append(len(sizes) if sizes else None)
    if not out["stage"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="operators"))
        return
    result.tables["profile_data"] = frame(
        {**out, "rank": rank, "source": "minddata_pipeline_raw", "file": artifact.rel}, PROFILE_DATA)


def _int_list(text: str) -> list[int]:
    try:
        value = ast.literal_eval(text.strip()) if text.strip() else []
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [int(v) for v in value if isinstance(v, (int, float))] if isinstance(value, (list, tuple)) else []


def read_dataset(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    idx = [column(header, n) for n in ("Operation", "Stage", "Occurrences", "Avg. time (us)")]
    if None in idx:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    i_op, i_stage, i_n, i_avg = idx
    out: dict[str, list] = {k: [] for k in _COLS}
    for line_no, row in enumerate(rows, start=2):
        n = number(row[i_n]) if i_n < len(row) else None
        avg = number(row[i_avg]) if i_avg < len(row) else None
        if n is None or avg is None:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        out["stage"].append(f"{row[i_op].strip()}::{row[i_stage].strip()}")
        out["op_type"].append(row[i_op].strip())
        out["workers"].append(None)
        out["queue_usage"].append(None)
        out["queue_empty_share"].append(None)
        out["time_s"].append(avg * US)
        out["samples"].append(int(n))
    if not out["stage"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="rows"))
        return
    result.tables["profile_data"] = frame(
        {**out, "rank": rank, "source": "dataset", "file": artifact.rel}, PROFILE_DATA)
