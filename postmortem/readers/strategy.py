"""MindSpore auto-parallel strategy files: the layout of a parallel job, never a checkpoint.

Parallel MindSpore / MindFormers jobs save the strategy the compiler chose
(``strategy_ckpt_config(save_file=...)``; MindFormers: ``output/strategy/ckpt_strategy_rank_N.ckpt``)
as a ``ParallelStrategyMap`` protobuf (``mindspore/ccsrc/utils/node_strategy.proto``), or as JSON
when the file name ends ``.json``. Both are recognised by their content, whatever their name.

The schema, from ``node_strategy.proto`` (proto2; every field we read):

* ``ParallelStrategyMap{required uint32 current_stage = 1; repeated ParallelStrategyItem
  parallel_strategy_item = 2; repeated ParallelLayoutItem parallel_layout_item = 3}``.
  ``current_stage`` is a save counter (``StrategyCheckpoint::Save`` writes ``++current_stage_``;
  ``merge_pipeline_strategys`` writes 1), not a pipeline stage.
* ``ParallelStrategyItem{required string node_name = 1; required ParallelStrategys
  parallel_strategys = 2}``, ``ParallelStrategys{required uint32 stage = 1; repeated
  ParallelStrategy parallel_strategy = 2}``, ``ParallelStrategy{repeated uint32 dim = 1}``: an
  operator, its pipeline stage, and the split of each input, dimension by dimension.
* ``ParallelLayoutItem{required string param_name = 1; required ParallelLayouts
  parallel_layouts = 2}``, ``ParallelLayouts{repeated DevMatrix dev_matrix = 1; repeated
  TensorMap tensor_map = 2; repeated ParamSplitShape param_split_shape = 3; repeated
  IndicesOffset indices_offset = 4; required int32 field = 5; required int32
  opt_weight_shard_step = 6; required int32 opt_weight_shard_size = 7}``, ``DevMatrix{repeated
  uint32 dim}``, ``TensorMap{repeated int32 dim}``: a parameter's device matrix (the devices of
  its stage arranged in axes) and, per tensor dimension, the device axis it is split along,
  counted from the right of the device matrix (-1: not split).

How MindSpore itself reads them (``mindspore/parallel/_parallel_serialization.py``): the devices
of a stage are the product of a layout's device matrix (``_get_device_num_from_strategy``); a
merged file (``merge_pipeline_strategys``) prefixes each parameter with ``{stage}-``, otherwise a
file holds one stage, its operators' ``stage`` (``_extract_src_dst_layout_map_by_src``).

The degrees read here (``StrategyLayout``), from the parameters of the model (optimizer state
and gradient accumulators are left out):
* model parallel: the most any 2-D weight is split (a MatMul weight: ``(mp, 1)`` or ``(1, mp)``);
* expert parallel: the most the first (expert) dimension of a 3-D weight is split;
* data parallel: the devices of a stage over the model parallel degree: the copies of a dense
  weight (context parallel, where used, is inside this figure: dp × cp);
* pipeline stages: where a merged file holds stages 0..n-1, n; a rank's own file holds its stage;
* optimizer shard: the largest ``opt_weight_shard_size`` (the parallel optimizer's shard).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from ..diagnostics import info, warning
from ..model import STRATEGY_SCHEMA, STRATEGY_SPLITS_SCHEMA, Artifact, ReadResult, frame
from ..text import Text
from . import guard
from .base import Reader, rank_from_path
from .checkpoints import param_role
from .protowire import Message, WireError, parse, to_int64, varint

STRATEGY = "strategy"  # table names (model.py)
STRATEGY_SPLITS = "strategy_splits"

_MERGED_NAME = re.compile(r"^(\d+)-(.+)$")
_HEAD_BYTES = 4096
_MAX_BYTES = 256 << 20  # a strategy file is KB to a few MB; more is not one


@dataclass(frozen=True, slots=True)
class OperatorSplit:
    name: str
    stage: int
    inputs: tuple[tuple[int, ...], ...]  # per input, the split of each dimension


@dataclass(frozen=True, slots=True)
class ParameterLayout:
    name: str  # as written (a merged file's ``{stage}-`` prefix kept)
    stage: int
    dev_matrix: tuple[int, ...]
    tensor_map: tuple[tuple[int, ...], ...]  # per tensor dimension, the device axes it is split along
    opt_shard: int

    @property
    def base_name(self) -> str:
        m = _MERGED_NAME.match(self.name)
        return m.group(2) if m else self.name

    @property
    def splits(self) -> tuple[int, ...]:
        """How many parts each tensor dimension is cut into."""
        n = len(self.dev_matrix)
        return tuple(math.prod(self.dev_matrix[n - 1 - a] for a in axes if 0 <= a < n) for axes in self.tensor_map)

    @property
    def devices(self) -> int:
        return math.prod(self.dev_matrix) if self.dev_matrix else 0


@dataclass(frozen=True, slots=True)
class StrategyLayout:
    """The layout one strategy file holds (None: the file does not show it)."""

    stages: tuple[int, ...]
    pipeline_stages: int | None  # a merged file holds every stage (MindSpore's _extract_pipeline_stage_num)
    devices_per_stage: int | None
    model_parallel: int | None
    data_parallel: int | None
    expert_parallel: int | None
    optimizer_shard: int | None


@dataclass(slots=True)
class StrategyFile:
    format: str  # "protobuf" | "json"
    save_count: int | None
    operators: list[OperatorSplit] = field(default_factory=list)
    layouts: list[ParameterLayout] = field(default_factory=list)
    problem: str | None = None  # what stopped the reading, or None
    problem_offset: int | None = None

    @property
    def merged(self) -> bool:
        return bool(self.layouts) and all(_MERGED_NAME.match(p.name) for p in self.layouts)


# --------------------------------------------------------------------------- recognising


def _varint(buf: bytes, pos: int) -> tuple[int, int] | None:
    result = shift = 0
    while pos < len(buf) and shift < 64:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7
    return None


def looks_like_strategy(head: bytes) -> bool:
    """Whether a file's first bytes start a ParallelStrategyMap (protobuf or JSON).

    A C++ writer puts ``current_stage`` (field 1, varint: ``0x08``) first and then items whose own
    first field is a name (``0x0a``); a MindSpore checkpoint starts ``0x0a`` (a Value), a
    safetensors file with its header length. JSON: the map's own keys."""
    if head[:1] == b"{" or head[:1].isspace():
        text = head.decode("utf-8", "replace")
        return '"parallel_strategy_item"' in text or '"parallel_layout_item"' in text
    if head[:1] != b"\x08":
        return False
    got = _varint(head, 1)
    if got is None:
        return False
    _, pos = got
    if pos == len(head):
        return True  # an empty map: nothing but the counter
    if head[pos] not in (0x12, 0x1A):  # parallel_strategy_item / parallel_layout_item
        return False
    got = _varint(head, pos + 1)
    if got is None:
        return False
    _, pos = got
    if pos >= len(head):
        return True
    if head[pos] != 0x0A:  # node_name / param_name
        return False
    got = _varint(head, pos + 1)
    if got is None:
        return False
    n, pos = got
    name = head[pos:pos + min(n, 64)]
    return bool(name) and all(32 <= b < 127 for b in name)


