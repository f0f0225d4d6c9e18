"""Result types of the analysis layer: plain frozen data, no markup, no charts.

Every number that can fail to exist is a ``Figure``: ``value`` is None and ``reason`` says why.
``method`` always says how the value was obtained (formula, window, source). Every sentence is a
``Text`` (a key and its parameters), worded per language by the report layer; a ``str`` here is a
code or the run's own data (a tag, a path, a setting's value). Keep these stable: additive
changes only (the report layer and metrics.json build on them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import polars as pl

from ..config import AnalysisOptions  # noqa: F401  (defined with the build's settings: config.py imports no polars)
from ..diagnostics import Diagnostic
from ..text import Text

if TYPE_CHECKING:  # analysis/domains.py defines its own types (it imports this module's neighbours)
    from .domains import CommDomains

# --------------------------------------------------------------------------- building blocks


@dataclass(frozen=True, slots=True)
class Figure:
    """One number, how it was obtained, and why it is missing when it is."""

    value: float | None
    method: Text | None = None  # how it was obtained
    reason: Text | None = None  # set when value is None
    unit: str = ""
    source: Text | None = None  # where the inputs came from: the options, a setting and its source, a checkpoint, ...
    caveat: Text | None = None  # said beside a known value that rests on little (few steps, marked steps)

    @property
    def known(self) -> bool:
        return self.value is not None


def missing(reason: Text, method: Text | None = None, unit: str = "") -> Figure:
    return Figure(None, method=method, reason=reason, unit=unit)


@dataclass(frozen=True, slots=True)
class RobustStats:
    """Robust summary of a sample (seconds for step time)."""

    count: int
    median: float
    trimmed_mean: float  # 10% trimmed from each end
    mean: float
    mad: float  # raw median absolute deviation (not scaled)
    iqr: float
    p10: float
    p90: float
    p99: float
    min: float
    max: float
    median_ci_low: float  # seeded percentile bootstrap 95% CI of the median
    median_ci_high: float


# --------------------------------------------------------------------------- throughput / window

# Per-step exclusions from the steady window. One row per excluded step, first matching reason.
EXCLUDED = {"step": pl.Int64, "reason": pl.Utf8}

EXCLUSION_REASONS = (
    "compile", "warmup", "checkpoint", "eval", "data_stall", "resume", "nan", "overflow", "outlier",
    "missing", "pause", "skip",
)


@dataclass(frozen=True)
class SteadyWindow:
    start_step: int | None  # first step kept
    end_step: int | None  # last step kept
    steps_kept: int
    excluded: pl.DataFrame  # EXCLUDED
    excluded_counts: dict[str, int]  # reason -> steps
    rules: dict[str, Text]  # reason -> the rule used
    reason: Text | None = None  # why there is no window
    # What the time figures rest on (analysis/window.py window_basis): "steady", "few" (fewer than
    # FEW_STEPS kept steps), "marked" (no kept step: timed steps carrying marks), "none".
    basis: str = "steady"
    used_steps: tuple[int, ...] = ()  # the steps the figures rest on, where the basis is not "steady"
    caveat: Text | None = None  # said with every time figure where the basis is not "steady"


# What the step times in steps.step_time_s are (from steps.source):
#   "e2e": wall-clock gaps between step ends; "timer": only a callback's own timer was found (the
#   time between steps, data loading included, is not in it); "logged": a logged step time whose
#   basis the source does not say; "none": no step times.
TIMING_BASES = ("e2e", "timer", "logged", "none")


@dataclass(frozen=True)
class Throughput:
    window: SteadyWindow
    step_time: RobustStats | None  # e2e step time over the steady window
    step_time_s: Figure  # median e2e step time
    steps_per_s: Figure
    samples_per_s: Figure
    tokens_per_s: Figure
    global_batch_size: Figure
    seq_length: Figure
    tokens_per_step: Figure
    logged: dict[str, Figure]  # what the run logged itself (median over the steady steps): tag -> figure
    rank: int | None = None  # the rank whose step times were used
    timing: str = "none"  # TIMING_BASES: what step_time_s is
    in_step_time_s: Figure = field(default_factory=lambda: missing(Text("reason.no-in-step-timer"), unit="s"))  # median over the window
    gap_share: Figure = field(default_factory=lambda: missing(Text("reason.no-in-step-timer"), unit="fraction"))  # gap / e2e
    implied: dict[str, Figure] = field(default_factory=dict)  # "samples_per_step"/"tokens_per_step" by logged rates


# --------------------------------------------------------------------------- MFU


@dataclass(frozen=True)
class ModelSize:
    params: Figure  # N used for MFU: model parameters without position embeddings (PaLM)
    params_total: Figure  # all model parameters (with every embedding table)
    params_non_embedding: Figure  # without token and position embedding tables
    embedding_params: Figure  # token (word) embedding tables
    position_embedding_params: Figure
    checkpoint: str | None = None  # path of the checkpoint counted


@dataclass(frozen=True)
class Mfu:
    model: ModelSize
    flops_per_token: Figure
    flops_per_token_causal: Figure  # attention term halved (Megatron-style causal counting)
    peak_flops: Figure  # dense FLOP/s per device
    devices: Figure
    mfu: Figure  # fraction 0-1
    mfu_causal: Figure
    achieved_tflops_per_device: Figure  # flops_per_token x tokens/s / devices / 1e12
    logged: dict[str, Figure]  # run's own figures: "mfu", "hfu", "tflops_per_device", "full_model_flops", ...
    architecture: dict[str, Figure]  # num_layers, hidden_size, num_heads, vocab_size, seq_length


# --------------------------------------------------------------------------- convergence


@dataclass(frozen=True)
class TimeToTarget:
    target: float | None
    target_source: str  # "options" (options.target_loss) | "baseline" (the baseline's final smoothed loss)
    step: Figure
    tokens: Figure
    hours: Figure  # wall hours from the first step


@dataclass(frozen=True)
class AuxLoss:
    tag: str
    count: int
    first: float | None
    last: float | None
    min: float | None
    final_smoothed: float | None  # mean of the last 10% of the finite values
    nonfinite: int


CONVERGENCE_STATUSES = ("converged", "not_converged", "unknown")
# Why a run did not converge: "no_drop" (the loss never came down), "still_moving" (the smoothed
# loss entered the band only in the last 10% of steps, or never), "nonfinite_end" (no finite loss
# at the end), "no_loss" (no finite loss at all).


@dataclass(frozen=True)
class Convergence:
    smoothing: Text  # how the loss was smoothed
    initial_loss: Figure
    final_smoothed_loss: Figure  # the final loss level: robust statistic of the last 10% of steps
    min_smoothed_loss: Figure
    convergence_step: Figure
    convergence_tokens: Figure
    convergence_hours: Figure  # wall-clock hours from the first step to the convergence step
    targets: tuple[TimeToTarget, ...]
    aux_losses: tuple[AuxLoss, ...]
    eval_loss_last: Figure
    final_loss_se: Figure = field(default_factory=lambda: missing(Text("reason.not-computed")))  # standard error of the final level
    # "spike" / "nonfinite" -> the steps kept out of the smoothed loss
    left_out: dict[str, tuple[int, ...]] = field(default_factory=dict)
    status: str = "unknown"  # CONVERGENCE_STATUSES
    status_code: str | None = None  # why not converged (see above); None when converged
    status_evidence: dict[str, float | int | None] = field(default_factory=dict)  # the numbers behind the status
    rule: Text | None = None  # the convergence rule


# --------------------------------------------------------------------------- stability


class Recovery(StrEnum):
    FAST = "fast"  # back to the pre-spike level within 5 steps
    SLOW = "slow"  # back later
    NONE = "none"  # never back (divergence or run ended)


@dataclass(frozen=True, slots=True)
class Spike:
    step: int  # first spiking step
    end_step: int  # last spiking step of the merged run
    value: float  # peak value
    baseline: float  # rolling median before the spike
    height: float  # (peak - baseline) / |baseline|: relative rise over the rolling median
    score: float  # robust z of the peak: (value - median) / (1.4826 * MAD)
    duration: int  # spiking steps merged
    recovery: Recovery
    recovery_steps: int | None  # steps from the peak until back within the band; None if never
    recovery_values: int | None = None  # logged values until back within the band (sparse logs: the gap in steps is recovery_steps)


@dataclass(frozen=True)
class Explosion:
    """A value >= EXPLOSION_RATIO x the median of the up to 5 logged values before it, or a
    non-finite value: at any log density (analysis/stability.py)."""

    tag: str  # "loss" or "grad_norm"
    step: int  # first exploding step
    end_step: int  # last exploding step of the run of consecutive exploding values
    before: float | None  # the last finite logged value before it
    value: float  # the value at `step` (NaN / Inf when non-finite)
    level: float | None  # the median it was held against (None for a non-finite value without history)
    ratio: float | None  # value / level
    recovered_step: int | None  # the first later logged value back below EXPLOSION_RATIO x level; None if never
    recovery_values: int | None  # logged values from `end_step` to that value
    nonfinite: bool = False


@dataclass(frozen=True)
class SpikeSeries:
    tag: str
    rule: Text
    points: int  # finite values examined
    spikes: tuple[Spike, ...]
    nonfinite_steps: tuple[int, ...]  # NaN/Inf values, never fed to the rolling statistics
    height_p50: float | None
    height_p90: float | None
    height_max: float | None
    spacing_median_steps: float | None
    recovery_counts: dict[str, int]
    reason: Text | None = None  # why the series could not be examined


@dataclass(frozen=True)
class Stability:
    loss: SpikeSeries
    grad_norm: SpikeSeries
    nan_steps: tuple[int, ...]  # steps whose loss or grad norm is NaN/Inf
    overflow_steps: tuple[int, ...]  # loss-scale overflow (applied or skipped update: in the time window)
    grad_leads_loss: Figure  # fraction of loss spikes with a grad-norm spike 0..lead_window steps before
    lead_window_steps: int = 5
    skip_steps: tuple[int, ...] = ()  # skipped-data steps (update skipped; in the time window, out of the loss figures)
    explosions: tuple[Explosion, ...] = ()  # loss / grad-norm explosions at any log density (stability.py)


# --------------------------------------------------------------------------- phases, resources


@dataclass(frozen=True)
class Phase:
    name: str  # "startup", "warmup", "main", "decay"
    start_step: int
    end_step: int
    rule: Text
    events: dict[str, int]  # event kind -> count inside the phase (and "stall" from the window)
    step_time_median_s: float | None
    tokens_per_s: float | None
    max_allocated_bytes: float | None
    data_wait_share: float | None
    comm_share: float | None


@dataclass(frozen=True, slots=True)
class CheckpointSave:
    step: int | None
    path: str | None
    bytes: int | None
    save_s: float | None
    method: Text  # how save_s was found: its event's duration, the step time minus the median, ...


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    """One checkpoint file read, save or not (a test or golden checkpoint, an exported model)."""

    path: str
    rank: int | None
    step: int | None  # the global step it holds, where known
    bytes: int | None
    params: int | None  # elements of the model's parameters
    kind: str | None  # "train", "interrupted", "landscape"
    save: bool  # a training save at a known step: one of checkpoint_saves' steps, in the checkpoint tax


@dataclass(frozen=True)
class Phases:
    phases: tuple[Phase, ...]
    rule: Text
    checkpoint_saves: tuple[CheckpointSave, ...]
    checkpoint_tax: Figure  # total save time / total wall time, fraction
    reason: Text | None = None
    data_wait_share: float | None = None  # logged data wait / step time over the steady window (all steps if none)
    checkpoint_files: tuple[CheckpointFile, ...] = ()  # every checkpoint file read, by step (unknown last), path


# --------------------------------------------------------------------------- profiler

# The parts of a profiled step. PARTITION adds up to the step time; communication hidden under
# compute ("comm_overlapped") lies inside the compute time span and is shown beside, never added.
PARTITION = ("compute", "comm_exposed", "bubble", "data_wait", "idle", "preparing")
BESIDE = ("comm_overlapped",)

# One row per profiled (rank, step) of the layout chosen for the rank: the per-step charts.
PROFILE_STEP_SERIES = {
    "rank": pl.Int32,
    "step": pl.Int64,  # the profiler's own numbering (its window), not the training step
    "compute": pl.Float64,  # seconds of each part (PARTITION + BESIDE), null where the layout lacks it
    "comm_exposed": pl.Float64,
    "bubble": pl.Float64,
    "data_wait": pl.Float64,
    "idle": pl.Float64,
    "preparing": pl.Float64,
    "comm_overlapped": pl.Float64,
    "total_s": pl.Float64,  # the layout's step total, else the sum of the parts
    "total_given": pl.Boolean,  # total_s is the layout's own
    "outlier": pl.Boolean,  # left out of the breakdown (see ProfileOutlier)
    "source": pl.Utf8,
}


class TotalBasis(StrEnum):
    GIVEN = "given"  # every row has the profiler's own step total
    PARTS = "parts"  # some rows have none: the sum of their parts is used


@dataclass(frozen=True)
class ProfileBreakdown:
    """Where the profiled step time went, over the (rank, step) rows of one choice of layouts."""

    source: str  # layout(s) counted, "+"-joined when ranks differ: "step_trace_raw", "cluster_analyse", ...
    ranks: int
    steps: int  # (rank, step) rows counted
    step_time_s: float | None  # mean step time of those rows
    seconds: dict[str, float | None]  # part (PARTITION + BESIDE) -> mean seconds per step; None: the layout lacks it
    shares: dict[str, float | None]  # part -> fraction of the step time
    comm_share: float | None  # (comm_exposed + bubble) / step: the communication no compute hides
    comm_flag: bool  # comm_share above thresholds.COMM_SHARE
    total_basis: TotalBasis
    excluded: int = 0  # outlier rows left out (ProfileOutlier)


@dataclass(frozen=True, slots=True)
class ProfileOutlier:
    """A profiled step far slower than its rank's other steps (a warm-up or first step): left out."""

    rank: int
    step: int
    total_s: float
    median_s: float  # the rank's median profiled step
    part: str | None  # the part that grew the most
    part_s: float | None


