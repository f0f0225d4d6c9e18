"""MindFormers' checkpoint health record, ``health_ckpts.json``.

Written by ``CheckpointMonitor.save_checkpoint`` (mindformers/core/callback/callback.py @
fd4deebc, lines 1379-1396) on rank 0 at every save when ``use_checkpoint_health_monitor`` is on,
in ``health_ckpts_record_dir`` (the trainer passes ``config.output_dir``: ``output/``): the whole
list is rewritten with one entry appended, ``json.dump(..., indent=4)``::

    [{"is_health": 0, "ckpt_name": "llama_rank_0-1_2.ckpt"}, ...]

``is_health`` comes from ``get_checkpoint_health_info`` (lines 1318-1339): 0 unless the pipeline
has more than one stage and some first-stage rank's embedding local norm is at or above
``embedding_local_norm_threshold`` (default 1.0), then 1 (an AllReduce of the ranks' flags). So,
despite its name, **0 is healthy** and anything else is not; the resume side reads it the same
way (``mindformers/tools/resume_ckpt.py`` ``checkpoint_health_monitor``: ``item.get("is_health",
-1) != 0`` is unhealthy, "Generation 0 represents health"). ``ckpt_name`` is rank 0's file name,
``{prefix}_rank_0-{epoch}_{step_in_epoch}.{ckpt|safetensors}``; entries are in save order.
MindFormers' docs show one (docs/formats/health.md): "1 represents unhealthy and 0 represents healthy".

Checkpoint 2.0 (``use_legacy_format: False``) keeps the same flag per save instead, as
``ckpt_status`` in the ``common.json`` of each save's folder (``{save_path}/iteration_N/``), beside
``global_step``; ``ckpt_status`` is null where the monitor is off, and such a file is not claimed.
"""

from __future__ import annotations

import json
import re

from ..diagnostics import warning
from ..model import HEALTH_CKPTS, Artifact, ReadResult, frame
from . import guard
from .base import Reader

_NAME = re.compile(r"^(?P<prefix>.+?)(?:_rank_(?P<rank>\d+))?-(?P<epoch>\d+)_(?P<step>\d+)\.(?:ckpt|safetensors)$")
_MAX_BYTES = 64 << 20


_JUDGED = re.compile(rb'"ckpt_status"\s*:\s*-?\d')


def _claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1]
    if name == "health_ckpts.json":
        return True
    if name != "common.json" or artifact.size > 1 << 16:
        return False
    try:
        with guard.open_file(artifact.path, "rb") as f:
            return bool(_JUDGED.search(f.read(1 << 16)))
    except OSError:
        return False


def _read_common(artifact: Artifact, result: ReadResult, data: object) -> ReadResult:
    """A Checkpoint 2.0 save's common.json: one save, its global step and ckpt_status."""
    if not isinstance(data, dict) or not isinstance(data.get("ckpt_status"), int):
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=0, variant="not-list"))
        return result
    step = data.get("global_step", data.get("step_num"))
    step = step if isinstance(step, int) and not isinstance(step, bool) else None
    folder = artifact.rel.rsplit("/", 2)[-2] if artifact.rel.count("/") else artifact.rel
    epoch = data.get("epoch_num") if isinstance(data.get("epoch_num"), int) else None
    result.tables["health_ckpts"] = frame({
        "path": [artifact.rel], "position": [step if step is not None else 0], "ckpt_name": [folder],
        "is_health": [int(data["ckpt_status"])], "rank": [None], "epoch": [epoch], "step_in_epoch": [None], "step": [step],
    }, HEALTH_CKPTS)
    return result


def _read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="health")
    with guard.open_file(artifact.path, "rb") as f:
        raw = f.read(_MAX_BYTES)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: hostile nesting
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=getattr(exc, "pos", 0),
                                          variant="json", detail=str(exc)))
        return result
    if artifact.rel.rsplit("/", 1)[-1] == "common.json":
        return _read_common(artifact, result, data)
    if not isinstance(data, list):
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=0, variant="not-list"))
        return result
    rows: dict[str, list] = {k: [] for k in ("position", "ckpt_name", "is_health", "rank", "epoch", "step_in_epoch")}
    odd = 0
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            odd += 1
            continue
        name = item.get("ckpt_name")
        flag = item.get("is_health")
        if not isinstance(flag, int) or isinstance(flag, bool) or not isinstance(name, str):
            odd += 1  # MindFormers' resume counts an entry without a whole is_health as unhealthy
        m = _NAME.match(name) if isinstance(name, str) else None
        rows["position"].append(i)
        rows["ckpt_name"].append(name if isinstance(name, str) else None)
        rows["is_health"].append(flag if isinstance(flag, int) and not isinstance(flag, bool) else None)
        rows["rank"].append(int(m["rank"]) if m and m["rank"] else None)
        rows["epoch"].append(int(m["epoch"]) if m else None)
        rows["step_in_epoch"].append(int(m["step"]) if m else None)
    if odd:
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=0, variant="entries",
                                          n=odd, total=len(data)))
    if not data:
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=0, variant="empty"))
    result.tables["health_ckpts"] = frame({"path": [artifact.rel] * len(rows["position"]), **rows}, HEALTH_CKPTS)
    return result


READER = Reader(name="health", claims=_claims, read=_read)
