"""Profiler database exports: ``msprof_<ts>.db`` (CANN msprof), ``ascend_mindspore_profiler[_<rank>].db``
and ``ascend_pytorch_profiler[_<rank>].db`` (``ASCEND_PROFILER_OUTPUT/``, ``export_type=db``), and the
per-rank communication analysis ``analysis.db`` / ``communication_analyzer.db``.

The first three are one schema: MindSpore moves msprof's ``msprof_*.db`` into ASCEND_PROFILER_OUTPUT
under the new name (mindspore/profiler/common/profiler_path_manager.py ``move_db_file``); torch_npu
does the same and adds its framework tables. The tables and columns read are the ones
msprof-analyze's own queries read (prof_exports/compute_op_sum_export.py, hccl_sum_export.py,
slow_link_export.py; recipes/base_recipe_analysis.py for STEP_TIME):

- ``TASK`` ⋈ ``COMPUTE_TASK_INFO`` (name, opType, taskType: ids into ``STRING_IDS``) -> profile_ops,
  summed in sqlite per (step, name, type, core);
- ``COMMUNICATION_OP`` (opName, groupName, startNs, endNs) -> profile_comm;
- ``STEP_TIME`` (id, startNs, endNs) and msprof's ``OVERLAP_ANALYSIS`` (type 0 compute,
  1 communication, 2 communication not overlapped, 3 free) -> profile_steps, split as
  step_trace_time.csv is; without OVERLAP_ANALYSIS the same unions from the tasks and operators;
- ``RANK_DEVICE_MAP`` (rankId) for the rank, where present.

Schemas drift across CANN versions: every table and column is looked up by name first; what is
missing is said in a warning and the rest is still read. Every open goes through
``dbopen.connect``: read-only and immutable (``file:…?mode=ro&immutable=1``), so sqlite never
writes a journal or a WAL file beside the database. Columns, units and checks against the
writers' own figures: docs/formats/profiler-db.md.
"""

from __future__ import annotations

import os
import re
import sqlite3

import numpy as np
import polars as pl

from ... import diagnostics as dg
from ...model import PROFILE_COMM, PROFILE_OPS, PROFILE_STEPS, Artifact, ReadResult, frame
from . import db_device
from .comm_info import MB, op_figures
from .common import MS, NS, Format
from .dbopen import columns as _columns, with_database

OPS_KEPT = 200  # as msprof.py: per rank the largest names, the rest of a type summed into "(other)"
OTHER = "(other)"


def _missing(schema: dict[str, set[str]], table: str, cols: tuple[str, ...]) -> list[str]:
    if table not in schema:
        return [table]
    return [f"{table}.{c}" for c in cols if c not in schema[table]]


def _rank(artifact: Artifact, con: sqlite3.Connection, schema: dict[str, set[str]], rank: int | None) -> int | None:
    if not _missing(schema, "RANK_DEVICE_MAP", ("rankId",)):
        ranks = {r[0] for r in con.execute("SELECT rankId FROM RANK_DEVICE_MAP") if isinstance(r[0], int) and r[0] >= 0}
        if len(ranks) == 1:
            return ranks.pop()
    m = re.search(r"_profiler_(\d+)\.db$", artifact.rel)
    if m:
        return int(m.group(1))
    if rank is None and not _missing(schema, "TASK", ("deviceId",)):
        devices = [r[0] for r in con.execute("SELECT DISTINCT deviceId FROM TASK LIMIT 2")]
        if len(devices) == 1 and isinstance(devices[0], int):
            return devices[0]  # as msprof.py: without a rank id the device id stands for the rank
    return rank


def _base(con: sqlite3.Connection, schema: dict[str, set[str]]) -> int:
    for table in ("STEP_TIME", "TASK", "OVERLAP_ANALYSIS", "COMMUNICATION_OP"):
        if not _missing(schema, table, ("startNs",)):
            v = con.execute(f"SELECT MIN(startNs) FROM {table}").fetchone()[0]
            if isinstance(v, int):
                return v
    return 0


