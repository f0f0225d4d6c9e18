"""CANN msprof ``PROF_*/`` folders (``device_N`` -> rank; ``mindstudio_profiler_output/``).

A PROF folder holds raw data (``device_N/data``, ``host/data``: binary, readable only by msprof
itself), msprof's own intermediate databases (``*/sqlite/*.db``), and, after ``msprof --export``,
the exported files postmortem reads: ``mindstudio_profiler_output/`` (CANN 7+) or
``device_N/summary/`` and ``device_N/timeline/`` (older CANN), plus ``analyze/`` after
``msprof --analyze``. Every file of the folder is claimed and says what became of it; the raw
and database files report once per folder. Columns, units and the arithmetic are in
docs/formats/profiler-msprof.md.

Read:
- ``op_summary_*.csv`` -> profile_ops, one row per (rank, type, name, core), the largest
  ``OPS_KEPT`` names per rank kept, the rest summed into ``(other)`` of its type.
- ``op_statistic_*.csv`` -> profile_ops type totals, only where no op_summary was exported.
- ``step_trace_*.csv`` -> profile_steps (source "msprof_step_trace").
- ``msprof_*.json`` -> profile_steps from its Overlap Analysis track (source "msprof_timeline"),
  only where no step_trace csv gives the steps.
- ``communication_statistic_*.csv`` -> profile_comm per operator type (calls, total time).
- ``analyze/communication.json`` -> profile_comm per operator (first profiled iteration).

Rank: ``device_N/info.json.N`` says the rank id (``rank_id``, -1 when not distributed); it wins
over a ``rank_N/`` folder above the PROF folder, which wins over the device id.

A PROF folder inside MindSpore's ``*_ascend_ms/`` (or torch_npu's ``*_ascend_pt/``) next to
``ASCEND_PROFILER_OUTPUT/`` is the input of that folder's files: those are read (ascend.py) and the
PROF files only get a note, so nothing is counted twice.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path

import polars as pl

from ... import diagnostics as dg
from ...text import Text
from ...model import PROFILE_COMM, PROFILE_OPS, PROFILE_STEPS, Artifact, ReadResult, frame
from .comm_info import group_of, is_total, kind_of, op_figures
from .. import guard
from . import msprof_timeline as tl
from .common import (US, Durations, Format, checked, column, csv_rows, last_row_per_step, load_json, number, open_text,
                     replaced_names, take_rows,
                     side_json, sound_csv)
from .msprof_timeline import read_timeline

OPS_KEPT = 200  # operator names kept per rank; the rest of each type is summed into "(other)"
OTHER = "(other)"

_PROF = re.compile(r"(?:^|/)(PROF_[^/]*)/")
_EXPORT_DIRS = r"(?:mindstudio_profiler_output|device_\d+/summary|device_\d+/timeline)"
# <kind>[_slice_<n>]_<timestamp>.csv (CANN 7+), <kind>_<device>_<model>_<iter>.csv (older)
_STAMP = re.compile(r"^(?P<kind>.+?)(?:_slice_\d+)?_(?P<ts>\d{14})\.(?:csv|json)$")
# Older CANN: one file per iteration, <kind>_<device>_<model>_<iteration>.json|csv
_PER_ITER = re.compile(r"^(?P<kind>[A-Za-z][A-Za-z_]*?)_(?P<dev>\d+)_(?P<model>\d+)_(?P<iter>\d+)\.(?:csv|json)$")


# --------------------------------------------------------------------------- the folder


def _prof_dir(artifact: Artifact) -> Path | None:
    m = _PROF.search(artifact.rel)
    if not m:
        return None
    depth = artifact.rel[m.end():].count("/") + 1  # levels from the file up to PROF_*
    return Path(artifact.path).parents[depth - 1]


@functools.lru_cache(maxsize=256)
def _device_ranks(prof: str) -> tuple[tuple[int, int | None], ...]:
    """(device id, rank id or None) for each device_N folder, from its info.json.N."""
    out = []
    try:
        entries = sorted(os.listdir(prof))
    except OSError:
        return ()
    for name in entries:
        m = re.fullmatch(r"device_(\d+)", name)
        if not m:
            continue
        device = int(m.group(1))
        rank = None
        info = Path(prof, name, f"info.json.{device}")
        data = side_json(info)  # through the guard: a FIFO named info.json.N never blocks
        r = data.get("rank_id") if isinstance(data, dict) else None
        rank = int(r) if isinstance(r, (int, str)) and str(r).lstrip("-").isdigit() and int(r) >= 0 else None
        out.append((device, rank))
    return tuple(out)


def _unreadable_info(path: str) -> str | None:
    """Why an info.json.N gives no rank_id other than saying -1 (None: it parses, an object)."""
    try:
        with open_text(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:
        return str(exc)
    return None if isinstance(data, dict) else "not a JSON object"


def _folder_rank(artifact: Artifact) -> int | None:
    m = re.search(r"(?:^|/)rank_?(\d+)/", artifact.rel)
    return int(m.group(1)) if m else None


def _rank_map(artifact: Artifact) -> tuple[dict[int, int], int | None]:
    """Device id -> rank for this PROF folder, and the rank of a file whose rows name no device."""
    prof = _prof_dir(artifact)
    devices = _device_ranks(str(prof)) if prof else ()
    above = _folder_rank(artifact)
    mapping = {d: (r if r is not None else above if above is not None and len(devices) == 1 else d) for d, r in devices}
    m = re.search(r"(?:^|/)device_(\d+)/", artifact.rel)
    if m and int(m.group(1)) in mapping:
        default = mapping[int(m.group(1))]
    elif m:
        default = above if above is not None else int(m.group(1))
    elif len(mapping) == 1:
        default = next(iter(mapping.values()))
    else:
        default = above
    return mapping, default


def _rank_note(artifact: Artifact, result: ReadResult) -> None:
    prof = _prof_dir(artifact)
    for device, rank in _device_ranks(str(prof)) if prof else ():
        if rank is not None and rank != device:
            result.diagnostics.append(dg.info("profiler-rank-id", path=artifact.rel, device=device, rank=rank))


def _covered_by_ascend_output(artifact: Artifact) -> str | None:
    """The ASCEND_PROFILER_OUTPUT folder made from this PROF folder, if one is beside it."""
    prof = _prof_dir(artifact)
    if prof is None or not re.search(r"_ascend_(?:ms|pt)$", prof.parent.name):
        return None
    out = prof.parent / "ASCEND_PROFILER_OUTPUT"
    try:
        return f"{prof.parent.name}/ASCEND_PROFILER_OUTPUT" if any(out.iterdir()) else None
    except OSError:
        return None


def _exported(prof: Path) -> bool:
    """Whether msprof --export wrote readable files into this PROF folder."""
    try:
        if any((prof / "mindstudio_profiler_output").glob("*.csv")) or any((prof / "mindstudio_profiler_output").glob("*.json")):
            return True
        return any(prof.glob("device_*/summary/*.csv")) or any(prof.glob("device_*/timeline/*.json"))
    except OSError:
        return False


def _superseded(artifact: Artifact) -> str | None:
    """A later export of the same kind in the same folder (msprof --export run twice)."""
    name = os.path.basename(artifact.rel)
    m = _STAMP.match(name)
    if not m:
        return None
    try:
        siblings = os.listdir(os.path.dirname(artifact.path))
    except OSError:
        return None
    later = [s for s in siblings if (n := _STAMP.match(s)) and n["kind"] == m["kind"] and n["ts"] > m["ts"]]
    return max(later) if later else None


@functools.lru_cache(maxsize=4096)
def _digest(path: str, size: int, mtime_ns: int) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    with guard.open_file(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


def _repeats(artifact: Artifact) -> str | None:
    """The first file of the same per-iteration kind whose bytes this file repeats, if any.

    msprof writes some per-iteration exports with the whole capture in each (every
    step_trace_<d>_<m>_<i>.json holds all iterations): reading each would count every step once
    per file. Only files of equal size are hashed, so distinct files cost one stat each."""
    name = os.path.basename(artifact.rel)
    m = _PER_ITER.match(name)
    if not m:
        return None
    folder = os.path.dirname(artifact.path)
    try:
        siblings = [n for n in os.listdir(folder)
                    if (k := _PER_ITER.match(n)) and (k["kind"], k["dev"], k["model"]) == (m["kind"], m["dev"], m["model"])]
        stats = {n: os.stat(os.path.join(folder, n)) for n in siblings}
    except OSError:
        return None
    mine = stats.get(name)
    if mine is None:
        return None
    earlier = sorted((n for n in siblings if n != name and stats[n].st_size == mine.st_size
                      and int(_PER_ITER.match(n)["iter"]) < int(m["iter"])), key=lambda n: int(_PER_ITER.match(n)["iter"]))
    if not earlier:
        return None
    try:
        own = _digest(artifact.path, mine.st_size, mine.st_mtime_ns)
        for n in earlier:
            st = stats[n]
            if _digest(os.path.join(folder, n), st.st_size, st.st_mtime_ns) == own:
                return n
    except OSError:
        return None
    return None


def _skip(artifact: Artifact, result: ReadResult) -> bool:
    """Files whose data another read file carries: a note instead of rows."""
    covered = _covered_by_ascend_output(artifact)
    if covered:
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="inside-output", target=covered))
        return True
    same = _repeats(artifact)
    if same:
        result.diagnostics.append(dg.info("profiler-repeated", path=artifact.rel, target=same))
        return True
    later = _superseded(artifact)
    if later:
        result.diagnostics.append(dg.info("profiler-superseded", path=artifact.rel, target=later))
        return True
    return False


# The columns a sibling must have to cover a file: a damaged one never does (common.sound_csv).
_SOUND = {"op_summary": ("Op Name", "OP Type", "Task Duration(us)"),
          "step_trace": ("Iteration ID", "FP Start(us)", "Iteration End(us)", "Iteration Time(us)")}


def _sibling(artifact: Artifact, kind: str) -> str | None:
    try:
        names = os.listdir(os.path.dirname(artifact.path))
    except OSError:
        return None
    here = os.path.dirname(artifact.path)
    hits = sorted(n for n in names if n.startswith(kind + "_") and n.endswith(".csv")
                  and sound_csv(os.path.join(here, n), _SOUND.get(kind, ())))
    return hits[-1] if hits else None


# --------------------------------------------------------------------------- CSV exports


def _read_strings(artifact: Artifact, result: ReadResult, kind: str, need: tuple[str, ...]) -> pl.DataFrame | None:
    """The CSV as strings, or None with a warning: unreadable, or without the columns ``need``."""
    try:
        df = pl.read_csv(guard.checked(artifact.path), infer_schema=False, truncate_ragged_lines=True, encoding="utf8-lossy")
    except (pl.exceptions.PolarsError, OSError) as exc:
        result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=str(exc)))
        return None
    df = df.rename({c: c.strip() for c in df.columns})
    if any(c not in df.columns for c in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, variant="expected", kind=kind,
                                             header=df.columns[:6]))
        return None
    return df


def _num(col: str) -> pl.Expr:
    # msprof appends a tab to timestamps (so spreadsheets keep their digits) and writes N/A
    return pl.col(col).str.strip_chars().cast(pl.Float64, strict=False)


def _ranks_expr(df: pl.DataFrame, mapping: dict[int, int], default: int | None) -> pl.Expr:
    if "Device_id" in df.columns:
        dev = _num("Device_id").cast(pl.Int64)
        return dev.replace_strict(mapping, default=dev, return_dtype=pl.Int64).cast(pl.Int32)
    return pl.lit(default, dtype=pl.Int32)


def _op_summary(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    df = _read_strings(artifact, result, "op_summary", ("Op Name", "OP Type", "Task Duration(us)"))
    if df is None:
        return
    mapping, default = _rank_map(artifact)
    _rank_note(artifact, result)
    step_col = next((c for c in ("Step Id", "Iteration ID") if c in df.columns), None)
    rows = df.select(
        _ranks_expr(df, mapping, default).alias("rank"),
        (_num(step_col).cast(pl.Int64) if step_col else pl.lit(None, pl.Int64)).alias("step"),
        pl.col("OP Type").str.strip_chars().alias("type"),
        pl.col("Op Name").str.strip_chars().alias("name"),
        (pl.col("Task Type").str.strip_chars() if "Task Type" in df.columns else pl.lit(None, pl.Utf8)).alias("core"),
        (_num("Task Duration(us)") * US).alias("dur_s"),
    )
    bad = rows["dur_s"].is_null().sum()
    if bad:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="no-duration", n=bad, of=rows.height, column="Task Duration(us)"))
    rows = rows.filter(pl.col("dur_s").is_not_null())
    rows = checked(rows, artifact, result, ("dur_s", "Task Duration(us)"))
    replaced_names(rows, ("type", "name"), artifact.rel, result)
    if rows.is_empty():
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="operators"))
        return
    result.tables["profile_ops"] = _aggregate_ops(rows, "op_summary", artifact.rel)


def _aggregate_ops(rows: pl.DataFrame, source: str, file: str) -> pl.DataFrame:
    """Per (rank, step, type, name, core): calls, total, max; names past OPS_KEPT per rank -> (other)."""
    keys = ["rank", "step", "type", "name", "core"]
    per = rows.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("calls"), pl.col("dur_s").sum().alias("total_s"), pl.col("dur_s").max().alias("max_s"))
    per = per.with_columns(
        pl.col("total_s").rank("ordinal", descending=True).over("rank").alias("_order"))
    kept = per.filter(pl.col("_order") <= OPS_KEPT)
    rest = (per.filter(pl.col("_order") > OPS_KEPT).with_columns(pl.lit(OTHER).alias("name"))
            .group_by(keys).agg(pl.col("calls").sum(), pl.col("total_s").sum(), pl.col("max_s").max()))
    out = pl.concat([kept.drop("_order"), rest], how="diagonal_relaxed").sort(["rank", "total_s"], descending=[False, True])
    return frame({**{c: out[c].to_list() for c in out.columns}, "source": source, "file": file}, PROFILE_OPS)


def _op_statistic(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    summary = _sibling(artifact, "op_summary")
    if summary:
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="types-summed", target=summary))
        return
    df = _read_strings(artifact, result, "op_statistic", ("OP Type", "Count", "Total Time(us)"))
    if df is None:
        return
    mapping, default = _rank_map(artifact)
    out = df.select(
        _ranks_expr(df, mapping, default).alias("rank"),
        pl.col("OP Type").str.strip_chars().alias("type"),
        pl.lit(OTHER).alias("name"),
        (pl.col("Core Type").str.strip_chars() if "Core Type" in df.columns else pl.lit(None, pl.Utf8)).alias("core"),
        _num("Count").cast(pl.Int64).alias("calls"),
        (_num("Total Time(us)") * US).alias("total_s"),
        ((_num("Max Time(us)") * US) if "Max Time(us)" in df.columns else pl.lit(None, pl.Float64)).alias("max_s"),
    ).filter(pl.col("total_s").is_not_null())
    out = checked(out, artifact, result, ("total_s", "Total Time(us)"), ("max_s", "Max Time(us)"))
    result.diagnostics.append(dg.info("profiler-op-types-only", path=artifact.rel))
    result.tables["profile_ops"] = frame(
        {**{c: out[c].to_list() for c in out.columns}, "source": "op_statistic", "file": artifact.rel}, PROFILE_OPS)


def _step_trace(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    need = ("Iteration ID", "FP Start(us)", "Iteration End(us)", "Iteration Time(us)")
    if any(n not in header for n in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, variant="expected", kind="step_trace", header=header[:6]))
        return
    i_id, i_fp, i_end, i_time = (header.index(n) for n in need)
    i_dev = column(header, "Device_id")
    mapping, default = _rank_map(artifact)
    _rank_note(artifact, result)
    out: dict[str, list] = {k: [] for k in ("rank", "step", "computing_s", "data_wait_s", "total_s")}
    no_fp = 0
    bad = Durations()
    for line_no, row in enumerate(rows, start=2):
        if len(row) <= max(i_id, i_fp, i_end, i_time):
            continue
        step, end, total = number(row[i_id]), number(row[i_end]), number(row[i_time])
        if step is None or end is None or total is None:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no))
            continue
        if not bad.ok(total, "Iteration Time(us)", US):
            continue
        fp = number(row[i_fp])  # N/A where no FP/BP points were set (inference, some graphs)
        dev = number(row[i_dev]) if i_dev is not None and i_dev < len(row) else None
        out["rank"].append(mapping.get(int(dev), int(dev)) if dev is not None else default)
        out["step"].append(int(step))
        out["total_s"].append(total * US)
        if fp is None or fp <= 0:
            no_fp += 1
            out["computing_s"].append(None)
            out["data_wait_s"].append(None)
            continue
        # The iteration is [end - time, end]; FP start splits it into the wait before the first
        # forward operator and the device work from there to the iteration end (forward,
        # backward, and the gradient refresh tail, with the communication inside them).
        out["computing_s"].append((end - fp) * US)
        out["data_wait_s"].append((fp - (end - total)) * US)
    bad.warn(artifact.rel, result)
    if no_fp:
        result.diagnostics.append(dg.info("profiler-step-trace-no-fp", path=artifact.rel, n=no_fp))
    if not out["step"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    kept = last_row_per_step(list(zip(out["rank"], out["step"])), artifact.rel, result)  # per device: one file can hold several
    if kept is not None:
        out = take_rows(out, kept)
    result.tables["profile_steps"] = frame({**out, "source": "msprof_step_trace", "file": artifact.rel}, PROFILE_STEPS)


def _comm_statistic(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    df = _read_strings(artifact, result, "communication_statistic", ("OP Type", "Count", "Total Time(us)"))
    if df is None:
        return
    mapping, default = _rank_map(artifact)
    out = df.select(
        _ranks_expr(df, mapping, default).alias("rank"),
        pl.col("OP Type").str.strip_chars().alias("op"),
        _num("Count").cast(pl.Int64).alias("calls"),
        (_num("Total Time(us)") * US).alias("elapse_s"),
    ).filter(pl.col("elapse_s").is_not_null() & ~pl.col("op").str.to_lowercase().str.starts_with("total"))
    out = checked(out, artifact, result, ("elapse_s", "Total Time(us)"))
    if out.is_empty():
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="comm-ops"))
        return
    ops = out["op"].to_list()
    result.tables["profile_comm"] = frame({
        **{c: out[c].to_list() for c in out.columns}, "kind": [kind_of(o) for o in ops],
        "source": "communication_statistic", "file": artifact.rel}, PROFILE_COMM)


# --------------------------------------------------------------------------- JSON exports


def _timeline(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    steps_csv = _sibling(artifact, "step_trace")
    if steps_csv:
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="timeline-steps", target=steps_csv))
        return
    tl = read_timeline(artifact.path)
    tl.bad.warn(artifact.rel, result)
    if tl.broken:
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="events", n=tl.broken))
    if not tl.sums:
        result.diagnostics.append(dg.info("profiler-no-overlap", path=artifact.rel))
        return
    mapping, default = _rank_map(artifact)
    if tl.outside:
        result.diagnostics.append(dg.info("profiler-outside-iterations", path=artifact.rel, n=tl.outside))
    out: dict[str, list] = {k: [] for k in (
        "rank", "step", "computing_s", "comm_not_overlapped_s", "overlapped_s", "communication_s", "free_s",
        "bubble_s", "total_s")}
    for (device, step), s in sorted(tl.sums.items(), key=lambda kv: (kv[0][0] or -1, kv[0][1] or -1)):
        comp, cno, comm, free, recv = (s.get(k, 0.0) for k in ("computing", "cno", "communication", "free", "receive"))
        out["rank"].append(mapping.get(device, device) if device is not None else default)
        out["step"].append(step)
        out["computing_s"].append(comp * US)
        out["comm_not_overlapped_s"].append((cno - recv) * US)  # receives are the bubble
        out["bubble_s"].append(recv * US)
        out["overlapped_s"].append((comm - cno) * US)
        out["communication_s"].append(comm * US)
        out["free_s"].append(free * US)
        out["total_s"].append((comp + cno + free) * US)
    if not tl.iterations:
        result.diagnostics.append(dg.info("profiler-whole-capture", path=artifact.rel))
    result.tables["profile_steps"] = frame({**out, "source": "msprof_timeline", "file": artifact.rel}, PROFILE_STEPS)


def _iteration_of(artifact: Artifact) -> int | None:
    m = _PER_ITER.match(os.path.basename(artifact.rel))
    return int(m["iter"]) if m else None


def _events(artifact: Artifact, result: ReadResult) -> list[dict] | None:
    try:
        return tl.load_events(artifact.path)
    except (ValueError, RecursionError) as exc:
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, detail=str(exc)))
        return None


def _has_kind(artifact: Artifact, kind: str) -> str | None:
    try:
        names = sorted(n for n in os.listdir(os.path.dirname(artifact.path))
                       if n.startswith(kind + "_") and n.endswith(".json"))
    except OSError:
        return None
    return names[0] if names else None


def _step_trace_json(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """timeline/step_trace_*.json: the step_trace csv's points as trace events (older CANN)."""
    if _skip(artifact, result):
        return
    timeline = _has_kind(artifact, "msprof")
    if timeline:
        # msprof_*.json holds the same Iteration events and the Overlap Analysis track: it is read
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="timeline-overlap", target=timeline))
        return
    events = _events(artifact, result)
    if events is None:
        return
    its = tl.iterations(events)
    if not its:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    _, default = _rank_map(artifact)
    _rank_note(artifact, result)
    out: dict[str, list] = {k: [] for k in ("rank", "step", "computing_s", "data_wait_s", "total_s")}
    no_fp = 0
    for it in its:
        out["rank"].append(default)
        out["step"].append(it.step)
        out["total_s"].append(it.total_us * US)
        if it.fp_us is None or it.end_us is None or it.fp_us <= 0:
            no_fp += 1
            out["computing_s"].append(None)
            out["data_wait_s"].append(None)
            continue
        # the same partition as the step_trace csv's (_step_trace): wait before FP start, work after
        out["computing_s"].append((it.end_us - it.fp_us) * US)
        out["data_wait_s"].append((it.fp_us - it.start_us) * US)
    if no_fp:
        result.diagnostics.append(dg.info("profiler-step-trace-no-fp", path=artifact.rel, n=no_fp))
    kept = last_row_per_step(out["step"], artifact.rel, result)
    if kept is not None:
        out = take_rows(out, kept)
    result.tables["profile_steps"] = frame({**out, "source": "msprof_step_trace", "file": artifact.rel}, PROFILE_STEPS)


