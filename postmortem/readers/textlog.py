"""Text logs: callback lines of MindSpore / MindFormers and users' own key=value and JSON lines.

How it stays fast (a 1M-line log must read at 200+ MB/s on one core):

1. The file is read in big binary chunks; only whole lines are decoded (one ``decode`` per chunk).
2. Candidate lines are found with ``str.find`` on a few literal anchors ("loss is", "step:[",
   "step=", ...) over the whole chunk, so noise lines never reach Python code one by one.
3. The candidate lines go into one polars frame; every field is extracted with vectorised
   regexes (``str.extract``) and cast to numbers in bulk. Only JSON lines are parsed one by one.

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
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if scan.bad_encoding_line is None:
            scan.bad_encoding_line = first_line + body.count(b"\n", 0, exc.start)
        text = body.decode("utf-8", errors="replace")
    lines = pl.Series("line", text.split("\n"), dtype=pl.Utf8)
    scan.lines_total += lines.len()
    # One vectorised pass (literal alternation, SIMD in the regex engine) picks candidate lines.
    df = pl.DataFrame(
        {"lineno": pl.int_range(first_line, first_line + lines.len(), dtype=pl.Int64, eager=True), "line": lines}
    ).filter(pl.col("line").str.contains(_ANCHOR_RE))
    if df.is_empty():
        return
    too_long = df["line"].str.len_bytes() > MAX_LINE_BYTES
    if too_long.any():
        _note_long(scan, int(df.filter(too_long)["lineno"][0]))
        df = df.filter(~too_long)
    scan.parts.append(df.with_columns(pl.col("line").str.strip_chars_end("\r")))


_ANCHOR_RE = "|".join(re.escape(a) for a in _ANCHORS)


# --------------------------------------------------------------------------- parsing


def _wall_time(line: pl.Expr) -> pl.Expr:
    """Unix seconds from a timestamp at the line start, null when there is none."""
    g = line.str.extract_groups(_TS_RE)
    stamp = pl.concat_str([g.struct.field("1"), pl.lit(" "), g.struct.field("2")])
    secs = stamp.str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S", strict=False).dt.epoch("s")
    frac = pl.concat_str([pl.lit("0."), g.struct.field("3")]).cast(pl.Float64, strict=False).fill_null(0.0)
    zone = g.struct.field("4").fill_null("Z")
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
    return secs.cast(pl.Float64) + frac - offset.cast(pl.Float64)


def _num(line: pl.Expr, pattern: str) -> pl.Expr:
    return line.str.extract(pattern, 1).cast(pl.Float64, strict=False)


def _long(df: pl.DataFrame, fields: dict[str, tuple[str, str]], source: str) -> pl.DataFrame:
    """Wide (pos, step, wall_time, <value columns>) -> long scalar rows; null values dropped.

    ``fields`` maps a value column to (canonical tag, raw tag).
    """
    parts = [
        df.select(
            "pos",
            "step",
            "wall_time",
            pl.lit(tag).alias("tag"),
            pl.lit(raw).alias("raw_tag"),
            pl.col(col).cast(pl.Float64).alias("value"),
        )
        for col, (tag, raw) in fields.items()
        if col in df.columns
    ]
    if not parts:
        return _EMPTY_LONG
    out = pl.concat(parts).filter(pl.col("value").is_not_null())
    return out.with_columns(pl.lit(source).alias("source"))


_EMPTY_LONG = pl.DataFrame(
    schema={
        "pos": pl.Int64,
        "step": pl.Int64,
        "wall_time": pl.Float64,
        "tag": pl.Utf8,
        "raw_tag": pl.Utf8,
        "value": pl.Float64,
        "source": pl.Utf8,
    }
)


def _mindformers(df: pl.DataFrame) -> pl.DataFrame:
    line = pl.col("line")
    ms = 1e-3
    out = df.with_columns(
        epoch=line.str.extract(r"Epoch:\[\s*(\d+)/", 1).cast(pl.Int64, strict=False),
        step_in=line.str.extract(r"step:\[\s*(\d+)/", 1).cast(pl.Int64, strict=False),
        steps_total=line.str.extract(r"step:\[\s*\d+/\s*(\d+)\]", 1).cast(pl.Int64, strict=False),
        loss=_num(line, r"[\s,{]loss:\s*\[?\s*" + _NUM),
        lm_loss=_num(line, r"lm_loss:\s*" + _NUM),
        load_balancing_loss=_num(line, r"load_balancing_loss:\s*" + _NUM),
        mtp_loss=_num(line, r"mtp_loss:\s*" + _NUM),
        step_time=pl.coalesce(
            _num(line, r"per_step_time:\s*" + _NUM + r"\s*ms"),
            _num(line, r"[\s,{]time:\s*" + _NUM + r"\s*ms"),  # r0.3 - r0.6
        )
        * ms,
        lr=_num(line, r"[\s,{]lr:\s*" + _NUM),
        overflow=line.str.extract(r"overflow cond:\s*(True|False)", 1)
        .replace_strict({"True": 1.0, "False": 0.0}, default=None, return_dtype=pl.Float64),
        loss_scale=_num(line, r"loss_scale:\s*" + _NUM),
        global_norm=_num(line, r"global_norm:\s*\[?\s*" + _NUM),
        grad_norm=_num(line, r"[\s,{]grad_norm:\s*" + _NUM),
        tflops_npu=_num(line, r"train_throughput_per_npu:\s*" + _NUM + r"\s*T"),
        tflops_py=_num(line, r"[\s,{]throughput:\s*" + _NUM + r"\s*T"),
    ).filter(pl.col("step_in").is_not_null())
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


def _kv(df: pl.DataFrame) -> pl.DataFrame:
    """key=value lines -> long (pos, wall_time, key, raw value, step, rank_override)."""
    pairs = (
        df.select("pos", "wall_time", pl.col("line").str.extract_all(_KV_RE).alias("kv"))
        .explode("kv")
        .filter(pl.col("kv").is_not_null())
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
        .filter(pl.col("stepf").is_not_null() & pl.col("stepf").is_finite())
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
    """JSON lines -> the same long shape as _kv; also the line number of the first bad line."""
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
    return _with_step(pairs), first_bad


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


def _pairs_to_long(pairs: pl.DataFrame, source: str) -> pl.DataFrame:
    if pairs.is_empty():
        return _EMPTY_LONG.with_columns(pl.lit(None, pl.Int32).alias("line_rank"))
    mapping = {k: _key_tag(k) for k in pairs["key"].unique().to_list()}
    tags = {k: t for k, (t, _) in mapping.items()}
    scales = {k: s for k, (_, s) in mapping.items()}
    return (
        pairs.with_columns(
            value=pl.col("raw").cast(pl.Float64, strict=False)
            * pl.col("key").replace_strict(scales, return_dtype=pl.Float64),
            tag=pl.col("key").replace_strict(tags, return_dtype=pl.Utf8),
        )
        .filter(pl.col("value").is_not_null())
        .select(
            "pos",
            "step",
            "wall_time",
            "tag",
            pl.col("key").alias("raw_tag"),
            "value",
            pl.lit(source).alias("source"),
            "line_rank",
        )
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
    df = df.with_columns(wall_time=_wall_time(line))
    # One shape per line, first match wins.
    # One shape per line, first match wins. Literal tests only: the extraction below checks the
    # full shape (a line whose fields do not parse yields no values).
    def has(lit: str) -> pl.Expr:
        return line.str.contains(lit, literal=True)

    kind = (
        pl.when(has("step:[") & has("loss"))
        .then(pl.lit("mf"))
        .when(has("loss is") & has("epoch:"))
        .then(pl.lit("lm"))
        .when(has("epoch time:"))
        .then(pl.lit("tm"))
        .when(has("flops is"))
        .then(pl.lit("flops_total"))
        .when(has("mfu:"))
        .then(pl.lit("flops_step"))
        .when(has("samples/s/p"))
        .then(pl.lit("progress"))
        .when(has('step"') & has("{"))
        .then(pl.lit("json"))
        .when(has("step="))
        .then(pl.lit("kv"))
        .otherwise(pl.lit(None, pl.Utf8))
    )
    df = df.with_columns(kind=kind)

    longs: list[pl.DataFrame] = []
    # ---- MindFormers / pynative trainer
    mf = _mindformers(df.filter(pl.col("kind") == "mf"))
    longs.append(_long(mf, _MF_FIELDS, "log:mindformers"))
    spe_mf = mf["steps_total"].max() if mf.height and mf["epoch"].null_count() < mf.height else None

    # ---- LossMonitor: step within the epoch -> global step
    lm = df.filter(pl.col("kind") == "lm").with_columns(
        epoch=line.str.extract(r"epoch:\s*(\d+)", 1).cast(pl.Int64),
        step_in=line.str.extract(r"step:\s*(\d+),", 1).cast(pl.Int64),
        loss=_num(line, r"loss is\s*(?:Tensor\(.*?value=\s*)?" + _NUM),
    )
    spe = _steps_per_epoch(lm, spe_mf, rel, diags)
    lm = lm.with_columns(
        step=(pl.col("epoch") - 1) * spe + pl.col("step_in") if spe else pl.col("step_in")
    )
    longs.append(_long(lm, {"loss": ("loss", "loss")}, "log:lossmonitor"))

    # Step-bearing rows so far: lines without a step take the last step before them.
    kv_pairs = _kv(df.filter(pl.col("kind") == "kv"))
    json_pairs, bad_json_line = _json(df.filter(pl.col("kind") == "json"))
    if bad_json_line is not None:
        diags.append(dg.warning("log-json-invalid", "a JSON-looking line did not parse; skipped", rel, bad_json_line))
    steps_at = (
        pl.concat(
            [
                mf.select("pos", "step"),
                lm.select("pos", "step"),
                kv_pairs.select("pos", "step"),
                json_pairs.select("pos", "step"),
            ]
        )
        .unique("pos")
        .sort("pos")
    )

    # ---- TimeMonitor (per-epoch averages, placed at the last step of the epoch)
    tm = df.filter((pl.col("kind") == "tm") & ~line.str.contains(r"(?i)eval epoch time")).with_columns(
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
        )
    )

    # ---- FlopsUtilizationCollector
    flops = df.filter(pl.col("kind") == "flops_total")
    for key, label in (
        ("full_model_flops", "Full model flops"),
        ("full_hardware_flops", "Full hardware flops"),
        ("shard_model_flops", "Shard model flops"),
        ("shard_hardware_flops", "Shard hardware flops"),
    ):
        values = flops.select(_num(line, label + r" is\s*" + _NUM)).to_series().drop_nulls()
        if values.len():
            result.settings[key] = Setting(float(values[-1]), "log")
    fs = df.filter(pl.col("kind") == "flops_step").with_columns(
        step_time=_num(line, r"per step time:\s*" + _NUM) * 1e-3,
        mfu=_num(line, r"mfu:\s*" + _NUM) / 100.0,
        hfu=_num(line, r"hfu:\s*" + _NUM) / 100.0,
    )
    fs = _attach_step(fs, steps_at)
    longs.append(
        _long(
            fs,
            {"step_time": ("step_time", "per step time"), "mfu": ("mfu", "mfu"), "hfu": ("hfu", "hfu")},
            "log:flops",
        )
    )

    # ---- MindFormers progress line: samples/s per device, step of the line before it
    pg = df.filter(pl.col("kind") == "progress").with_columns(
        samples=_num(line, _NUM + r"\s*samples/s/p")
    )
    pg = _attach_step(pg, steps_at)
    longs.append(_long(pg, {"samples": ("samples_per_s", "samples/s/p")}, "log:mindformers"))

    kv_long = _pairs_to_long(kv_pairs, "log:kv")
    json_long = _pairs_to_long(json_pairs, "log:json")

    dropped = sum(int(x.filter(pl.col("step").is_null()).height) for x in longs)
    if dropped:
        diags.append(
            dg.info("log-no-step", f"{dropped} values had no step before them in the file; dropped", rel)
        )
    base_rank = artifact.rank
    fixed = [x.filter(pl.col("step").is_not_null()).with_columns(line_rank=pl.lit(None, pl.Int32)) for x in longs]
    allrows = pl.concat([*fixed, kv_long, json_long], how="vertical_relaxed").sort("pos", maintain_order=True)
    scalars = frame(
        {
            "step": allrows["step"],
            "tag": allrows["tag"],
            "raw_tag": allrows["raw_tag"],
            "value": allrows["value"],
            "wall_time": allrows["wall_time"],
            "rank": allrows["line_rank"].fill_null(base_rank) if base_rank is not None else allrows["line_rank"],
            "source": allrows["source"],
            "file": rel,
        },
        SCALARS,
    )
    result.tables["scalars"] = scalars
    result.tables["events"] = _events(df, mf, steps_at, base_rank, rel, diags)
    return result


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
    return df.sort("pos").join_asof(steps_at, on="pos", strategy="backward")


def _events(
    df: pl.DataFrame, mf: pl.DataFrame, steps_at: pl.DataFrame, rank: int | None, rel: str, diags: list
) -> pl.DataFrame:
    line = pl.col("line")
    err = df.filter(
        line.str.contains("ERROR", literal=True) | line.str.strip_chars_start().str.starts_with("Traceback")
    )
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