def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted intervals covering the given ones."""
    if starts.size == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    idx = np.flatnonzero(new)
    return s[idx], np.append(reach[idx[1:] - 1], reach[-1])


def _covered(s: np.ndarray, e: np.ndarray, lo: float, hi: float) -> float:
    """Length of the disjoint intervals (s, e) inside [lo, hi]."""
    return float(np.clip(np.minimum(e, hi) - np.maximum(s, lo), 0, None).sum()) if s.size else 0.0


def _intersection(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    out_s, out_e, i, j = [], [], 0, 0
    (as_, ae), (bs, be) = a, b
    while i < as_.size and j < bs.size:
        lo, hi = max(as_[i], bs[j]), min(ae[i], be[j])
        if lo < hi:
            out_s.append(lo)
            out_e.append(hi)
        if ae[i] < be[j]:
            i += 1
        else:
            j += 1
    return np.array(out_s, dtype=float), np.array(out_e, dtype=float)


_OVERLAP_TYPES = {"compute": 0, "comm": 1, "cno": 2, "free": 3}  # msprof's OverlapAnalysisType


def _within(s: np.ndarray, e: np.ndarray, lo: float, hi: float) -> float:
    """Summed length of the events that start inside [lo, hi]."""
    keep = (s >= lo) & (s <= hi)
    return float((e[keep] - s[keep]).sum())


def _activity(compute: tuple, comm: tuple, lo: float, hi: float) -> tuple[float, float]:
    """First start and last end of the device's work inside [lo, hi] (lo, lo when none)."""
    first, last = hi, lo
    for s, e in (compute, comm):
        inside = (e > lo) & (s < hi)
        if inside.any():
            first = min(first, max(float(s[inside].min()), lo))
            last = max(last, min(float(e[inside].max()), hi))
    return (first, last) if last > first else (lo, lo)


def _extent(overlap: dict) -> tuple[float, float]:
    starts = np.concatenate([v[0] for v in overlap.values()])
    ends = np.concatenate([v[1] for v in overlap.values()])
    return float(starts.min()), float(ends.max())


def _arrays(con: sqlite3.Connection, sql: str, params: tuple, n: int, chunk: int = 1 << 18) -> list[np.ndarray]:
    """The integer columns of a query as int64 arrays, fetched in chunks (no list of millions of tuples)."""
    parts: list[np.ndarray] = []
    cur = con.execute(sql, params)
    while rows := cur.fetchmany(chunk):
        parts.append(np.array(rows, dtype=np.int64).reshape(-1, n))
    table = np.concatenate(parts) if parts else np.empty((0, n), dtype=np.int64)
    return [table[:, i] for i in range(n)]


def _names(strings: dict, ids: pl.Series) -> dict[int, str | None]:
    return {i: strings.get(i, None if i < 0 else str(i)) for i in ids.unique().to_list()}


def _step_of(starts: np.ndarray, steps: pl.DataFrame) -> pl.Series:
    """The step whose [start, end] holds each start, null where none does."""
    if steps.is_empty():
        return pl.Series("step", [None] * starts.size, dtype=pl.Int64)
    s = steps.sort("start")
    lo, hi, ids = s["start"].to_numpy(), s["end"].to_numpy(), s["id"].to_numpy()
    i = np.searchsorted(lo, starts, side="right") - 1
    ok = (i >= 0) & (starts <= hi[np.clip(i, 0, None)])
    return pl.Series("step", ids[np.clip(i, 0, None)], dtype=pl.Int64).scatter(np.flatnonzero(~ok), None)