def _op_type(name: str) -> str:
    """MindSpore's operator type from its full name: Default/.../Conv2D-op8 -> Conv2D."""
    base = name.rsplit("/", 1)[-1]
    return re.sub(r"-op\d+.*$", "", base) or base


def _task_time(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """timeline/task_time_*.json: the device's tasks of one iteration -> profile_ops."""
    if _skip(artifact, result):
        return
    events = _events(artifact, result)
    if events is None:
        return
    tasks = tl.tasks(events)
    if tasks.other:
        # HCCL's notify / memcpy / reduce tasks: their operators are read from hccl_*.json
        result.diagnostics.append(dg.info("profiler-task-types", path=artifact.rel, n=sum(tasks.other.values()),
                                          kinds=sorted(tasks.other)[:8]))
    if not tasks.rows:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="operators"))
        return
    _, default = _rank_map(artifact)
    step = _iteration_of(artifact)
    rows = pl.DataFrame({
        "rank": [default] * len(tasks.rows), "step": [step] * len(tasks.rows),
        "type": [_op_type(n) for n, _, _ in tasks.rows], "name": [n for n, _, _ in tasks.rows],
        "core": [k for _, k, _ in tasks.rows], "dur_s": [d * US for _, _, d in tasks.rows],
    }, schema={"rank": pl.Int32, "step": pl.Int64, "type": pl.Utf8, "name": pl.Utf8, "core": pl.Utf8, "dur_s": pl.Float64})
    result.tables["profile_ops"] = _aggregate_ops(rows, "msprof_task_time", artifact.rel)


