"""Text logs: callback lines of MindSpore / MindFormers and users' own key=value and JSON lines.

How it stays fast (a 1M-line log must read at 200+ MB/s on one core):

1. The file is read in big binary chunks of whole lines.
2. A C scanner (``_logscan.c``) looks at each line once: it drops lines that hold nothing wanted
   and parses the common shapes (MindFormers monitor, LossMonitor, TimeMonitor, per-step flops,
   progress, key=value, flat JSON) into numeric columns. Every line it is not sure about (NaN spellings,
   Unicode where a regex class could match, shape variants, ERROR lines, ...) comes back as text.
3. The lines that come back (all lines, without the C scanner) take the polars path, the
   reference: candidate lines picked with one vectorised regex over literal anchors, fields
   extracted with vectorised regexes, JSON lines parsed with ``json.loads`` where needed.
   tests/readers/test_textlog_fast.py requires both paths to give identical tables.

Line shapes (formats.md section 4), each with its ``source``:

- ``log:lossmonitor``  ``epoch: 1 step: 2, loss is 8.61`` (step within the epoch -> global step)
- ``log:timemonitor``  ``Train epoch time: 431.937 ms, per step time: 53.992 ms (data time: 1.2 ms)``
  (1.x without ``Train ``): per-epoch averages, put at the last step seen before the line.
- ``log:flops``        ``Full model flops is X, ...`` (settings) and
  ``Train per step time: 135.572 ms, mfu:0.47% hfu:0.47%`` (the real 2.10 line has no comma).
- ``log:mindformers``  MFLossMonitor lines r0.3 - r1.8, the pynative trainer line and the progress
  line ``12.5% |###  | 1.23456 samples/s/p``.
- ``log:kv`` / ``log:json``  users' lines with a ``step`` (or ``global_step``) key.

Timestamps at the start of a line (``2024-05-08 10:36:53,123``, ISO with ``T`` and an optional
offset or ``Z``, ``[2024-05-08 10:36:53.123456]``) become ``wall_time``. A timestamp without an
offset is taken as UTC: logs do not say their zone, and UTC keeps runs on different hosts aligned.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
import re
from fnmatch import fnmatch
from functools import cache
from typing import Callable, NamedTuple

import numpy as np
import polars as pl

from .. import diagnostics as dg
from ..model import CANONICAL_TAGS, EVENTS, SCALARS, Artifact, ReadResult, Setting, canonical_tag, empty, frame
from .base import Reader

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ERROR_EVENTS = 1000  # a crash loop can print millions of ERROR lines; keep the first ones

try:
    from . import _logscan
except ImportError:  # built without a compiler: the polars path gives the same result, slower
    _logscan = None

_LINES = {"lineno": pl.Int64, "line": pl.Utf8}  # the lines the polars path reads

_CLAIM_PATTERNS = ("*.log", "*.txt", "*.out", "*.jsonl", "*.log.*", "stdout*", "stderr*")

# Literal anchors: a line that contains none of them holds nothing this reader wants.
_ANCHORS = (
    "loss is",  # LossMonitor
    "epoch time:",  # TimeMonitor
    "flops is",  # FlopsUtilizationCollector, once
    "mfu:",  # FlopsUtilizationCollector, per step
    "step:[",  # MindFormers, pynative trainer
    "samples/s/p",  # MindFormers progress line
    "step=",  # key=value (also global_step=)
    'step"',  # JSON ("step" / "global_step")
    "ERROR",
    "Traceback",
)

# Start-of-line timestamp; groups: date, time, fraction, zone.
_TS_RE = (
    r"^\s*\[?(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?"
)
# _TS_RE for ASCII text: \s and \d of the regex engine are Unicode classes.
_TS_ASCII_RE = (
    r"^[\t\n\x0b\x0c\r ]*\[?([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})"
    r"(?:[.,]([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?"
)
_NUM = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|[Nn]a[Nn]|-?[Ii]nf(?:inity)?))"
_KV_RE = r"([A-Za-z_][\w.\-/]*)=([^\s,;]+)"
_STEP_KEYS = ("step", "global_step")


def _claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1].lower()
    return any(fnmatch(name, p) for p in _CLAIM_PATTERNS)


# --------------------------------------------------------------------------- reading lines


class _Scan:
    """Candidate lines of one file plus what was noticed while reading it."""

    def __init__(self) -> None:
        self.parts: list[pl.DataFrame] = []  # (lineno, line) of candidate lines, per chunk
        self.keys: dict[str, int] = {}  # key=value / JSON key -> code, shared by both paths
        self.scanner = _logscan.Scanner(self.keys) if _logscan is not None else None
        self.handed_back: list[tuple[bytearray, bytearray]] = []  # (lines, their numbers) per chunk
        self.bad_encoding_line: int | None = None
        self.long_line: int | None = None
        self.lines_total = 0

    def frame(self) -> pl.DataFrame:
        if not self.parts:
            return empty(_LINES)
        return pl.concat(self.parts)

    def claimed(self) -> _Claimed:
        """What the C scanner parsed (empty tables without it)."""
        tables = self.scanner.tables() if self.scanner is not None else None
        lines = _claimed_columns(tables, "claimed", _CLAIMED_COLUMNS, _CLAIMED_INT_COLUMNS)
        values = _claimed_columns(tables, "values", _VALUE_COLUMNS, ())
        fields = tables["fields"] if tables else ()
        return _Claimed(lines.with_columns(pl.col("line_rank").cast(pl.Int32)), values, fields)


class _Claimed(NamedTuple):
    """The C scanner's tables (see _logscan.c): one row per claimed line, one row per value."""

    lines: pl.DataFrame  # pos kind epoch step_in steps_total step wall_time overflow loss_scale line_rank
    values: pl.DataFrame  # line (row of `lines`), field, value
    fields: tuple[str, ...]  # names of the fields below len(fields); kv / JSON keys follow


# Kinds of claimed lines, as _logscan.c numbers them.
_K_MF, _K_LM, _K_FS, _K_PG, _K_KV, _K_JSON, _K_TM = range(7)
_CLAIMED_INT_COLUMNS = ("pos", "kind", "epoch", "step_in", "steps_total", "step")
_CLAIMED_COLUMNS = (*_CLAIMED_INT_COLUMNS, "wall_time", "overflow", "loss_scale", "line_rank")
_VALUE_COLUMNS = ("line", "field", "value")


def _claimed_columns(
    tables: dict | None, table: str, names: tuple[str, ...], int_columns: tuple[str, ...]
) -> pl.DataFrame:
    """One table of the C scanner: int64 columns, float64 ones with NaN as no value."""
    columns = {}
    for col in names:
        dtype = np.int64 if col in int_columns else np.uint32 if col in ("line", "field") else np.float64
        data = np.frombuffer(tables[table][col], dtype=dtype) if tables else np.empty(0, dtype)
        columns[col] = pl.Series(col, data, nan_to_null=table == "claimed" and dtype is np.float64)
    return pl.DataFrame(columns)