def _read(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    covered = _text_beside(artifact)
    if covered:
        result.diagnostics.append(dg.info("profiler-db-export", path=artifact.rel))
        return
    with_database(artifact, result, lambda con: _read_tables(artifact, con, rank, result))


def _read_tables(artifact: Artifact, con: sqlite3.Connection, rank: int | None, result: ReadResult) -> None:
    schema = _columns(con)
    rank = _rank(artifact, con, schema, rank)
    read, missing = [], []

    # ns since the epoch (~1.7e18) lose 256 ns in a float: times are taken relative to the
    # earliest start, subtracted in sqlite's integers
    base = _base(con, schema)
    steps = pl.DataFrame(schema={"id": pl.Int64, "start": pl.Float64, "end": pl.Float64})
    gone = _missing(schema, "STEP_TIME", ("id", "startNs", "endNs"))
    if not gone:
        steps = pl.DataFrame(con.execute("SELECT id, startNs - ?, endNs - ? FROM STEP_TIME", (base, base)).fetchall(), orient="row",
                             schema={"id": pl.Int64, "start": pl.Float64, "end": pl.Float64})
        steps = steps.filter(pl.col("end") > pl.col("start"))
    # no STEP_TIME is normal (msprof writes none; torch_npu adds it): the whole capture is one
    # row, said in its own info below, not a missing table

    strings = {}
    if not _missing(schema, "STRING_IDS", ("id", "value")):
        strings = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    else:
        missing.append("STRING_IDS")

    overlap = None
    if not _missing(schema, "OVERLAP_ANALYSIS", ("startNs", "endNs", "type")):
        t, st, en = _arrays(con, "SELECT IFNULL(type, -1), startNs - ?, endNs - ? FROM OVERLAP_ANALYSIS", (base, base), 3)
        if t.size:
            st, en = st.astype(float), en.astype(float)
            overlap = {k: (st[t == v], en[t == v]) for k, v in _OVERLAP_TYPES.items()}
    compute = (np.empty(0), np.empty(0))
    gone = _missing(schema, "TASK", ("globalTaskId", "startNs", "endNs")) + _missing(
        schema, "COMPUTE_TASK_INFO", ("globalTaskId", "name", "opType", "taskType"))
    if not gone:
        # Summed in sqlite per (step, name, type, core): millions of tasks, a few thousand rows
        # out (a step is the STEP_TIME span holding the task's start; few steps are profiled)
        join = "FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
        if not steps.is_empty():
            join += " LEFT JOIN STEP_TIME s ON t.startNs >= s.startNs AND t.startNs <= s.endNs"
        step = "s.id" if not steps.is_empty() else "NULL"
        # a task without both ends, or ending before it starts, has no duration: counted, said
        sound = "t.startNs IS NOT NULL AND t.endNs IS NOT NULL AND t.endNs >= t.startNs"
        rows = con.execute(
            f"SELECT {step}, c.name, c.opType, c.taskType, COUNT(*), SUM(t.endNs - t.startNs), MAX(t.endNs - t.startNs) "
            f"{join} WHERE {sound} GROUP BY 1, 2, 3, 4").fetchall()
        bad, every = con.execute(f"SELECT SUM(NOT ({sound})), COUNT(*) {join.split(' LEFT JOIN')[0]}").fetchone()
        if bad:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="no-duration", n=int(bad),
                                                 of=int(every), column="TASK.endNs - startNs"))
        if rows:
            per = pl.DataFrame(rows, orient="row", schema={"step": pl.Int64, "name": pl.Int64, "type": pl.Int64,
                                                           "core": pl.Int64, "calls": pl.Int64, "total": pl.Float64,
                                                           "max": pl.Float64}, strict=False)
            per = per.with_columns(
                pl.lit(rank, pl.Int32).alias("rank"), (pl.col("total") * NS).alias("total_s"), (pl.col("max") * NS).alias("max_s"),
                *(pl.col(c).replace_strict(_names(strings, per[c]), return_dtype=pl.Utf8) for c in ("name", "type", "core")))
            result.tables["profile_ops"] = _keep_names(per.select("rank", "step", "type", "name", "core", "calls", "total_s",
                                                                  "max_s"), artifact.rel)
            read.append(f"COMPUTE_TASK_INFO ({int(per['calls'].sum())})")
            # the compute tasks' union: for the step split where msprof wrote no OVERLAP_ANALYSIS, and
            # for each communication op's exposed part and the idle gaps (db_device.py); where msprof
            # wrote it, its compute intervals are that union already
            if overlap is None:
                start, end = _arrays(con, f"SELECT t.startNs - ?, t.endNs - ? {join.split(' LEFT JOIN')[0]} WHERE {sound}",
                                     (base, base), 2)
                compute = _union(start.astype(float), end.astype(float))
            else:
                compute = _union(*overlap["compute"])
    else:
        missing += gone

    comm = receive_spans = (np.empty(0), np.empty(0))
    gone = _missing(schema, "COMMUNICATION_OP", ("opName", "startNs", "endNs"))
    if not gone:
        cols = schema["COMMUNICATION_OP"]
        group = "groupName" if "groupName" in cols else "NULL"
        rows = con.execute(f"SELECT opName, {group}, startNs - ?, endNs - ? FROM COMMUNICATION_OP", (base, base)).fetchall()
        if rows:
            name, grp, start, end = zip(*rows)
            start_a, end_a = np.array(start, dtype=float), np.array(end, dtype=float)
            ops = [strings.get(v, None if v is None else str(v)) or "" for v in name]
            result.tables["profile_comm"] = frame({
                "rank": rank, "step": _step_of(start_a, steps).to_list(), "op": ops,
                "group": [strings.get(v, None if v is None else str(v)) for v in grp],
                "kind": ["p2p" if re.match(r"(?i)hcom_(send|receive|batchsendrecv)", o) else "collective" for o in ops],
                "elapse_s": ((end_a - start_a) * NS).tolist(),
                "exposed_s": ((end_a - start_a - db_device.covered_each(*compute, start_a, end_a)) * NS).tolist()
                if compute[0].size else None,
                "source": "profiler_db", "file": artifact.rel}, PROFILE_COMM)
            comm = _union(start_a, end_a)
            recv = np.array([o.lower().startswith("hcom_receive") for o in ops])
            receive_spans = _union(start_a[recv], end_a[recv])
            read.append(f"COMMUNICATION_OP ({len(rows)})")
    else:
        missing += gone

    if db_device.read_groups(con, schema, rank, artifact, result):
        read.append("META_DATA parallel_group_info")
    if n := db_device.read_frequency(con, schema, rank, base, artifact, result):
        read.append(f"AICORE_FREQ ({n})")
    if compute[0].size or comm[0].size:
        busy = _union(np.concatenate([compute[0], comm[0]]), np.concatenate([compute[1], comm[1]]))
        if n := db_device.free_gaps(con, schema, busy, base, rank, lambda x: _step_of(x, steps), artifact, result):
            read.append(f"idle gaps ({n})")

    receives = receive_spans
    if not steps.is_empty() or overlap is not None:
        spans = (steps.sort("start").iter_rows() if not steps.is_empty()
                 else [(None, *_extent(overlap))])
        out: dict[str, list] = {k: [] for k in (
            "rank", "step", "computing_s", "comm_not_overlapped_s", "overlapped_s", "communication_s", "free_s",
            "bubble_s", "preparing_s", "total_s")}
        for sid, lo, hi in spans:
            bubble = _covered(*receives, lo, hi)
            if overlap is not None:
                # msprof's own Overlap Analysis (OverlapAnalysisType: 0 compute, 1 communication,
                # 2 communication not overlapped by compute, 3 free), each event counted in the
                # step its start falls in, as msprof_timeline.py bins the JSON track
                c, m, n, f = (_within(*overlap[k], lo, hi) for k in ("compute", "comm", "cno", "free"))
                first = min((float(v[0][(v[0] >= lo) & (v[0] <= hi)].min()) for v in overlap.values()
                             if ((v[0] >= lo) & (v[0] <= hi)).any()), default=lo)
                prep = max(first - lo, 0.0)  # torch_npu's Preparing: step start to its first device task
                total = c + n + f + prep
            else:
                # no OVERLAP_ANALYSIS table (older schemas): the same unions from the tasks and
                # operators themselves, between the step's first and last device activity
                both = _intersection(compute, comm)
                c, m, o = _covered(*compute, lo, hi), _covered(*comm, lo, hi), _covered(*both, lo, hi)
                first, last = _activity(compute, comm, lo, hi)
                n = m - o
                f = max(last - first - c - n, 0.0) if last > first else 0.0
                prep = max(first - lo, 0.0) if last > first else 0.0
                total = c + n + f + prep
            out["rank"].append(rank)
            out["step"].append(sid)
            out["computing_s"].append(c * NS)
            out["communication_s"].append(m * NS)
            out["overlapped_s"].append((m - n) * NS)
            out["comm_not_overlapped_s"].append((n - bubble) * NS)  # receives are the bubble
            out["bubble_s"].append(bubble * NS)
            out["free_s"].append(f * NS)
            out["preparing_s"].append(prep * NS)
            out["total_s"].append(total * NS)
        result.tables["profile_steps"] = frame({**out, "source": "profiler_db", "file": artifact.rel}, PROFILE_STEPS)
        read.append(f"STEP_TIME ({steps.height})" if not steps.is_empty() else "OVERLAP_ANALYSIS")
        if steps.is_empty():
            result.diagnostics.append(dg.info("profiler-whole-capture", path=artifact.rel))
        if overlap is not None:
            read.append("OVERLAP_ANALYSIS")

    _say_what_was_read(artifact, result, read, missing)