def _comm_kind(op: str) -> str:
    t = _op_type(op).lower()
    return "p2p" if t.startswith(("send", "receive", "recv", "hcom_send", "hcom_receive", "hcom_batchsendrecv")) else "collective"


def _hccl_json(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """timeline/hccl_*.json: communication operators of one iteration, with their tasks -> profile_comm."""
    if _skip(artifact, result):
        return
    events = _events(artifact, result)
    if events is None:
        return
    ops = tl.comm_ops(events)
    if not ops:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="comm-ops"))
        return
    _, default = _rank_map(artifact)
    step = _iteration_of(artifact)
    cols = ("op", "kind", "transport", "elapse_s", "wait_s", "transit_s", "synchronization_s", "bytes",
            "bandwidth_gbps", "src_rank", "dst_rank")
    out: dict[str, list] = {k: [] for k in cols}
    for o in ops:
        # bandwidth as msprof's: GB/s = (bytes / 1e9) / (transfer time in s) over the links used
        bw = (o.bytes / 1e9) / (o.link_us * US) if o.link_us > 0 else None
        for k, v in (("op", o.name), ("kind", _comm_kind(o.name)), ("transport", "+".join(sorted(o.links)) or None),
                     ("elapse_s", o.elapse_us * US), ("wait_s", o.wait_us * US), ("transit_s", o.transit_us * US),
                     ("synchronization_s", o.sync_us * US), ("bytes", o.bytes if o.links else None),
                     ("bandwidth_gbps", bw), ("src_rank", None), ("dst_rank", None)):
            out[k].append(v)
    ops_rows = frame({**out, "rank": default, "step": step, "source": "msprof_hccl", "file": artifact.rel}, PROFILE_COMM)
    # per link (src -> dst rank as the tasks name them, group-local; bytes and time of the
    # transfers over it): the per-link view communication_matrix.json gives in newer layouts
    links: dict[str, list] = {k: [] for k in ("op", "kind", "transport", "src_rank", "dst_rank", "transit_s", "bytes",
                                               "bandwidth_gbps")}
    for o in ops:
        for (src, dst, link), (size, us) in sorted(o.pairs.items()):
            for k, v in zip(links, (o.name, _comm_kind(o.name), link, src, dst, us * US, size,
                                    (size / 1e9) / (us * US) if us > 0 else None)):
                links[k].append(v)
    if links["op"]:
        link_rows = frame({**links, "rank": default, "step": step, "source": "msprof_hccl_link", "file": artifact.rel},
                          PROFILE_COMM)
        ops_rows = pl.concat([ops_rows, link_rows], how="vertical")
    result.tables["profile_comm"] = ops_rows