class OpScope(StrEnum):
    KERNELS = "kernels"  # every device kernel, communication included (kernel_details, op_summary)
    AI_CORE = "ai_core"  # AI Core operators only (MindInsight aicore_intermediate)
    AI_CPU = "ai_cpu"  # AI CPU operators only (MindInsight aicpu_intermediate)


@dataclass(frozen=True, slots=True)
class OpStat:
    type: str
    name: str | None  # None in a by-type row; "(other)" sums the names a reader did not keep
    core: str | None
    calls: int | None
    total_s: float  # device time per rank (summed over the ranks, divided by their number)
    share: float  # of the scope's operator time
    communication: bool  # a communication (HCCL) kernel


@dataclass(frozen=True)
class Operators:
    """Operator time TopN (the article's second graph) over one scope of operators."""

    scope: OpScope
    source: str
    ranks: int
    total_s: float  # operator time per rank
    by_type: tuple[OpStat, ...]  # largest first, at most thresholds.TOP_N
    by_name: tuple[OpStat, ...]  # empty when the layout has no names
    types: int  # how many types in all
    names: int
    comm_share: float | None  # communication kernels / all kernels (KERNELS scope), else None


@dataclass(frozen=True, slots=True)
class CommOpStat:
    type: str  # AllReduce, Receive, hcom_broadcast, ...
    kind: str  # "collective" | "p2p"
    calls: int | None
    total_s: float  # elapsed per rank over the profiled steps
    share: float | None  # of Communication.share_basis; ops overlap each other, so shares of the step can add past 100%
    wait_s: float | None  # per rank, where the layout gives it
    transit_s: float | None