def _scan(path: str) -> _Scan:
    """Read the file in chunks of whole lines, into one reused buffer (the text is not copied)."""
    scan = _Scan()
    buf = bytearray(CHUNK_BYTES + MAX_LINE_BYTES + 1)
    view = memoryview(buf)
    carry = 0  # bytes of an unfinished line at the start of buf
    skipping = False  # inside a line longer than MAX_LINE_BYTES that spans chunks
    with open(path, "rb") as fh:
        while n := fh.readinto(view[carry : carry + CHUNK_BYTES]):
            start, end, carry = 0, carry + n, 0
            if skipping:
                nl = buf.find(b"\n", 0, end)
                if nl < 0:
                    continue
                start = nl + 1
                scan.lines_total += 1
                skipping = False
            last = buf.rfind(b"\n", start, end)
            if last >= 0:
                _take_body(scan, view[start:last])
                start = last + 1
            if end - start > MAX_LINE_BYTES:
                _note_long(scan, scan.lines_total + 1)
                skipping = True
            else:
                carry = end - start
                # the unfinished line (at most MAX_LINE_BYTES) moves to the front; copied first, as
                # the two ranges may overlap and bytearray slice assignment copies with memcpy
                buf[:carry] = bytes(view[start:end])
    if carry and not skipping:
        _take_body(scan, view[:carry])
    if scan.handed_back:
        texts, numbers = zip(*scan.handed_back)
        _scan_body(scan, b"\n".join(texts), pl.Series(np.frombuffer(b"".join(numbers), dtype=np.int64)))
    return scan


def _note_long(scan: _Scan, line_no: int) -> None:
    if scan.long_line is None:
        scan.long_line = line_no


def _take_body(scan: _Scan, body: memoryview) -> None:
    """Whole lines (without the final newline): parsed by the C scanner, or kept for polars."""
    if scan.scanner is None:
        _scan_body(scan, bytes(body))
        return
    out = scan.scanner.scan(body, scan.lines_total + 1)
    scan.lines_total += out["line_count"]
    if out["bad_line"] >= 0 and scan.bad_encoding_line is None:
        scan.bad_encoding_line = out["bad_line"]
    if out["back_lines"]:  # for _scan_body, once all chunks are read
        scan.handed_back.append((out["back"], out["back_lines"]))


def _scan_body(scan: _Scan, body: bytes, linenos: pl.Series | None = None) -> None:
    """Keep the candidate lines of ``body`` (whole lines, without the final newline).

    ``linenos`` numbers the lines when they are not the file's next ones (the lines the C
    scanner handed back).
    """
    first_line = scan.lines_total + 1
    # Fast path: polars checks the UTF-8 and splits the lines itself, about 3x cheaper than
    # ``bytes.decode`` + ``str.split`` + a Series built from a million Python strings.
    try:
        text = pl.Series([body], dtype=pl.Binary).cast(pl.Utf8)
    except pl.exceptions.ComputeError:  # invalid UTF-8: Python finds the line and replaces bytes
        try:
            decoded = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if scan.bad_encoding_line is None:
                index = body.count(b"\n", 0, exc.start)
                scan.bad_encoding_line = first_line + index if linenos is None else int(linenos[index])
            decoded = body.decode("utf-8", errors="replace")
        text = pl.Series([decoded], dtype=pl.Utf8)
    lines = text.str.split("\n").explode().alias("line")
    if linenos is None:
        linenos = pl.int_range(first_line, first_line + lines.len(), dtype=pl.Int64, eager=True)
        scan.lines_total += lines.len()
    # One vectorised pass (literal alternation, SIMD in the regex engine) picks candidate lines.
    df = pl.DataFrame({"lineno": linenos, "line": lines}).filter(
        pl.col("line").str.contains(_ANCHOR_RE) | pl.col("line").str.contains(_EXCEPTION_RE)
    )
    if df.is_empty():
        return
    too_long = df["line"].str.len_bytes() > MAX_LINE_BYTES
    if too_long.any():
        _note_long(scan, int(df.filter(too_long)["lineno"][0]))
        df = df.filter(~too_long)
    scan.parts.append(df.with_columns(pl.col("line").str.strip_chars_end("\r")) if b"\r" in body else df)


# The last line of a Python traceback ("RuntimeError: device lost") names what went wrong.
_EXCEPTION_RE = r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)(?::|$)"
# Two passes, not one alternation: the literal-only one stays in the regex engine's fast literal
# search, and the pair costs a third of the single regex with the anchored branch in it.
_ANCHOR_RE = "|".join(re.escape(a) for a in _ANCHORS)


# --------------------------------------------------------------------------- parsing


def _wall_time(lines: pl.Series) -> pl.Series:
    """Unix seconds from a timestamp at the line start, null when there is none."""
    # The capture regex is the costly part. An ASCII spelling of _TS_RE captures ~2x faster than
    # its Unicode classes and matches the same where the text it looks at is ASCII: a match ends
    # by char 52 when at most 16 whitespace lead, so lines ASCII in their first 64 chars are safe.
    # Only the other lines take _TS_RE itself.
    out = _stamp_seconds(lines.str.extract_groups(_TS_ASCII_RE).struct.unnest()).alias("wall_time")
    head = lines.str.slice(0, 64)
    non_ascii = head.str.len_bytes() != head.str.len_chars()
    other = (non_ascii | head.str.contains(r"^[\t\n\x0b\x0c\r ]{17}")).arg_true()
    if other.len():
        slow = lines.gather(other).str.extract_groups(_TS_RE).struct.unnest()
        out = out.scatter(other, _stamp_seconds(slow))
    return out


def _stamp_seconds(g: pl.DataFrame) -> pl.Series:
    """Unix seconds from the groups of _TS_RE: date, time, fraction, zone."""
    stamp = pl.concat_str([pl.col("1"), pl.lit(" "), pl.col("2")])
    secs = stamp.str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S", strict=False).dt.epoch("s")
    frac = pl.concat_str([pl.lit("0."), pl.col("3")]).cast(pl.Float64, strict=False).fill_null(0.0)
    if g["4"].null_count() == g.height:  # no line gave a zone (the usual case): UTC, offset 0
        return g.select(secs.cast(pl.Float64) + frac).to_series()
    zone = pl.col("4").fill_null("Z")
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    digits = zone.str.replace(":", "", literal=True)
    offset = (
        pl.when(zone == "Z")
        .then(0)
        .otherwise(
            sign
            * (
                digits.str.slice(1, 2).cast(pl.Int64, strict=False) * 3600
                + digits.str.slice(3, 2).cast(pl.Int64, strict=False) * 60
            )
        )
    )
    return g.select(secs.cast(pl.Float64) + frac - offset.cast(pl.Float64)).to_series()