def _keep_names(per: pl.DataFrame, file: str) -> pl.DataFrame:
    """As msprof.py's op_summary rule: per rank the OPS_KEPT largest names, the rest of each type
    and core summed into "(other)", so type and capture totals stay exact."""
    keys = ["rank", "step", "type", "name", "core"]
    per = per.with_columns(pl.col("total_s").rank("ordinal", descending=True).over("rank").alias("_order"))
    kept = per.filter(pl.col("_order") <= OPS_KEPT)
    rest = (per.filter(pl.col("_order") > OPS_KEPT).with_columns(pl.lit(OTHER).alias("name"))
            .group_by(keys).agg(pl.col("calls").sum(), pl.col("total_s").sum(), pl.col("max_s").max()))
    out = pl.concat([kept.drop("_order"), rest], how="diagonal_relaxed").sort(["rank", "total_s"], descending=[False, True])
    return frame({**{c: out[c].to_list() for c in out.columns}, "source": "profiler_db", "file": file}, PROFILE_OPS)


# ----------------------------------------------------------------- the communication analysis DB
# torch_npu's ASCEND_PROFILER_OUTPUT/analysis.db and MindSpore's communication_analyzer.db: the
# tables msprof-analyze reads (prof_exports/communicaion_info_export.py; table names in
# prof_common/constant.py), the same records as communication.json / communication_matrix.json,
# one row per field: CommAnalyzerTime (hccl_op_name, group_name, elapse_time, transit_time,
# wait_time, synchronization_time: ms; step "step<N>"; type collective|p2p), CommAnalyzerBandwidth
# (per op and transport_type: transit_size MB, transit_time ms, bandwidth GB/s, repeated once per
# package_size row), CommAnalyzerMatrix (per op and link src_rank-dst_rank).

