"""The records of postmortem's own training callback (format in ``postmortem/records.py``).

The most trusted source of a run (load/sources.py): the callback measures, in the training
process, what other sources leave to inference: every step's end on the wall clock, its in-step
time and the gap before it, the versions and the device, parallel context, batch shapes and data.

* a step record -> scalars at its step: ``step_time`` (the in-step time, per step of the span),
  ``data_time`` (the gap before the step: host / data wait, per step), with the record's wall
  time (the span's end); the device values where the callback read them (loss, lr, loss scale,
  overflow, grad norm) and the tokens in the batch (per step);
* the header -> settings (``callback:<file>``; the first batch's shape as ``derived:``: an input of
  seq_length + 1 tokens is common, so the config's seq_length wins over it);
* an end record written on an exception -> a ``log_error`` event at the last recorded step.

Steps are read with polars' NDJSON reader (a million records in about a second); a file cut
short mid-line (a crash) keeps every whole line.
"""

from __future__ import annotations

import io
import json
import os
import re
from typing import Any

import polars as pl

from .. import diagnostics as diag
from .. import records as R
from ..model import EVENTS, SCALARS, Artifact, ReadResult, Setting, frame
from . import guard
from .base import Reader

NAME = "callback"
SOURCE = "callback"
_STEP_SCHEMA = {R.STEP: pl.Int64, R.STEPS: pl.Int64, R.END: pl.Float64, R.IN_STEP: pl.Float64, R.GAP: pl.Float64,
                R.LOSS: pl.Float64, R.LR: pl.Float64, R.LOSS_SCALE: pl.Float64, R.OVERFLOW: pl.Boolean,
                R.GRAD_NORM: pl.Float64, R.TOKENS: pl.Float64, R.LAUNCH: pl.Utf8}


def _take_lines(data: bytes, needles: tuple[bytes, ...], line_start: bool = False) -> tuple[list[bytes], bytes]:
    """The (few) whole lines holding one of `needles` (at the line's start if `line_start`), and
    the buffer without them: bytes.find runs at memory speed, a regex over 100 MB does not."""
    spans = set()
    for needle in needles:
        at = data.find(needle)
        while at != -1:
            begin = data.rfind(b"\n", 0, at) + 1
            if not line_start or begin == at:
                end = data.find(b"\n", at)
                spans.add((begin, len(data) if end == -1 else end + 1))
            at = data.find(needle, at + len(needle))
    if not spans:
        return [], data
    lines, pieces, pos = [], [], 0
    for begin, end in sorted(spans):
        if begin < pos:  # a line holding two needles
            continue
        lines.append(data[begin:end].rstrip(b"\n"))
        pieces.append(data[pos:begin])
        pos = end
    pieces.append(data[pos:])
    return lines, b"".join(pieces)



def claims(a: Artifact) -> bool:
    return R.FILE_RE.match(os.path.basename(a.rel)) is not None


def read(a: Artifact) -> ReadResult:
    result = ReadResult(reader=NAME)
    with guard.open_file(a.path, "rb") as f:
        data = f.read()
    if not data or data.isspace():
        result.diagnostics.append(diag.warning("callback-nothing-read", path=a.rel, variant="empty"))
        return result
    bad = 0
    end = data.rfind(b"\n") + 1
    if data[end:].strip():  # no newline after the last line: written part way (a crash)
        data, bad = data[:end], 1
    # A few lines are not step records (header, epoch, end); polars' reader takes no NaN / Infinity,
    # so the (few) step records holding one are parsed apart. Both found by one scan of the buffer.
    marks, steps = _take_lines(data, (b'{"pm":',), line_start=True)
    others = []
    for line in marks:
        try:
            others.append(json.loads(line))
        except ValueError:
            bad += 1
    odd, steps = _take_lines(steps, (b"NaN", b"Infinity"))
    table, lost = _steps(steps)
    bad += lost
    if odd:
        rows = _parse_each(odd)
        bad += len(odd) - len(rows)
        table = pl.concat([table, _table(rows)]).sort(R.STEP, maintain_order=True)
    bad += lost
    header = next((o for o in others if isinstance(o, dict) and o.get(R.KIND) == "header"), None)
    if header is None:
        result.diagnostics.append(diag.warning("callback-no-header", path=a.rel))
    else:
        if int(header.get("format") or 0) > R.FORMAT:
            result.diagnostics.append(diag.warning("callback-format-newer", path=a.rel, format=header.get("format"),
                                                   readable=R.FORMAT))
        result.settings = _settings(header, a.rel)
    if bad:
        result.diagnostics.append(diag.info("callback-line-unreadable", path=a.rel, n=bad))
    rank = a.rank if a.rank is not None else (header or {}).get("rank")
    result.tables["scalars"] = _scalars(table, rank, a.rel)
    ends = [o for o in others if isinstance(o, dict) and o.get(R.KIND) == "end"]
    errors = [e for e in ends if e.get("error")]
    if errors:
        e = errors[-1]
        result.tables["events"] = frame({"kind": ["log_error"], "step": [e.get("s")], "rank": rank, "wall_time": [e.get(R.END)],
                                         "detail": [_error_line(str(e["error"]))], "source": SOURCE, "file": a.rel}, EVENTS)
    if header is not None and not ends and table.height:
        # neither train end nor exit was recorded: the process died (killed, os._exit, a hard crash)
        result.diagnostics.append(diag.warning("callback-no-end", path=a.rel, step=int(table[R.STEP].max())))
    return result