def _num(line: pl.Expr, pattern: str) -> pl.Expr:
    return line.str.extract(pattern, 1).cast(pl.Float64, strict=False)


class _Labels:
    """(tag, raw_tag, source) triples of one file, numbered.

    Long rows carry the number (``label``) instead of three text columns: the final sort by line
    then moves small integers, and the text is gathered once from these short lists at the end.
    """

    def __init__(self) -> None:
        self.codes: dict[tuple[str, str, str], int] = {}

    def code(self, tag: str, raw: str, source: str) -> int:
        return self.codes.setdefault((tag, raw, source), len(self.codes))

    def column(self, codes: pl.Series, item: int) -> pl.Series:
        """Text column ``item`` (0 tag, 1 raw_tag, 2 source) for a column of codes."""
        return pl.Series([k[item] for k in self.codes], dtype=pl.Categorical).gather(codes)


def _long(df: pl.DataFrame, fields: dict[str, tuple[str, str]], source: str, labels: _Labels) -> pl.DataFrame:
    """Wide (pos, step, wall_time, <value columns>) -> long scalar rows; null values dropped.

    ``fields`` maps a value column to (canonical tag, raw tag).
    """
    if df.is_empty():  # the usual case when the C scanner claimed the lines: a select per field for nothing
        return _EMPTY_LONG
    parts = [
        df.select(
            "pos",
            "step",
            "wall_time",
            pl.lit(labels.code(tag, raw, source), pl.UInt32).alias("label"),
            pl.col(col).cast(pl.Float64).alias("value"),
        )
        for col, (tag, raw) in fields.items()
        if col in df.columns
    ]
    if not parts:
        return _EMPTY_LONG
    # Drop nulls per part: most columns have none or only nulls, so little is copied.
    parts = [p if p["value"].null_count() == 0 else p.filter(pl.col("value").is_not_null()) for p in parts]
    return pl.concat(parts)


_EMPTY_LONG = pl.DataFrame(
    schema={"pos": pl.Int64, "step": pl.Int64, "wall_time": pl.Float64, "label": pl.UInt32, "value": pl.Float64}
)


class _Conv(NamedTuple):
    """How a captured field becomes a value: text -> number, then x scale to SI units (the C
    scanner gives the number; both paths scale it the same way)."""

    parse: Callable[[pl.Expr], pl.Expr]
    scale: float

    def value(self, text: pl.Expr) -> pl.Expr:
        number = self.parse(text)
        return number if self.scale == 1.0 else number * self.scale


def _float(text: pl.Expr) -> pl.Expr:
    return text.cast(pl.Float64, strict=False)


def _int(text: pl.Expr) -> pl.Expr:
    return text.cast(pl.Int64, strict=False)


_FLOAT = _Conv(_float, 1.0)
_INT = _Conv(_int, 1.0)
_MS = _Conv(_float, 1e-3)  # milliseconds -> seconds
# percent -> fraction: a product, not x / 100: polars divides a long column by multiplying with
# the reciprocal and a short one exactly, so a quotient would depend on how many rows came together
_PCT = _Conv(_float, 0.01)
_BOOL = _Conv(lambda t: t.replace_strict({"True": 1.0, "False": 0.0}, default=None, return_dtype=pl.Float64), 1.0)


def _fields(df: pl.DataFrame, specs: dict, fast_re: str) -> pl.DataFrame:
    """``df`` plus one typed column per spec ``name: (conv, pattern, ...)``: the converted group 1
    of each pattern, the first non-null one (each pattern is a ``str.extract``: its first match).

    A capture regex pass costs about as much whatever it captures, so the lines of the common
    shape are matched once by ``fast_re``, anchored at both ends, with one named group per
    spec it fills. It must give what the patterns give: every key in it occurs once, nothing
    before it can match a pattern, and every value is followed by a character it cannot
    contain. Other lines (``fast_re``'s first group is null) take the patterns one by one.
    ``df`` must be sorted by a unique ``pos``.
    """
    line = pl.col("line")
    groups = df["line"].str.extract_groups(fast_re).struct.unnest()
    hit = groups.to_series(0).is_not_null()
    fast = pl.concat([df.filter(hit), groups.filter(hit)], how="horizontal").select(
        *df.columns,
        **{
            name: conv.value(pl.col(name) if name in groups.columns else pl.lit(None, pl.Utf8))
            for name, (conv, *_) in specs.items()
        },
    )
    if fast.height == df.height:
        return fast
    slow = df.filter(~hit).with_columns(
        **{
            name: pl.coalesce([conv.value(line.str.extract(p, 1)) for p in patterns])
            if len(patterns) > 1
            else conv.value(line.str.extract(patterns[0], 1))
            for name, (conv, *patterns) in specs.items()
        }
    )
    return slow if fast.is_empty() else pl.concat([fast, slow]).sort("pos")


# Fast-path pieces (see _fields): ASCII only, and written so the regex is one-pass (at each
# byte one way on), which lets the regex engine capture groups with its one-pass DFA, ~3x cheaper
# than the general engine. A number here is a subset of _NUM's (no "--inf"): other lines go slow.
_FAST_NUM = r"(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[Nn]a[Nn]|[Ii]nf(?:inity)?))"
_MF_SPECS = {
    "epoch": (_INT, r"Epoch:\[\s*(\d+)/"),
    "step_in": (_INT, r"step:\[\s*(\d+)/"),
    "steps_total": (_INT, r"step:\[\s*\d+/\s*(\d+)\]"),
    "loss": (_FLOAT, r"[\s,{]loss:\s*\[?\s*" + _NUM),
    "lm_loss": (_FLOAT, r"lm_loss:\s*" + _NUM),
    "load_balancing_loss": (_FLOAT, r"load_balancing_loss:\s*" + _NUM),
    "mtp_loss": (_FLOAT, r"mtp_loss:\s*" + _NUM),
    "step_time": (
        _MS,
        r"per_step_time:\s*" + _NUM + r"\s*ms",
        r"[\s,{]time:\s*" + _NUM + r"\s*ms",  # r0.3 - r0.6
    ),
    "lr": (_FLOAT, r"[\s,{]lr:\s*" + _NUM),
    "overflow": (
        _BOOL,
        r"overflow cond:\s*(True|False)",
    ),
    "loss_scale": (_FLOAT, r"loss_scale:\s*" + _NUM),
    "global_norm": (_FLOAT, r"global_norm:\s*\[?\s*" + _NUM),
    "grad_norm": (_FLOAT, r"[\s,{]grad_norm:\s*" + _NUM),
    "tflops_npu": (_FLOAT, r"train_throughput_per_npu:\s*" + _NUM + r"\s*T"),
    "tflops_py": (_FLOAT, r"[\s,{]throughput:\s*" + _NUM + r"\s*T"),
}
# r0.7 - r1.6 sink line with the logger's prefix. The source path has no "_" and no space, so
# no pattern can match in it; the keys are checked in the order MindFormers prints them.
_MF_FAST_RE = (
    r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3} - \[[A-Za-z0-9/.\-]*:[0-9]+\] - [A-Z]+ - )?"
    r"\{ Epoch:\[ *(?P<epoch>[0-9]+)/ *[0-9]+\], step:\[ *(?P<step_in>[0-9]+)/ *(?P<steps_total>[0-9]+)\], "
    rf"loss: (?P<loss>{_FAST_NUM}), per_step_time: (?P<step_time>{_FAST_NUM})ms, (?:lr: (?P<lr>{_FAST_NUM}), )?"
    rf"overflow cond: (?P<overflow>True|False), loss_scale: (?P<loss_scale>{_FAST_NUM})"
    rf"(?:, global_norm: \[(?P<global_norm>{_FAST_NUM})\]"
    rf"(?:, train_throughput_per_npu: (?P<tflops_npu>{_FAST_NUM})T)?)?$"
)


