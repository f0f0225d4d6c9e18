"""Checkpoint inventory: names, shapes, dtypes and the saved step, without loading tensors.

A MindSpore ``.ckpt`` is a concatenation of serialized ``Checkpoint`` messages, one per parameter
(or per slice of a parameter over 512 MB), each with a single ``Value``. Concatenated protobuf
messages parse as one ``Checkpoint{repeated Value value = 1}``, so the file is a flat run of
``0x0a <varint len> <Value>``. We walk that wire format with small positioned reads and skip each
``tensor_content`` by its declared length, so a 14 GB file costs a few reads per parameter.

Facts checked against MindSpore 2.10 (``train/serialization.py``, ``train/checkpoint_pb2.py``,
``train/callback/_checkpoint.py``) and real files written by it:
- ``Value{string tag = 1; oneof {TensorProto tensor = 2; MapTensorProto maptensor = 3}}``,
  ``TensorProto{repeated int64 dims = 1; string tensor_type = 2; bytes tensor_content = 3}``,
  ``MapTensorProto{repeated TensorProto tensor = 1}`` (keys, values, status; read from source only).
- Slices: ``np.array_split`` along axis 0, every slice written with the full dims and the same tag.
- ``crc_check=True`` appends ``b"crc_num"`` + 10 bytes big-endian after the last message.
- ``enc_key`` encrypts the whole stream: not protobuf.
- A str value (append_dict) is ``tensor_type "str"`` with dims ``[0]``.
- Saves write ``{stem}.tmp`` and rename it to ``{stem}.ckpt`` / ``{stem}.safetensors``.
- ModelCheckpoint (and MindFormers' CheckpointMonitor) name files ``{prefix}-{epoch}_{step_in_epoch}``
  where ``step_in_epoch = (cur_step_num - 1) % batch_num + 1``: the name's step is never global.
  ``append_info`` adds 0-dim ``epoch_num`` and ``step_num`` (global ``cur_step_num`` plus any
  initial value); MindFormers adds ``global_step`` (the optimizer's ``[1]`` int32 counter) and
  ``loss_scale``. MindFormers' ``meta.json`` ``last_step`` is the step in the epoch as well.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..diagnostics import Diagnostic, error, info, warning
from ..text import Text
from ..model import CHECKPOINT_PARAMS, CHECKPOINTS, EVENTS, Artifact, ReadResult, Setting, frame
from . import guard
from .base import Reader, rank_from_path

# --------------------------------------------------------------------------- names and roles

_SAVE_NAME = re.compile(r"^(?P<prefix>.+)-(?P<epoch>\d+)_(?P<step>\d+)\.(?P<ext>ckpt|safetensors|tmp)$")
_LANDSCAPE_NAME = re.compile(r"^(?P<net>.+)_(?P<n>\d+)_(?P<unit>step|epoch)\.ckpt$")
_CHECKPOINT_SUFFIXES = (".ckpt", ".safetensors")

# Optimizer state is stored under the model parameter's name with one of these prefixes.
_OPTIMIZER_PREFIXES = (
    "adam_m.", "adam_v.", "moments.", "moment.", "moment1.", "moment2.", "moment3.", "accu_grads.",
    "accum.", "accumulation.", "linear.", "mean_grad.", "mean_square.", "vhat.", "exp_avg.",
    "exp_avg_sq.", "exp_avg_sq_row.", "exp_avg_sq_col.", "exp_avg_insq.", "grad_accumulation.",
    "ms_vhat.",
)
# Scalars and counters an optimizer, loss scaler, dataset or append_info keeps next to the model.
_BOOKKEEPING = frozenset({
    "global_step", "learning_rate", "beta1_power", "beta2_power", "epoch_num", "step_num",
    "loss_scale", "scale_sense", "current_iterator_step", "last_overflow_iterator_step",
    "cur_rank", "batch_num", "global_batch_size", "momentum", "weight_decay", "beta1", "beta2",
    "eps", "epsilon", "current_step", "iterations", "step",
})
# Values small enough to read: they carry the step and epoch.
_READ_VALUES = ("step_num", "global_step", "epoch_num", "loss_scale")
_MAX_VALUE_BYTES = 64
_MAX_TAG_BYTES = 1 << 16  # a parameter name longer than this is corruption, not a name
_MAX_HEADER_BYTES = 100 << 20  # safetensors JSON header bound (the format itself caps it at 100 MB)


def param_role(name: str, dtype: str = "") -> str:
    """"model", "optimizer" or "bookkeeping" for a parameter name as MindSpore saves it."""
    base = name.rsplit("/", 1)[-1]
    if base in _BOOKKEEPING or base.endswith((".learning_rate", ".global_step")) or dtype == "str":
        return "bookkeeping"
    if base.startswith(_OPTIMIZER_PREFIXES):
        return "optimizer"
    return "model"


# --------------------------------------------------------------------------- header types


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    shape: tuple[int, ...]
    dtype: str  # as written: Float32, BFloat16, ... (ckpt) or F32, BF16, ... (safetensors)
    elements: int
    role: str
    offset: int  # byte offset of its first Value (ckpt) or of its data (safetensors)
    nbytes: int  # tensor bytes as declared, all parts
    parts: int = 1  # values merged: > 1 for parameters MindSpore split at 512 MB


@dataclass(frozen=True, slots=True)
class CheckpointHeader:
    format: str  # "ckpt" | "safetensors" | "unknown"
    size: int
    params: tuple[ParamInfo, ...]
    values: dict[str, float]  # step_num, global_step, epoch_num, loss_scale where present
    crc: bool  # crc_num trailer (ckpt) or __metadata__.crc_num (safetensors)
    metadata: dict[str, str] = field(default_factory=dict)  # safetensors __metadata__
    problem: str | None = None  # diagnostic slug: ckpt-truncated, ckpt-unreadable, ckpt-corrupt
    problem_offset: int | None = None
    message: Text | None = None  # what the problem is

    @property
    def complete(self) -> bool:
        return self.problem is None


class _Bad(Exception):
    """Internal: the wire data stops making sense at ``offset``."""

    def __init__(self, slug: str, message: Text, offset: int):
        super().__init__(message.key)
        self.slug, self.message, self.offset = slug, message, offset


# --------------------------------------------------------------------------- positioned reads


class _Cursor:
    """Forward reads through a small window (os.pread); skips only move the position."""

    _WINDOW = 1 << 14  # one read per parameter header on big files; small tensors share a window

    def __init__(self, fd: int, size: int):
        self.fd, self.size, self.pos = fd, size, 0
        self._buf, self._buf_at = b"", 0

    def _fill(self, n: int) -> memoryview:
        start = self.pos - self._buf_at
        if start < 0 or start + n > len(self._buf):
            self._buf = os.pread(self.fd, max(n, self._WINDOW), self.pos)
            self._buf_at, start = self.pos, 0
        return memoryview(self._buf)[start : start + n]

    def read(self, n: int, limit: int) -> bytes:
        if self.pos + n > limit:
            raise _Bad("ckpt-truncated", Text("ckpt.bytes-needed", n=n, left=limit - self.pos), self.pos)
        out = bytes(self._fill(n))
        if len(out) < n:  # the file shrank while we read it
            raise _Bad("ckpt-truncated", Text("ckpt.ends-early"), self.pos)
        self.pos += n
        return out

    def varint(self, limit: int) -> int:
        chunk = self._fill(min(10, max(0, limit - self.pos)))
        result = shift = 0
        for i, b in enumerate(chunk):
            result |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos += i + 1
                return result
            shift += 7
        if len(chunk) < 10:
            raise _Bad("ckpt-truncated", Text("ckpt.varint-short"), self.pos)
        raise _Bad("ckpt-corrupt", Text("ckpt.varint-long"), self.pos)

    def skip(self, n: int, limit: int) -> None:
        if self.pos + n > limit:
            raise _Bad("ckpt-truncated", Text("ckpt.field-past-end", n=n), self.pos)
        self.pos += n

    def skip_field(self, wire: int, limit: int) -> None:
        if wire == 0:
            self.varint(limit)
        elif wire == 1:
            self.skip(8, limit)
        elif wire == 2:
            self.skip(self.varint(limit), limit)
        elif wire == 5:
            self.skip(4, limit)
        else:
            raise _Bad("ckpt-corrupt", Text("ckpt.wire-type", wire=wire), self.pos)


# --------------------------------------------------------------------------- .ckpt walk


@dataclass(slots=True)
class _Tensor:
    dims: list[int]
    dtype: str = ""
    content_at: int = 0
    content_len: int = 0


@dataclass(slots=True)
class _Value:
    tag: str
    offset: int
    tensor: _Tensor | None = None
    map_tensors: list[_Tensor] = field(default_factory=list)


def _key(cur: _Cursor, end: int) -> tuple[int, int]:
    """(field number, wire type). Number 0 is invalid protobuf: stop instead of crawling a
    zero-filled region byte by byte."""
    at = cur.pos
    key = cur.varint(end)
    if key >> 3 == 0 or key & 7 not in (0, 1, 2, 5):
        raise _Bad("ckpt-corrupt", Text("ckpt.field-key", key=f"0x{key:x}"), at)
    return key >> 3, key & 7


def _tensor(cur: _Cursor, end: int) -> _Tensor:
    t = _Tensor(dims=[])
    while cur.pos < end:
        number, wire = _key(cur, end)
        if number == 1 and wire == 0:
            t.dims.append(_signed(cur.varint(end)))
        elif number == 1 and wire == 2:  # packed dims (proto3 writers)
            stop = cur.pos + cur.varint(end)
            if stop > end:
                raise _Bad("ckpt-truncated", Text("ckpt.dims-past-end"), cur.pos)
            while cur.pos < stop:
                t.dims.append(_signed(cur.varint(stop)))
        elif number == 2 and wire == 2:
            n = cur.varint(end)
            if n > _MAX_TAG_BYTES:
                raise _Bad("ckpt-corrupt", Text("ckpt.dtype-long", n=n), cur.pos)
            t.dtype = cur.read(n, end).decode("utf-8", "replace")
        elif number == 3 and wire == 2:
            t.content_len = cur.varint(end)
            t.content_at = cur.pos
            cur.skip(t.content_len, end)  # never read the tensor bytes
        else:
            cur.skip_field(wire, end)
    return t


def _value(cur: _Cursor, end: int, offset: int) -> _Value:
    v = _Value(tag="", offset=offset)
    while cur.pos < end:
        number, wire = _key(cur, end)
        if wire == 2 and number in (1, 2, 3):
            n = cur.varint(end)
            stop = cur.pos + n
            if stop > end:
                raise _Bad("ckpt-truncated", Text("ckpt.field-past-end", n=n), cur.pos)
            if number == 1:
                if n > _MAX_TAG_BYTES:
                    raise _Bad("ckpt-corrupt", Text("ckpt.name-long", n=n), cur.pos)
                v.tag = cur.read(n, end).decode("utf-8", "replace")
            elif number == 2:
                v.tensor = _tensor(cur, stop)
            else:
                while cur.pos < stop:  # MapTensorProto: repeated TensorProto tensor = 1
                    k_number, k_wire = _key(cur, stop)
                    if (k_number, k_wire) == (1, 2):
                        m = cur.varint(stop)
                        v.map_tensors.append(_tensor(cur, min(stop, cur.pos + m)))
                    else:
                        cur.skip_field(k_wire, stop)
        else:
            cur.skip_field(wire, end)
    return v


def _signed(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def _walk_ckpt(cur: _Cursor) -> tuple[list[_Value], bool, _Bad | None]:
    """Top-level Values in file order, whether a crc trailer ends the file, and the first problem."""
    values: list[_Value] = []
    size = cur.size
    while cur.pos < size:
        start = cur.pos
        if size - start <= 17:
            rest = cur.read(size - start, size)
            if rest[:7] == b"crc_num" and len(rest) == 17:
                return values, True, None
            if b"crc_num".startswith(rest[:7]) or rest.startswith(b"crc_num"):
                return values, False, _Bad("ckpt-truncated", Text("ckpt.crc-trailer-short"), start)
            cur.pos = start
        try:
            key = cur.varint(size)
            if key != (1 << 3 | 2):
                slug = "ckpt-unreadable" if start == 0 else "ckpt-corrupt"
                return values, False, _Bad(slug, Text("ckpt.not-a-value", byte=f"0x{key & 0xFF:02x}"), start)
            n = cur.varint(size)
            end = cur.pos + n
            value = _value(cur, min(end, size), start)
            if end > size:
                raise _Bad("ckpt-truncated", Text("ckpt.param-cut", name=value.tag), start)
            if value.tensor is None and not value.map_tensors or not value.tag:
                raise _Bad("ckpt-corrupt", Text("ckpt.value-empty"), start)
        except _Bad as bad:
            if bad.slug == "ckpt-truncated":
                bad.offset = start
            elif start == 0:
                bad.slug = "ckpt-unreadable"
            return values, False, bad
        values.append(value)
    return values, False, None


def _product(dims: list[int] | tuple[int, ...]) -> int:
    return math.prod(max(d, 0) for d in dims)


def _merge(cur: _Cursor, values: list[_Value]) -> tuple[list[ParamInfo], dict[str, float]]:
    """One ParamInfo per parameter: consecutive Values with one tag are the slices of one parameter."""
    params: list[ParamInfo] = []
    read_values: dict[str, float] = {}
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1].tag == values[i].tag:
            j += 1
        group = values[i : j + 1]
        first = group[0]
        if first.tensor is not None:
            t = first.tensor
            nbytes = sum(v.tensor.content_len for v in group if v.tensor is not None)
            # MindSpore writes dims [0] for a str value and load_checkpoint reads [0] as a scalar
            shape = () if t.dtype == "str" or (t.dims == [0] and nbytes) else tuple(t.dims)
            elements = 0 if t.dtype == "str" else _product(shape)
            if first.tag in _READ_VALUES and len(group) == 1 and 0 < t.content_len <= _MAX_VALUE_BYTES:
                number = _decode_scalar(os.pread(cur.fd, t.content_len, t.content_at), t.dtype)
                if number is not None:
                    read_values[first.tag] = number
        else:
            # MapParameter: keys, values, status; each slice holds some rows of each
            tensors = first.map_tensors
            rows = sum(v.map_tensors[0].dims[0] for v in group if v.map_tensors and v.map_tensors[0].dims)
            t = tensors[1] if len(tensors) > 1 else tensors[0]
            shape = (rows, *t.dims[1:]) if t.dims else ()
            elements = _product(shape)
            nbytes = sum(m.content_len for v in group for m in v.map_tensors)
        params.append(
            ParamInfo(
                name=first.tag, shape=shape, dtype=t.dtype, elements=elements,
                role=param_role(first.tag, t.dtype), offset=first.offset, nbytes=nbytes, parts=len(group),
            )
        )
        i = j + 1
    return params, read_values


_SCALAR_FORMATS = {
    "Int8": "b", "UInt8": "B", "Int16": "h", "UInt16": "H", "Int32": "i", "UInt32": "I",
    "Int64": "q", "UInt64": "Q", "Float16": "e", "Float32": "f", "Float64": "d", "Bool": "?",
    "I8": "b", "U8": "B", "I16": "h", "U16": "H", "I32": "i", "U32": "I", "I64": "q", "U64": "Q",
    "F16": "e", "F32": "f", "F64": "d", "BOOL": "?",
}


def _decode_scalar(data: bytes, dtype: str) -> float | None:
    """The first element of a small tensor (little-endian, as MindSpore and safetensors write)."""
    if dtype in ("BFloat16", "BF16") and len(data) >= 2:
        return struct.unpack("<f", b"\0\0" + data[:2])[0]
    fmt = _SCALAR_FORMATS.get(dtype)
    if fmt is None or len(data) < struct.calcsize(fmt):
        return None
    number = struct.unpack_from("<" + fmt, data)[0]
    return float(number) if math.isfinite(float(number)) else None


# --------------------------------------------------------------------------- safetensors


def _is_safetensors(head: bytes) -> bool:
    if len(head) < 9:
        return False
    n = struct.unpack_from("<Q", head)[0]
    return 2 <= n <= _MAX_HEADER_BYTES and head[8:9] == b"{"


def _read_safetensors(fd: int, size: int) -> CheckpointHeader:
    n = struct.unpack("<Q", os.pread(fd, 8, 0))[0]
    raw = os.pread(fd, min(n, max(size - 8, 0)), 8)  # never allocate a declared length past the end
    if len(raw) < n:
        return CheckpointHeader("safetensors", size, (), {}, False, problem="ckpt-truncated",
                                problem_offset=8, message=Text("ckpt.json-header-short"))
    try:
        header = json.loads(raw)
        if not isinstance(header, dict):
            raise ValueError("header is not an object")
    except ValueError as exc:
        return CheckpointHeader("safetensors", size, (), {}, False, problem="ckpt-corrupt",
                                problem_offset=8, message=Text("ckpt.json-header-bad", detail=str(exc)))
    meta = header.pop("__metadata__", None)
    metadata = {str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {}
    data_at = 8 + n
    params: list[ParamInfo] = []
    values: dict[str, float] = {}
    problem: tuple[str, int, Text] | None = None
    for name, entry in header.items():
        try:
            dtype = str(entry["dtype"])
            shape = tuple(int(d) for d in entry["shape"])
            begin, stop = (int(x) for x in entry["data_offsets"])
        except (KeyError, TypeError, ValueError):
            problem = problem or ("ckpt-corrupt", 8, Text("ckpt.header-entry", name=name))
            continue
        if data_at + stop > size:
            problem = problem or ("ckpt-truncated", data_at + begin, Text("ckpt.param-cut", name=name))
            continue
        if name in _READ_VALUES and 0 < stop - begin <= _MAX_VALUE_BYTES:
            number = _decode_scalar(os.pread(fd, stop - begin, data_at + begin), dtype)
            if number is not None:
                values[name] = number
        params.append(ParamInfo(name, shape, dtype, _product(shape), param_role(name, dtype),
                                data_at + begin, stop - begin))
    params.sort(key=lambda p: p.offset)
    slug, offset, message = problem or (None, None, None)
    return CheckpointHeader("safetensors", size, tuple(params), values, "crc_num" in metadata,
                            metadata, slug, offset, message)


# --------------------------------------------------------------------------- public API


def read_checkpoint_header(path: str | os.PathLike[str]) -> CheckpointHeader:
    """Names, shapes, dtypes and step values of a .ckpt / .safetensors file; tensor bytes are skipped.

    Never raises for bad content (the problem is in ``problem``); raises OSError if unreadable.
    """
    fd, size = guard.open_fd(path)
    try:
        head = os.pread(fd, 9, 0)
        if _is_safetensors(head):
            return _read_safetensors(fd, size)
        cur = _Cursor(fd, size)
        values, crc, bad = _walk_ckpt(cur)
        params, read_values = _merge(cur, values)
        if bad is not None and bad.slug == "ckpt-truncated" and values:
            # the slices read so far may belong to the parameter that was cut: not complete either
            last = values[-1].tag
            if params and params[-1].name == last and _cut_tag(cur, bad.offset) == last:
                params.pop()
        if not values and bad is None and size == 0:
            bad = _Bad("ckpt-unreadable", Text("ckpt.empty"), 0)
        elif not values and bad is not None and bad.slug != "ckpt-unreadable" and _cut_tag(cur, 0) is None:
            bad.slug = "ckpt-unreadable"  # not even the first parameter's name: not a checkpoint
        return CheckpointHeader(
            "ckpt" if values else "unknown", size, tuple(params), read_values, crc,
            problem=bad.slug if bad else None, problem_offset=bad.offset if bad else None,
            message=bad.message if bad else None,
        )
    finally:
        os.close(fd)


def _cut_tag(cur: _Cursor, offset: int) -> str | None:
    """The name (or the start of it) of the Value that starts at ``offset``, if its framing parses."""
    cur.pos = offset
    try:
        if cur.varint(cur.size) != (1 << 3 | 2):
            return None
        cur.varint(cur.size)
        if cur.varint(cur.size) != (1 << 3 | 2):
            return None
        n = min(cur.varint(cur.size), _MAX_TAG_BYTES, cur.size - cur.pos)
        return cur.read(n, cur.size).decode("utf-8", "replace")
    except _Bad:
        return None


# --------------------------------------------------------------------------- reader


@dataclass(frozen=True, slots=True)
class _Name:
    kind: str  # "train", "interrupted", "landscape"
    epoch: int | None = None
    step_in_epoch: int | None = None
    step: int | None = None  # only when the name gives a global step (landscape "_step")


def _parse_name(rel: str) -> _Name:
    p = PurePosixPath(rel)
    m = _LANDSCAPE_NAME.match(p.name)
    if m and "ckpt_dir" in p.parts[:-1]:
        n = int(m["n"])
        return _Name("landscape", step=n) if m["unit"] == "step" else _Name("landscape", epoch=n)
    m = _SAVE_NAME.match(p.name)
    kind = "interrupted" if p.suffix == ".tmp" else "train"
    if m:
        return _Name(kind, epoch=int(m["epoch"]), step_in_epoch=int(m["step"]))
    return _Name(kind)


def _claims(artifact: Artifact) -> bool:
    p = PurePosixPath(artifact.rel)
    name = p.name
    if name.endswith(_CHECKPOINT_SUFFIXES) or name.endswith("-graph.meta"):
        return True
    if name.endswith(".tmp"):
        return bool(_SAVE_NAME.match(name))  # only temp names a checkpoint save would leave
    if name == "train_metadata.json":
        return "ckpt_dir" in p.parts[:-1]
    if name == "meta.json":  # MindFormers' resume pointer next to the rank's checkpoints
        parts = p.parts[:-1]
        return any("checkpoint" in part or re.fullmatch(r"rank_?\d+", part) for part in parts)
    return False


def _read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="checkpoint")
    name = PurePosixPath(artifact.rel).name
    if name.endswith("-graph.meta") or name == "train_metadata.json":
        # claimed so it is not listed as unknown; nothing to tabulate
        what = "graph" if name.endswith("-graph.meta") else "landscape"
        result.diagnostics.append(info("checkpoint-companion", path=artifact.rel, variant=what))
        return result
    if name == "meta.json":
        return _read_meta(artifact, result)

    rank = artifact.rank if artifact.rank is not None else rank_from_path(artifact.rel)
    parsed = _parse_name(artifact.rel)
    header = read_checkpoint_header(artifact.path)
    result.diagnostics.extend(_diagnostics(header, parsed, artifact.rel))

    epoch, step, source = parsed.epoch, parsed.step, "name" if parsed.step is not None else None
    if "step_num" in header.values:
        step, source = int(header.values["step_num"]), "append_info"
    elif "global_step" in header.values:
        # The optimizer's own counter (MindFormers also appends it): optimizer updates, so a
        # loss-scale overflow that skipped the update is not counted.
        step, source = int(header.values["global_step"]), "global_step"
    if "epoch_num" in header.values and epoch is None:
        epoch = int(header.values["epoch_num"])
    if source is None and (parsed.epoch is not None or parsed.step_in_epoch is not None):
        source = "name"  # epoch / step_in_epoch only: load.py turns them into a step

    suffix = PurePosixPath(name).suffix
    fmt = header.format if header.format != "unknown" else {".ckpt": "ckpt", ".safetensors": "safetensors"}.get(suffix)
    result.tables["checkpoints"] = frame(
        {
            "path": [artifact.rel], "rank": [rank], "step": [step], "epoch": [epoch],
            "step_in_epoch": [parsed.step_in_epoch], "step_source": [source],
            "bytes": [header.size], "mtime": [artifact.mtime], "format": [fmt],
            "tensors": [len(header.params)],
            "model_params": [sum(p.elements for p in header.params if p.role == "model")],
            "optimizer_params": [sum(p.elements for p in header.params if p.role != "model")],
            "crc": [header.crc], "kind": [parsed.kind],
        },
        CHECKPOINTS,
    )
    result.tables["checkpoint_params"] = frame(
        {
            "path": [artifact.rel] * len(header.params),
            "name": [p.name for p in header.params],
            "shape": [list(p.shape) for p in header.params],
            "dtype": [p.dtype for p in header.params],
            "elements": [p.elements for p in header.params],
            "role": [p.role for p in header.params],
        },
        CHECKPOINT_PARAMS,
    )
    if parsed.kind != "landscape":
        kind = "checkpoint_save" if parsed.kind == "train" else "checkpoint_interrupted"
        result.tables["events"] = frame(
            {
                "kind": [kind], "step": [step], "rank": [rank], "wall_time": [artifact.mtime],
                "duration_s": [None], "detail": [name], "source": ["checkpoint"], "file": [artifact.rel],
            },
            EVENTS,
        )
    return result


def _diagnostics(header: CheckpointHeader, parsed: _Name, rel: str) -> list[Diagnostic]:
    if header.problem is None:
        return []
    found = {"problem": header.message, "params": len(header.params)}
    if parsed.kind == "interrupted":
        # a .tmp is expected to be incomplete: the save never finished
        return [info(header.problem, path=rel, offset=header.problem_offset, variant="interrupted", **found)]
    if header.problem == "ckpt-unreadable":
        return [error(header.problem, path=rel, offset=header.problem_offset, problem=header.message)]
    return [warning(header.problem, path=rel, offset=header.problem_offset, **found)]


def _read_meta(artifact: Artifact, result: ReadResult) -> ReadResult:
    try:
        with guard.open_file(artifact.path, "rb") as f:
            data = json.loads(f.read(1 << 20))
    except (ValueError, UnicodeDecodeError) as exc:
        result.diagnostics.append(warning("ckpt-meta-invalid", path=artifact.rel, offset=0, variant="json", detail=str(exc)))
        return result
    if not isinstance(data, dict) or "last_ckpt_file" not in data:
        result.diagnostics.append(
            info("ckpt-meta-invalid", path=artifact.rel, offset=0, variant="no-pointer")
        )
        return result
    for key in ("last_ckpt_file", "last_step", "last_epoch"):
        if key in data:
            result.settings[key] = Setting(data[key], "meta.json")
    return result


READER = Reader(name="checkpoint", claims=_claims, read=_read)
