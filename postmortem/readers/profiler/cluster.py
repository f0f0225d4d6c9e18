"""msprof-analyze cluster outputs (``cluster_analysis_output/``): one file for all ranks.

Written by ``msprof-analyze cluster -d <collection>`` (Ascend mstt / msprof-analyze,
``cluster_analyse/analysis/``). Meanings, units and the arithmetic are in
docs/formats/profiler-msprof.md; in short:

- ``cluster_step_trace_time.csv`` (step_trace_time_analysis.py): ``Step, Type, Index,`` then the
  per-rank step_trace_time columns in microseconds. ``Type`` is ``rank`` (Index = rank id) or
  ``stage`` (Index = the stage's ranks, every column the max over them); only rank rows are read.
  ``Step`` is empty where the per-rank input had no steps (msprof ``PROF_*`` input: one row per
  rank for the whole capture).
- ``cluster_communication.json`` (communication_analysis.py): ``{"(ranks)": {"step<N>"|"step":
  {"<op>@<group>": {"<rank>": <op record, comm_info.py>}}}}``, plus ``Total Op Info@<group>`` sums.
- ``cluster_analysis.db`` (database input): its ``ClusterStepTraceTime`` table is the CSV above,
  columns in snake case (docs/formats/profiler-db.md).
- ``cluster_communication_matrix.json`` (comm_matrix_analysis.py): ``{"(ranks)": {"step<N>":
  {"<op>@<group>": {"<src>-<dst>": {"Transport Type", "Transit Size(MB)", "Transit Time(ms)",
  "Bandwidth(GB/s)", "Op Name"}}}}}`` with global ranks at both ends.

They are derived from the per-rank files. When those sit beside ``cluster_analysis_output/`` (the
folder msprof-analyze read them from), they are read instead and the cluster file only gets a
note, so no step or operator is counted twice.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

from ... import diagnostics as dg
from ...model import COMM_GROUPS, PROFILE_COMM, PROFILE_STEPS, Artifact, ReadResult, frame
from .comm_info import MB, group_of, is_total, kind_of, op_figures
from .common import MS, US, Durations, Format, column, csv_rows, load_json, number
from .dbopen import columns, with_database

# Per-rank profiler folders msprof-analyze takes as input (its *_data_preprocessor.py patterns).
_PER_RANK_DIR = re.compile(r"(?:_ascend_(?:pt|ms)|^PROF_\d+_\d+_[0-9A-Za-z]+)$")
# Operators of msprof-analyze's msprof adapter that repeat others (its check_add_op keeps "total").
_REPEATS = re.compile(r"-(?:top|middle|bottom)\d*@")


def _per_rank_inputs_beside(artifact: Artifact) -> list[str]:
    """Per-rank profiler folders next to cluster_analysis_output/ (msprof-analyze's -d folder)."""
    here = Path(artifact.path).parent
    if here.name != "cluster_analysis_output":
        return []
    try:
        names = os.listdir(here.parent)
    except OSError:
        return []
    return sorted(n for n in names if _PER_RANK_DIR.search(n) and (here.parent / n).is_dir())


def _covered(artifact: Artifact, result: ReadResult) -> bool:
    inputs = _per_rank_inputs_beside(artifact)
    if inputs:
        result.diagnostics.append(dg.warning("profiler-cluster-derived", path=artifact.rel, n=len(inputs), example=inputs[0]))
    return bool(inputs)


def _step_trace_time(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _covered(artifact, result):
        return
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    step_rows(artifact, header, rows, result, "cluster_step_trace_time")


def step_rows(artifact: Artifact, header: list[str], rows: list[list[str]], result: ReadResult, source: str) -> None:
    """profile_steps from cluster step-trace rows (the CSV's, or its database table's in the CSV's
    column names: db.py)."""
    i_type, i_index, i_step = column(header, "Type"), column(header, "Index"), column(header, "Step")
    i_comp = column(header, "Computing")
    if i_type is None or i_index is None or i_comp is None:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, variant="expected", kind="cluster_step_trace_time.csv",
                   header=header[:5]))
        return
    idx = {k: column(header, n) for k, n in (
        ("cno", "Communication(Not Overlapped)"), ("overlapped", "Overlapped"), ("comm", "Communication"),
        ("free", "Free"), ("stage", "Stage"), ("bubble", "Bubble"),
        ("cno_excl", "Communication(Not Overlapped and Exclude Receive)"), ("preparing", "Preparing"),
    )}
    out: dict[str, list] = {k: [] for k in PROFILE_STEPS if k not in ("source", "file", "data_wait_s")}
    stage_rows = 0
    off: list[str] = []
    bad = Durations()
    names = {"cno": "Communication(Not Overlapped)", "free": "Free", "comm": "Communication", "bubble": "Bubble",
             "preparing": "Preparing", "stage": "Stage", "cno_excl": "Communication(Not Overlapped and Exclude Receive)"}
    for line_no, row in enumerate(rows, start=2):
        if not row:
            continue
        kind = row[i_type].strip() if i_type < len(row) else ""
        if kind == "stage":
            stage_rows += 1
            continue
        rank_text = row[i_index].strip() if i_index < len(row) else ""
        v = {k: (number(row[i]) if i is not None and i < len(row) else None) for k, i in idx.items()}
        comp = number(row[i_comp]) if i_comp < len(row) else None
        if kind != "rank" or not rank_text.isdigit() or comp is None or v["cno"] is None or v["free"] is None:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="not-rank"))
            continue
        if not all([bad.ok(comp, "Computing", US), *(bad.ok(v[k], n, US) for k, n in names.items())]):
            continue
        bubble = v["bubble"] or 0.0
        # The partition: exposed communication without the receives, plus the receives (bubble).
        cno_excl = v["cno_excl"] if v["cno_excl"] is not None else v["cno"] - bubble
        preparing = v["preparing"] or 0.0
        total = comp + cno_excl + bubble + v["free"] + preparing  # = Computing + CNO + Free + Preparing
        if v["stage"] is not None and total > 0 and abs(v["stage"] + bubble + preparing - total) > 0.01 * total:
            off.append(f"rank {rank_text} (line {line_no})")
        step = number(row[i_step]) if i_step is not None and i_step < len(row) else None
        out["rank"].append(int(rank_text))
        out["step"].append(int(step) if step is not None else None)
        out["computing_s"].append(comp * US)
        out["comm_not_overlapped_s"].append(cno_excl * US)
        out["bubble_s"].append(bubble * US)
        out["overlapped_s"].append(v["overlapped"] * US if v["overlapped"] is not None else None)
        out["communication_s"].append(v["comm"] * US if v["comm"] is not None else None)
        out["free_s"].append(v["free"] * US)
        out["preparing_s"].append(preparing * US if v["preparing"] is not None else None)
        out["total_s"].append(total * US)
    bad.warn(artifact.rel, result)
    if stage_rows:
        result.diagnostics.append(dg.info("profiler-cluster-stage-rows", path=artifact.rel, n=stage_rows))
    if off:
        result.diagnostics.append(dg.warning("profiler-partition", path=artifact.rel, n=len(off), rows=off[:3]))
    result.tables["profile_steps"] = frame({**out, "source": source, "file": artifact.rel}, PROFILE_STEPS)