@dataclass(frozen=True, slots=True)
class LinkStat:
    transport: str  # HCCS, RDMA, SDMA, PCIE, ...
    bytes: float  # per rank
    transit_s: float  # per rank
    bandwidth_gbps: float | None  # bytes / transit time, GB/s (1e9 bytes/s)
    ops: int  # operator rows behind it


@dataclass(frozen=True)
class Communication:
    """Communication share and operator time (the article's third graph)."""

    source: str | None  # layout of the operator times
    ranks: int
    ops: tuple[CommOpStat, ...]  # largest first
    links: tuple[LinkStat, ...]  # bandwidth by transport
    link_source: str | None
    share_basis: str = "step"  # what CommOpStat.share is of: "step" (profiled step time) or "kernels" (device kernel time)


class LinkUnit(StrEnum):
    """What a bandwidth is measured over (analysis/links.py)."""

    LINK = "link"  # one src -> dst rank link (communication_matrix and its cluster / database forms)
    RANK = "rank"  # one rank's transfers over one transport (per-op records: msprof-analyze's slow-link advisor)


class LinkGap(StrEnum):
    """Why no link's bandwidth could be judged."""

    NO_RECORDS = "no_records"  # no record gives bytes and transfer time per link or per rank
    LATENCY_BOUND = "latency_bound"  # every transfer is below the size that measures bandwidth
    TOO_FEW = "too_few"  # fewer measured links of one transport (and group) than a median needs


