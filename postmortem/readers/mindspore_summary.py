"""MindSpore summary files (``SummaryRecord`` / ``SummaryCollector``): scalars and histograms.

Claims ``...summary.{stamp}[.{device_id}.{host}]..._MS``; the ``_lineage`` files beside them belong
to lineage.py. One call reads one file; ordering files and detecting restarts is loading's job
(``locate`` gives it the rank and the launch stamp from the name).

What becomes data (formats.md section 1 has the field numbers):
* every ``scalar_value`` (float32 widened to float64, NaN/Inf kept) -> SCALARS;
* ``tensor`` values holding exactly one element -> SCALARS as well; larger tensors are counted;
* ``histogram`` values -> HISTOGRAMS (summary statistics; buckets are not kept);
* images, graphs, loss landscapes and explain events are counted, not decoded (one info diagnostic).
The same (tag, step) written twice gives two rows; load.py deduplicates.

Speed: most records of a long run are scalar-only Events, which the C decoder takes
(scalar_events.py); every other record goes through the general ``protowire`` decoder below, the
reference. Both paths give the same result; tests check it against MindSpore's own ``summary_pb2``.

Diagnostic slugs: ``summary-truncated``, ``summary-record-crc``, ``summary-file-empty`` (framing.py),
``summary-bad-record`` (a record whose CRC is good but whose protobuf does not parse),
``summary-skipped`` (info: content counted, not decoded).
"""

from __future__ import annotations

import re
import struct

import polars as pl

from ..diagnostics import Diagnostic, info, warning
from ..text import Text
from ..model import HISTOGRAMS, Artifact, ReadResult, Setting, frame
from .base import Location, Reader
from .framing import read_file, spans
from .protowire import Message, WireError, parse
from .scalar_events import ScalarColumns, decode_records, scalars_frame

NAME = "summary"
_NAME_RE = re.compile(r"summary\.(\d+)")
_DEVICE_RE = re.compile(r"summary\.\d+\.(\d+)\.")
# anf_ir DataType -> struct format for raw_data (bfloat16 handled apart)
_RAW_FORMATS = {1: "?", 2: "b", 3: "h", 4: "i", 5: "q", 6: "B", 7: "H", 8: "I", 9: "Q",
                10: "e", 11: "f", 12: "d"}
_DT_BFLOAT16 = 46


def summary_stamp(name: str) -> int | None:
    """The unix-seconds stamp in a summary file name (``...summary.1700000000.0.host_MS``)."""
    m = _NAME_RE.search(name)
    return int(m.group(1)) if m else None


def device_id(name: str) -> int | None:
    """The device id MindSpore >= 1.x puts after the stamp; None for older names."""
    m = _DEVICE_RE.search(name)
    return int(m.group(1)) if m else None


def file_rank(artifact: Artifact) -> int | None:
    """A summary or lineage file's rank: from its path (rank_N/), else the device id in its name."""
    return artifact.rank if artifact.rank is not None else device_id(artifact.rel.rsplit("/", 1)[-1])


def locate(artifact: Artifact) -> Location:
    """Rank from the path or the device id; launch order from the stamp (one file per launch)."""
    return Location(file_rank(artifact), summary_stamp(artifact.rel.rsplit("/", 1)[-1]))


def claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1]
    return name.endswith("_MS") and _NAME_RE.search(name) is not None


def _tensor_scalar(t: Message) -> float | None:
    """The value of a one-element TensorProto (dims=1, data_type=2, float_data=3, ... raw_data=8)."""
    dims = t.repeated_varint(1)
    n = 1
    for d in dims:
        n *= d
    if n != 1:
        return None
    for number, fmt in ((3, "f"), (6, "d")):
        vals = t.repeated_fixed(number, fmt)
        if vals:
            return float(vals[0]) if len(vals) == 1 else None
    for number in (4, 5, 7):
        ints = t.repeated_varint(number)
        if ints:
            return float(ints[0] & 0xFFFFFFFFFFFFFFFF if number == 7 else ints[0]) if len(ints) == 1 else None
    raw = t.raw(8)
    dtype = t.int64(2)
    if raw:
        if dtype == _DT_BFLOAT16 and len(raw) == 2:
            return struct.unpack("<f", b"\x00\x00" + raw)[0]
        fmt = _RAW_FORMATS.get(dtype)
        if fmt and struct.calcsize(fmt) == len(raw):
            return float(struct.unpack("<" + fmt, raw)[0])
    return None


def _general(buf: bytes, start: int, end: int, cols: ScalarColumns) -> str | None:
    """Decode any Event; returns its kind ('version', 'summary', 'graph', ...)."""
    event = parse(memoryview(buf)[start:end])
    if event.has(3):
        return "version"
    if event.has(4):
        cols.skip("graph")
        return "graph"
    if event.has(6):
        cols.skip("explain")
        return "explain"
    summary = event.message(5)
    if summary is None:
        return None
    step = event.int64(2)
    wall = event.f64(1)
    for value in summary.messages(1):
        tag = value.string(1)
        if value.has(3):
            cols.steps.append(step)
            cols.tags.append(tag)
            cols.values.append(value.f32(3))
            cols.walls.append(wall)
        elif value.has(8):
            scalar = _tensor_scalar(value.message(8))  # type: ignore[arg-type]
            if scalar is None:
                cols.skip("tensor-not-scalar")
            else:
                cols.steps.append(step)
                cols.tags.append(tag)
                cols.values.append(scalar)
                cols.walls.append(wall)
        elif value.has(9):
            h = value.message(9)
            assert h is not None
            cols.h_steps.append(step)
            cols.h_tags.append(tag)
            cols.h_stats.append((h.int64(8), h.f64(6), h.f64(5), h.f64(7), h.int64(2), h.int64(3), h.int64(4)))
        elif value.has(4):
            cols.skip("image")
        elif value.has(10):
            cols.skip("landscape")
        else:
            cols.skip("other")
    return "summary"


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader=NAME)
    diagnostics: list[Diagnostic] = result.diagnostics
    buf = read_file(artifact.path)
    cols = ScalarColumns()
    kinds: set[str | None] = set()

    def general(offset: int, start: int, end: int) -> None:
        try:
            kinds.add(_general(buf, start, end, cols))
        except WireError as exc:
            diagnostics.append(warning("summary-bad-record", path=artifact.rel, offset=offset, detail=str(exc)))

    decode_records(buf, spans(buf, artifact.rel, NAME, diagnostics), cols, 0x1D, general)
    saw_version = "version" in kinds
    if cols.skipped:
        what = [Text("clause.record-count", n=n, kind=k) for k, n in sorted(cols.skipped.items())]
        diagnostics.append(info("summary-skipped", path=artifact.rel, kinds=what))
    rank = file_rank(artifact)
    result.tables["scalars"] = scalars_frame(cols, rank, "summary", artifact.rel)
    result.tables["histograms"] = _histograms_frame(cols, rank, artifact.rel)
    if saw_version or result.tables["scalars"].height:
        result.settings["framework"] = Setting("MindSpore", "summary")
    return result


def _histograms_frame(cols: ScalarColumns, rank: int | None, rel: str) -> pl.DataFrame:
    names = ("count", "min", "max", "sum", "nan_count", "pos_inf_count", "neg_inf_count")
    columns: dict[str, object] = dict(zip(names, map(list, zip(*cols.h_stats)))) if cols.h_stats else {}
    columns.update(step=cols.h_steps, tag=cols.h_tags, rank=rank, file=rel)
    return frame(columns, HISTOGRAMS)


READER = Reader(name=NAME, claims=claims, read=read, locate=locate)