# --------------------------------------------------------------------------- reading


def _dims(message: Message, number: int) -> tuple[int, ...]:
    return tuple(message.repeated_varint(number))


# A job's parameters share a handful of layouts and its operators a handful of strategies: each
# distinct encoding is decoded once (the bytes are the key; a file holds thousands of items).
@lru_cache(maxsize=4096)
def _strategys(raw: bytes) -> tuple[int, tuple[tuple[int, ...], ...]]:
    strategys = parse(raw)
    return strategys.int64(1), tuple(_dims(s, 1) for s in strategys.messages(2))


@lru_cache(maxsize=4096)
def _layouts(raw: bytes) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int]:
    layouts = parse(raw)
    dev = next((d for d in (_dims(m, 1) for m in layouts.messages(1)) if d), ())
    maps = [_dims(m, 1) for m in layouts.messages(2)]
    maps = [m for m in maps if m] if len(maps) > 1 else maps
    if len(maps) > 1:  # one tensor dimension over several device axes: one TensorMap per dimension
        tensor_map = tuple(tuple(m) for m in maps)
    else:
        tensor_map = tuple((a,) for a in (maps[0] if maps else ()))
    return dev, tensor_map, layouts.int64(7)


def _operator(item: Message) -> OperatorSplit:
    stage, inputs = _strategys(item.raw(2))
    return OperatorSplit(item.string(1), stage, inputs)


def _layout(item: Message, file_stage: int) -> ParameterLayout:
    name = item.string(1)
    dev, tensor_map, opt_shard = _layouts(item.raw(2))
    m = _MERGED_NAME.match(name)
    return ParameterLayout(name, int(m.group(1)) if m else file_stage, dev, tensor_map, opt_shard)