@dataclass(frozen=True, slots=True)
class LinkBandwidth:
    """One link's (or rank's) bandwidth over its transfers big enough to measure it, against its peers'."""

    unit: LinkUnit
    src_rank: int  # the sending rank (for a RANK unit: the rank)
    dst_rank: int | None  # the receiving rank; None for a RANK unit
    group: str | None  # communication group, where the records name it (peers are of the same group)
    transport: str  # HCCS, RDMA, PCIE, SIO, ...
    bytes: float  # moved by the measured transfers, over the profiled steps
    transit_s: float
    transfers: int  # op records behind it
    bandwidth_gbps: float  # bytes / transit time, GB/s (1e9 bytes/s)
    reference_gbps: float  # median of the peers' bandwidths (same transport and group), itself included
    peers: int  # links in that median
    ratio: float  # bandwidth / reference
    slow: bool  # ratio below thresholds.SLOW_LINK_RATIO


@dataclass(frozen=True)
class SlowLinks:
    """Slow links: per-link (or per-rank) bandwidth from transfers big enough to measure it,
    each against the median of its peers (analysis/links.py)."""

    unit: LinkUnit | None
    source: str | None  # layouts the records are from
    links: tuple[LinkBandwidth, ...]  # the judged ones, slowest against its peers first
    slow: tuple[LinkBandwidth, ...]
    measured: int  # transfer records big enough to measure bandwidth
    small: int  # latency-bound records left out
    gap: LinkGap | None  # why no link could be judged
    rule: Text
    reason: Text | None = None  # the gap worded from its numbers


@dataclass(frozen=True, slots=True)
class DataStage:
    stage: str
    op_type: str | None
    workers: int | None
    queue_usage: float | None
    queue_empty_share: float | None
    time_s: float | None
    samples: int | None
    parent_stage: str | None


class SlowestRule(StrEnum):
    """How the slowest data pipeline stage was found (MindInsight's queue rule)."""

    PRODUCER_FULLER = "producer_fuller"  # its producer's queue is fuller than its own by > 0.1
    SOURCE_EMPTY = "source_empty"  # a source stage whose output queue is below 60 % full
    NONE = "none"  # every queue above 80 %: the pipeline keeps up


@dataclass(frozen=True)
class DataPipeline:
    rank: int | None  # the rank shown: the one whose device queue was empty most often
    ranks: int
    stages: tuple[DataStage, ...]  # device side first, then upstream
    queue_empty_share: float | None  # share of batches the device found its data queue empty
    queue_samples: int | None
    queue_stage: str | None  # the queue that figure is from: device_queue, get_next, iterator
    slowest: str | None  # the stage that holds the pipeline back
    slowest_rule: SlowestRule | None


class MemoryGap(StrEnum):
    """Why a part of the memory split is unknown."""

    NO_PEAK = "no_peak"  # no device memory record
    NO_CHECKPOINT = "no_checkpoint"  # no checkpoint header to size parameters and optimizer state
    STATIC_OVER_PEAK = "static_over_peak"  # the checkpoint's tensors exceed the peak (a whole-model checkpoint of a sharded run?)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Peak device memory of the rank with the highest peak, split where the data allows."""

    rank: int | None
    component: str | None  # the memory record's series the peak is from
    peak_bytes: float | None  # peak allocated
    reserved_bytes: float | None  # peak reserved by the allocator
    capacity_bytes: float | None  # the device's memory (peaks table)
    peak_share: float | None  # peak allocated / capacity
    parameters_bytes: float | None  # model parameters, from the checkpoint's shapes and dtypes
    gradients_bytes: float | None  # one gradient per parameter, same dtype (an upper bound: frozen ones have none)
    optimizer_bytes: float | None  # optimizer state
    activations_bytes: float | None  # peak - the three above: activations, workspaces, fragmentation
    checkpoint: str | None
    gap: MemoryGap | None = None


@dataclass(frozen=True)
class Profile:
    """What the profiler files say: the step breakdown, the three graphs, memory."""

    breakdown: ProfileBreakdown | None
    alternatives: tuple[ProfileBreakdown, ...]  # the same steps as other layouts (a tool's own analysis) split them
    steps: pl.DataFrame  # PROFILE_STEP_SERIES
    outliers: tuple[ProfileOutlier, ...]
    operators: tuple[Operators, ...]  # one per scope
    communication: Communication | None
    data: DataPipeline | None
    memory: MemoryBreakdown | None
    tool: dict[str, float]  # a profiler's own whole-run figures (mean over ranks): flops_utilization, ...
    links: SlowLinks | None = None  # per-link bandwidth against its peers; None without transfer records
    domains: CommDomains | None = None  # communication by parallel domain, device frequency, idle gaps


class RankRole(StrEnum):
    WAITS = "waits"  # waits on the others well above the least-waiting rank
    AWAITED = "awaited"  # waits least: the others wait for it (a straggler)
    NONE = ""


@dataclass(frozen=True, slots=True)
class RankProfile:
    """One rank's profiled steps (outliers left out), means per step."""

    rank: int
    steps: int
    source: str
    step_time_s: float | None
    compute_s: float | None
    comm_exposed_s: float | None
    bubble_s: float | None
    data_wait_s: float | None
    idle_s: float | None
    wait_share: float | None  # (comm_exposed + bubble) / step: waiting on other ranks
    compute_share: float | None
    receive_share: float | None  # Receive ops in flight / step (they overlap other communication)
    role: RankRole
    outlier_steps: tuple[int, ...]
    tool: dict[str, float]  # the profiler's own per-rank figures: flops_utilization, ...


