"""MindSpore 2.x ``*_ascend_ms/`` and torch_npu ``*_ascend_pt/`` profiler output: which file is
read by what, and the rank of a profile folder.

Readers by file (units and meanings in docs/formats/profiler-ascend.md):

- step_trace_time.csv -> PROFILE_STEPS (ascend_steps), trace_view.json -> event counts and, where
  no step_trace_time.csv lies beside it, PROFILE_STEPS from its Overlap Analysis tracks (trace)
- kernel_details.csv, op_statistic.csv -> PROFILE_OPS (ascend_ops)
- communication.json, communication_matrix.json -> PROFILE_COMM (ascend_comm)
- memory_record.csv, npu_module_mem.csv, operator_memory.csv, FRAMEWORK/cpu_ms_memory_record_<r>.txt
  -> MEMORY (ascend_memory)
- dataset.csv, minddata_pipeline_raw_<r>.csv -> PROFILE_DATA (ascend_data)

Every other file these profilers write has a Format of its own saying why it is not read: an
info for metadata and intermediates another file covers, a warning for data not read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ... import diagnostics as dg
from ...text import Text
from ...model import Artifact, ReadResult
from . import ascend_comm, ascend_data, ascend_memory, ascend_ops, ascend_steps, groups, trace
from .. import guard
from .common import Format, not_read, side_json


def _rank(artifact: Artifact, rank: int | None, result: ReadResult) -> int | None:
    """The rank_id profiler_info_<r>.json holds (the profile folder's own word), checked against
    the rank from the path."""
    folder = Path(artifact.path).parent
    if folder.name in ("ASCEND_PROFILER_OUTPUT", "FRAMEWORK"):
        folder = folder.parent
    said = _info_rank(str(folder))
    if said is None:
        return rank
    if rank is not None and said != rank:
        result.diagnostics.append(dg.warning("profiler-rank-mismatch", path=artifact.rel, rank=rank, said=said))
    return said


@lru_cache(maxsize=4096)
def _info_rank(folder: str) -> int | None:
    infos = sorted(Path(folder).glob("profiler_info*.json"))
    info = side_json(infos[0]) if len(infos) == 1 else None
    rank = info.get("rank_id") if isinstance(info, dict) else None
    return rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0 else None


def _with_rank(read):
    def wrapped(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
        read(artifact, _rank(artifact, rank, result), result)
    return wrapped


def _trace_view(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    steps_beside = _sound_step_trace(Path(artifact.path).with_name("step_trace_time.csv"))
    sums = trace.read(artifact, rank, result, steps_beside=steps_beside)
    parts = [ascend_steps.Parts(s.step, s.computing, s.comm_not_overlapped, s.communication, s.free, s.receive,
                                s.preparing) for s in sums]
    ascend_steps.profile_steps(parts, rank, "trace_view", artifact, result)


def _sound_step_trace(path: Path) -> bool:
    """Whether a step_trace_time.csv beside the trace gives steps when read (one row per step: a
    small file). A damaged or empty one never makes the trace's own steps count as covered."""
    if guard.refusal(path) is not None or guard.size(path) > 64 << 20:
        return False
    probe = ReadResult(reader="profiler")
    try:
        ascend_steps.read_step_trace_time(Artifact(path=str(path), rel=path.name, size=0, mtime=0.0), None, probe)
    except (OSError, ValueError, IndexError, UnicodeError):
        return False
    table = probe.tables.get("profile_steps")
    return table is not None and table.height > 0


def _other_csv(artifact: Artifact, result: ReadResult) -> None:
    name = artifact.rel.rsplit("/", 1)[-1]
    result.diagnostics.append(dg.warning("profiler-format-not-read", path=artifact.rel, variant="other", name=name,
                                         holds=Text(f"ascend-csv.{name[:-4]}")))


def _name(file_name: str, folder: str = "") -> re.Pattern[str]:
    return re.compile(r"(?:^|/)" + folder + file_name + "$")


# CSVs the profilers also write (not read: nothing analyses them yet); the catalogue's
# ascend-csv.<name> says what each holds.
_OTHER = ("api_statistic", "l2_cache", "static_op_mem", "data_preprocess", "aicpu", "ai_core_freq", "hbm", "ddr", "llc",
          "pcie", "hccs", "nic", "roce")
_PROFILE = r"[^/]*_ascend_(?:ms|pt)/"  # a profile folder: <host>_<pid>_<stamp>_ascend_ms, rank0_ascend_pt, ...
_OUT = r"(?:[^/]*/)?"  # ASCEND_PROFILER_OUTPUT/ or FRAMEWORK/ (or none: files moved out of their folder)

FORMATS = (
    Format("step_trace_time.csv", _name(r"step_trace_time\.csv"), _with_rank(ascend_steps.read_step_trace_time)),
    Format("trace_view.json", _name(r"trace_view\.json"), _with_rank(_trace_view)),
    Format("kernel_details.csv", _name(r"kernel_details\.csv"), _with_rank(ascend_ops.read_kernel_details)),
    Format("op_statistic.csv", _name(r"op_statistic\.csv"), _with_rank(ascend_ops.read_op_statistic)),
    Format("communication.json", _name(r"communication\.json"), _with_rank(ascend_comm.read_communication)),
    Format("communication_matrix.json", _name(r"communication_matrix\.json"), _with_rank(ascend_comm.read_matrix)),
    Format("memory_record.csv", _name(r"memory_record\.csv"), _with_rank(ascend_memory.read_memory_record)),
    Format("npu_module_mem.csv", _name(r"npu_module_mem\.csv"), _with_rank(ascend_memory.read_module_memory)),
    Format("operator_memory.csv", _name(r"operator_memory\.csv"), _with_rank(ascend_memory.read_operator_memory)),
    Format("cpu_ms_memory_record_<r>.txt", _name(r"cpu_ms_memory_record_\d+\.txt"),
           _with_rank(ascend_memory.read_cpu_memory)),
    Format("dataset.csv", _name(r"dataset\.csv", _PROFILE + _OUT), _with_rank(ascend_data.read_dataset)),
    Format("minddata_pipeline_raw_<r>.csv", _name(r"minddata_pipeline_raw_\d+\.csv"),
           _with_rank(ascend_data.read_pipeline_raw)),
    # Known files not read, each with its reason.
    Format("profiler_info_<r>.json", _name(r"profiler_info(?:_\d+)?\.json"),
           not_read("profiler-not-read", "profiler-info")),
    Format("profiler_metadata.json", _name(r"profiler_metadata\.json"), _with_rank(groups.read_metadata)),
    Format("minddata_pipeline_summary_<r>", _name(r"minddata_pipeline_summary_\d+\.(?:json|csv)"),
           not_read("profiler-not-read", "pipeline-summary")),
    Format("operator_details.csv", _name(r"operator_details\.csv"),
           not_read("profiler-not-read", "operator-details")),
    Format("FRAMEWORK/ raw data", re.compile(r"(?:^|/)" + _PROFILE + r"FRAMEWORK/"),
           not_read("profiler-not-read", "framework-raw")),
    Format("profiler log", re.compile(r"(?:^|/)" + _PROFILE + r"logs/[^/]*$"),
           not_read("profiler-not-read", "profiler-log")),
    Format("profile database", re.compile(r"(?:^|/)" + _PROFILE + _OUT + r"[^/]*\.db$"),
           not_read("profiler-format-not-read", "database")),
    Format("other ASCEND_PROFILER_OUTPUT files", _name("(" + "|".join(_OTHER) + r")\.csv", _PROFILE + _OUT),
           lambda artifact, rank, result: _other_csv(artifact, result)),
)
