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

Speed: most records of a long run are scalar-only Events. ``fast_scalars`` decodes exactly that
byte layout (fields in number order, short tags, float values) straight from the file buffer and
gives up (returns False, appending nothing) on anything else, which then goes through the general
``protowire`` decoder. Both paths give the same result; tests check it against MindSpore's own
``summary_pb2``.

Diagnostic slugs: ``summary-truncated``, ``summary-record-crc``, ``summary-file-empty`` (framing.py),
``summary-bad-record`` (a record whose CRC is good but whose protobuf does not parse),
``summary-skipped`` (info: content counted, not decoded).
"""

from __future__ import annotations

import re
import struct

import numpy as np
import polars as pl

from ..diagnostics import Diagnostic, info, warning
from ..text import Text
from ..model import HISTOGRAMS, SCALARS, Artifact, ReadResult, Setting, canonical_tag, frame
from .base import Location, Reader
from .framing import FOOTER, HEADER, read_file, spans
from .protowire import Message, WireError, parse, to_int64, varint

try:
    from ._scalars import decode as _c_decode
except ImportError:  # built without a compiler: numpy groups and the per-record loop, same rows
    _c_decode = None

NAME = "summary"
_NAME_RE = re.compile(r"summary\.(\d+)")
_DEVICE_RE = re.compile(r"summary\.\d+\.(\d+)\.")
_F64 = struct.Struct("<d").unpack_from
_F32 = struct.Struct("<f").unpack_from

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


class ScalarColumns:
    """Columnar accumulators: one list per varying column, frames built once at the end.

    Every row remembers the ordinal of the record it came from (``ords``), so records decoded in
    groups (see ``decode_records``) and one by one can be put back in file order at the end.
    """

    def __init__(self) -> None:
        self.ords: list[int] = []
        self.steps: list[int] = []
        self.tags: list[str] = []
        self.values: list[float] = []
        self.walls: list[float] = []
        self.h_steps: list[int] = []
        self.h_tags: list[str] = []
        self.h_stats: list[tuple[int, float, float, float, int, int, int]] = []
        self.tag_cache: dict[bytes, str] = {}
        self.tag_codes: dict[bytes, int] = {}  # tag bytes -> code, for the C decoder
        self.skipped: dict[str, int] = {}
        # Finished pieces: the lists above (flushed) or numpy columns of a vectorised group.
        self.chunks: list[tuple[pl.Series, ...]] = []

    def flush(self) -> None:
        if self.steps:
            self.chunks.append((pl.Series(self.ords, dtype=pl.Int64), pl.Series(self.steps, dtype=pl.Int64),
                                pl.Series(self.tags, dtype=pl.Categorical), pl.Series(self.values, dtype=pl.Float64),
                                pl.Series(self.walls, dtype=pl.Float64)))
            self.ords, self.steps, self.tags, self.values, self.walls = [], [], [], [], []

    def columns(self) -> dict[str, pl.Series]:
        """step, raw_tag, value, wall_time over everything decoded, in file order."""
        self.flush()
        names = ("step", "raw_tag", "value", "wall_time")
        if not self.chunks:
            return {name: [] for name in names}  # type: ignore[misc]
        df = pl.DataFrame({name: pl.concat([c[i] for c in self.chunks], rechunk=True)
                           for i, name in enumerate(("_ord", *names))})
        if not df["_ord"].is_sorted():
            df = df.sort("_ord", maintain_order=True)  # stable: values of one record keep their order
        return {name: df[name] for name in names}

    def skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1


def fast_scalars(buf: bytes, start: int, end: int, cols: ScalarColumns, value_key: int = 0x1D) -> bool:
    """Decode ``Event{wall_time=1, step=2, summary=5{value=1{tag=1, <float value>}*}}``.

    ``value_key`` is the key byte of the float field: 0x1D for MindSpore's ``scalar_value = 3``,
    0x15 for TensorBoard's ``simple_value = 2`` (the two Event layouts are otherwise the same).
    Returns False, leaving ``cols`` unchanged, when the record has any other shape.
    """
    if end - start < 12 or buf[start] != 0x09 or buf[start + 9] != 0x10:
        return False
    wall = _F64(buf, start + 1)[0]
    p = start + 10
    step = buf[p]
    if step < 0x80:
        p += 1
    else:
        step, p = varint(buf, p)
        step = to_int64(step)
    if p + 2 > end or buf[p] != 0x2A:
        return False
    n = buf[p + 1]
    if n < 0x80:
        p += 2
    else:
        n, p = varint(buf, p + 1)
    if p + n != end or n == 0:
        return False
    steps, tags, values, walls, cache = cols.steps, cols.tags, cols.values, cols.walls, cols.tag_cache
    mark = len(steps)
    while p < end:
        vlen = buf[p + 1] if p + 1 < end else 0x80
        vend = p + 2 + vlen
        if buf[p] != 0x0A or vlen >= 0x80 or vlen < 7 or vend > end or buf[p + 2] != 0x0A:
            break
        tlen = buf[p + 3]
        q = p + 4 + tlen
        if tlen >= 0x80 or q + 5 != vend or buf[q] != value_key:
            break
        key = buf[p + 4:q]
        tag = cache.get(key)
        if tag is None:
            tag = cache[key] = key.decode("utf-8", errors="replace")
        steps.append(step)
        tags.append(tag)
        values.append(_F32(buf, q + 1)[0])
        walls.append(wall)
        p = vend
    else:
        return True
    del steps[mark:], tags[mark:], values[mark:], walls[mark:]
    return False


_MIN_RUN = 32  # below this a run of same-length records is not worth vectorising


def _layout(buf: bytes, start: int, end: int, value_key: int) -> tuple[int, int, list[tuple[str, int]]] | None:
    """Where a scalar-only Event keeps its step and floats: (step offset, step bytes, [(tag, float offset)]).

    Offsets are relative to the record start; None if the record is not of the fast layout.
    """
    probe = ScalarColumns()
    if not fast_scalars(buf, start, end, probe, value_key):
        return None
    p = start + 10
    while buf[p] >= 0x80:
        p += 1
    step_len = p + 1 - (start + 10)
    offsets = []
    q = end
    for tag in reversed(probe.tags):  # each value ends with its 4 float bytes
        offsets.append((tag, q - 4 - start))
        q -= 2 + 2 + len(tag.encode("utf-8")) + 5
    return 10, step_len, offsets[::-1]


_MAX_TEMPLATES = 64  # distinct record layouts tried per length (one per tag or tag set, in practice)


def _vector_group(buf: bytes, arr: np.ndarray, starts: np.ndarray, ords: np.ndarray, length: int,
                  cols: ScalarColumns, value_key: int) -> np.ndarray:
    """Decode same-length records column-wise; return which of them were decoded.

    Records whose bytes equal a template record's everywhere except in the wall time, step and
    float values parse exactly like the template, so those fields can be read with numpy. Each
    template is one layout (one tag, or one set of tags); records matching none are left for the
    per-record path.
    """
    stride = length + HEADER + FOOTER
    if len(starts) > 1 and (np.diff(starts) == stride).all():
        # back to back (a summary file: one record per step): a zero-copy (records x bytes) view
        base = arr[int(starts[0]):int(starts[0]) + (len(starts) - 1) * stride + length]
        rows = np.lib.stride_tricks.as_strided(base, shape=(len(starts), length), strides=(stride, 1), writeable=False)
    else:  # interleaved with other lengths (TensorBoard: one tag per record): gather them
        rows = arr[starts[:, None] + np.arange(length)]
    decoded = np.zeros(len(starts), dtype=bool)
    open_rows = np.ones(len(starts), dtype=bool)
    for _ in range(_MAX_TEMPLATES):
        candidates = np.flatnonzero(open_rows)
        if candidates.size < _MIN_RUN:
            break
        t = int(candidates[0])
        layout = _layout(buf, int(starts[t]), int(starts[t]) + length, value_key)
        open_rows[t] = False
        if layout is None or layout[1] > 9:  # other record kinds; negative / huge steps
            continue
        step_at, step_len, floats = layout
        fixed = np.ones(length, dtype=bool)
        fixed[1:9] = False
        fixed[step_at:step_at + step_len] = False
        for _, at in floats:
            fixed[at:at + 4] = False
        pool = rows if candidates.size == len(rows) else rows[candidates]
        sub = candidates[(pool[:, fixed] == rows[t, fixed]).all(axis=1)]
        step_bytes = rows[sub, step_at:step_at + step_len].astype(np.uint64)
        cont = step_bytes >= 0x80
        sub = sub[cont[:, :-1].all(axis=1) & ~cont[:, -1]]  # the step varint has the template's length
        open_rows[sub] = False
        if sub.size == 0:
            continue
        mine = rows[sub]
        steps = np.zeros(len(sub), dtype=np.uint64)
        for i in range(step_len):
            steps |= (mine[:, step_at + i].astype(np.uint64) & np.uint64(0x7F)) << np.uint64(7 * i)
        walls = np.ascontiguousarray(mine[:, 1:9]).view("<f8")[:, 0]
        values = np.stack([np.ascontiguousarray(mine[:, at:at + 4]).view("<f4")[:, 0] for _, at in floats], axis=1)
        k = len(floats)
        tags = dict(enumerate(tag for tag, _ in floats))
        cols.flush()
        cols.chunks.append((
            pl.Series(np.repeat(ords[sub], k)),
            pl.Series(np.repeat(steps.astype(np.int64), k)),
            # tag codes 0..k-1 per record, mapped to the k tag strings in one vectorised step
            pl.Series(np.tile(np.arange(k), len(sub))).replace_strict(tags, return_dtype=pl.Categorical),
            pl.Series(values.astype(np.float64).ravel()),
            pl.Series(np.repeat(walls, k)),
        ))
        decoded[sub] = True
    return decoded


def _decode_in_c(buf: bytes, spans: np.ndarray, cols: ScalarColumns, value_key: int) -> np.ndarray:
    """The plain scalar records, decoded by _scalars.c into one chunk; the indices of the others."""
    out = _c_decode(buf, np.ascontiguousarray(spans, dtype=np.int64), value_key, cols.tag_codes)
    if out["ord"]:
        names = pl.Series([tag.decode("utf-8", errors="replace") for tag in cols.tag_codes], dtype=pl.Categorical)
        cols.flush()
        cols.chunks.append((
            pl.Series(np.frombuffer(out["ord"], dtype=np.int64)),
            pl.Series(np.frombuffer(out["step"], dtype=np.int64)),
            names.gather(np.frombuffer(out["tag"], dtype=np.int32)),
            pl.Series(np.frombuffer(out["value"], dtype=np.float64)),
            pl.Series(np.frombuffer(out["wall"], dtype=np.float64)),
        ))
    return np.frombuffer(out["undone"], dtype=np.int64)


def decode_records(buf: bytes, spans: np.ndarray, cols: ScalarColumns, value_key: int, general) -> None:
    """Decode every record: plain scalar Events in C (_scalars.c) or, without it, same-length ones in
    groups with numpy; the rest one by one with ``fast_scalars`` and, failing that,
    ``general(offset, start, end)``. Rows end up in file order.

    ``spans`` holds ``(record_offset, data_start, data_end)`` rows from ``framing.spans``. Grouping
    by length (not only by adjacency) matters for TensorBoard files, where each record holds one
    scalar and the tags of a step alternate.
    """
    n = len(spans)
    if n == 0:
        return
    if _c_decode is not None:
        rest = _decode_in_c(buf, spans, cols, value_key)
    else:
        lengths = spans[:, 2] - spans[:, 1]
        done = np.zeros(n, dtype=bool)
        arr = np.frombuffer(buf, dtype=np.uint8)
        values, counts = np.unique(lengths, return_counts=True)
        for length in values[counts >= _MIN_RUN].tolist():
            members = np.flatnonzero(lengths == length)
            decoded = _vector_group(buf, arr, spans[members, 1], members, int(length), cols, value_key)
            done[members[decoded]] = True
        rest = np.flatnonzero(~done)
    for k in rest.tolist():
        offset, start, end = spans[k].tolist()
        before = len(cols.steps)
        if not fast_scalars(buf, start, end, cols, value_key):
            general(offset, start, end)
        cols.ords.extend([k] * (len(cols.steps) - before))


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


def scalars_frame(cols: ScalarColumns, rank: int | None, source: str, rel: str) -> pl.DataFrame:
    """SCALARS rows from the decoded columns; canonical tags are mapped once per distinct raw tag."""
    columns = cols.columns()
    df = frame({**columns, "rank": rank, "source": source, "file": rel}, SCALARS)
    mapping = {raw: canonical_tag(raw) for raw in df["raw_tag"].unique().to_list()}
    return df.with_columns(pl.col("raw_tag").replace_strict(mapping, default=None, return_dtype=pl.Categorical).alias("tag"))


def _histograms_frame(cols: ScalarColumns, rank: int | None, rel: str) -> pl.DataFrame:
    names = ("count", "min", "max", "sum", "nan_count", "pos_inf_count", "neg_inf_count")
    columns: dict[str, object] = dict(zip(names, map(list, zip(*cols.h_stats)))) if cols.h_stats else {}
    columns.update(step=cols.h_steps, tag=cols.h_tags, rank=rank, file=rel)
    return frame(columns, HISTOGRAMS)


READER = Reader(name=NAME, claims=claims, read=read, locate=locate)