def _steps(data: bytes) -> tuple[pl.DataFrame, int]:
    """The step records (whole lines) as a table, and how many lines did not parse."""
    if not data or data.isspace():
        return pl.DataFrame(schema=_STEP_SCHEMA), 0
    lost = 0
    try:
        table = pl.read_ndjson(io.BytesIO(data), schema=_STEP_SCHEMA)
    except Exception:  # noqa: BLE001 — a damaged line: one by one
        lines = [line for line in data.split(b"\n") if line.strip()]
        rows = _parse_each(lines)
        lost += len(lines) - len(rows)
        table = _table(rows)
    return table.filter(pl.col(R.STEP).is_not_null()), lost


def _parse_each(lines: list[bytes]) -> list[dict]:
    rows = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _table(rows: list[dict]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=_STEP_SCHEMA)
    return pl.DataFrame([{k: r.get(k) for k in _STEP_SCHEMA} for r in rows], schema=_STEP_SCHEMA, strict=False)


def _scalars(t: pl.DataFrame, rank: Any, rel: str) -> pl.DataFrame:
    if t.is_empty():
        return frame({}, SCALARS)
    n = pl.col(R.STEPS).fill_null(1).cast(pl.Float64)
    columns = [
        ("step_time", R.IN_STEP, pl.col(R.IN_STEP) / n),
        ("data_time", R.GAP, pl.col(R.GAP) / n),
        *((tag, key, pl.col(key).cast(pl.Float64)) for key, tag in R.TAGS.items() if key != R.TOKENS),
        ("tokens", R.TOKENS, pl.col(R.TOKENS) / n),
    ]
    parts = [
        t.select(pl.col(R.STEP).alias("step"), pl.lit(tag).alias("tag"), pl.lit(key).alias("raw_tag"), value.alias("value"),
                 pl.col(R.END).alias("wall_time")).filter(pl.col("value").is_not_null())
        for tag, key, value in columns if t[key].null_count() < t.height
    ]
    out = pl.concat(parts).with_columns(pl.lit(rank, pl.Int32).alias("rank"), pl.lit(SOURCE).alias("source"),
                                        pl.lit(rel).alias("file"))
    return out.select([pl.col(c).cast(d) for c, d in SCALARS.items()])


def _settings(h: dict, rel: str) -> dict[str, Setting]:
    src, derived = f"callback:{rel}", f"derived:first batch ({rel})"
    versions = h.get("versions") or {}
    device = h.get("device") or {}
    parallel = h.get("parallel") or {}
    params = h.get("parameters") or {}
    sink = h.get("sink") or {}
    data = h.get("dataset") or {}
    out: dict[str, Any] = {
        "recorder": f"{h.get('writer') or R.RECORDER} {h.get('format')}",
        "framework": "MindSpore",
        "framework_version": versions.get("mindspore"),
        "mindformers_version": versions.get("mindformers"),
        "cann_version": versions.get("cann"),
        "device_target": device.get("device_target"),
        "mode": device.get("mode"),
        "jit_level": device.get("jit_level") or None,
        "device_num": device.get("count") or parallel.get("device_num"),
        "parallel_mode": parallel.get("parallel_mode"),
        "data_parallel": parallel.get("dp"),
        "model_parallel": parallel.get("mp"),
        "pipeline_stage": parallel.get("pp"),
        "micro_batch_num": parallel.get("micro_batches"),
        "context_parallel": parallel.get("cp"),
        "expert_parallel": parallel.get("ep"),
        "enable_parallel_optimizer": parallel.get("enable_parallel_optimizer"),
        "num_parameters": params.get("total"),
        "trainable_parameters": params.get("trainable"),
        "dataset_sink_mode": sink.get("mode"),
        "sink_size": sink.get("size") if sink.get("mode") else None,
        "dataset": _dataset_name(data),
        "train_dataset_size": data.get("size"),
    }
    settings = {k: Setting(v, src) for k, v in out.items() if v is not None}
    shapes = (h.get("batch") or {}).get("shapes") or []
    dtypes = (h.get("batch") or {}).get("dtypes") or []
    token_input = next((s for s, d in zip(shapes, dtypes) if len(s) == 2 and "int" in str(d).lower()), None)
    if token_input:
        settings["batch_size"] = Setting(int(token_input[0]), derived)
        settings["seq_length"] = Setting(int(token_input[1]), derived)
    elif shapes and shapes[0]:
        settings["batch_size"] = Setting(int(shapes[0][0]), derived)
    for k, v in (h.get("args") or {}).items():
        if isinstance(v, (str, int, float, bool)) or (isinstance(v, list) and len(v) <= 16):
            settings[f"args.{k}"] = Setting(v, src)
    return settings


_ERROR_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b.*)$", re.MULTILINE)


def _error_line(error: str) -> str:
    """The exception's own line: MindSpore wraps a dataset's error in its call stack, the user's
    exception last."""
    lines = _ERROR_LINE.findall(error)
    return (lines[-1] if lines else error)[:300].strip()


def _dataset_name(data: dict) -> str | None:
    path = data.get("path")
    if isinstance(path, list):
        path = ", ".join(str(p) for p in path[:4]) + (" …" if len(path) > 4 else "")
    if path:
        return str(path)
    if data.get("kind"):
        return f"{data['kind']}({data['source']})" if data.get("source") else str(data["kind"])
    return None


READER = Reader(NAME, claims, read)
