"""MindInsight-era flat ``profiler/`` folders (MindSpore 1.x - 2.2 on Ascend): which file is read
by which module, and why the others are not read.

- mindinsight_steps: ``step_trace_raw_<r>_detail_time.csv``, ``ascend_cluster_analyse_*.csv``
- mindinsight_comm: ``hccl_raw_<r>.csv``
- mindinsight_ops: ``aicore_intermediate_<r>_{type,detail}.csv``, ``aicpu_intermediate_<r>.csv``,
  ``flops_summary_<r>.json``
- mindinsight_data: ``minddata_pipeline_raw_<r>.csv``, ``device_queue_profiling_<r>.txt``,
  ``dataset_iterator_profiling_<r>.txt``, ``minddata_aicpu_<r>.txt``, ``minddata_cpu_utilization_<r>.json``

Every column's unit and meaning, learned from the writers (MindSpore's ``profiler/parser``) and
MindInsight's analysers: docs/formats/profiler-mindinsight.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from .common import NAMED_RANK, Format, not_read
from .mindinsight_comm import read_hccl_raw
from .mindinsight_data import read_cpu_utilization, read_device_trace, read_minddata_aicpu, read_pipeline_raw
from .mindinsight_ops import read_aicore_detail, read_aicore_type, read_aicpu, read_flops_summary
from .mindinsight_steps import read_cluster_analyse, read_step_trace_raw


def _name(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?:^|/)" + pattern + "$")


ReadFn = Callable[[Artifact, int | None, ReadResult], None]


def _ranked(read: ReadFn) -> ReadFn:
    """`read` with the rank of the file name where the path gives none (aicore_intermediate_1_type.csv
    has it before the suffix), and an info where the name and the folder disagree."""

    def run(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
        m = NAMED_RANK.search(artifact.rel)
        named = int(m.group(1)) if m else None
        if rank is None:
            rank = named
        elif named is not None and named != rank:
            result.diagnostics.append(dg.info("profiler-rank", path=artifact.rel, named=named, rank=rank))
        read(artifact, rank, result)

    return run


R = r"_\d+"  # the rank in a file name (in older MindSpore: the device id)

# (name, pattern, the file it is read from instead, what of it is left out: a variant of profiler-intermediate)
_INTERMEDIATES = (
    ("output_op_compute_time_<r>.txt", r"output_op_compute_time" + R + r"\.txt", "aicore_intermediate_<r>_detail.csv", ""),
    ("output_op_compute_time_detail_<r>.txt", r"output_op_compute_time_detail" + R + r"\.txt",
     "aicore_intermediate_<r>_type.csv", ""),
    ("output_timeline_data_<r>.txt", r"output_timeline_data" + R + r"\.txt", "aicore_intermediate_<r>_detail.csv",
     "operator-totals"),
    ("output_format_data_hwts_<r>.txt", r"output_format_data_hwts" + R + r"\.txt",
     "aicore_intermediate_<r>_detail.csv", ""),
    ("output_data_preprocess_aicpu_<r>.txt", r"output_data_preprocess_aicpu" + R + r"\.txt",
     "aicpu_intermediate_<r>.csv", ""),
    ("pipeline_profiling_<r>.json", r"pipeline_profiling" + R + r"\.json", "minddata_pipeline_raw_<r>.csv", ""),
    ("minddata_pipeline_summary_<r>.{json,csv}", r"minddata_pipeline_summary" + R + r"\.(?:json|csv)",
     "minddata_pipeline_raw_<r>.csv", ""),
    ("flops_<r>.txt", r"flops" + R + r"\.txt", "flops_summary_<r>.json", "per-operator-flops"),
    ("flops_scope_<r>.json", r"flops_scope" + R + r"\.json", "flops_summary_<r>.json", "scope-flops"),
    ("flops_utilization_step_<r>.json", r"flops_utilization_step" + R + r"\.json", "flops_summary_<r>.json",
     "step-utilisation"),
)
# (name, pattern, why it is not read: a variant of profiler-not-read)
_SKIPPED = (
    ("[ascend_]timeline_display_<r>.json", r"(?:ascend_)?timeline_display" + R + r"\.json", "timeline-display"),
    ("[ascend_]timeline_summary_<r>.json", r"(?:ascend_)?timeline_summary" + R + r"\.json", "timeline-summary"),
    ("framework_raw_<r>.csv", r"framework_raw" + R + r"\.csv", "framework-names"),
    ("step_trace_point_info[_<r>].json", r"step_trace_point_info(?:" + R + r")?\.json", "step-trace-points"),
    ("min_cycle_counter_<r>.txt", r"min_cycle_counter" + R + r"\.txt", "cycle-counter"),
    ("dynamic_shape_info_<r>.json", r"dynamic_shape_info" + R + r"\.json", "dynamic-shapes"),
)

FORMATS: tuple[Format, ...] = (
    Format("step_trace_raw_<r>_detail_time.csv", _name(r"step_trace_raw" + R + r"_detail_time\.csv"),
           _ranked(read_step_trace_raw)),
    Format("ascend_cluster_analyse_<mode>_<stages>_<ranks>_<r>.csv",
           _name(r"(?:ascend|gpu)_cluster_analyse_[a-z-]+_\d+_\d+" + R + r"\.csv"), _ranked(read_cluster_analyse)),
    Format("hccl_raw_<r>.csv", _name(r"hccl_raw" + R + r"\.csv"), _ranked(read_hccl_raw)),
    Format("aicore_intermediate_<r>_type.csv", _name(r"aicore_intermediate" + R + r"_type\.csv"),
           _ranked(read_aicore_type)),
    Format("aicore_intermediate_<r>_detail.csv", _name(r"aicore_intermediate" + R + r"_detail\.csv"),
           _ranked(read_aicore_detail)),
    Format("aicpu_intermediate_<r>.csv", _name(r"aicpu_intermediate" + R + r"\.csv"), _ranked(read_aicpu)),
    Format("flops_summary_<r>.json", _name(r"flops_summary" + R + r"\.json"), _ranked(read_flops_summary)),
    Format("minddata_pipeline_raw_<r>.csv", _name(r"minddata_pipeline_raw" + R + r"\.csv"), _ranked(read_pipeline_raw)),
    Format("device_queue_profiling_<r>.txt", _name(r"device_queue_profiling" + R + r"\.txt"),
           _ranked(read_device_trace)),
    Format("dataset_iterator_profiling_<r>.txt", _name(r"dataset_iterator_profiling" + R + r"\.txt"),
           _ranked(read_device_trace)),
    Format("minddata_aicpu_<r>.txt", _name(r"minddata_aicpu" + R + r"\.txt"), _ranked(read_minddata_aicpu)),
    Format("minddata_cpu_utilization_<r>.json", _name(r"minddata_cpu_utilization" + R + r"\.json"),
           _ranked(read_cpu_utilization)),
    *(Format(name, _name(p), not_read("profiler-intermediate", left_out, target))
      for name, p, target, left_out in _INTERMEDIATES),
    *(Format(name, _name(p), not_read("profiler-not-read", why)) for name, p, why in _SKIPPED),
    # MindSpore 1.x keeps the device's raw data in profiler/JOB<id>/ beside the files it parsed from it.
    Format("JOB*/ raw device data", re.compile(r"(?:^|/)profiler/JOB[^/]*/"),
           not_read("profiler-intermediate", "raw-device")),
)