def _analyze_communication(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    if _skip(artifact, result):
        return
    try:
        data = load_json(artifact, result)
    except (ValueError, RecursionError) as exc:
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, detail=str(exc)))
        return
    if not isinstance(data, dict):
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="not-object"))
        return
    _, default = _rank_map(artifact)
    cols = ("op", "group", "kind", "transport", "elapse_s", "wait_s", "transit_s", "synchronization_s", "bytes",
            "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in cols}
    for op, info in data.items():
        if is_total(op) or not isinstance(info, dict) or "Communication Time Info" not in info:
            continue
        f = op_figures(info)
        for k, v in (("op", op), ("group", group_of(op)), ("kind", kind_of(op)), ("transport", f.transport),
                     ("elapse_s", f.elapse_s), ("wait_s", f.wait_s), ("transit_s", f.transit_s),
                     ("synchronization_s", f.synchronization_s), ("bytes", f.bytes),
                     ("bandwidth_gbps", f.bandwidth_gbps)):
            out[k].append(v)
    if not out["op"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="comm-ops"))
        return
    result.diagnostics.append(dg.info("profiler-first-iteration", path=artifact.rel))
    result.tables["profile_comm"] = frame(
        {**out, "rank": default, "source": "msprof_analyze_communication", "file": artifact.rel}, PROFILE_COMM)