_LM_SPECS = {
    "epoch": (_INT, r"epoch:\s*(\d+)"),
    "step_in": (_INT, r"step:\s*(\d+),"),
    "loss": (_FLOAT, r"loss is\s*(?:Tensor\(.*?value=\s*)?" + _NUM),
}
_LM_FAST_RE = rf"^epoch: (?P<epoch>[0-9]+) step: (?P<step_in>[0-9]+), loss is (?P<loss>{_FAST_NUM})$"
_FS_SPECS = {
    "step_time": (_MS, r"per step time:\s*" + _NUM),
    "mfu": (_PCT, r"mfu:\s*" + _NUM),
    "hfu": (_PCT, r"hfu:\s*" + _NUM),
}
_FS_FAST_RE = (
    rf"^Train per step time: (?P<step_time>{_FAST_NUM}) ms,? mfu:(?P<mfu>{_FAST_NUM})% hfu:(?P<hfu>{_FAST_NUM})%$"
)


def _mindformers(df: pl.DataFrame) -> pl.DataFrame:
    out = _fields(df, _MF_SPECS, _MF_FAST_RE).filter(pl.col("step_in").is_not_null())
    return out.with_columns(
        step=pl.when(pl.col("epoch").is_not_null())
        .then((pl.col("epoch") - 1) * pl.col("steps_total") + pl.col("step_in"))
        .otherwise(pl.col("step_in"))
    )


_MF_FIELDS = {
    "loss": ("loss", "loss"),
    "lm_loss": ("lm_loss", "lm_loss"),
    "load_balancing_loss": ("load_balancing_loss", "load_balancing_loss"),
    "mtp_loss": ("mtp_loss", "mtp_loss"),
    "step_time": ("step_time", "per_step_time"),
    "lr": ("lr", "lr"),
    "overflow": ("overflow", "overflow cond"),
    "loss_scale": ("loss_scale", "loss_scale"),
    "global_norm": ("grad_norm", "global_norm"),
    "grad_norm": ("grad_norm", "grad_norm"),
    "tflops_npu": ("tflops_per_device", "train_throughput_per_npu"),
    # The pynative trainer prints "throughput: 123.45T": TFLOPS per device, like the line above.
    "tflops_py": ("tflops_per_device", "throughput"),
}
_LM_FIELDS = {"loss": ("loss", "loss")}
_TM_SPECS = {
    "epoch_time": (_MS, r"epoch time:\s*" + _NUM),
    "step_time": (_MS, r"per step time:\s*" + _NUM),
    "data_time": (_MS, r"data time:\s*" + _NUM),
}
_TM_FIELDS = {
    "epoch_time": ("epoch_time", "epoch time"),
    "step_time": ("step_time", "per step time"),
    "data_time": ("data_time", "data time"),
}
_FS_FIELDS = {"step_time": ("step_time", "per step time"), "mfu": ("mfu", "mfu"), "hfu": ("hfu", "hfu")}
_PG_SPECS = {"samples": (_FLOAT, _NUM + r"\s*samples/s/p")}
_PG_FIELDS = {"samples": ("samples_per_s", "samples/s/p")}

# The shapes the C scanner parses, by the prefix of its field names ("mf:loss"): the specs that
# convert, the fields that name, and the source.
_SCANNED_SHAPES = {
    "mf": (_MF_SPECS, _MF_FIELDS, "log:mindformers"),
    "lm": (_LM_SPECS, _LM_FIELDS, "log:lossmonitor"),
    "fs": (_FS_SPECS, _FS_FIELDS, "log:flops"),
    "pg": (_PG_SPECS, _PG_FIELDS, "log:mindformers"),
    "tm": (_TM_SPECS, _TM_FIELDS, "log:timemonitor"),
}


def _key_tag(key: str) -> tuple[str, float]:
    """Canonical tag and scale to SI units for a user key: ``_ms`` -> seconds."""
    if key in CANONICAL_TAGS:
        scale = 1e-3 if key.endswith("_ms") else 1.0
        return CANONICAL_TAGS[key], scale
    for suffix, scale in (("_ms", 1e-3), ("_s", 1.0)):
        if key.endswith(suffix) and not key.endswith("_per_s"):
            base = key[: -len(suffix)]
            if not base.endswith("time"):
                base += "_time"
            return canonical_tag(base), scale
    return canonical_tag(key), 1.0


# A line of space-separated tokens where each token either holds no "=" (so no _KV_RE match) or
# is exactly one _KV_RE match (ASCII key). Its _KV_RE matches are then its tokens with a "=".
_KV_TOKEN = r"[A-Za-z_][A-Za-z0-9_.\-/]*=[^\s,;]+"
_KV_SIMPLE_RE = rf"^(?:(?:[^= ]*|{_KV_TOKEN}) )*(?:[^= ]*|{_KV_TOKEN})$"