@dataclass(frozen=True)
class Stragglers:
    """Who waits for whom: the ranks that wait least are the ones the others wait for."""

    awaited: tuple[int, ...]
    waiting: tuple[int, ...]
    awaited_wait_share: float  # median over the awaited ranks
    waiting_wait_share: float  # median over the waiting ranks
    waiting_receive_share: float | None  # median Receive-in-flight share of the waiting ranks
    cause: str  # the awaited ranks' largest own part: compute, idle, data_wait, preparing
    cause_share: float  # its median share of their step
    waiting_cause_share: float | None  # the same part's median share on the waiting ranks


# --------------------------------------------------------------------------- triage


class Verdict(StrEnum):
    DATA = "data-bound"
    COMPUTE = "compute-bound"
    COMMUNICATION = "communication-bound"
    MEMORY = "memory-bound"
    HOST = "host-bound"
    UNKNOWN = "unknown"


class TriageReason(StrEnum):
    """Why a verdict was given; the report words each (report/messages.py) from ``params``."""

    DATA_WAIT = "data_wait"  # share, source
    DATA_QUEUE_EMPTY = "data_queue_empty"  # share, samples, stage, slowest
    PIPELINE_WAIT = "pipeline_wait"  # waiting, awaited, receive_share, wait_share, cause, cause_share
    STRAGGLER = "straggler"  # waiting, awaited, wait_share, awaited_wait_share, cause, cause_share
    PIPELINE_BUBBLE = "pipeline_bubble"  # share, micro_batches, stages
    COMM_EXPOSED = "comm_exposed"  # share
    COMM_KERNELS = "comm_kernels"  # share, top_type, top_share
    DEVICE_IDLE = "device_idle"  # share
    MEMORY_NEAR_LIMIT = "memory_near_limit"  # share, peak_bytes, capacity_bytes
    COMPUTE_BUSY = "compute_busy"  # share, top_type, top_share
    NO_DOMINANT_PART = "no_dominant_part"  # the evidence values that were measured (Evidence keys)
    NO_EVIDENCE = "no_evidence"  # nothing measured the step


class Action(StrEnum):
    """The article's first moves (§3.1 table, §4.3, §5.3), in MindSpore terms."""

    DATA_WORKERS = "data_workers"  # raise num_parallel_workers of the slow map/batch stage
    DATA_PREFETCH = "data_prefetch"  # prefetch: ds.config.set_prefetch_size, dataset sink mode
    DATA_OFFLOAD = "data_offload"  # decode and tokenize in an asynchronous pipeline, off the training process
    HOST_SINK_MODE = "host_sink_mode"  # dataset_sink_mode=True with sink_size: fewer host round trips
    HOST_GRAPH_MODE = "host_graph_mode"  # GRAPH_MODE / jit instead of PyNative dispatch
    HOST_CALLBACKS = "host_callbacks"  # print and log every 50-100 steps, not every step
    CHECK_STRAGGLER = "check_straggler"  # look at the awaited ranks: their host, data, device
    CHECK_LINK = "check_link"  # the slow link itself: port and link state, cabling, the switch, other traffic on it
    STAGE_BALANCE = "stage_balance"  # move layers between pipeline stages (MindFormers offset / pipeline_stage)
    MICRO_BATCHES = "micro_batches"  # pipeline micro_batch_num >= stages
    PARALLEL_OPTIMIZER = "parallel_optimizer"  # enable_parallel_optimizer=True
    COMM_ALGORITHM = "comm_algorithm"  # reduce-scatter + all-gather instead of a full AllReduce
    COMM_TOPOLOGY = "comm_topology"  # keep gradient synchronisation inside a node (device_num, rank layout)
    PARAMETER_BROADCAST = "parameter_broadcast"  # a broadcast dominates: profile after the start-up broadcast
    MIXED_PRECISION = "mixed_precision"  # BF16 mixed precision (amp_level O2)
    GRAD_ACCUMULATION = "grad_accumulation"  # smaller micro batch, gradient accumulation for the global batch
    RECOMPUTE = "recompute"  # activation recomputation
    OPTIMIZER_OFFLOAD = "optimizer_offload"  # optimizer state offload / sharding
    OP_FUSION = "op_fusion"  # fuse neighbouring operators (graph kernel fusion)
    PARALLEL_STRATEGY = "parallel_strategy"  # tensor / pipeline split
    GRAPH_COMPILE = "graph_compile"  # graph compile options (jit_level O1/O2)
    PROFILE_RUN = "profile_run"  # profile 30-50 steady steps to decide
    # the diagnosis' playbook beyond the profiler triage (§5: not converging, NaN, grad-norm surges)
    CHECK_ENVIRONMENT = "check_environment"  # nothing that changed explains it: the host, other jobs, storage, network
    CHECK_LR = "check_lr"  # the peak learning rate and the warmup (a surge right after warmup: the peak is too high)
    CHECK_DATA = "check_data"  # the samples of the spike / NaN steps: inf, outliers, very long texts, broken tokens
    CHECK_LOSS_SCALE = "check_loss_scale"  # FP16: a dynamic loss scale (start 1024-2048), gradient clipping
    CHECK_PRECISION = "check_precision"  # a few dozen steps in FP32 to compare; FP32 for loss / norm layers
    CHECK_OPTIMIZER_STATE = "check_optimizer_state"  # optimizer state (moments, a resumed state, a parallel optimizer's split)
    CHECK_DATA_ALIGNMENT = "check_data_alignment"  # overfit one batch: labels and tokens aligned?
    CHECK_PARALLEL_SPLIT = "check_parallel_split"  # model parallelism off on a small run: does it converge then?
    CHECK_INPUTS = "check_inputs"  # a figure cannot be right: the peak, parameter count, devices, batch, timer unit
    CHECKPOINT_INTERVAL = "checkpoint_interval"  # save less often (save_checkpoint_steps), keep_checkpoint_max


