"""Result types of the analysis layer: plain frozen data, no markup, no charts.

Every number that can fail to exist is a ``Figure``: ``value`` is None and ``reason`` says why.
``method`` always says how the value was obtained (formula, window, source). Keep these stable:
additive changes only (the report layer and metrics.json build on them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import polars as pl

from ..diagnostics import Diagnostic

# --------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """Knobs of the analysis. None means "take it from the run's settings, else unknown"."""

    run_id: str | None = None
    experiment: str | None = None
    device: str | None = None  # e.g. "910B2", "H100 SXM": selects the peak from peaks.py
    peak_tflops: float | None = None  # dense peak per device in TFLOPS; overrides the table
    precision: str = "bf16"  # "bf16" | "fp16" | "fp32" | "tf32" | "fp8" | "int8"
    global_batch_size: int | None = None  # samples per optimizer step
    seq_length: int | None = None
    devices: int | None = None
    num_layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    vocab_size: int | None = None
    target_loss: float | None = None
    smoothing_window: int = 50  # trailing mean of the loss over this many steps (not logged values)
    convergence_tolerance: float = 0.02  # relative band around the final loss level
    spike_z: float = 6.0  # robust z (scaled MAD) above which a value is a spike
    spike_window: int = 100  # previous finite values the spike rule looks at (causal)
    bootstrap_resamples: int = 1000
    seed: int = 0  # all resampling is seeded: the output is deterministic


# --------------------------------------------------------------------------- building blocks


@dataclass(frozen=True, slots=True)
class Figure:
    """One number, how it was obtained, and why it is missing when it is."""

    value: float | None
    method: str = ""
    reason: str | None = None  # set when value is None
    unit: str = ""
    source: str = ""  # where the inputs came from: "options", "settings:<key> (<source>)", "checkpoint", ...

    @property
    def known(self) -> bool:
        return self.value is not None


def missing(reason: str, method: str = "", unit: str = "") -> Figure:
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
    rules: dict[str, str]  # reason -> the rule used, in words
    reason: str | None = None  # why there is no window


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
    in_step_time_s: Figure = field(default_factory=lambda: missing("no in-step timer", unit="s"))  # median over the window
    gap_share: Figure = field(default_factory=lambda: missing("no in-step timer", unit="fraction"))  # gap / e2e
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
    target_source: str  # "options.target_loss", "baseline final smoothed loss"
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
    smoothing: str  # how the loss was smoothed
    initial_loss: Figure
    final_smoothed_loss: Figure  # the final loss level: robust statistic of the last 10% of steps
    min_smoothed_loss: Figure
    convergence_step: Figure
    convergence_tokens: Figure
    convergence_hours: Figure  # wall-clock hours from the first step to the convergence step
    targets: tuple[TimeToTarget, ...]
    aux_losses: tuple[AuxLoss, ...]
    eval_loss_last: Figure
    final_loss_se: Figure = field(default_factory=lambda: missing("not computed"))  # standard error of the final level
    # "spike" / "nonfinite" -> the steps kept out of the smoothed loss
    left_out: dict[str, tuple[int, ...]] = field(default_factory=dict)
    status: str = "unknown"  # CONVERGENCE_STATUSES
    status_code: str | None = None  # why not converged (see above); None when converged
    status_evidence: dict[str, float | int | None] = field(default_factory=dict)  # the numbers behind the status
    rule: str = ""  # the convergence rule, in words


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


@dataclass(frozen=True)
class SpikeSeries:
    tag: str
    rule: str
    points: int  # finite values examined
    spikes: tuple[Spike, ...]
    nonfinite_steps: tuple[int, ...]  # NaN/Inf values, never fed to the rolling statistics
    height_p50: float | None
    height_p90: float | None
    height_max: float | None
    spacing_median_steps: float | None
    recovery_counts: dict[str, int]
    reason: str | None = None  # why the series could not be examined


@dataclass(frozen=True)
class Stability:
    loss: SpikeSeries
    grad_norm: SpikeSeries
    nan_steps: tuple[int, ...]  # steps whose loss or grad norm is NaN/Inf
    overflow_steps: tuple[int, ...]  # loss-scale overflow (skipped updates)
    grad_leads_loss: Figure  # fraction of loss spikes with a grad-norm spike 0..lead_window steps before
    lead_window_steps: int = 5


# --------------------------------------------------------------------------- phases, resources


@dataclass(frozen=True)
class Phase:
    name: str  # "startup", "warmup", "main", "decay"
    start_step: int
    end_step: int
    rule: str
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
    method: str  # "event duration" | "step time minus median step time" | ...


@dataclass(frozen=True)
class ProfileBreakdown:
    steps: int
    shares: dict[str, float | None]  # compute, exposed_comm, overlapped, free, bubble, preparing: fraction of step
    comm_share: float | None  # exposed communication / step
    comm_flag: bool  # comm_share > 0.25
    method: str


@dataclass(frozen=True)
class Triage:
    verdict: str  # "memory-bound" | "compute-bound" | "communication-bound" | "data-bound" | "unknown"
    evidence: dict[str, float | str | None]
    reason: str


@dataclass(frozen=True)
class Phases:
    phases: tuple[Phase, ...]
    rule: str
    checkpoint_saves: tuple[CheckpointSave, ...]
    checkpoint_tax: Figure  # total save time / total wall time, fraction
    profile: ProfileBreakdown | None
    triage: Triage
    reason: str | None = None


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


@dataclass(frozen=True)
class Ranks:
    ranks: tuple[RankStat, ...]
    slow_ranks: tuple[int, ...]
    rule: str
    reason: str | None = None
    spread: float | None = None  # (max - min) / mean of the rank medians (msprof's imbalance figure)


class CheckStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ConfigCheck:
    name: str
    status: CheckStatus
    message: str
    evidence: dict[str, Any]


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Delta:
    figure: str  # "step_time_s", "tokens_per_s", "mfu", "final_smoothed_loss", ...
    family: str  # "throughput" | "efficiency" | "convergence" | "stability"
    baseline: float | None
    current: float | None
    delta: float | None  # current - baseline
    rel: float | None  # delta / |baseline|
    significant: bool | None  # None: cannot tell
    better: str  # "higher" | "lower"
    alignment: str  # "steady window", "by step", "by tokens", "whole run"
    method: str  # how significance was decided
    reason: str | None = None


@dataclass(frozen=True)
class FamilyVerdict:
    family: str
    verdict: str  # "improved" | "regressed" | "no significant change" | "mixed" | "unknown"
    figures: tuple[str, ...]  # the significant figures behind it
    unjudged: tuple[str, ...] = ()  # the family's figures that could not be judged (missing or no test)


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
    NOT_CONVERGED = "not_converged"
    LOW_MFU = "low_mfu"
    MFU_UNKNOWN = "mfu_unknown"
    COMM_BOUND = "comm_bound"
    DATA_STALLS = "data_stalls"
    CHECKPOINT_TAX = "checkpoint_tax"
    INTERRUPTED_CHECKPOINT = "interrupted_checkpoint"
    RESTARTS = "restarts"
    SLOW_RANKS = "slow_ranks"
    OVERFLOWS = "overflows"
    CONFIG = "config"
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    LOG_ERRORS = "log_errors"
    TRIAGE = "triage"
    IMPLAUSIBLE = "implausible"


class FindingSeverity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"  # a figure cannot be right: the report flags it
    CRITICAL = "critical"


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    severity: FindingSeverity
    message: str
    evidence: dict[str, float | int | str | bool | None] = field(default_factory=dict)


# --------------------------------------------------------------------------- plausibility


@dataclass(frozen=True, slots=True)
class Implausible:
    """A figure that cannot be right, and the figure it contradicts."""

    check: str  # "mfu_range", "step_vs_gap", "tokens_vs_logged"
    figures: tuple[str, ...]  # headline figures flagged: "mfu", "step_time_s", "tokens_per_s", ...
    value: float  # the figure, in its unit
    against: str  # what it is held against: "100%", "wall-clock gap", "logged tokens_per_s"
    against_value: float | None
    rule: str  # the rule, in words


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
    plausibility: tuple[Implausible, ...] = ()  # figures that cannot be right (each also an error finding)

    def flag(self, figure: str) -> Implausible | None:
        """The plausibility failure that flags a headline figure, if any."""
        return next((p for p in self.plausibility if figure in p.figures), None)


@dataclass(frozen=True)
class BaselineAnalysis:
    """What a comparison needs of a baseline run (``analysis.analyze_baseline``): its own analysis,
    made with the current run's options, and its settings (key -> ``model.Setting``)."""

    analysis: Analysis
    settings: dict[str, Any]