def _top_fields(data: bytes) -> tuple[list[tuple[int, object, int]], int | None, str | None]:
    """The map's top-level fields in order (number, value, offset), and where and why they stop
    decoding (None: they don't)."""
    fields: list[tuple[int, object, int]] = []
    view = memoryview(data)
    pos = 0
    while pos < len(view):
        start = pos
        try:
            key, pos = varint(view, pos)
            number, wire = key >> 3, key & 7
            if number == 0 or wire not in (0, 2):
                return fields, start, f"field key 0x{key:x} is not one of a ParallelStrategyMap"
            if wire == 0:
                value, pos = varint(view, pos)
            else:
                n, pos = varint(view, pos)
                if pos + n > len(view):
                    return fields, start, f"field {number} declares {n:,} bytes, {len(view) - pos:,} are left"
                value, pos = view[pos:pos + n], pos + n
        except WireError as exc:
            return fields, start, str(exc)
        fields.append((number, value, start))
    return fields, None, None


def _read_protobuf(data: bytes) -> StrategyFile:
    out = StrategyFile("protobuf", None)
    fields, out.problem_offset, out.problem = _top_fields(data)
    raw_items = [(v, at) for n, v, at in fields if n == 2 and isinstance(v, memoryview)]
    raw_layouts = [(v, at) for n, v, at in fields if n == 3 and isinstance(v, memoryview)]
    counters = [v for n, v, _ in fields if n == 1 and isinstance(v, int)]
    out.save_count = to_int64(counters[-1]) if counters else None
    operators, layouts = [], []
    for raw, at in raw_items:
        try:
            operators.append(_operator(parse(raw)))
        except WireError as exc:  # an item whose own bytes do not decode: the others are kept
            if out.problem is None:  # the first one is named; the rest are still read
                out.problem, out.problem_offset = f"an operator's strategy does not decode: {exc}", at
    stage = Counter(o.stage for o in operators).most_common(1)[0][0] if operators else 0
    for raw, at in raw_layouts:
        try:
            layouts.append(_layout(parse(raw), stage))
        except WireError as exc:
            if out.problem is None:
                out.problem, out.problem_offset = f"a parameter's layout does not decode: {exc}", at
    out.operators, out.layouts = operators, layouts
    if out.save_count is None and out.problem is None:
        out.problem, out.problem_offset = "current_stage (a required field) is missing", 0
    return out


def _read_json(data: bytes) -> StrategyFile:
    out = StrategyFile("json", None)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        out.problem, out.problem_offset = f"not JSON: {exc}", getattr(exc, "pos", 0)
        return out
    if not isinstance(doc, dict):
        out.problem, out.problem_offset = "the top level is not an object", 0
        return out
    stage_count = doc.get("current_stage")
    out.save_count = stage_count if isinstance(stage_count, int) else None
    items = doc.get("parallel_strategy_item") or {}
    layouts = doc.get("parallel_layout_item") or {}
    try:
        for name, item in items.items():
            inputs = tuple(tuple(int(d) for d in dims) for dims in item.get("parallel_strategy", []))
            out.operators.append(OperatorSplit(str(name), int(item.get("stage", 0)), inputs))
        stage = Counter(o.stage for o in out.operators).most_common(1)[0][0] if out.operators else 0
        for name, item in layouts.items():
            m = _MERGED_NAME.match(str(name))
            tensor_map = tuple((int(a),) if not isinstance(a, list) else tuple(int(x) for x in a)
                               for a in item.get("tensor_map", []))
            out.layouts.append(ParameterLayout(str(name), int(m.group(1)) if m else stage,
                                               tuple(int(d) for d in item.get("dev_matrix", [])), tensor_map,
                                               int(item.get("opt_weight_shard_size", 0) or 0)))
    except (AttributeError, TypeError, ValueError) as exc:
        out.problem, out.problem_offset = f"an item is not a strategy entry: {exc}", 0
    return out


def read_strategy_file(path: str | os.PathLike[str]) -> StrategyFile:
    """What a strategy file holds; a problem (not an exception) for bad content. OSError if unreadable.

    The ranks of one stage save byte-identical files: each distinct content is decoded once per
    process (the result is shared: never changed after it is made)."""
    with guard.open_file(path, "rb") as f:
        data = f.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        return StrategyFile("protobuf", None, problem=f"larger than {_MAX_BYTES >> 20} MB", problem_offset=0)
    key = hashlib.blake2b(data, digest_size=16).digest()
    hit = _DECODED.get(key)
    if hit is None:
        hit = _read_json(data) if data[:1] == b"{" or data[:1].isspace() else _read_protobuf(data)
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
        _DECODED[key] = hit
    return hit


