"""TensorBoard event files (``events.out.tfevents.*``), as MindFormers writes them with tensorboardX
under ``tensorboard_dir/rank_{id}/``.

Decoded with the same wire decoder as the summary files rather than ``tensorboardX.proto.event_pb2``:
the scalar fast path (scalar_events.py, shared with mindspore_summary.py) is faster than
``Event.FromString`` plus Python attribute access per value, and one decoder keeps both readers'
behaviour on bad bytes alike.

Field numbers (tensorboardX/TF ``event.proto``, ``summary.proto``, ``tensor.proto``):
``Event{wall_time=1, step=2, file_version=3, graph_def=4, summary=5, ...}``;
``Summary.Value{tag=1, simple_value=2, histo=5, image=4, audio=6, tensor=8, metadata=9}``;
``TensorProto{dtype=1, tensor_shape=2{dim=2{size=1}}, tensor_content=4, float_val=5, double_val=6,
int_val=7, int64_val=10, half_val=13}``; ``HistogramProto{min=1, max=2, num=3, sum=4}``.

Scalars come from ``simple_value`` and from one-element tensors (tensorboardX ``new_style=True`` and
TF2 write scalars that way). Tags go through ``tags.canonical_tag`` (MindFormers' and Megatron's
names are there). Units (``tags.UNIT_CHOICES``): a TensorBoard scalar has none, so a duration is
read in its tag's default unit and loading settles each file's unit by evidence. MindFormers'
MFLossMonitor computes ``per_step_seconds = (time.time() - start) * 1000`` (milliseconds despite
the name, timed from step begin: the step's own timer) and writes
``add_scalar('iteration-time', int(per_step_seconds))``: the default, milliseconds. Megatron-LM
writes ``iteration-time`` in seconds (its interval timer). ``throughput`` is samples/s per device
(MindFormers); ``model-flops-throughput-per-npu`` is TFLOPS (``full_model_flops / per_step_ms /
1e9``). The ``... vs samples`` tags (x axis = samples) keep their own names and values.

Diagnostic slugs: ``tensorboard-truncated``, ``tensorboard-record-crc``, ``tensorboard-file-empty``
(framing.py), ``tensorboard-bad-record`` (CRC good, protobuf not), ``tensorboard-skipped`` (info).
"""

from __future__ import annotations

import re
import struct

import polars as pl

from ..diagnostics import info, warning
from ..text import Text
from ..model import HISTOGRAMS, Artifact, ReadResult, frame
from ..tags import UNIT_CHOICES, add_scalars_series, default_divisor
from .base import Location, Reader
from .framing import read_file, spans
from .protowire import Message, WireError, parse
from .scalar_events import ScalarColumns, decode_records, scalars_frame

NAME = "tensorboard"
_SIMPLE_VALUE_KEY = 0x15  # field 2, wire type 5
_STAMP_RE = re.compile(r"tfevents\.(\d+)")  # events.out.tfevents.{unix seconds}.{host}
# Raw tags whose default unit is not the canonical one (iteration-time: ms, divided by 1000).
_SCALED = {raw: default_divisor(NAME, raw) for source, raw in UNIT_CHOICES if source == NAME and default_divisor(NAME, raw) != 1.0}

# TF DataType -> struct format of tensor_content (bfloat16 = 14 handled apart)
_CONTENT_FORMATS = {1: "f", 2: "d", 3: "i", 4: "B", 5: "h", 6: "b", 9: "q", 10: "?", 19: "e"}


def claims(artifact: Artifact) -> bool:
    return "events.out.tfevents." in artifact.rel.rsplit("/", 1)[-1]


def locate(artifact: Artifact) -> Location:
    """Rank from the path (MindFormers' rank_N/); launch order from the writer's stamp in the name."""
    m = _STAMP_RE.search(artifact.rel.rsplit("/", 1)[-1])
    return Location(artifact.rank, int(m.group(1)) if m else None)


def _tensor_scalar(t: Message) -> float | None:
    shape = t.message(2)
    n = 1
    if shape is not None:
        for dim in shape.messages(2):
            n *= dim.int64(1)
    if n != 1:
        return None
    for number, fmt in ((5, "f"), (6, "d")):
        vals = t.repeated_fixed(number, fmt)
        if vals:
            return float(vals[0]) if len(vals) == 1 else None
    for number in (7, 10):
        ints = t.repeated_varint(number)
        if ints:
            return float(ints[0]) if len(ints) == 1 else None
    halves = t.repeated_varint(13)
    if halves:
        return struct.unpack("<e", struct.pack("<H", halves[0] & 0xFFFF))[0] if len(halves) == 1 else None
    content = t.raw(4)
    dtype = t.int64(1)
    if content:
        if dtype == 14 and len(content) == 2:
            return struct.unpack("<f", b"\x00\x00" + content)[0]
        fmt = _CONTENT_FORMATS.get(dtype)
        if fmt and struct.calcsize(fmt) == len(content):
            return float(struct.unpack("<" + fmt, content)[0])
    return None


