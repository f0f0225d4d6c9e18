"""Text logs: callback lines of MindSpore / MindFormers and users' own key=value and JSON lines.

How it stays fast (a 1M-line log must read at 200+ MB/s on one core):

1. The file is read in big binary chunks of whole lines; polars checks the UTF-8 and splits the
   lines (Python decodes a chunk only when it is not valid UTF-8).
2. Candidate lines are picked with one vectorised regex over literal anchors ("loss is",
   "step:[", "step=", ...), so noise lines never reach Python code one by one.
3. The candidate lines go into one polars frame; every field is extracted with vectorised
   regexes and cast to numbers in bulk. Capture passes are the main cost, so the common line
   shapes are matched by one anchored regex each (``_fields``), and timestamps by an ASCII
   regex; other lines take the per-field patterns. Flat JSON objects are split into pairs by
   regexes too; only other JSON lines are parsed one by one with ``json.loads``.

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

import polars as pl

from .. import diagnostics as dg
from ..model import CANONICAL_TAGS, EVENTS, SCALARS, Artifact, ReadResult, Setting, canonical_tag, frame
from .base import Reader

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ERROR_EVENTS = 1000  # a crash loop can print millions of ERROR lines; keep the first ones

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
        self.bad_encoding_line: int | None = None
        self.long_line: int | None = None
        self.lines_total = 0

    def frame(self) -> pl.DataFrame:
        if not self.parts:
            return pl.DataFrame(schema={"lineno": pl.Int64, "line": pl.Utf8})
        return pl.concat(self.parts)


def _scan(path: str) -> _Scan:
    scan = _Scan()
    carry = b""
    skipping = False  # inside a line longer than MAX_LINE_BYTES that spans chunks
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(CHUNK_BYTES)
            if not chunk:
                break
            if skipping:
                nl = chunk.find(b"\n")
                if nl < 0:
                    continue
                chunk = chunk[nl + 1 :]
                scan.lines_total += 1
                skipping = False
            buf = carry + chunk if carry else chunk
            last = buf.rfind(b"\n")
            if last < 0:
                carry = buf
                if len(carry) > MAX_LINE_BYTES:
                    _note_long(scan, scan.lines_total + 1)
                    carry, skipping = b"", True
                continue
            body, carry = buf[:last], buf[last + 1 :]
            _scan_body(scan, body)
            if len(carry) > MAX_LINE_BYTES:
                _note_long(scan, scan.lines_total + 1)
                carry, skipping = b"", True
    if carry and not skipping:
        _scan_body(scan, carry)
    return scan


def _note_long(scan: _Scan, line_no: int) -> None:
    if scan.long_line is None:
        scan.long_line = line_no


def _scan_body(scan: _Scan, body: bytes) -> None:
    """Keep the candidate lines of ``body`` (whole lines, without the final newline)."""
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
                scan.bad_encoding_line = first_line + body.count(b"\n", 0, exc.start)
            decoded = body.decode("utf-8", errors="replace")
        text = pl.Series([decoded], dtype=pl.Utf8)
    lines = text.str.split("\n").explode().alias("line")
    scan.lines_total += lines.len()
    # One vectorised pass (literal alternation, SIMD in the regex engine) picks candidate lines.
    df = pl.DataFrame(
        {"lineno": pl.int_range(first_line, first_line + lines.len(), dtype=pl.Int64, eager=True), "line": lines}
    ).filter(pl.col("line").str.contains(_ANCHOR_RE) | pl.col("line").str.contains(_EXCEPTION_RE))
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
        return pl.Series([k[item] for k in self.codes], dtype=pl.Utf8).gather(codes)


def _long(df: pl.DataFrame, fields: dict[str, tuple[str, str]], source: str, labels: _Labels) -> pl.DataFrame:
    """Wide (pos, step, wall_time, <value columns>) -> long scalar rows; null values dropped.

    ``fields`` maps a value column to (canonical tag, raw tag).
    """
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


def _float(text: pl.Expr) -> pl.Expr:
    return text.cast(pl.Float64, strict=False)


def _int(text: pl.Expr) -> pl.Expr:
    return text.cast(pl.Int64, strict=False)


def _fields(df: pl.DataFrame, specs: dict, fast_re: str) -> pl.DataFrame:
    """``df`` plus one typed column per spec ``name: (convert, pattern, ...)``: the converted group 1
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
            name: convert(pl.col(name) if name in groups.columns else pl.lit(None, pl.Utf8))
            for name, (convert, *_) in specs.items()
        },
    )
    if fast.height == df.height:
        return fast
    slow = df.filter(~hit).with_columns(
        **{
            name: pl.coalesce([convert(line.str.extract(p, 1)) for p in patterns])
            if len(patterns) > 1
            else convert(line.str.extract(patterns[0], 1))
            for name, (convert, *patterns) in specs.items()
        }
    )
    return slow if fast.is_empty() else pl.concat([fast, slow]).sort("pos")