# --------------------------------------------------------------------------- everything else


def _first_in_folder(artifact: Artifact, keep=lambda name: True, result: ReadResult | None = None) -> tuple[bool, int]:
    """Whether this file is the first (by name) of its folder's files that `keep` selects, and how many.

    A folder of raw data holds hundreds of files: its first file speaks for all of them, and each
    other file (given ``result``) says so in an info naming that first file, so none is silent."""
    try:
        names = sorted(n for n in os.listdir(os.path.dirname(artifact.path)) if keep(n))
    except OSError:
        return True, 1
    first = not names or names[0] == os.path.basename(artifact.path)
    if not first and result is not None:
        result.diagnostics.append(dg.info("profiler-listed", path=artifact.rel, target=names[0], n=len(names)))
    return first, len(names)


def _raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """device_N/data, host/data, */sqlite: msprof's own inputs. One note per folder."""
    first, count = _first_in_folder(artifact, result=result)
    if not first:
        return  # the folder's first file spoke for all of them
    prof = _prof_dir(artifact)
    folder = os.path.dirname(artifact.rel)
    what = Text("msprof-raw.sqlite" if folder.endswith("sqlite") else "msprof-raw.data")
    if prof is not None and (_exported(prof) or _covered_by_ascend_output(artifact)):
        result.diagnostics.append(dg.info("profiler-raw", path=artifact.rel, n=count, what=what, folder=folder))
    else:
        result.diagnostics.append(dg.warning("profiler-raw-not-exported", path=artifact.rel, n=count, what=what, folder=folder,
                                             command=f"msprof --export=on --output={prof.name if prof else 'PROF_...'}"))


