"""MindSpore lineage files (``...summary.{stamp}...._lineage``) written by ``SummaryCollector``.

Field numbers are MindSpore 2.10's ``lineage.proto`` (checked against the shipped ``lineage_pb2``):
``LineageEvent{wall_time=1, step=2, version=3, train_lineage=6, evaluation_lineage=7,
dataset_graph=9, user_defined_info=10}``;
``TrainLineage{hyper_parameters=1{optimizer=1, learning_rate=2 (float), loss_function=3, epoch=4,
parallel_mode=5, device_num=6, batch_size=8}, train_dataset=2{train_dataset_path=1,
train_dataset_size=2}, algorithm=3{network=1, loss=2 (float)}, model=4{path=3, size=4}}``;
``EvaluationLineage{metric=2 (JSON string), valid_dataset=3{valid_dataset_path=1, valid_dataset_size=2}}``;
``UserDefinedInfo{user_info=1 (nested, repeated), map_dict=2, map_int32=3, map_str=4,
map_double=5}`` where every map entry is ``{key=1, value=2}``.

Only the last event of each kind counts (a resumed run appends new ones). Settings use the
canonical keys of ``model.SETTING_KEYS`` with source "lineage"; custom data goes to ``user.<key>``
(nested dicts as ``user.<key>.<sub>``). An evaluation lineage also becomes an ``eval`` event.

Diagnostic slugs: ``lineage-truncated``, ``lineage-record-crc``, ``lineage-file-empty`` (framing.py),
``lineage-bad-record`` (CRC good, protobuf not).
"""

from __future__ import annotations

import json
import math
import re
import struct

from ..diagnostics import warning
from ..model import EVENTS, Artifact, ReadResult, Setting, frame
from .base import Reader
from .framing import read_file, scan
from .mindspore_summary import file_rank, locate
from .protowire import Message, WireError, parse

NAME = "lineage"
SOURCE = "lineage"
_NAME_RE = re.compile(r"summary\.\d+")
_F32 = struct.Struct("<f")


def claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1]
    return name.endswith("_lineage") and _NAME_RE.search(name) is not None


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader=NAME)
    buf = read_file(artifact.path)
    last: dict[int, tuple[Message, Message]] = {}  # kind field -> (event, content)
    for offset, start, end in scan(buf, artifact.rel, NAME, result.diagnostics):
        try:
            event = parse(memoryview(buf)[start:end])
            for kind in (6, 7, 9, 10):
                content = event.message(kind)
                if content is not None:
                    last[kind] = (event, content)
        except WireError as exc:
            result.diagnostics.append(warning("lineage-bad-record", path=artifact.rel, offset=offset, detail=str(exc)))
    settings: dict[str, object] = {}
    if 6 in last:
        settings.update(_train(last[6][1]))
    if 10 in last:
        settings.update(_user(last[10][1], "user."))
    if 9 in last:  # the pipeline graph itself is not analysed; note that it exists
        settings["lineage.dataset_graph"] = True
    if 7 in last:
        event, evaluation = last[7]
        metrics = _metrics(evaluation.string(2))
        for key, value in metrics.items():
            settings[f"eval.{key}"] = value
        valid = evaluation.message(3)
        if valid is not None and valid.has(2):
            settings["eval.valid_dataset_size"] = valid.int64(2)
        result.tables["events"] = frame({
            "kind": ["eval"], "step": [event.int64(2) if event.has(2) else None],
            "wall_time": [event.f64(1) if event.has(1) else None],
            "detail": [json.dumps(metrics, sort_keys=True) if metrics else "evaluation lineage"],
            "rank": file_rank(artifact), "source": SOURCE, "file": artifact.rel,
        }, EVENTS)
    result.settings = {k: Setting(v, SOURCE) for k, v in settings.items()}
    return result


def _train(train: Message) -> dict[str, object]:
    out: dict[str, object] = {}
    hyper = train.message(1)
    if hyper is not None:
        for number, key in ((1, "optimizer"), (3, "loss_function"), (5, "parallel_mode")):
            if hyper.has(number):
                out[key] = hyper.string(number)
        if hyper.has(2):  # only written when the learning rate is a fixed number
            out["learning_rate"] = _short_float(hyper.f32(2))
        for number, key in ((4, "epoch"), (6, "device_num"), (8, "batch_size")):
            if hyper.has(number):
                out[key] = hyper.int64(number)
    dataset = train.message(2)
    if dataset is not None:
        if dataset.has(1) and dataset.string(1):
            out["dataset"] = dataset.string(1)
        if dataset.has(2):
            out["train_dataset_size"] = dataset.int64(2)
    algorithm = train.message(3)
    if algorithm is not None:
        if algorithm.has(1):
            out["network"] = algorithm.string(1)
        if algorithm.has(2):
            out["last_loss"] = _short_float(algorithm.f32(2))
    model = train.message(4)
    if model is not None:
        if model.has(3):
            out["model_path"] = _model_path(model.string(3))
        if model.has(4):
            out["model_size_bytes"] = model.int64(4)
    # A missing checkpoint is written as path {"ckpt": null} and size 0: not a model size.
    if out.get("model_path") is None:
        out.pop("model_path", None)
        if out.get("model_size_bytes") == 0:
            del out["model_size_bytes"]
    return out


def _model_path(raw: str) -> str | None:
    """``model.path`` is JSON ``{"ckpt": path}``; older writers stored the plain path."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw or None
    if isinstance(value, dict):
        ckpt = value.get("ckpt")
        return str(ckpt) if ckpt else None
    return raw or None


def _user(info: Message, prefix: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for nested in info.messages(1):
        out.update(_user(nested, prefix))
    for entry in info.messages(2):
        sub = entry.message(2)
        if sub is not None:
            out.update(_user(sub, f"{prefix}{entry.string(1)}."))
    for entry in info.messages(3):
        out[prefix + entry.string(1)] = entry.int64(2)
    for entry in info.messages(4):
        out[prefix + entry.string(1)] = entry.string(2)
    for entry in info.messages(5):
        out[prefix + entry.string(1)] = entry.f64(2)
    return out


def _metrics(raw: str) -> dict[str, object]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"metric": raw}
    return value if isinstance(value, dict) else {"metric": value}


def _short_float(value: float) -> float:
    """A float32 field as the shortest decimal with the same float32 (0.01, not 0.009999999776...)."""
    if not math.isfinite(value):
        return value
    target = _F32.pack(value)
    for digits in range(6, 10):
        short = float(f"{value:.{digits}g}")
        if _F32.pack(short) == target:
            return short
    return value


READER = Reader(name=NAME, claims=claims, read=read, locate=locate)