# Fast-path pieces (see _fields): ASCII only, and written so the regex is one-pass (at each
# byte one way on), which lets the regex engine capture groups with its one-pass DFA, ~3x cheaper
# than the general engine. A number here is a subset of _NUM's (no "--inf"): other lines go slow.
_FAST_NUM = r"(?:[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[Nn]a[Nn]|[Ii]nf(?:inity)?))"
_MF_SPECS = {
    "epoch": (_int, r"Epoch:\[\s*(\d+)/"),
    "step_in": (_int, r"step:\[\s*(\d+)/"),
    "steps_total": (_int, r"step:\[\s*\d+/\s*(\d+)\]"),
    "loss": (_float, r"[\s,{]loss:\s*\[?\s*" + _NUM),
    "lm_loss": (_float, r"lm_loss:\s*" + _NUM),
    "load_balancing_loss": (_float, r"load_balancing_loss:\s*" + _NUM),
    "mtp_loss": (_float, r"mtp_loss:\s*" + _NUM),
    "step_time": (
        lambda t: _float(t) * 1e-3,
        r"per_step_time:\s*" + _NUM + r"\s*ms",
        r"[\s,{]time:\s*" + _NUM + r"\s*ms",  # r0.3 - r0.6
    ),
    "lr": (_float, r"[\s,{]lr:\s*" + _NUM),
    "overflow": (
        lambda t: t.replace_strict({"True": 1.0, "False": 0.0}, default=None, return_dtype=pl.Float64),
        r"overflow cond:\s*(True|False)",
    ),
    "loss_scale": (_float, r"loss_scale:\s*" + _NUM),
    "global_norm": (_float, r"global_norm:\s*\[?\s*" + _NUM),
    "grad_norm": (_float, r"[\s,{]grad_norm:\s*" + _NUM),
    "tflops_npu": (_float, r"train_throughput_per_npu:\s*" + _NUM + r"\s*T"),
    "tflops_py": (_float, r"[\s,{]throughput:\s*" + _NUM + r"\s*T"),
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
    "epoch": (lambda t: t.cast(pl.Int64), r"epoch:\s*(\d+)"),
    "step_in": (lambda t: t.cast(pl.Int64), r"step:\s*(\d+),"),
    "loss": (_float, r"loss is\s*(?:Tensor\(.*?value=\s*)?" + _NUM),
}
_LM_FAST_RE = rf"^epoch: (?P<epoch>[0-9]+) step: (?P<step_in>[0-9]+), loss is (?P<loss>{_FAST_NUM})$"
_FS_SPECS = {
    "step_time": (lambda t: _float(t) * 1e-3, r"per step time:\s*" + _NUM),
    "mfu": (lambda t: _float(t) / 100.0, r"mfu:\s*" + _NUM),
    "hfu": (lambda t: _float(t) / 100.0, r"hfu:\s*" + _NUM),
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
    """key=value lines -> long (pos, wall_time, key, raw value, step, rank_override)."""
    pairs = (
        _kv_tokens(df)
        .select(
            "pos",
            "wall_time",
            pl.col("kv").str.splitn("=", 2).struct.rename_fields(["key", "raw"]).struct.unnest(),
        )
        .with_columns(pl.col("raw").str.strip_chars("\"'"))
    )
    return _with_step(pairs)


def _with_step(pairs: pl.DataFrame) -> pl.DataFrame:
    """Attach each line's step (and its own rank key) to its pairs; keep lines with a step."""
    step = (
        pairs.filter(pl.col("key").is_in(_STEP_KEYS))
        .with_columns(pl.col("raw").cast(pl.Float64, strict=False).alias("stepf"), (pl.col("key") == "step").alias("pref"))
        # a step must be a number that fits in int64 (a logged 1e20 is noise, not a step)
        .filter(pl.col("stepf").is_not_null() & pl.col("stepf").is_finite() & (pl.col("stepf").abs() < 2.0**62))
        .sort("pref", descending=True)
        .unique("pos", keep="first")
        .select("pos", pl.col("stepf").cast(pl.Int64).alias("step"))
    )
    rank = (
        pairs.filter(pl.col("key") == "rank")
        .select("pos", pl.col("raw").cast(pl.Int32, strict=False).alias("line_rank"))
        .unique("pos", keep="first")
    )
    return (
        pairs.join(step, on="pos", how="inner")
        .join(rank, on="pos", how="left")
        .filter(~pl.col("key").is_in(("step", "global_step", "rank", "epoch_step")))
    )


def _json(df: pl.DataFrame) -> tuple[pl.DataFrame, int | None]:
    """JSON lines -> the same long shape as _kv; also the line number of the first bad line.

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
    return _with_step(pairs), first_bad


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


def _pairs_to_long(pairs: pl.DataFrame, source: str, labels: _Labels) -> pl.DataFrame:
    if pairs.is_empty():
        return _EMPTY_LONG.with_columns(pl.lit(None, pl.Int32).alias("line_rank"))
    mapping = {k: _key_tag(k) for k in pairs["key"].unique().to_list()}
    codes = {k: labels.code(t, k, source) for k, (t, _) in mapping.items()}
    scales = {codes[k]: s for k, (_, s) in mapping.items()}
    return (
        pairs.with_columns(label=pl.col("key").replace_strict(codes, return_dtype=pl.UInt32))
        .with_columns(
            value=pl.col("raw").cast(pl.Float64, strict=False)
            * pl.col("label").replace_strict(scales, return_dtype=pl.Float64),
        )
        .filter(pl.col("value").is_not_null())
        .select("pos", "step", "wall_time", "label", "value", "line_rank")
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

    # "pos" orders lines; the line number does.
    df = scan.frame().with_columns(pos=pl.col("lineno"))
    line = pl.col("line")
    df = df.with_columns(_wall_time(df["line"]))
    kinds = _split_kinds(df)

    longs: list[pl.DataFrame] = []
    labels = _Labels()
    # ---- MindFormers / pynative trainer
    mf = _mindformers(kinds["mf"])
    longs.append(_long(mf, _MF_FIELDS, "log:mindformers", labels))
    spe_mf = mf["steps_total"].max() if mf.height and mf["epoch"].null_count() < mf.height else None

    # ---- LossMonitor: step within the epoch -> global step
    lm = _fields(kinds["lm"], _LM_SPECS, _LM_FAST_RE)
    spe = _steps_per_epoch(lm, spe_mf, rel, diags)
    lm = lm.with_columns(
        step=(pl.col("epoch") - 1) * spe + pl.col("step_in") if spe else pl.col("step_in")
    )
    longs.append(_long(lm, {"loss": ("loss", "loss")}, "log:lossmonitor", labels))

    # Step-bearing rows so far: lines without a step take the last step before them.
    kv_pairs = _kv(kinds["kv"])
    json_pairs, bad_json_line = _json(kinds["json"])
    if bad_json_line is not None:
        diags.append(dg.warning("log-json-invalid", "a JSON-looking line did not parse; skipped", rel, bad_json_line))
    # One row per line. All rows of a line carry its step, so dropping a row whose pos repeats the
    # row before it is a cheap unique("pos") (kv/json rows of a line are adjacent: 8x fewer rows).
    first_of_line = pl.col("pos").diff().fill_null(1) != 0
    steps_at = (
        pl.concat([x.select("pos", "step").filter(first_of_line) for x in (mf, lm, kv_pairs, json_pairs)])
        .sort("pos")
        .filter(first_of_line)
    )

    # ---- TimeMonitor (per-epoch averages, placed at the last step of the epoch)
    tm = kinds["tm"].filter(~line.str.contains(r"(?i)eval epoch time")).with_columns(
        epoch_time=_num(line, r"epoch time:\s*" + _NUM) * 1e-3,
        step_time=_num(line, r"per step time:\s*" + _NUM) * 1e-3,
        data_time=_num(line, r"data time:\s*" + _NUM) * 1e-3,
        ordinal=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
    )
    tm = _attach_step(tm, steps_at)
    if spe:
        tm = tm.with_columns(step=pl.col("step").fill_null(pl.col("ordinal") * spe))
    longs.append(
        _long(
            tm,
            {
                "epoch_time": ("epoch_time", "epoch time"),
                "step_time": ("step_time", "per step time"),
                "data_time": ("data_time", "data time"),
            },
            "log:timemonitor",
            labels,
        )
    )

    # ---- FlopsUtilizationCollector
    flops = kinds["flops_total"]
    for key, label in (
        ("full_model_flops", "Full model flops"),
        ("full_hardware_flops", "Full hardware flops"),
        ("shard_model_flops", "Shard model flops"),
        ("shard_hardware_flops", "Shard hardware flops"),
    ):
        values = flops.select(_num(line, label + r" is\s*" + _NUM)).to_series().drop_nulls()
        if values.len():
            result.settings[key] = Setting(float(values[-1]), "log")
    fs = _fields(kinds["flops_step"], _FS_SPECS, _FS_FAST_RE)
    fs = _attach_step(fs, steps_at)
    longs.append(
        _long(
            fs,
            {"step_time": ("step_time", "per step time"), "mfu": ("mfu", "mfu"), "hfu": ("hfu", "hfu")},
            "log:flops",
            labels,
        )
    )

    # ---- MindFormers progress line: samples/s per device, step of the line before it
    pg = kinds["progress"].with_columns(
        samples=_num(line, _NUM + r"\s*samples/s/p")
    )
    pg = _attach_step(pg, steps_at)
    longs.append(_long(pg, {"samples": ("samples_per_s", "samples/s/p")}, "log:mindformers", labels))

    kv_long = _pairs_to_long(kv_pairs, "log:kv", labels)
    json_long = _pairs_to_long(json_pairs, "log:json", labels)

    dropped = sum(x["step"].null_count() for x in longs)
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
    # The parts are a few dozen chunks; sorting one contiguous frame is ~30% cheaper.
    allrows = pl.concat([*fixed, kv_long, json_long], how="vertical_relaxed", rechunk=True)
    allrows = allrows.sort("pos", maintain_order=True)
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
    result.tables["events"] = _events(df, mf, steps_at, base_rank, rel, diags)
    return result


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


def _events(
    df: pl.DataFrame, mf: pl.DataFrame, steps_at: pl.DataFrame, rank: int | None, rel: str, diags: list
) -> pl.DataFrame:
    line = pl.col("line")
    is_traceback = line.str.strip_chars_start().str.starts_with("Traceback")
    is_exception = line.str.contains(_EXCEPTION_RE)
    err = df.filter(line.str.contains("ERROR", literal=True) | is_traceback | is_exception)
    # A traceback is one error: keep its exception line ("RuntimeError: ..."), which says what
    # happened, and drop the "Traceback (most recent call last):" header when one follows.
    err = err.with_columns(is_traceback.alias("_tb"), is_exception.alias("_exc"))
    next_is_exception = pl.col("_exc").shift(-1).fill_null(False)
    err = err.filter(~(pl.col("_tb") & next_is_exception)).drop("_tb", "_exc")
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