def _info_json(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    m = re.search(r"device_(\d+)/info\.json\.\d+$", artifact.rel)
    prof = _prof_dir(artifact)
    devices = dict(_device_ranks(str(prof))) if prof else {}
    if m and int(m.group(1)) in devices:
        device = int(m.group(1))
        r = devices[device]
        if r is None and (why := _unreadable_info(artifact.path)):
            # the rank falls back to the folder or the device id: said, with why
            result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=why))
            return
        result.diagnostics.append(dg.info("profiler-metadata", path=artifact.rel, variant="rank" if r is not None else "no-rank",
                                          device=device, rank=r))
        return
    # start_info / end_info (capture start and end clocks), *.done markers, host/info.json,
    # sample.json: nothing in them goes into the tables; said, so no claimed file is silent
    result.diagnostics.append(dg.info("profiler-metadata", path=artifact.rel, variant="side",
                                      name=os.path.basename(artifact.rel)))


_NOT_READ = re.compile(r"(?:(?:op_summary|op_statistic|step_trace|communication_statistic|msprof)_|(?:task_time|hccl)_.*\.json$)")


def _other_export(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """Exported files postmortem does not read: one note per folder listing their kinds."""
    first, _ = _first_in_folder(artifact, lambda n: not _NOT_READ.match(n) and not n.startswith("."), result)
    if not first:
        return
    try:
        names = os.listdir(os.path.dirname(artifact.path))
    except OSError:
        names = [os.path.basename(artifact.rel)]
    kinds = sorted({(m["kind"] if (m := _STAMP.match(n)) else n) for n in names if not _NOT_READ.match(n)})
    result.diagnostics.append(dg.warning("profiler-not-read", path=artifact.rel, variant="export-kinds", n=len(kinds),
                kinds=kinds[:12] + (["…"] if len(kinds) > 12 else [])))


def _quiet_note(slug: str, variant: str):
    """One note for the folder (on its first file), with the folder's count of files."""
    def read(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
        first, count = _first_in_folder(artifact, result=result)
        if first:
            result.diagnostics.append(dg.info(slug, path=artifact.rel, variant=variant, count=count))
    return read


def _prof(path: str) -> re.Pattern[str]:
    return re.compile(r"(?:^|/)PROF_[^/]*/" + path + "$")


FORMATS = (
    Format("op_summary_*.csv", _prof(_EXPORT_DIRS + r"/op_summary_[^/]*\.csv"), _op_summary),
    Format("op_statistic_*.csv", _prof(_EXPORT_DIRS + r"/op_statistic_[^/]*\.csv"), _op_statistic),
    Format("step_trace_*.csv", _prof(_EXPORT_DIRS + r"/step_trace_[^/]*\.csv"), _step_trace),
    Format("communication_statistic_*.csv", _prof(_EXPORT_DIRS + r"/communication_statistic_[^/]*\.csv"),
           _comm_statistic),
    Format("msprof_*.json", _prof(_EXPORT_DIRS + r"/msprof(?:_[^/]*)?\.json"), _timeline),
    Format("step_trace_*.json", _prof(r"device_\d+/timeline/step_trace_[^/]*\.json"), _step_trace_json),
    Format("task_time_*.json", _prof(r"device_\d+/timeline/task_time_[^/]*\.json"), _task_time),
    Format("hccl_*.json", _prof(r"device_\d+/timeline/hccl_[^/]*\.json"), _hccl_json),
    Format("analyze/communication.json", _prof(r"analyze/communication\.json"), _analyze_communication),
    Format("analyze/communication_matrix.json", _prof(r"analyze/communication_matrix\.json"), _quiet_note(
        "profiler-covered", "analyze-matrix")),
    Format("raw data", _prof(r"(?:device_\d+|host)/(?:data|sqlite)/[^/]+"), _raw),
    Format("info.json", _prof(r"(?:device_\d+|host)/[^/]*info[^/]*|(?:device_\d+|host)/(?:sample\.json|\w+_info\.\d+|end_info|start_info)"),
           _info_json),
    Format("exported, not read", _prof(_EXPORT_DIRS + r"/[^/]+"), _other_export),
)

# Tried after every other layout: files of other layouts (a step_trace_time.csv copied into a
# PROF folder) are read by their own format first.
FALLBACK = (
    Format("logs", _prof(r"(?:[^/]+/)*(?:mindstudio_profiler_log|log|logs)/[^/]+"),
           _quiet_note("profiler-logs", "")),
    Format("PROF_* (other)", _prof(r".+"), _quiet_note(
        "profiler-not-read", "prof-other")),
)