def _kv_tokens(df: pl.DataFrame) -> pl.DataFrame:
    """(pos, wall_time, kv): the _KV_RE matches of each line, in line order."""
    # Shape check + split on spaces costs ~2/3 of extract_all's capture pass; only lines whose shape
    # makes both give the same tokens (_KV_SIMPLE_RE) take it.
    simple = df["line"].str.contains(_KV_SIMPLE_RE)
    fast = (
        df.filter(simple)
        .select("pos", "wall_time", pl.col("line").str.split(" ").alias("kv"))
        .explode("kv")
        .filter(pl.col("kv").str.contains("=", literal=True))
    )
    if fast.height and simple.all():
        return fast
    slow = (
        df.filter(~simple)
        .select("pos", "wall_time", pl.col("line").str.extract_all(_KV_RE).alias("kv"))
        .explode("kv")
        .filter(pl.col("kv").is_not_null())
    )
    return slow if fast.is_empty() else pl.concat([fast, slow]).sort("pos", maintain_order=True)


def _kv(df: pl.DataFrame) -> pl.DataFrame:
    """key=value lines -> (pos, wall_time, key, raw value)."""
    return (
        _kv_tokens(df)
        .select(
            "pos",
            "wall_time",
            pl.col("kv").str.splitn("=", 2).struct.rename_fields(["key", "raw"]).struct.unnest(),
        )
        .with_columns(pl.col("raw").str.strip_chars("\"'"))
    )


def _numeric_pairs(pairs: pl.DataFrame, keys: dict[str, int]) -> pl.DataFrame:
    """(pos, wall_time, key, raw) -> (pos, wall_time, key, value): values read as numbers (pairs
    without one dropped), keys coded with ``keys``."""
    codes = {k: keys.setdefault(k, len(keys)) for k in pairs["key"].unique(maintain_order=True).to_list()}
    return pairs.select(
        "pos",
        "wall_time",
        # (replace_strict with no mapping would keep the strings)
        pl.col("key").replace_strict(codes, return_dtype=pl.Int64) if codes else pl.col("key").cast(pl.Int64),
        pl.col("raw").cast(pl.Float64, strict=False).alias("value"),
    ).filter(pl.col("value").is_not_null())