_DECODED: dict[bytes, StrategyFile] = {}
_DECODED_MAX = 64


# --------------------------------------------------------------------------- the layout


_MAX_DEVICES = 1 << 24  # a device matrix over more devices than this is corruption, not a cluster


def layout_of(strategy: StrategyFile) -> StrategyLayout:
    model = [p for p in strategy.layouts
             if param_role(p.base_name) == "model" and p.dev_matrix and 0 < p.devices <= _MAX_DEVICES]
    stages = sorted({o.stage for o in strategy.operators} | {p.stage for p in strategy.layouts})
    devices = Counter(p.devices for p in model).most_common(1)[0][0] if model else None
    two_d = [math.prod(p.splits) for p in model if len(p.splits) == 2]
    mp = max(two_d) if two_d else None
    experts = [p.splits[0] for p in model if len(p.splits) == 3]
    ep = max(experts) if experts and max(experts) > 1 else None
    dp = devices // mp if devices and mp and devices % mp == 0 else None
    shards = [p.opt_shard for p in model if p.opt_shard > 1]
    complete = strategy.merged and stages == list(range(len(stages)))
    return StrategyLayout(tuple(stages), len(stages) if complete else None, devices, mp, dp, ep,
                          max(shards) if shards else None)


# --------------------------------------------------------------------------- reader


def _claims(artifact: Artifact) -> bool:
    name = PurePosixPath(artifact.rel).name
    if not name.endswith((".ckpt", ".json", ".pb")) and "strategy" not in name:
        return False
    if artifact.size == 0 or artifact.size > _MAX_BYTES:
        return False
    try:
        with guard.open_file(artifact.path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return False
    return looks_like_strategy(head)


def _read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="strategy")
    strategy = read_strategy_file(artifact.path)
    rank = artifact.rank if artifact.rank is not None else rank_from_path(artifact.rel)
    if rank is None:
        m = re.search(r"rank_?(\d+)", PurePosixPath(artifact.rel).name)
        rank = int(m.group(1)) if m else None
    if strategy.problem is not None:
        result.diagnostics.append(warning(
            "strategy-corrupt", path=artifact.rel, offset=strategy.problem_offset,
            problem=Text("strategy.problem", detail=strategy.problem),
            operators=len(strategy.operators), params=len(strategy.layouts)))
    if not strategy.operators and not strategy.layouts:
        if strategy.problem is None:
            result.diagnostics.append(info("strategy-empty", path=artifact.rel))
        return result
    layout = layout_of(strategy)
    result.tables[STRATEGY] = frame({
        "path": [artifact.rel], "rank": [rank], "format": [strategy.format], "save_count": [strategy.save_count],
        "merged": [strategy.merged], "stages": [list(layout.stages)], "pipeline_stages": [layout.pipeline_stages],
        "devices_per_stage": [layout.devices_per_stage],
        "model_parallel": [layout.model_parallel], "data_parallel": [layout.data_parallel],
        "expert_parallel": [layout.expert_parallel], "optimizer_shard": [layout.optimizer_shard],
        "operators": [len(strategy.operators)], "parameters": [len(strategy.layouts)],
    }, STRATEGY_SCHEMA)
    ops, params = strategy.operators, strategy.layouts
    result.tables[STRATEGY_SPLITS] = frame({
        "path": [artifact.rel] * (len(ops) + len(params)),
        "kind": ["operator"] * len(ops) + ["parameter"] * len(params),
        "name": [o.name for o in ops] + [p.name for p in params],
        "stage": [o.stage for o in ops] + [p.stage for p in params],
        "split": [[list(i) for i in o.inputs] for o in ops]
                 + [[list(p.splits)] if 0 < p.devices <= _MAX_DEVICES else None for p in params],
        "dev_matrix": [None] * len(ops) + [list(p.dev_matrix) for p in params],
        "opt_shard": [None] * len(ops) + [p.opt_shard for p in params],
        "role": ["operator"] * len(ops) + [param_role(p.base_name) for p in params],
    }, STRATEGY_SPLITS_SCHEMA)
    return result


READER = Reader(name="strategy", claims=_claims, read=_read)