_AGGREGATE = re.compile(r"-(?:top\d+|middle|bottom\d*|total)$")


def _step_num(v: object) -> int | None:
    m = re.fullmatch(r"step(\d+)", str(v)) if v is not None else None
    return int(m.group(1)) if m else None


def _read_analysis(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    try:
        beside = set(os.listdir(os.path.dirname(artifact.path)))
    except OSError:
        beside = set()
    if beside & {"communication.json", "communication_matrix.json"}:
        # the text export of the same records is read (ascend_comm.py): not counted twice
        result.diagnostics.append(dg.info("profiler-db-export", path=artifact.rel, variant="analysis"))
        return
    with_database(artifact, result, lambda con: _read_analysis_tables(artifact, con, rank, result))


def _read_analysis_tables(artifact: Artifact, con: sqlite3.Connection, rank: int | None, result: ReadResult) -> None:
    schema = _columns(con)
    tcols = ("hccl_op_name", "group_name", "elapse_time", "transit_time", "wait_time", "synchronization_time", "step")
    missing = _missing(schema, "CommAnalyzerTime", tcols)
    parts, read = [], []
    if not missing:
        kind = "type" if "type" in schema["CommAnalyzerTime"] else "NULL"
        times = con.execute(f"SELECT {', '.join(tcols)}, {kind} FROM CommAnalyzerTime").fetchall()
        links: dict[tuple, dict] = {}
        bcols = ("hccl_op_name", "group_name", "step", "transport_type", "transit_size", "transit_time", "bandwidth")
        gone = _missing(schema, "CommAnalyzerBandwidth", bcols)
        if not gone:
            for op, grp, step, tr, size, ms, bw in con.execute(f"SELECT DISTINCT {', '.join(bcols)} FROM CommAnalyzerBandwidth"):
                links.setdefault((op, grp, step), {})[str(tr)] = {
                    "Transit Size(MB)": size, "Transit Time(ms)": ms, "Bandwidth(GB/s)": bw}
        else:
            missing += gone
        cols = ("step", "op", "group", "kind", "transport", "elapse_s", "wait_s", "transit_s", "synchronization_s",
                "bytes", "bandwidth_gbps")
        out: dict[str, list] = {k: [] for k in cols}
        for op, grp, elapse, transit, wait, sync, step, typ in times:
            info = {"Communication Time Info": {"Elapse Time(ms)": elapse, "Transit Time(ms)": transit,
                                                "Wait Time(ms)": wait, "Synchronization Time(ms)": sync}}
            if (op, grp, step) in links:
                info["Communication Bandwidth Info"] = links[(op, grp, step)]
            f = op_figures(info)  # one place for what communication.json's fields mean
            for k, v in zip(cols, (_step_num(step), str(op), None if grp is None else str(grp),
                                   typ if typ in ("collective", "p2p") else "collective", f.transport, f.elapse_s,
                                   f.wait_s, f.transit_s, f.synchronization_s, f.bytes, f.bandwidth_gbps)):
                out[k].append(v)
        if out["op"]:
            parts.append(frame({**out, "rank": rank, "source": "analysis_db", "file": artifact.rel}, PROFILE_COMM))
            read.append(f"CommAnalyzerTime ({len(out['op'])})")
    mcols = ("hccl_op_name", "group_name", "src_rank", "dst_rank", "transport_type", "transit_size", "transit_time",
             "bandwidth", "step")
    gone = _missing(schema, "CommAnalyzerMatrix", mcols)
    if not gone:
        rows = con.execute(f"SELECT {', '.join(mcols)} FROM CommAnalyzerMatrix").fetchall()
        # as ascend_comm.read_matrix: newer writers group ops per type (top1 / middle / bottom / total);
        # only the "-total" rows are kept there, so no link is counted twice
        aggregated = any(_AGGREGATE.search(str(r[0])) for r in rows)
        cols = ("step", "op", "group", "transport", "src_rank", "dst_rank", "transit_s", "bytes", "bandwidth_gbps")
        out = {k: [] for k in cols}
        for op, grp, src, dst, tr, size, ms, bw, step in rows:
            if aggregated and not str(op).endswith("-total"):
                continue
            if not (str(src).isdigit() and str(dst).isdigit()):
                continue
            for k, v in zip(cols, (_step_num(step), str(op), None if grp is None else str(grp), tr, int(src), int(dst),
                                   ms * MS if isinstance(ms, (int, float)) else None,
                                   size * MB if isinstance(size, (int, float)) else None,
                                   bw if isinstance(bw, (int, float)) else None)):
                out[k].append(v)
        if out["op"]:
            parts.append(frame({**out, "kind": "collective", "rank": rank, "source": "analysis_db_matrix",
                                "file": artifact.rel}, PROFILE_COMM))
            read.append(f"CommAnalyzerMatrix ({len(out['op'])})")
    else:
        missing += gone
    if parts:
        result.tables["profile_comm"] = pl.concat(parts, how="vertical")
    # StepTraceTime repeats what the profiler database beside it gives (its STEP_TIME and
    # OVERLAP_ANALYSIS): not read twice
    _say_what_was_read(artifact, result, read, missing)


def _say_what_was_read(artifact: Artifact, result: ReadResult, read: list[str], missing: list[str]) -> None:
    """The tables a database gave, and the ones it lacks: a warning of missing columns beside
    what was read, or that nothing of the schema read is there."""
    if read:
        result.diagnostics.append(dg.info("profiler-db", path=artifact.rel, tables=", ".join(read)))
    if missing:
        detail = "missing " + ", ".join(sorted(set(missing)))
        if read:
            result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, variant="db", missing=detail))
        else:
            result.diagnostics.append(dg.warning("profiler-db-tables", path=artifact.rel, detail=detail))