def _with_step(pairs: pl.DataFrame, keys: dict[str, int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Attach each line's step (and its own rank key) to its pairs; keep lines with a step.
    Also (pos, step) of every line with a step, values or not: a bare "step=5" line is a step too."""
    code = {name: keys.get(name, -1) for name in ("step", "global_step", "rank", "epoch_step")}
    key = pl.col("key")
    step = (
        pairs.filter(key.is_in((code["step"], code["global_step"])))
        .with_columns((key == code["step"]).alias("pref"))
        # a step must be a number that fits in int64 (a logged 1e20 is noise, not a step)
        .filter(pl.col("value").is_finite() & (pl.col("value").abs() < 2.0**62))
        .sort("pref", descending=True, maintain_order=True)
        .unique("pos", keep="first", maintain_order=True)
        .select("pos", pl.col("value").cast(pl.Int64).alias("step"))
    )
    # a rank is a whole number that fits in int32 ("rank=3.0" is rank 3)
    rank_value = pl.col("value")
    rank = (
        pairs.filter(key == code["rank"])
        .unique("pos", keep="first", maintain_order=True)
        .select(
            "pos",
            pl.when((rank_value == rank_value.round()) & (rank_value.abs() < 2.0**31))
            .then(rank_value.cast(pl.Int32, strict=False))
            .alias("line_rank"),
        )
    )
    rows = (
        pairs.join(step, on="pos", how="inner", maintain_order="left")
        .join(rank, on="pos", how="left", maintain_order="left")
        .filter(~key.is_in(list(code.values())))
    )
    return rows, step


def _json(df: pl.DataFrame) -> tuple[pl.DataFrame, int | None]:
    """JSON lines -> the same pairs as _kv; also the line number of the first bad line.

    Fast path: flat objects of plain numbers and escape-free strings (what training scripts print)
    are split into pairs with vectorised regexes; ``json.loads`` per line costs ~10 us. Every
    other line (nesting, escapes, NaN, repeated keys, a time key to read) takes ``_json_lines``,
    the per-line reference path; both give identical pairs (tests/readers/test_textlog.py).
    """
    obj = df.select(
        "pos",
        "wall_time",
        # json.loads refuses ints of over 4300 digits (sys.int_info): long lines go the slow way
        pl.when(pl.col("line").str.len_bytes() < 4000)
        .then(pl.col("line").str.extract(_JSON_FLAT_RE, 1))
        .alias("obj"),
    )
    pairs = (
        obj.filter(pl.col("obj").is_not_null())
        .select("pos", "wall_time", pl.col("obj").str.extract_all(_JSON_PAIR_RE).alias("pair"))
        .explode("pair")
        .filter(pl.col("pair").is_not_null())  # {} has no pairs
        # '"key" : value' -> key, value: keys hold no quote, values start with no space or colon
        .select("pos", "wall_time", pl.col("pair").str.splitn('"', 3).struct.rename_fields(["_", "key", "val"]))
        .unnest("pair")
        .select("pos", "wall_time", "key", pl.col("val").str.strip_chars_start(": \t\r\n"))
    )
    slow_pos = pairs.filter(
        pl.struct("pos", "key").is_duplicated()  # dict semantics: last value at the first place
        | (pl.col("wall_time").is_null() & pl.col("key").is_in(_JSON_TIME_KEYS))
    )["pos"].unique().implode()
    fast = (
        pairs.filter(~pl.col("pos").is_in(slow_pos) & ~pl.col("val").is_in(("true", "false", "null")))
        .select(
            "pos",
            "wall_time",
            "key",
            raw=pl.when(pl.col("val").str.starts_with('"'))
            .then(pl.col("val").str.slice(1, pl.col("val").str.len_chars() - 2))
            # numbers keep their text: only casts read ``raw``, and they read it as json would
            # (the one difference: json turns the int -0 into 0)
            .when(pl.col("val") == "-0")
            .then(pl.lit("0"))
            .otherwise(pl.col("val")),
        )
    )
    slow = df.filter(obj["obj"].is_null() | df["pos"].is_in(slow_pos))
    slow_pairs, first_bad = _json_lines(slow)
    if slow_pairs.is_empty():
        pairs = fast
    elif fast.is_empty():
        pairs = slow_pairs
    else:
        pairs = pl.concat([fast, slow_pairs]).sort("pos", maintain_order=True)
    return pairs, first_bad


# A flat JSON object that json.loads accepts, from the first "{" to the last "}" of the line (group 1).
_JS_WS = r"[ \t\r\n]*"
_JS_STR = r'"[^"\\\x00-\x1f]*"'
_JS_NUM = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_JS_PAIR = rf"{_JS_STR}{_JS_WS}:{_JS_WS}(?:{_JS_NUM}|{_JS_STR}|true|false|null)"
_JSON_FLAT_RE = rf"^[^{{]*(\{{{_JS_WS}(?:{_JS_PAIR}{_JS_WS}(?:,{_JS_WS}{_JS_PAIR}{_JS_WS})*)?\}})[^}}]*$"
_JSON_PAIR_RE = _JS_PAIR


def _json_lines(df: pl.DataFrame) -> tuple[pl.DataFrame, int | None]:
    """Pairs of JSON lines parsed one by one with json.loads; also the first bad line number."""
    pos_out: list[int] = []
    wall_out: list[float | None] = []
    keys: list[str] = []
    raws: list[str] = []
    first_bad = None
    for pos, wall, line, line_no in df.select("pos", "wall_time", "line", "lineno").iter_rows():
        a, b = line.find("{"), line.rfind("}")
        try:
            obj = json.loads(line[a : b + 1])
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            if first_bad is None:
                first_bad = line_no
            continue
        if not isinstance(obj, dict):
            continue
        if wall is None:
            wall = _json_time(obj)
        for k, v in obj.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                continue
            pos_out.append(pos)
            wall_out.append(wall)
            keys.append(str(k))
            raws.append(v if isinstance(v, str) else repr(float(v)) if isinstance(v, float) else str(v))
    pairs = pl.DataFrame(
        {"pos": pos_out, "wall_time": wall_out, "key": keys, "raw": raws},
        schema={"pos": pl.Int64, "wall_time": pl.Float64, "key": pl.Utf8, "raw": pl.Utf8},
    )
    return pairs, first_bad


_JSON_TIME_KEYS = ("time", "timestamp", "ts", "wall_time", "datetime")


def _json_time(obj: dict) -> float | None:
    """Wall time from a JSON line's own time key: unix seconds/ms, or an ISO string (naive = UTC)."""
    for key in _JSON_TIME_KEYS:
        value = obj.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return value / 1000.0 if value > 1e12 else float(value)
        if isinstance(value, str):
            try:
                when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
    return None


def _pairs_to_long(pairs: pl.DataFrame, source: str, labels: _Labels, keys: dict[str, int]) -> pl.DataFrame:
    if pairs.is_empty():
        return _EMPTY_LONG.with_columns(pl.lit(None, pl.Int32).alias("line_rank"))
    names = list(keys)  # codes number the keys in insertion order
    mapping = {c: _key_tag(names[c]) for c in pairs["key"].unique().to_list()}
    codes = {c: labels.code(t, names[c], source) for c, (t, _) in mapping.items()}
    scales = {codes[c]: s for c, (_, s) in mapping.items()}
    return pairs.with_columns(label=pl.col("key").replace_strict(codes, return_dtype=pl.UInt32)).select(
        "pos",
        "step",
        "wall_time",
        "label",
        pl.col("value") * pl.col("label").replace_strict(scales, return_dtype=pl.Float64),
        "line_rank",
    )


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="textlog")
    diags = result.diagnostics
    rel = artifact.rel
    scan = _scan(artifact.path)
    if scan.bad_encoding_line is not None:
        diags.append(
            dg.warning("log-encoding", "not valid UTF-8; undecodable bytes replaced", rel, scan.bad_encoding_line)
        )
    if scan.long_line is not None:
        diags.append(
            dg.warning(
                "log-line-too-long", f"lines longer than {MAX_LINE_BYTES} bytes skipped", rel, scan.long_line
            )
        )

    # The lines the C scanner parsed (claimed) and the polars path for all others (handed back).
    # "pos" orders lines; the line number does.
    claimed = scan.claimed()
    scanned = claimed.lines
    kind = pl.col("kind")
    handed_back = scan.frame()
    back = _read_handed_back(handed_back, scan.keys) if handed_back.height else _nothing_handed_back()

    longs: list[pl.DataFrame] = []
    labels = _Labels()
    # ---- MindFormers / pynative trainer
    longs.append(_long(back.mf, _MF_FIELDS, "log:mindformers", labels))
    mf_steps = (pl.col("epoch") - 1) * pl.col("steps_total") + pl.col("step_in")  # claimed lines have an epoch
    scanned_mf = scanned.filter(kind == _K_MF).with_columns(step=mf_steps)
    mf = _in_line_order(back.mf, scanned_mf, _MF_LINE_COLUMNS)
    spe_mf = mf["steps_total"].max() if mf.height and mf["epoch"].null_count() < mf.height else None

    # ---- LossMonitor: step within the epoch -> global step
    scanned_lm = scanned.select("pos", "kind", "epoch", "step_in").filter(kind == _K_LM)
    spe = _steps_per_epoch(_in_line_order(back.lm, scanned_lm, ("pos", "epoch", "step_in")), spe_mf, rel, diags)
    lm_steps = (pl.col("epoch") - 1) * spe + pl.col("step_in") if spe else pl.col("step_in")
    lm = back.lm.with_columns(step=lm_steps)
    longs.append(_long(lm, _LM_FIELDS, "log:lossmonitor", labels))
    if back.bad_json_line is not None:
        diags.append(dg.warning("log-json-invalid", "a JSON-looking line did not parse; skipped", rel, back.bad_json_line))

    # The claimed lines' own steps; the other shapes take theirs from the lines before them.
    scanned = scanned.with_columns(
        step=pl.when(kind == _K_MF).then(mf_steps).when(kind == _K_LM).then(lm_steps)
        .when(kind.is_in((_K_KV, _K_JSON))).then(pl.col("step"))
    )
    # One row per line (lines of different shapes never share a pos).
    steps_at = pl.concat(
        [x.select("pos", "step") for x in (mf, lm, back.kv_steps, back.json_steps) if x.height]
        + [scanned.select("pos", "step", "kind").filter(kind.is_in((_K_LM, _K_KV, _K_JSON))).drop("kind")],
        how="vertical_relaxed",
    ).sort("pos")
    scanned = _attach_step(scanned.rename({"step": "own_step"}), steps_at).select(
        *_CLAIMED_COLUMNS[:5], pl.coalesce("own_step", "step").alias("step"), *_CLAIMED_COLUMNS[6:]
    )

    # ---- TimeMonitor (per-epoch averages, placed at the last step of the epoch)
    tm = _attach_step(back.tm, steps_at)
    if spe:  # a TimeMonitor line with no step before it ends the n-th epoch: step n x steps per epoch
        tm_pos = _in_line_order(tm, scanned.select("pos", "kind").filter(kind == _K_TM), ("pos",))["pos"]

        def epoch_end(rows: pl.DataFrame) -> pl.Series:
            return (tm_pos.search_sorted(rows["pos"]).cast(pl.Int64) + 1) * spe

        tm = tm.with_columns(step=pl.col("step").fill_null(epoch_end(tm)))
        scanned = scanned.with_columns(
            step=pl.when(kind == _K_TM).then(pl.col("step").fill_null(epoch_end(scanned))).otherwise(pl.col("step"))
        )
    longs.append(_long(tm, _TM_FIELDS, "log:timemonitor", labels))
    for key, value in back.settings.items():  # FlopsUtilizationCollector totals
        result.settings[key] = Setting(value, "log")

    # ---- FlopsUtilizationCollector per step, MindFormers progress line: the step of the line before
    longs.append(_long(_attach_step(back.fs, steps_at), _FS_FIELDS, "log:flops", labels))
    longs.append(_long(_attach_step(back.pg, steps_at), _PG_FIELDS, "log:mindformers", labels))
    kv_pairs, json_pairs = back.kv_rows, back.json_rows

    kv_long = _pairs_to_long(kv_pairs, "log:kv", labels, scan.keys)
    json_long = _pairs_to_long(json_pairs, "log:json", labels, scan.keys)
    scanned_long = _scanned_long(claimed, scanned, labels, scan.keys)

    dropped = sum(x["step"].null_count() for x in (*longs, scanned_long))
    if dropped:
        diags.append(
            dg.info("log-no-step", f"{dropped} values had no step before them in the file; dropped", rel)
        )
    base_rank = artifact.rank
    fixed = [
        (x.filter(pl.col("step").is_not_null()) if x["step"].null_count() else x).with_columns(
            line_rank=pl.lit(None, pl.Int32)
        )
        for x in longs
    ]
    if scanned_long["step"].null_count():
        scanned_long = scanned_long.filter(pl.col("step").is_not_null())
    # The parts are a few dozen chunks; sorting one contiguous frame is ~30% cheaper. The scanned
    # rows are in line order already and usually the many: merged in, not sorted again.
    polars_rows = pl.concat([*fixed, kv_long, json_long], how="vertical_relaxed", rechunk=True)
    allrows = _merge_by_pos(scanned_long, polars_rows.sort("pos", maintain_order=True))
    scalars = frame(
        {
            "step": allrows["step"],
            "tag": labels.column(allrows["label"], 0),
            "raw_tag": labels.column(allrows["label"], 1),
            "value": allrows["value"],
            "wall_time": allrows["wall_time"],
            "rank": allrows["line_rank"].fill_null(base_rank) if base_rank is not None else allrows["line_rank"],
            "source": labels.column(allrows["label"], 2),
            "file": rel,
        },
        SCALARS,
    )
    result.tables["scalars"] = scalars
    result.tables["events"] = _events(back.errors, mf, steps_at, base_rank, rel, diags)
    return result


class _HandedBack(NamedTuple):
    """What the polars path reads from the lines the C scanner handed back (without it: all lines),
    before steps are attached: everything here depends on those lines alone."""

    mf: pl.DataFrame  # MindFormers / pynative lines, with their own steps
    lm: pl.DataFrame  # LossMonitor lines: epoch, step in epoch, loss
    kv_rows: pl.DataFrame  # key=value pairs of lines with a step
    kv_steps: pl.DataFrame  # (pos, step) of key=value lines with a step
    json_rows: pl.DataFrame
    json_steps: pl.DataFrame
    bad_json_line: int | None
    tm: pl.DataFrame  # TimeMonitor lines
    fs: pl.DataFrame  # FlopsUtilizationCollector per-step lines
    pg: pl.DataFrame  # MindFormers progress lines
    settings: dict[str, float]  # FlopsUtilizationCollector totals
    errors: pl.DataFrame  # ERROR / Traceback / exception lines, see _events


def _read_handed_back(df: pl.DataFrame, keys: dict[str, int]) -> _HandedBack:
    """The lines (lineno, line) the C scanner handed back, read by the polars path."""
    df = df.with_columns(pos=pl.col("lineno"))
    df = df.with_columns(_wall_time(df["line"]))
    line = pl.col("line")
    kinds = _split_kinds(df)
    # Pairs of kv lines, then of JSON lines: keys are numbered in that order.
    kv_rows, kv_steps = _with_step(_numeric_pairs(_kv(kinds["kv"]), keys), keys)
    json_pairs, bad_json_line = _json(kinds["json"])
    json_rows, json_steps = _with_step(_numeric_pairs(json_pairs, keys), keys)
    tm = kinds["tm"].filter(~line.str.contains(r"(?i)eval epoch time"))
    tm = tm.with_columns(**{name: conv.value(line.str.extract(pat, 1)) for name, (conv, pat) in _TM_SPECS.items()})
    settings = {}
    for key, label in (
        ("full_model_flops", "Full model flops"),
        ("full_hardware_flops", "Full hardware flops"),
        ("shard_model_flops", "Shard model flops"),
        ("shard_hardware_flops", "Shard hardware flops"),
    ):
        values = kinds["flops_total"].select(_num(line, label + r" is\s*" + _NUM)).to_series().drop_nulls()
        if values.len():
            settings[key] = float(values[-1])
    samples_conv, samples_pattern = _PG_SPECS["samples"]
    return _HandedBack(
        mf=_mindformers(kinds["mf"]),
        lm=_fields(kinds["lm"], _LM_SPECS, _LM_FAST_RE),
        kv_rows=kv_rows,
        kv_steps=kv_steps,
        json_rows=json_rows,
        json_steps=json_steps,
        bad_json_line=bad_json_line,
        tm=tm,
        fs=_fields(kinds["flops_step"], _FS_SPECS, _FS_FAST_RE),
        pg=kinds["progress"].with_columns(samples=samples_conv.value(line.str.extract(samples_pattern, 1))),
        settings=settings,
        errors=_error_lines(df),
    )


@cache
def _nothing_handed_back() -> _HandedBack:
    """_read_handed_back of no lines, made once: the C scanner usually claims every line, and the
    polars path costs ~25 ms per file even then (~150 operations of ~0.2 ms on empty frames)."""
    return _read_handed_back(empty(_LINES), {})


# What later steps read of the MindFormers lines (steps per epoch, step-bearing lines, overflow events).
_MF_LINE_COLUMNS = ("pos", "wall_time", "epoch", "steps_total", "step", "overflow", "loss_scale")


def _in_line_order(rows: pl.DataFrame, scanned: pl.DataFrame, columns) -> pl.DataFrame:
    """``columns`` of the rows polars parsed and of the claimed lines of that shape, by pos."""
    both = [x.select(columns) for x in (rows, scanned) if not x.is_empty()]
    if len(both) < 2:
        return both[0] if both else rows.select(columns)
    return pl.concat(both).sort("pos")


def _merge_by_pos(big: pl.DataFrame, small: pl.DataFrame) -> pl.DataFrame:
    """Two frames sorted by pos with no pos in common, as one sorted by pos (rows of a pos keep
    their order). Linear: the rows of ``small`` go where searchsorted puts them, no sort."""
    if small.is_empty():
        return big
    n, m = big.height, small.height
    slots = np.searchsorted(big["pos"].to_numpy(), small["pos"].to_numpy(), side="right") + np.arange(m)
    order = np.empty(n + m, dtype=np.uint32)
    from_big = np.ones(n + m, dtype=bool)
    from_big[slots] = False
    order[from_big] = np.arange(n, dtype=np.uint32)
    order[slots] = np.arange(n, n + m, dtype=np.uint32)
    return pl.concat([big, small], how="vertical_relaxed", rechunk=True)[order]


def _scanned_long(claimed: _Claimed, scanned: pl.DataFrame, labels: _Labels, keys: dict[str, int]) -> pl.DataFrame:
    """The C scanner's values as long rows (pos, step, wall_time, label, value, line_rank), in
    line order: each row takes its line's columns, and its field's label and scale."""
    values = claimed.values
    n_fixed = len(claimed.fields)
    label_of, scale_of = [], []
    names = list(keys)
    for field in range(int(values["field"].max()) + 1 if values.height else 0):
        if field < n_fixed:
            shape, column = claimed.fields[field].split(":")
            specs, fields, source = _SCANNED_SHAPES[shape]
            (tag, raw), scale = fields[column], specs[column][0].scale
        else:
            raw = names[(field - n_fixed) // 2]
            source = "log:json" if (field - n_fixed) % 2 else "log:kv"
            tag, scale = _key_tag(raw)
        label_of.append(labels.code(tag, raw, source))
        scale_of.append(scale)
    field = values["field"]
    return scanned.select("pos", "step", "wall_time", "line_rank")[values["line"].to_numpy()].select(
        "pos",
        "step",
        "wall_time",
        label=pl.Series(label_of, dtype=pl.UInt32).gather(field),
        value=values["value"] * pl.Series(scale_of, dtype=pl.Float64).gather(field),
        line_rank="line_rank",
    )


# Line shapes in test order (a line takes the first whose literals it all holds). Literal tests
# only: the extraction checks the full shape (a line whose fields do not parse yields no values).
_KINDS = (
    ("mf", ("step:[", "loss")),
    ("lm", ("loss is", "epoch:")),
    ("tm", ("epoch time:",)),
    ("flops_total", ("flops is",)),
    ("flops_step", ("mfu:",)),
    ("progress", ("samples/s/p",)),
    ("json", ('step"', "{")),
    ("kv", ("step=",)),
)


def _split_kinds(df: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The lines of each shape, in line order."""
    # Each test runs only on the lines no earlier shape took: ~40% fewer literal passes than
    # one when/then chain, which tests every literal on every line.
    out = {}
    for name, literals in _KINDS:
        line = df["line"]
        hit = line.str.contains(literals[0], literal=True)
        for lit in literals[1:]:
            hit &= line.str.contains(lit, literal=True)
        out[name], df = df.filter(hit), df.filter(~hit)
    return out


def _steps_per_epoch(lm: pl.DataFrame, spe_mf: int | None, rel: str, diags: list) -> int | None:
    """Steps per epoch for LossMonitor lines, from MindFormers totals or inferred from the file."""
    if lm.is_empty():
        return None
    if spe_mf:
        diags.append(dg.info("log-steps-per-epoch", f"steps per epoch {spe_mf} from MindFormers step:[n/N]", rel))
        return int(spe_mf)
    order = lm.group_by("epoch", maintain_order=True).agg(pl.col("step_in").max().alias("mx"))
    # An epoch followed by another one is complete: its largest step is the epoch length.
    epochs = lm["epoch"].unique(maintain_order=True)
    complete = order.filter(pl.col("epoch") != epochs[-1]) if len(epochs) > 1 else order.clear()
    if complete.is_empty():
        diags.append(
            dg.info(
                "log-steps-per-epoch",
                "one epoch only: LossMonitor step in epoch used as the global step",
                rel,
            )
        )
        return None
    spe = int(complete["mx"].max())
    diags.append(
        dg.info("log-steps-per-epoch", f"steps per epoch {spe} inferred from LossMonitor epochs", rel)
    )
    return spe


def _attach_step(df: pl.DataFrame, steps_at: pl.DataFrame) -> pl.DataFrame:
    """The step of the closest step-bearing line before each row (null when there is none)."""
    if "step" in df.columns:
        df = df.drop("step")
    if not df["pos"].is_sorted():  # usually it is: sorting would move every line's text
        df = df.sort("pos")
    return df.set_sorted("pos").join_asof(steps_at, on="pos", strategy="backward")


def _error_lines(df: pl.DataFrame) -> pl.DataFrame:
    """ERROR lines and tracebacks, one row per error."""
    line = pl.col("line")
    is_traceback = line.str.strip_chars_start().str.starts_with("Traceback")
    is_exception = line.str.contains(_EXCEPTION_RE)
    err = df.filter(line.str.contains("ERROR", literal=True) | is_traceback | is_exception)
    # A traceback is one error: keep its exception line ("RuntimeError: ..."), which says what
    # happened, and drop the "Traceback (most recent call last):" header when one follows.
    err = err.with_columns(is_traceback.alias("_tb"), is_exception.alias("_exc"))
    next_is_exception = pl.col("_exc").shift(-1).fill_null(False)
    return err.filter(~(pl.col("_tb") & next_is_exception)).drop("_tb", "_exc")


def _events(
    err: pl.DataFrame, mf: pl.DataFrame, steps_at: pl.DataFrame, rank: int | None, rel: str, diags: list
) -> pl.DataFrame:
    if err.height > MAX_ERROR_EVENTS:
        diags.append(
            dg.info("log-errors-capped", f"{err.height} error lines; first {MAX_ERROR_EVENTS} kept as events", rel)
        )
        err = err.head(MAX_ERROR_EVENTS)
    err = _attach_step(err, steps_at)
    ovf = mf.filter(pl.col("overflow") == 1.0)
    kinds = ["log_error"] * err.height + ["overflow"] * ovf.height
    detail = err["line"].str.strip_chars().str.slice(0, 300).to_list() + [
        f"loss_scale={v}" for v in ovf["loss_scale"].to_list()
    ]
    return frame(
        {
            "kind": kinds,
            "step": err["step"].to_list() + ovf["step"].to_list(),
            "rank": rank,
            "wall_time": err["wall_time"].to_list() + ovf["wall_time"].to_list(),
            "duration_s": None,
            "detail": detail,
            "source": ["log"] * err.height + ["log:mindformers"] * ovf.height,
            "file": rel,
        },
        EVENTS,
    )


READER = Reader(name="textlog", claims=_claims, read=read)

__all__ = ["READER", "read", "MAX_LINE_BYTES", "CHUNK_BYTES"]
