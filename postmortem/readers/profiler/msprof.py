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
import os
import re
from pathlib import Path

import polars as pl

from ... import diagnostics as dg
from ...text import Text
from ...model import PROFILE_COMM, PROFILE_OPS, PROFILE_STEPS, Artifact, ReadResult, frame
from .comm_info import group_of, is_total, kind_of, op_figures
from .. import guard
from .common import US, Durations, Format, checked, column, csv_rows, load_json, number, replaced_names, side_json, sound_csv
from .msprof_timeline import read_timeline

OPS_KEPT = 200  # operator names kept per rank; the rest of each type is summed into "(other)"
OTHER = "(other)"

_PROF = re.compile(r"(?:^|/)(PROF_[^/]*)/")
_EXPORT_DIRS = r"(?:mindstudio_profiler_output|device_\d+/summary|device_\d+/timeline)"
# <kind>[_slice_<n>]_<timestamp>.csv (CANN 7+), <kind>_<device>_<model>_<iter>.csv (older)
_STAMP = re.compile(r"^(?P<kind>.+?)(?:_slice_\d+)?_(?P<ts>\d{14})\.(?:csv|json)$")


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


def _skip(artifact: Artifact, result: ReadResult) -> bool:
    """Files whose data another read file carries: a note instead of rows."""
    covered = _covered_by_ascend_output(artifact)
    if covered:
        result.diagnostics.append(dg.warning("profiler-covered", path=artifact.rel, variant="inside-output", target=covered))
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


def _first_in_folder(artifact: Artifact, keep=lambda name: True) -> tuple[bool, int]:
    """Whether this file is the first (by name) of its folder's files that `keep` selects, and how many."""
    try:
        names = sorted(n for n in os.listdir(os.path.dirname(artifact.path)) if keep(n))
    except OSError:
        return True, 1
    return (not names or names[0] == os.path.basename(artifact.path)), len(names)


def _raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """device_N/data, host/data, */sqlite: msprof's own inputs. One note per folder."""
    first, count = _first_in_folder(artifact)
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
        result.diagnostics.append(dg.info("profiler-metadata", path=artifact.rel, variant="rank" if r is not None else "no-rank",
                                          device=device, rank=r))
    # host/info.json and the other metadata files add nothing to the tables: quiet


def _db_export(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    prof = _prof_dir(artifact)
    if prof is not None and (_exported(prof) or _covered_by_ascend_output(artifact)):
        result.diagnostics.append(dg.info("profiler-db-export", path=artifact.rel))
    else:
        result.diagnostics.append(dg.warning("profiler-db-only", path=artifact.rel,
                       command=f"msprof --export=on --type=text --output={prof.name if prof else 'PROF_...'}"))


_NOT_READ = re.compile(r"(?:op_summary|op_statistic|step_trace|communication_statistic|msprof)_")


def _other_export(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """Exported files postmortem does not read: one note per folder listing their kinds."""
    first, _ = _first_in_folder(artifact, lambda n: not _NOT_READ.match(n) and not n.startswith("."))
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
        first, count = _first_in_folder(artifact)
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
    Format("analyze/communication.json", _prof(r"analyze/communication\.json"), _analyze_communication),
    Format("analyze/communication_matrix.json", _prof(r"analyze/communication_matrix\.json"), _quiet_note(
        "profiler-covered", "analyze-matrix")),
    Format("raw data", _prof(r"(?:device_\d+|host)/(?:data|sqlite)/[^/]+"), _raw),
    Format("info.json", _prof(r"(?:device_\d+|host)/[^/]*info[^/]*|(?:device_\d+|host)/(?:sample\.json|\w+_info\.\d+|end_info|start_info)"),
           _info_json),
    Format("msprof_*.db", _prof(r"msprof_[^/]*\.db"), _db_export),
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