def _text_beside(artifact: Artifact) -> bool:
    """Whether the same capture was also exported as text beside the database (then that is read)."""
    folder = os.path.dirname(artifact.path)
    try:
        names = set(os.listdir(folder))
    except OSError:
        return False
    if os.path.basename(folder) == "ASCEND_PROFILER_OUTPUT":
        return bool(names & {"kernel_details.csv", "step_trace_time.csv", "op_statistic.csv"})
    # PROF_*/msprof_<ts>.db: the text export is mindstudio_profiler_output/ or device_N/summary|timeline
    try:
        out = os.path.join(folder, "mindstudio_profiler_output")
        if os.path.isdir(out) and any(n.endswith((".csv", ".json")) for n in os.listdir(out)):
            return True
        return any(os.path.isdir(os.path.join(folder, n, sub)) and os.listdir(os.path.join(folder, n, sub))
                   for n in names if n.startswith("device_") for sub in ("summary", "timeline"))
    except OSError:
        return False


FORMATS = (
    Format("ascend_*_profiler.db", re.compile(
        r"(?:^|/)ASCEND_PROFILER_OUTPUT/ascend_(?:mindspore|pytorch)_profiler(?:_\d+)?\.db$"), _read),
    # msprof's own name; its intermediates (device_N/sqlite/*.db) have other names
    Format("msprof_*.db", re.compile(r"(?:^|/)msprof_[^/]*\.db$"), _read),
    Format("analysis.db", re.compile(r"(?:^|/)ASCEND_PROFILER_OUTPUT/(?:analysis|communication_analyzer)\.db$"),
           _read_analysis),
)