# ----------------------------------------------------------------- msprof-analyze's cluster DB
# cluster_analysis_output/cluster_analysis.db, written by `msprof-analyze cluster` for database
# input (cluster_analyse/analysis/step_trace_time_analysis.py CLUSTER_TRACE_TIME_TABLE): the table
# ClusterStepTraceTime is cluster_step_trace_time.csv, its columns in snake case. Read by the CSV's
# own rows function (step_rows), so the partition is written once.

_CLUSTER_COLUMNS = {
    "step": "Step", "type": "Type", "index": "Index", "computing": "Computing",
    "communication_not_overlapped": "Communication(Not Overlapped)", "overlapped": "Overlapped",
    "communication": "Communication", "free": "Free", "stage": "Stage", "bubble": "Bubble",
    "communication_not_overlapped_and_exclude_receive": "Communication(Not Overlapped and Exclude Receive)",
    "preparing": "Preparing",
}


def _read_cluster(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if not _covered(artifact, result):
        with_database(artifact, result, lambda con: _cluster_steps(artifact, con, result))


def _cluster_groups(artifact: Artifact, con: sqlite3.Connection, schema: dict[str, set[str]], result: ReadResult) -> None:
    """CommunicationGroupMapping (recipe communication_group_map): each group's hashed name, its
    ranks "(0,1)" and, where the profiler DBs held parallel_group_info, its pg_name."""
    if not {"rank_set", "group_name", "pg_name"} <= schema.get("CommunicationGroupMapping", set()):
        return
    out: dict[str, list] = {k: [] for k in ("group", "hashed", "pg_name", "global_ranks")}
    for name, ranks, pg in con.execute("SELECT group_name, rank_set, pg_name FROM CommunicationGroupMapping"):
        digits = re.findall(r"\d+", str(ranks or ""))
        out["group"].append(str(name))
        out["hashed"].append(str(name))
        out["pg_name"].append(str(pg) if pg else None)
        out["global_ranks"].append([int(r) for r in digits] or None)
    if out["group"]:
        result.tables["comm_groups"] = frame({**out, "rank": None, "source": "cluster_group_map", "file": artifact.rel},
                                             COMM_GROUPS)


def _cluster_steps(artifact: Artifact, con: sqlite3.Connection, result: ReadResult) -> None:
    schema = columns(con)
    _cluster_groups(artifact, con, schema, result)
    cols = [c for c in _CLUSTER_COLUMNS if c in schema.get("ClusterStepTraceTime", set())]
    if "ClusterStepTraceTime" not in schema or not {"type", "index", "computing"} <= set(cols):
        result.diagnostics.append(dg.warning("profiler-db-tables", path=artifact.rel,
                                             detail="missing ClusterStepTraceTime (type, index, computing)"))
        return
    rows = [["" if v is None else str(v) for v in r]
            for r in con.execute("SELECT " + ", ".join(f'"{c}"' for c in cols) + " FROM ClusterStepTraceTime")]
    step_rows(artifact, [_CLUSTER_COLUMNS[c] for c in cols], rows, result, "cluster_analysis_db")
    if "profile_steps" in result.tables:
        result.diagnostics.append(dg.info("profiler-db", path=artifact.rel, tables=f"ClusterStepTraceTime ({len(rows)})"))


def _load_json(artifact: Artifact, result: ReadResult) -> dict | None:
    try:
        data = load_json(artifact, result)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, detail=str(exc)))
        return None
    if not isinstance(data, dict):
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="not-object"))
        return None
    return data