@dataclass(frozen=True, slots=True)
class Evidence:
    """A quantity the verdict looked at, in the run and (where there is one) the baseline."""

    key: str  # data_wait_share, comm_share, bubble_share, idle_share, compute_share, queue_empty_share, ...
    value: float | None
    baseline: float | None = None
    threshold: float | None = None
    unit: str = "fraction"


@dataclass(frozen=True, slots=True)
class Signal:
    verdict: Verdict
    reason: TriageReason
    params: dict[str, Any]
    strength: float  # share of the step it accounts for (0 for evidence that is not a time share)


@dataclass(frozen=True)
class Triage:
    verdict: Verdict
    reason: TriageReason
    params: dict[str, Any]  # the numbers and names the reason is worded from
    evidence: tuple[Evidence, ...]
    actions: tuple[Action, ...]
    also: tuple[Signal, ...] = ()  # other signals past their threshold, weaker than the verdict's


# --------------------------------------------------------------------------- diagnosis


class Side(StrEnum):
    """Where a problem lies (the article §1.1: data side, model side, or the runtime environment)."""

    DATA = "data"
    MODEL = "model"
    ENVIRONMENT = "environment"
    INPUTS = "inputs"  # not the run: the figure's own inputs (a peak, a batch size, a timer's unit)


class Symptom(StrEnum):
    SLOWER = "slower"  # throughput regressed against the baseline
    FASTER = "faster"
    LESS_EFFICIENT = "less_efficient"  # efficiency (MFU, checkpoint tax) regressed
    MORE_EFFICIENT = "more_efficient"
    LOSS_WORSE = "loss_worse"  # convergence regressed
    LOSS_BETTER = "loss_better"
    LESS_STABLE = "less_stable"  # stability regressed (spikes, NaN)
    MORE_STABLE = "more_stable"
    IMPLAUSIBLE = "implausible"  # a headline figure cannot be right
    NAN = "nan"  # NaN/Inf loss or grad norm in the run
    DIVERGED = "diverged"
    EXPLODED = "exploded"  # a loss / grad-norm explosion (>= 10x its level, or NaN/Inf) at any log density
    SPIKES = "spikes"  # loss / grad-norm spikes in the run itself
    BOTTLENECK = "bottleneck"  # the triage's verdict in the run itself
    DATA_STALLS = "data_stalls"
    CHECKPOINT_TAX = "checkpoint_tax"
    SLOW_RANKS = "slow_ranks"
    SLOW_LINKS = "slow_links"  # links (or ranks' transports) well below their peers' bandwidth
    ERRORS = "errors"  # error lines, interrupted saves, restarts
    NOT_CONVERGED = "not_converged"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number that decides a verdict, in the run and (where there is one) the baseline."""

    key: str  # a figure (step_time_s, mfu, loss_spikes, ...) or a triage evidence key (data_wait_share, ...)
    current: float | None
    baseline: float | None = None
    threshold: float | None = None


@dataclass(frozen=True, slots=True)
class SettingLink:
    """A changed setting and whether a change of it can explain the problem (analysis/identity.py)."""

    key: str
    baseline: Any
    current: Any
    explains: bool


@dataclass(frozen=True)
class Problem:
    """One thing the first screen says: what, how sure, the deciding numbers, where it points, what to try."""

    symptom: Symptom
    severity: FindingSeverity
    family: Family | None
    quantities: tuple[Quantity, ...]  # the deciding quantities, current against baseline
    cause: Quantity | None = None  # the measurement that points at the layer (a triage evidence)
    side: Side | None = None
    bottleneck: Verdict | None = None  # memory / compute / communication / host / data
    actions: tuple[Action, ...] = ()  # the first things to try, in order
    settings: tuple[SettingLink, ...] = ()  # the changed settings, each: can it explain this?
    evidence: tuple[str, ...] = ()  # the report sections holding the evidence
    params: dict[str, Any] = field(default_factory=dict)  # further numbers: first step, count, ...


@dataclass(frozen=True)
class Diagnosis:
    problems: tuple[Problem, ...]  # most severe first
    baseline_id: str | None = None
    changed: tuple[SettingChange, ...] = ()  # changed settings that can cause something (per-run values left out)


# --------------------------------------------------------------------------- ranks, config


@dataclass(frozen=True, slots=True)
class RankStat:
    rank: int
    steps: int
    median_step_time_s: float | None
    slow: bool
    excess: float | None  # (rank median - median of the other ranks' medians) / that median
    others_median_s: float | None = None  # median of the other ranks' median step times
    in_step_median_s: float | None = None  # median in-step timer, where logged


class RankGroupKind(StrEnum):
    """How a group of slow ranks is named (analysis/ranks.py)."""

    STAGE = "stage"  # whole pipeline stages (contiguous blocks of world / pipeline_stage ranks)
    NODE = "node"  # whole nodes: ranks of one host, else contiguous blocks of the devices per node
    PARITY = "parity"  # the odd or the even ranks
    SLOT = "slot"  # the same device slot of every node (rank % devices per node)
    RANKS = "ranks"  # what no pattern names: listed as ranges


@dataclass(frozen=True)
class RankGroup:
    """Slow ranks that belong together, with their figures (medians of the member ranks' medians)."""

    kind: RankGroupKind
    ranks: tuple[int, ...]
    of: int  # ranks with a figure
    median_s: float
    reference_s: float  # median of the reference ranks (the fast mode)
    excess: float  # median_s / reference_s - 1
    units: tuple[str, ...] = ()  # the stages, nodes (host names or indices) or slot named
    unit_size: int | None = None  # ranks per stage / per node


@dataclass(frozen=True)
class Ranks:
    ranks: tuple[RankStat, ...]
    slow_ranks: tuple[int, ...]  # slow by their step time, and the ranks the others wait for (stragglers.awaited)
    rule: Text
    reason: Text | None = None
    spread: float | None = None  # (max - min) / mean of the rank medians (msprof's imbalance figure)
    profile: tuple[RankProfile, ...] = ()  # per-rank profiler figures (analysis/profile.py)
    stragglers: Stragglers | None = None  # who waits for whom, from the profiler
    groups: tuple[RankGroup, ...] = ()  # the slow ranks named as stages, nodes, odd/even, slots, ranges
    basis: str = "steps"  # what the per-rank medians are: "steps" (logged step times), "profile" (profiled step totals)
    node_size: int | None = None  # ranks per node used for the node groups
    node_source: str | None = None  # "host" (files name it), "setting" (the config's devices per node), "default" (8)


class CheckStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


class Check(StrEnum):
    """The configuration checks (analysis/configcheck.py)."""

    LAYOUT = "layout"  # data x model x context x pipeline parallel = the device count
    GLOBAL_BATCH = "global_batch"  # global batch = micro batch x data parallel x accumulation (x micro-batches)
    PIPELINE = "pipeline"  # pipeline micro-batches >= stages, stages <= layers
    NUM_HEADS = "num_heads_divisible"  # num_heads divisible by model_parallel
    KV_HEADS = "kv_heads_divisible"  # grouped-query kv heads divisible by model_parallel
    HIDDEN_SIZE = "hidden_size_divisible"  # hidden_size divisible by model_parallel
    POSITIONS = "positions"  # seq_length within max_position_embeddings
    PARALLEL_FEATURES = "parallel_features"  # parallel optimizer / sequence parallel with something to split
    RECOMPUTE = "recompute"  # recompute switches that do not cancel each other
    CHECKPOINT_INTERVAL = "checkpoint_interval"  # checkpoint interval vs step time
    CHECKPOINT_DISK = "checkpoint_disk"  # keep_checkpoint_max x the checkpoint size
    STRATEGY = "strategy_layout"  # the strategy files' layout against the config's


@dataclass(frozen=True)
class ConfigCheck:
    name: Check
    status: CheckStatus
    detail: Text
    evidence: dict[str, Any]
    fix: Text | None = None  # what to change, for a warning or a failure


# --------------------------------------------------------------------------- comparison


class Family(StrEnum):
    THROUGHPUT = "throughput"
    EFFICIENCY = "efficiency"
    CONVERGENCE = "convergence"
    STABILITY = "stability"


FAMILIES = tuple(Family)


class Outcome(StrEnum):
    """A family's verdict against the baseline."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    NO_CHANGE = "no significant change"
    MIXED = "mixed"
    UNKNOWN = "unknown"


class Better(StrEnum):
    HIGHER = "higher"
    LOWER = "lower"


class Alignment(StrEnum):
    """How the two runs' values of a figure were lined up."""

    STEADY_WINDOW = "steady window"
    WHOLE_RUN = "whole run"
    BY_STEP = "by step"
    BY_TOKENS = "by tokens"  # at Delta.aligned_tokens, the last token count both runs reached
    LAST_TENTH = "each run's last 10%"


@dataclass(frozen=True)
class Delta:
    figure: str  # "step_time_s", "tokens_per_s", "mfu", "final_smoothed_loss", ...
    family: Family
    baseline: float | None
    current: float | None
    delta: float | None  # current - baseline
    rel: float | None  # delta / |baseline|
    significant: bool | None  # None: cannot tell
    better: Better
    alignment: Alignment
    method: Text  # how significance was decided
    reason: Text | None = None
    aligned_tokens: float | None = None  # Alignment.BY_TOKENS: the token count compared at


@dataclass(frozen=True)
class FamilyVerdict:
    family: Family
    verdict: Outcome
    figures: tuple[str, ...]  # the significant figures behind it
    unjudged: tuple[str, ...] = ()  # the family's figures that could not be judged (missing or no test)


class SettingGroup(StrEnum):
    """What a setting is about (analysis/identity.py files each key)."""

    FRAMEWORK = "framework"  # framework, versions, device, execution mode
    MODEL = "model"  # the model's shape
    DATA = "data"  # dataset and data pipeline
    PRECISION = "precision"
    OPTIMIZER = "optimizer"  # optimizer and learning-rate schedule
    PARALLEL = "parallel"  # parallel layout
    BATCH = "batch"
    RUN = "run"  # the run's own values: outcomes, paths, counts derived from other settings
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class SettingRow:
    key: str
    value: Any
    source: str  # where it was read: config:<file>, lineage, log, profiler:<file>, flag, derived ...
    group: SettingGroup


@dataclass(frozen=True)
class Identity:
    """The settings that define the run, in reading order, and the versions looked for."""

    settings: tuple[SettingRow, ...] = ()
    versions: dict[str, str | None] = field(default_factory=dict)  # framework_version, ... -> value, None: not found


@dataclass(frozen=True)
class SettingChange:
    key: str
    baseline: Any
    current: Any


@dataclass(frozen=True)
class SettingsDiff:
    added: tuple[SettingChange, ...]  # only in the current run
    removed: tuple[SettingChange, ...]  # only in the baseline
    changed: tuple[SettingChange, ...]


@dataclass(frozen=True)
class Comparison:
    baseline_id: str
    deltas: tuple[Delta, ...]
    verdicts: tuple[FamilyVerdict, ...]
    settings: SettingsDiff

    def delta(self, figure: str) -> Delta | None:
        return next((d for d in self.deltas if d.figure == figure), None)


# --------------------------------------------------------------------------- findings


class FindingKind(StrEnum):
    NAN_LOSS = "nan_loss"
    LOSS_SPIKES = "loss_spikes"
    GRAD_NORM_SPIKES = "grad_norm_spikes"
    DIVERGENCE = "divergence"
    EXPLOSION = "explosion"
    NOT_CONVERGED = "not_converged"
    LOW_MFU = "low_mfu"
    MFU_UNKNOWN = "mfu_unknown"
    COMM_BOUND = "comm_bound"
    DATA_STALLS = "data_stalls"
    CHECKPOINT_TAX = "checkpoint_tax"
    INTERRUPTED_CHECKPOINT = "interrupted_checkpoint"
    RESTARTS = "restarts"
    SLOW_RANKS = "slow_ranks"
    SLOW_LINKS = "slow_links"
    OVERFLOWS = "overflows"
    CONFIG = "config"
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    LOG_ERRORS = "log_errors"
    TRIAGE = "triage"
    IMPLAUSIBLE = "implausible"
    UNUSUAL = "unusual"  # a figure outside the experiment's normal range (analysis/history.py)

    UNHEALTHY_CHECKPOINT = "unhealthy_checkpoint"  # MindFormers' health_ckpts.json (analysis/health.py)
    EMBEDDING_NORM = "embedding_norm"
    TOKEN_DROPS = "token_drops"


class FindingSeverity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"  # a figure cannot be right: the report flags it
    CRITICAL = "critical"


@dataclass(frozen=True)
class Finding:
    """What a reader should look at: a kind (slugs.FINDINGS), its severity and the numbers and
    names it is worded from (the catalogue's ``finding.<kind>[/<variant>]``)."""

    kind: FindingKind
    severity: FindingSeverity
    params: dict[str, Any] = field(default_factory=dict)
    variant: str = ""  # which of the kind's sentences, where it has several

    @property
    def text(self) -> Text:
        return Text(f"finding.{self.kind}" + (f"/{self.variant}" if self.variant else ""), **self.params)


# --------------------------------------------------------------------------- plausibility


@dataclass(frozen=True, slots=True)
class Implausible:
    """A figure that cannot be right, and the figure it contradicts."""

    check: str  # "mfu_range", "step_vs_gap", "tokens_vs_logged"
    figures: tuple[str, ...]  # headline figures flagged: "mfu", "step_time_s", "tokens_per_s", ...
    value: float  # the figure, in its unit
    against: str  # what it is held against, a code: "mfu_max", "mfu_min", "wall_gap", "logged_tokens_per_s"
    against_value: float | None
    rule: Text


# --------------------------------------------------------------------------- the whole analysis

# The per-step series the report charts (one row per step of the chosen rank, sorted by step).
STEP_SERIES = {
    "step": pl.Int64,
    "segment": pl.Int32,
    "tokens": pl.Float64,  # cumulative tokens at the end of the step (null if tokens/step unknown)
    "elapsed_s": pl.Float64,  # wall seconds since the first step ended (sum of step times if no wall time)
    "step_time_s": pl.Float64,
    "in_step_s": pl.Float64,  # the callback's own timer, where logged
    "gap_s": pl.Float64,  # e2e - in-step: host / data time between steps, where both are known
    "data_time_s": pl.Float64,
    "excluded": pl.Utf8,  # exclusion reason, null when in the steady window
    "loss": pl.Float64,
    "loss_smoothed": pl.Float64,
    "grad_norm": pl.Float64,
    "lr": pl.Float64,
    "loss_spike": pl.Boolean,
    "grad_norm_spike": pl.Boolean,
    "nonfinite": pl.Boolean,  # loss or grad norm NaN/Inf at this step
}


@dataclass(frozen=True)
class Analysis:
    run_id: str
    experiment: str | None
    options: AnalysisOptions
    steps: pl.DataFrame  # STEP_SERIES
    step_range: tuple[int, int, int] | None  # first, last, count of steps seen (steps or scalars)
    throughput: Throughput
    mfu: Mfu
    convergence: Convergence
    stability: Stability
    phases: Phases
    ranks: Ranks
    config_checks: tuple[ConfigCheck, ...]
    findings: tuple[Finding, ...]
    diagnostics: tuple[Diagnostic, ...]  # the run's data-quality diagnostics plus analysis ones
    comparison: Comparison | None = None
    baseline: Analysis | None = None  # the baseline analysed with the same options (its .steps for charts)
    profile: Profile | None = None  # None when the run has no profiler data
    triage: Triage = field(default_factory=lambda: Triage(Verdict.UNKNOWN, TriageReason.NO_EVIDENCE, {}, (), ()))
    plausibility: tuple[Implausible, ...] = ()  # figures that cannot be right (each also an error finding)
    identity: Identity = field(default_factory=Identity)  # the settings that define the run
    diagnosis: Diagnosis = field(default_factory=lambda: Diagnosis(()))  # the verdict-first summary
    history: Any = None  # analysis.history.History: the figures against the experiment's archived runs (None: not asked)

    health: Any = None  # analysis.health.Health: MindFormers' health records, None where the run left none
    strategy: Any = None  # analysis.layout.StrategyLayoutView: the strategy files' layout, None where there are none

    failure: Any = None  # analysis/failure.py's Failure: how the run died; None for a run that did not fail

    def flag(self, figure: str) -> Implausible | None:
        """The plausibility failure that flags a headline figure, if any."""
        return next((p for p in self.plausibility if figure in p.figures), None)


@dataclass(frozen=True)
class BaselineAnalysis:
    """What a comparison needs of a baseline run (``analysis.analyze_baseline``): its own analysis,
    made with the current run's options, and its settings (key -> ``model.Setting``)."""

    analysis: Analysis
    settings: dict[str, Any]
