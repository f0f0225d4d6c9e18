"""The run model: tidy polars tables with fixed schemas, plus metadata and diagnostics.

Every reader returns a ``ReadResult`` for one file; ``load.load_run`` joins them into one ``Run``.
Tables always carry their full schema, also when empty, so analyzers never test for columns.

Units: times in seconds, wall times as unix seconds (float), sizes in bytes, fractions 0-1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .diagnostics import Diagnostic

# --------------------------------------------------------------------------- table schemas

SCALARS = {
    "step": pl.Int64,  # global step, 1-based as the training counted it
    "tag": pl.Categorical(),  # canonical name: loss, lr, grad_norm, step_time, ... (see CANONICAL_TAGS)
    "raw_tag": pl.Categorical(),  # the name as the source wrote it
    "value": pl.Float64,  # NaN / +-Inf are kept as data
    "wall_time": pl.Float64,  # unix seconds when known, else null
    "rank": pl.Int32,
    "source": pl.Categorical(),  # reader kind + flavour: "summary", "tensorboard", "log:lossmonitor", "log:mindformers", ...
    "file": pl.Categorical(),  # path relative to the run folder
}

HISTOGRAMS = {
    "step": pl.Int64,
    "tag": pl.Utf8,
    "rank": pl.Int32,
    "count": pl.Int64,
    "min": pl.Float64,
    "max": pl.Float64,
    "sum": pl.Float64,
    "nan_count": pl.Int64,
    "pos_inf_count": pl.Int64,
    "neg_inf_count": pl.Int64,
    "file": pl.Utf8,
}

# One row per (rank, step) after joining sources; built by load.py from scalars and wall times.
STEPS = {
    "step": pl.Int64,
    "rank": pl.Int32,
    "step_time_s": pl.Float64,  # end-to-end: interval between consecutive step ends (wall clock); see source
    "in_step_s": pl.Float64,  # the step's own timer as a callback logged it (starts once the batch is there)
    "gap_s": pl.Float64,  # step_time_s - in_step_s: host / data time between steps, where both are known
    "data_time_s": pl.Float64,  # time waiting for data, where a source logs it explicitly
    "device_time_s": pl.Float64,  # device / compute time, where a source gives it
    "wall_time": pl.Float64,  # when the step ended (unix seconds), where known
    "segment": pl.Int32,  # restart segment this step belongs to (0 = first launch)
    # Where step_time_s came from: "wall-clock:<source>" (e2e, from that source's step-end times),
    # "timer:<source>" (no wall-clock gap for the step: the callback's own timer stands in), or
    # "average:<source>" (only a per-epoch average, e.g. TimeMonitor: every step of the epoch gets it).
    "source": pl.Utf8,
    "in_step_source": pl.Utf8,  # which source in_step_s came from
}

EVENTS = {
    "kind": pl.Utf8,  # see EVENT_KINDS
    "step": pl.Int64,  # step at (or after) which it happened; null if unknown
    "rank": pl.Int32,
    "wall_time": pl.Float64,
    "duration_s": pl.Float64,
    "detail": pl.Utf8,
    "source": pl.Utf8,
    "file": pl.Utf8,
}

EVENT_KINDS = (
    "checkpoint_save",  # a training checkpoint was written (duration = estimated save time)
    "pause",  # the run stood still between two steps for a known reason other than these (detail says)
    "skip",  # a step whose update was skipped on purpose (MindFormers skip-data: global norm over threshold)
    "checkpoint_interrupted",  # a leftover .tmp: a save that never finished
    "restart",  # a new launch resumed the run (steps repeat or a new summary file starts)
    "compile",  # graph compilation / first step
    "eval",  # evaluation pass
    "overflow",  # loss-scale overflow: the update was skipped
    "log_error",  # an ERROR / Traceback line in a log
)

CHECKPOINTS = {
    "path": pl.Utf8,  # relative to the run folder
    "rank": pl.Int32,
    "step": pl.Int64,  # global step (append_info step_num / global_step, else from the name)
    "epoch": pl.Int64,
    "step_in_epoch": pl.Int64,
    "step_source": pl.Utf8,  # "append_info", "name", "meta.json"
    "bytes": pl.Int64,
    "mtime": pl.Float64,  # when the save finished
    "format": pl.Utf8,  # "ckpt", "safetensors"
    "tensors": pl.Int64,  # number of parameters (split parts merged)
    "model_params": pl.Int64,  # elements of model parameters
    "optimizer_params": pl.Int64,  # elements of optimizer state and bookkeeping
    "crc": pl.Boolean,  # written with crc_check=True
    "kind": pl.Utf8,  # "train", "interrupted" (.tmp), "landscape" (SummaryCollector ckpt_dir)
}

CHECKPOINT_PARAMS = {
    "path": pl.Utf8,
    "name": pl.Utf8,
    "shape": pl.List(pl.Int64),
    "dtype": pl.Utf8,  # as written: Float32, BFloat16, ...
    "elements": pl.Int64,
    "role": pl.Utf8,  # "model", "optimizer", "bookkeeping" (global_step, epoch_num, ...)
}

# One row per profiled step and rank. Steps are the profiler's own numbering (1.. within the
# profiled window), not global training steps. The parts of a step and how each layout fills them
# are in docs/formats/ (one file per layout); every layout keeps this meaning:
#   total_s = computing_s + comm_not_overlapped_s + bubble_s + data_wait_s + free_s (+ preparing_s)
# i.e. the partition adds up to the step; overlapped_s (communication hidden under compute) is
# part of computing_s's time span and is shown beside the partition, never stacked on it.
PROFILE_STEPS = {
    "rank": pl.Int32,
    "step": pl.Int64,
    "computing_s": pl.Float64,  # compute not covered by exposed communication
    "comm_not_overlapped_s": pl.Float64,  # exposed collective communication (waits included), receive excluded
    "overlapped_s": pl.Float64,  # communication hidden under compute (beside the partition)
    "communication_s": pl.Float64,  # all communication time, overlapped or not
    "free_s": pl.Float64,  # idle: the device does neither
    "bubble_s": pl.Float64,  # pipeline bubble: exposed receive (p2p) waits between stages
    "data_wait_s": pl.Float64,  # iteration gap before the step: data / host (MindInsight iteration_interval)
    "preparing_s": pl.Float64,  # before the first step's compute (2.x "Preparing"); part of the step where given
    "total_s": pl.Float64,  # step total where the source gives it, else null
    "source": pl.Utf8,  # layout the row came from: "step_trace_time", "step_trace_raw", "trace_view", ...
    "file": pl.Utf8,
}

# Operators, aggregated per (rank, step, type, name) by the reader: a kernel_details.csv of
# millions of rows becomes a few thousand. Per rank a reader keeps every type, and the names of
# the largest operators (the rest summed into one row named "(other)" of its type), so shares of
# a type and of the whole step stay exact.
PROFILE_OPS = {
    "rank": pl.Int32,
    "step": pl.Int64,  # profiled step, null when the file has no step id
    "type": pl.Utf8,  # operator type: MatMul, hcom_allReduce_, ...
    "name": pl.Utf8,  # operator (kernel) name, or "(other)"
    "core": pl.Utf8,  # accelerator core as written: AI_CORE, AI_VECTOR_CORE, AI_CPU, HCCL, MIX_AIV, ...
    "calls": pl.Int64,
    "total_s": pl.Float64,  # device time summed over the calls
    "max_s": pl.Float64,  # longest call
    "source": pl.Utf8,  # layout: "kernel_details", "op_statistic", "aicore_intermediate", ...
    "file": pl.Utf8,
}

# Communication ops: one row per op and step (communication.json, hccl_raw), or per op (or op
# type) and link (communication_matrix.json: src_rank / dst_rank set, elapse / wait null).
PROFILE_COMM = {
    "rank": pl.Int32,
    "step": pl.Int64,
    "op": pl.Utf8,  # e.g. hcom_allReduce__123 (its @group in group); a matrix's per-type sum "allreduce-total"
    "group": pl.Utf8,  # communication group, where given
    "kind": pl.Utf8,  # "collective" | "p2p"
    "transport": pl.Utf8,  # the transport bytes and bandwidth are from: HCCS, RDMA, SDMA, PCIE, ...
    "src_rank": pl.Int32,  # a link's sending rank within the group (communication_matrix.json), else null
    "dst_rank": pl.Int32,  # a link's receiving rank within the group; src == dst is a local copy
    "calls": pl.Int64,  # operator calls the row sums (per-type statistics), null for one call or unknown
    "elapse_s": pl.Float64,
    "wait_s": pl.Float64,
    "transit_s": pl.Float64,
    "synchronization_s": pl.Float64,
    "bytes": pl.Float64,
    "bandwidth_gbps": pl.Float64,  # GB/s as the source writes it
    "exposed_s": pl.Float64,  # the part of elapse_s no compute task covers, where the op's interval is known (DB exports)
    "source": pl.Utf8,  # layout: "communication.json", "hccl_raw", ...
    "file": pl.Utf8,
}

# Communication groups as the framework named them: one row per group a rank's capture lists
# (profiler_metadata.json / META_DATA ``parallel_group_info``, msprof-analyze's
# CommunicationGroupMapping). ``group`` is the name the operator records carry: the HCCL comm name
# in profiler DBs, its double hash (msprof-analyze ``double_hash``) in communication.json.
COMM_GROUPS = {
    "rank": pl.Int32,  # the rank whose capture lists the group (null: a cluster-wide table)
    "group": pl.Utf8,  # HCCL comm name (the parallel_group_info key) or its hash
    "hashed": pl.Utf8,  # double_hash(group) as text: the name communication.json and analysis.db use
    "pg_name": pl.Utf8,  # the framework's own name: dp, tp, pp, cp, exp, dp_cp, mp, embd, default_group, hccl_world_group, ...
    "global_ranks": pl.List(pl.Int32),  # the group's ranks, global numbering
    "source": pl.Utf8,  # "profiler_metadata", "profiler_db_meta", "cluster_group_map"
    "file": pl.Utf8,
}

# AI Core frequency samples (profiler DB ``AICORE_FREQ``): the device changes it under power or
# thermal limits, and drops it to idle levels between tasks.
PROFILE_FREQ = {
    "rank": pl.Int32,
    "time_s": pl.Float64,  # seconds from the capture's first record
    "freq_mhz": pl.Float64,
    "source": pl.Utf8,
    "file": pl.Utf8,
}

# The longest idle gaps of a rank's device (no compute task and no communication op running),
# with what the host was doing (profiler DB: TASK <- CANN_API <- PYTORCH_API by connectionId).
PROFILE_FREE = {
    "rank": pl.Int32,
    "step": pl.Int64,
    "start_s": pl.Float64,  # seconds from the capture's first record
    "duration_s": pl.Float64,
    "reason": pl.Utf8,  # host-idle | launch-gap | slow-launch | device-task | no-dispatch-record
    "host_idle_s": pl.Float64,  # time between the framework's two dispatches around the gap
    "launch_s": pl.Float64,  # the longest CANN launch (or the gap between launches) around it
    "source": pl.Utf8,
    "file": pl.Utf8,
}

# The data pipeline: one row per pipeline stage (dataset operator) or device queue per rank.
PROFILE_DATA = {
    "rank": pl.Int32,
    "stage": pl.Utf8,  # operator as written: "BatchOp(id=1)", "device_queue", ...
    "op_type": pl.Utf8,  # BatchOp, MapOp, GeneratorOp, ..., "device_queue", "iterator"
    "workers": pl.Int64,  # num_parallel_workers, where given
    "queue_usage": pl.Float64,  # mean fill of the stage's output queue, 0-1
    "queue_empty_share": pl.Float64,  # share of samples where the queue was empty, 0-1
    "time_s": pl.Float64,  # time the stage spent per batch / per call, where given
    "samples": pl.Int64,  # observations behind the figures
    "parent_stage": pl.Utf8,  # the stage that consumes this one's output (pipeline order), where given
    "source": pl.Utf8,
    "file": pl.Utf8,
}

# Per-rank figures a profiler computed itself (FLOPs utilisation, its own cluster analysis
# totals, ...): kept to be shown beside postmortem's own figures, with the tool's name.
PROFILE_SUMMARY = {
    "rank": pl.Int32,
    "key": pl.Utf8,  # e.g. "flops_utilization", "total_flops"
    "value": pl.Float64,
    "unit": pl.Utf8,  # "fraction", "FLOP", "FLOP/s", "s", ...
    "source": pl.Utf8,  # layout: "flops_summary", ...
    "file": pl.Utf8,
}

MEMORY = {
    "rank": pl.Int32,
    "time_s": pl.Float64,  # unix seconds if the source is absolute, else seconds from its start
    "allocated_bytes": pl.Float64,
    "reserved_bytes": pl.Float64,
    "active_bytes": pl.Float64,
    "component": pl.Utf8,
    "file": pl.Utf8,
}

# One row per auto-parallel strategy file (readers/strategy.py): the layout it holds.
STRATEGY_SCHEMA = {
    "path": pl.Utf8,
    "rank": pl.Int32,
    "format": pl.Utf8,  # "protobuf", "json"
    "save_count": pl.Int64,  # the map's current_stage: how many times it was saved, not a stage
    "merged": pl.Boolean,  # merge_pipeline_strategys' output: parameters named "{stage}-{name}"
    "stages": pl.List(pl.Int64),  # the pipeline stages its operators and parameters are on
    "pipeline_stages": pl.Int64,  # a merged file's stage count (it holds them all); a rank's file: null
    "devices_per_stage": pl.Int64,  # product of a parameter's device matrix
    "model_parallel": pl.Int64,  # the most a 2-D weight is split
    "data_parallel": pl.Int64,  # devices per stage / model parallel: copies of a dense weight (dp x cp)
    "expert_parallel": pl.Int64,  # the most a 3-D (expert) weight's first dimension is split
    "optimizer_shard": pl.Int64,  # the largest opt_weight_shard_size (parallel optimizer)
    "operators": pl.Int64,
    "parameters": pl.Int64,
}

# One row per operator and per parameter of a strategy file: how it is split.
STRATEGY_SPLITS_SCHEMA = {
    "path": pl.Utf8,
    "kind": pl.Utf8,  # "operator", "parameter"
    "name": pl.Utf8,
    "stage": pl.Int64,
    "split": pl.List(pl.List(pl.Int64)),  # operator: per input, per dimension; parameter: [per dimension]
    "dev_matrix": pl.List(pl.Int64),  # parameter: its device matrix
    "opt_shard": pl.Int64,  # parameter: opt_weight_shard_size
    "role": pl.Utf8,  # "operator", or a parameter's role: "model", "optimizer", "bookkeeping"
}

# One row per entry of MindFormers' health_ckpts.json (readers/health.py), in save order.
HEALTH_CKPTS = {
    "path": pl.Utf8,
    "position": pl.Int64,  # the entry's index: the save order
    "ckpt_name": pl.Utf8,  # rank 0's file name, as written
    "is_health": pl.Int64,  # as written: 0 healthy, anything else (or null) not
    "rank": pl.Int32,  # from the name's _rank_N
    "epoch": pl.Int64,  # from the name
    "step_in_epoch": pl.Int64,  # from the name
    "step": pl.Int64,  # the global step the record states (Checkpoint 2.0's common.json), else null
}

# What a dying job left, one row per incident (readers/failure/): a CRITICAL / ERROR line, an
# exception with its traceback, a killed process, a fault-tolerance record; and one "end" row per
# log, the last time it wrote (a hang is progress that stops long before its files do).
INCIDENTS = {
    "rank": pl.Int32,  # the rank the file's path names (rank_N/, worker_N.log, a CANN device-N/ folder); null: not said
    "file": pl.Utf8,
    "line": pl.Int64,  # 1-based line of the header
    "wall_time": pl.Float64,  # the header's time (a zone-less log time read as UTC, as the text-log reader does)
    "level": pl.Utf8,  # "error", "critical", "exception", "killed", "abnormal_global_norm", "end"
    "code": pl.Utf8,  # an Ascend error code: EI0002, EE9999, E39999, ...
    "runtime_code": pl.Int64,  # a runtime result: 507011, ...
    "exception": pl.Utf8,  # a Python exception's name: RuntimeError, MemoryError, ...
    "text": pl.Utf8,  # the header line as written
    "context": pl.Utf8,  # the lines after it (a traceback's frames, CANN's Ascend Error Message block)
    "named_rank": pl.Int32,  # a rank the text names as failed first ("remote rank [0]", "deviceId[0], Heartbeat Lost")
    "named_how": pl.Utf8,  # "heartbeat_lost", "timed_out_node", "remote_rank"
    "pid": pl.Int64,  # the process the line names as its writer (ME(14466:...), [PID: 7277]); an end row: the file's first
    "named_pid": pl.Int64,  # a process the launcher names as exited ("Worker process 14466 exit with exception")
    "source": pl.Utf8,  # "log", "plog", "device", "fault-tolerance"
    "step": pl.Int64,  # a fault-tolerance record's global step
}

TABLES: dict[str, dict[str, pl.DataType]] = {
    "scalars": SCALARS,
    "histograms": HISTOGRAMS,
    "steps": STEPS,
    "events": EVENTS,
    "checkpoints": CHECKPOINTS,
    "checkpoint_params": CHECKPOINT_PARAMS,
    "profile_steps": PROFILE_STEPS,
    "profile_ops": PROFILE_OPS,
    "profile_comm": PROFILE_COMM,
    "profile_data": PROFILE_DATA,
    "profile_summary": PROFILE_SUMMARY,
    "memory": MEMORY,
    "comm_groups": COMM_GROUPS,
    "profile_freq": PROFILE_FREQ,
    "profile_free": PROFILE_FREE,

    "strategy": STRATEGY_SCHEMA,
    "strategy_splits": STRATEGY_SPLITS_SCHEMA,
    "health_ckpts": HEALTH_CKPTS,

    "incidents": INCIDENTS,
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """A table of no rows. Made once per schema: making one costs ~0.3 ms, and each rank of a run
    has a dozen empty tables (frames are never changed in place, so one can be shared)."""
    key = tuple((name, str(dtype)) for name, dtype in schema.items())
    table = _EMPTY.get(key)
    if table is None:
        table = _EMPTY[key] = pl.DataFrame(schema=schema)
    return table


_EMPTY: dict[tuple[tuple[str, str], ...], pl.DataFrame] = {}


def frame(columns: dict[str, Any], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Build a table from columns (lists / arrays); missing columns become null.

    Readers collect plain Python lists per column while streaming and call this once at the end.
    """
    n = next((len(v) for v in columns.values() if not _is_scalar(v)), 0)
    if n == 0:
        return empty(schema)
    data = {name: pl.Series(name, columns[name], dtype=dtype, strict=False)
            for name, dtype in schema.items() if not _is_scalar(columns.get(name))}
    # a value for every row is broadcast in the select (cheaper than a column made for it: a
    # reader makes a table per file, thousands at thousands of ranks)
    return pl.DataFrame(data).select(pl.col(name) if name in data else pl.lit(columns.get(name), dtype=dtype).alias(name)
                                     for name, dtype in schema.items())


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def conform(df: pl.DataFrame | None, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Cast a frame to a schema: add missing columns as null, drop extra ones, order columns."""
    if df is None or df.is_empty() and not df.columns:
        return empty(schema)
    if list(df.schema.items()) == list(schema.items()):
        return df
    exprs = [
        (pl.col(c).cast(t, strict=False) if c in df.columns else pl.lit(None, dtype=t)).alias(c)
        for c, t in schema.items()
    ]
    return df.select(exprs)


# --------------------------------------------------------------------------- canonical names

# Tag names and units live in tags.py; these names stay here for the readers that import them.
from .tags import CANONICAL_TAGS, canonical_tag  # noqa: E402,F401


# --------------------------------------------------------------------------- metadata


@dataclass(frozen=True, slots=True)
class Setting:
    """One configuration value and where it came from (lineage, config file, log, flag)."""

    value: Any
    source: str

    def to_dict(self) -> dict:
        return {"value": _jsonable(self.value), "source": self.source}


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


# Canonical setting keys. Readers put what they find under these names (others are kept as-is).
SETTING_KEYS = (
    "network", "optimizer", "loss_function", "learning_rate", "epoch", "batch_size",
    "micro_batch_size", "global_batch_size", "seq_length", "train_dataset_size", "parallel_mode",
    "device_num", "data_parallel", "model_parallel", "pipeline_stage", "micro_batch_num",
    "gradient_accumulation_steps", "num_layers", "hidden_size", "num_heads", "vocab_size",
    "ffn_hidden_size", "model_path", "model_size_bytes", "framework", "framework_version",
    "mindformers_version", "device", "precision", "sink_size", "save_checkpoint_steps",
    "last_loss", "dataset",
)


@dataclass(frozen=True, slots=True)
class Artifact:
    """One file found under the run folder."""

    path: str  # absolute path
    rel: str  # posix path relative to the run folder
    size: int
    mtime: float
    rank: int | None = None  # from rank_N/, worker_N.log, device id in a summary name


@dataclass(slots=True)
class ReadResult:
    """What one reader got from one file. Tables may be None when the file has none of that kind."""

    reader: str
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)  # keys from TABLES
    settings: dict[str, Setting] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # "utc": wall_time values are unix time. "local": the file wrote clock times without a zone
    # (most logs); they were read as if UTC, so they keep their gaps but not their offset, which
    # loading settles against the sources that know it (or states as unknown).
    clock: str = "utc"

    def rows(self) -> int:
        return sum(t.height for t in self.tables.values())


@dataclass(frozen=True, slots=True)
class InventoryEntry:
    rel: str
    reader: str | None  # None: not claimed by any reader
    size: int
    rows: int
    rank: int | None
    note: str = ""  # why a file was not read, a code: unclaimed, symlink-outside, special-file, ... (the report names it)


@dataclass(frozen=True, slots=True)
class Segment:
    """A launch of the run. A resumed run has several; later data wins on overlapping steps."""

    index: int
    first_step: int
    last_step: int
    discarded: tuple[int, int] | None = None  # steps of the earlier launch replaced by this one


@dataclass(frozen=True)
class Run:
    root: str
    name: str  # folder name; the default run id
    tables: dict[str, pl.DataFrame]  # every key of TABLES, always present
    settings: dict[str, Setting]
    inventory: tuple[InventoryEntry, ...]
    segments: tuple[Segment, ...]
    ranks: tuple[int, ...]
    diagnostics: tuple[Diagnostic, ...]
    # "utc": every wall time is unix time. "local": some are a log's clock times without a zone
    # that no zoned source could settle (a diagnostic names the files): gaps are right, the
    # offset from UTC is unknown, so such times must not be written out as UTC.
    clock: str = "utc"

    def setting(self, key: str, default: Any = None) -> Any:
        s = self.settings.get(key)
        return s.value if s is not None else default

    def series(self, tag: str, rank: int | None = None) -> pl.DataFrame:
        """(step, value, wall_time) of one canonical tag, one value per step (first rank if None)."""
        df = self.tables["scalars"].filter(pl.col("tag") == tag)
        if df.is_empty():
            return df.select("step", "value", "wall_time")
        r = rank if rank is not None else df["rank"].min()
        return (
            df.filter(pl.col("rank") == r)
            .unique(subset="step", keep="last", maintain_order=True)
            .sort("step")
            .select("step", "value", "wall_time")
        )
