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


def _claims(artifact: Artifact) -> bool:
    return artifact.rel.rsplit("/", 1)[-1] == "health_ckpts.json"


def _read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="health")
    with guard.open_file(artifact.path, "rb") as f:
        raw = f.read(_MAX_BYTES)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        result.diagnostics.append(warning("health-record-invalid", path=artifact.rel, offset=getattr(exc, "pos", 0),
                                          variant="json", detail=str(exc)))
        return result
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
