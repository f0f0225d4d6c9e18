"""Communication groups as the framework named them, and the parallel layout a capture states.

Both profilers write the same record, ``parallel_group_info``, into ``profiler_metadata.json``
(and, in a DB export, the ``META_DATA`` table under that name)::

    {"<HCCL comm name>": {"group_name": "dp", "group_rank": 0, "global_ranks": [2, 3]}, ...}

MindSpore (``mindspore/profiler/common/profiler_meta_data.py``, ``add_group_info_to_metadata``):
the key is ``get_comm_name(group)``, ``group_name`` MindSpore's own group name
(``hccl_world_group``, or the sha256 names MindFormers creates for its pipeline and expert groups).
torch_npu: the key is the process group's HCCL name, ``group_name`` the ``pg_name`` Megatron /
MindSpeed pass in ``hccl_config`` (tp, dp, dp_cp, pp, cp, exp, mp, embd, default_group, ...).
Operator records name a group by that key (profiler DBs) or by its ``double_hash``
(communication.json, analysis.db; msprof-analyze ``cluster_analyse/common_func/utils.py``), so
both are kept. torch_npu also writes ``distributed_args`` (Megatron's tensor / pipeline / data /
context / expert parallel sizes and the world size): the layout, put into the settings.
"""

from __future__ import annotations

import json

from ... import diagnostics as dg
from ...model import COMM_GROUPS, Artifact, ReadResult, Setting, frame
from .. import guard

_U32 = 0xFFFFFFFF

# distributed_args key -> setting key (the names configfile.py and the callback use)
_LAYOUT = {"tensor_model_parallel_size": "model_parallel", "pipeline_model_parallel_size": "pipeline_stage",
           "data_parallel_size": "data_parallel", "context_parallel_size": "context_parallel",
           "expert_model_parallel_size": "expert_parallel", "world_size": "device_num"}


def double_hash(name: str) -> str:
    """The group name communication.json and analysis.db print for an HCCL comm name: two 32-bit
    polynomial hashes (primes 29 and 131) side by side, as msprof's communication analysis writes it."""
    a = b = 0
    for ch in name:
        a = (a * 29 + ord(ch)) & _U32
        b = (b * 131 + ord(ch)) & _U32
    return str((a << 32) | b)


def group_rows(info: object, rank: int | None, source: str, file: str) -> dict[str, list] | None:
    """COMM_GROUPS columns from a ``parallel_group_info`` mapping, None when it is not one."""
    if not isinstance(info, dict):
        return None
    out: dict[str, list] = {k: [] for k in ("group", "hashed", "pg_name", "global_ranks")}
    for key, value in info.items():
        if not isinstance(value, dict):
            continue
        ranks = value.get("global_ranks")
        ranks = sorted(int(r) for r in ranks if isinstance(r, int) and not isinstance(r, bool)) if isinstance(ranks, list) else None
        name = value.get("group_name")
        out["group"].append(str(key))
        out["hashed"].append(double_hash(str(key)))
        out["pg_name"].append(str(name) if isinstance(name, str) else None)
        out["global_ranks"].append(ranks)
    return {**out, "rank": rank, "source": source, "file": file} if out["group"] else None


def put_groups(info: object, rank: int | None, source: str, artifact: Artifact, result: ReadResult) -> bool:
    rows = group_rows(info, rank, source, artifact.rel)
    if rows is None:
        return False
    result.tables["comm_groups"] = frame(rows, COMM_GROUPS)
    return True


def put_layout(args: object, artifact: Artifact, result: ReadResult) -> None:
    if not isinstance(args, dict):
        return
    for key, setting in _LAYOUT.items():
        v = args.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            result.settings[setting] = Setting(v, f"profiler_metadata.json distributed_args.{key}")


def read_metadata(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    """profiler_metadata.json: its groups and layout; a file with neither is said, not silent."""
    try:
        with guard.open_file(artifact.path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:  # guard.Refused is an OSError
        result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=type(e).__name__))
        return
    data = data if isinstance(data, dict) else {}
    found = put_groups(data.get("parallel_group_info"), rank, "profiler_metadata", artifact, result)
    put_layout(data.get("distributed_args"), artifact, result)
    if not found and "distributed_args" not in data:
        # environment variables only (most captures): nothing for the report, said as before
        result.diagnostics.append(dg.warning("profiler-not-read", path=artifact.rel, variant="profiler-metadata",
                                          name=artifact.rel.rsplit("/", 1)[-1], target=""))