def _general(buf: bytes, start: int, end: int, cols: ScalarColumns, hist: list[tuple]) -> None:
    """Decode any Event: scalars to ``cols``, histograms to ``hist``, the rest counted."""
    event = parse(memoryview(buf)[start:end])
    if event.has(3):  # file_version header
        return
    summary = event.message(5)
    if summary is None:
        for number, what in ((4, "graph"), (6, "log-message"), (7, "session-log"),
                             (8, "run-metadata"), (9, "meta-graph")):
            if event.has(number):
                cols.skip(what)
        return
    step = event.int64(2)
    wall = event.f64(1)
    for value in summary.messages(1):
        tag = value.string(1)
        scalar: float | None = None
        if value.has(2):
            scalar = value.f32(2)
        elif value.has(8):
            scalar = _tensor_scalar(value.message(8))  # type: ignore[arg-type]
            if scalar is None:
                cols.skip("tensor-not-scalar")
                continue
        elif value.has(5):
            h = value.message(5)
            assert h is not None
            hist.append((step, tag, round(h.f64(3)), h.f64(1), h.f64(2), h.f64(4)))
            continue
        else:
            cols.skip("image" if value.has(4) else "audio" if value.has(6) else "other")
            continue
        cols.steps.append(step)
        cols.tags.append(tag)
        cols.values.append(scalar)
        cols.walls.append(wall)


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader=NAME)
    buf = read_file(artifact.path)
    cols = ScalarColumns()
    hist: list[tuple] = []

    def general(offset: int, start: int, end: int) -> None:
        try:
            _general(buf, start, end, cols, hist)
        except WireError as exc:
            result.diagnostics.append(warning("tensorboard-bad-record", path=artifact.rel, offset=offset, detail=str(exc)))

    decode_records(buf, spans(buf, artifact.rel, NAME, result.diagnostics), cols, _SIMPLE_VALUE_KEY, general)
    if cols.skipped:
        what = [Text("clause.record-count", n=n, kind=k) for k, n in sorted(cols.skipped.items())]
        result.diagnostics.append(info("tensorboard-skipped", path=artifact.rel, kinds=what))
    scalars = _series_of_add_scalars(scalars_frame(cols, artifact.rank, "tensorboard", artifact.rel), artifact.rel)
    result.tables["scalars"] = _default_units(scalars)
    result.tables["histograms"] = frame({
        "step": [h[0] for h in hist], "tag": [h[1] for h in hist], "count": [h[2] for h in hist],
        "min": [h[3] for h in hist], "max": [h[4] for h in hist], "sum": [h[5] for h in hist],
        "rank": artifact.rank, "file": artifact.rel,
    }, HISTOGRAMS)
    return result


def _series_of_add_scalars(df: pl.DataFrame, rel: str) -> pl.DataFrame:
    """An add_scalars sub-series keeps its folder's name in its tag (``expert_load/0/ep_3``): the
    main tag alone is the same in every sub-series' file, and one value per (tag, rank, step) would
    keep one of them."""
    if df.is_empty():
        return df
    renamed = {raw: tag for raw in df["raw_tag"].unique().cast(pl.Utf8).to_list()
               if (tag := add_scalars_series(raw, rel)) is not None}
    if not renamed:
        return df
    raw = pl.col("raw_tag").cast(pl.Utf8)
    return df.with_columns(pl.when(raw.is_in(list(renamed))).then(raw.replace_strict(renamed, default=None))
                           .otherwise(pl.col("tag").cast(pl.Utf8)).cast(pl.Categorical).alias("tag"))


def _default_units(df: pl.DataFrame) -> pl.DataFrame:
    """Durations in seconds under their tag's default unit (loading may rescale a file later)."""
    raw = pl.col("raw_tag")
    divisor = raw.cast(pl.Utf8).replace_strict(_SCALED, default=1.0, return_dtype=pl.Float64)
    return df.with_columns(value=pl.when(raw.is_in(list(_SCALED))).then(pl.col("value") / divisor).otherwise(pl.col("value")))


READER = Reader(name=NAME, claims=claims, read=read, locate=locate)