def _steps(data: dict, dropped: list[int] | None = None):
    """(step or None, ops) for every step of every group; "step" alone (msprof input) has no number.
    Entries of the wrong shape are counted in ``dropped[0]``."""
    dropped = dropped if dropped is not None else [0]
    for steps in data.values():
        if not isinstance(steps, dict):
            dropped[0] += 1
            continue
        for step_key, ops in steps.items():
            m = re.fullmatch(r"step(\d*)", str(step_key))
            if m and isinstance(ops, dict):
                yield (int(m.group(1)) if m.group(1) else None), ops
            else:
                dropped[0] += 1


def _communication(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _covered(artifact, result):
        return
    data = _load_json(artifact, result)
    if data is None:
        return
    cols = ("rank", "step", "op", "group", "kind", "transport", "elapse_s", "wait_s", "transit_s",
            "synchronization_s", "bytes", "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in cols}
    dropped, bad = [0], Durations()
    for step, ops in _steps(data, dropped):
        for op, ranks in ops.items():
            if is_total(op):
                continue
            if not isinstance(ranks, dict):
                dropped[0] += 1
                continue
            for rank_key, info in ranks.items():
                if not str(rank_key).isdigit() or not isinstance(info, dict):
                    dropped[0] += 1
                    continue
                f = op_figures(info)
                if not all([bad.ok(f.elapse_s, "Elapse Time(ms)", 1.0), bad.ok(f.wait_s, "Wait Time(ms)", 1.0),
                            bad.ok(f.transit_s, "Transit Time(ms)", 1.0)]):
                    continue
                for k, v in (("rank", int(rank_key)), ("step", step), ("op", op), ("group", group_of(op)),
                             ("kind", kind_of(op)), ("transport", f.transport), ("elapse_s", f.elapse_s),
                             ("wait_s", f.wait_s), ("transit_s", f.transit_s),
                             ("synchronization_s", f.synchronization_s), ("bytes", f.bytes),
                             ("bandwidth_gbps", f.bandwidth_gbps)):
                    out[k].append(v)
    bad.warn(artifact.rel, result)
    if dropped[0]:
        result.diagnostics.append(dg.warning("profiler-entries-dropped", path=artifact.rel, n=dropped[0], kept=len(out["op"])))
    if not out["op"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="comm-ops"))
        return
    result.tables["profile_comm"] = frame(
        {**out, "source": "cluster_communication", "file": artifact.rel}, PROFILE_COMM)


def _matrix(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _covered(artifact, result):
        return
    data = _load_json(artifact, result)
    if data is None:
        return
    cols = ("rank", "src_rank", "dst_rank", "step", "op", "group", "kind", "transport", "transit_s", "bytes", "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in cols}
    for step, ops in _steps(data):
        for op, links in ops.items():
            # Total Op Info sums the others; top/middle/bottom repeat single operators of a "total".
            if is_total(op) or _REPEATS.search(op) or not isinstance(links, dict):
                continue
            for link, info in links.items():
                m = re.fullmatch(r"(\d+)-(\d+)", str(link))
                if not m or not isinstance(info, dict):
                    continue
                size = number(str(info.get("Transit Size(MB)", "")))
                ms = number(str(info.get("Transit Time(ms)", "")))
                bw = number(str(info.get("Bandwidth(GB/s)", "")))
                # "src-dst": the row belongs to the sending rank
                for k, v in (("rank", int(m.group(1))), ("src_rank", int(m.group(1))), ("dst_rank", int(m.group(2))),
                             ("step", step), ("op", op),
                             ("group", group_of(op)), ("kind", kind_of(op)),
                             ("transport", info.get("Transport Type") or None),
                             ("transit_s", ms * MS if ms is not None else None),
                             ("bytes", size * MB if size is not None else None), ("bandwidth_gbps", bw)):
                    out[k].append(v)
    if not out["op"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="links"))
        return
    result.tables["profile_comm"] = frame(
        {**out, "source": "cluster_communication_matrix", "file": artifact.rel}, PROFILE_COMM)


def _other(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    result.diagnostics.append(dg.warning("profiler-not-read", path=artifact.rel, variant="msprof-analyze"))


def _name(file_name: str) -> re.Pattern[str]:
    return re.compile(r"(?:^|/)" + file_name + "$")


FORMATS = (
    Format("cluster_step_trace_time.csv", _name(r"cluster_step_trace_time\.csv"), _step_trace_time),
    Format("cluster_communication.json", _name(r"cluster_communication\.json"), _communication),
    Format("cluster_communication_matrix.json", _name(r"cluster_communication_matrix\.json"), _matrix),
    Format("cluster_analysis.db", _name(r"cluster_analysis\.db"), _read_cluster),
    Format("cluster_analysis_output/*", re.compile(r"(?:^|/)cluster_analysis_output/[^/]+$"), _other),
)
