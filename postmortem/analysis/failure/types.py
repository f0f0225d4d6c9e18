"""The failure's typed data: its kind, phase, why a line is a consequence, what to try, and the
Failure itself (analysis/failure/ makes it; report/sections/failure.py lays it out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Kind(StrEnum):
    HCCL_TIMEOUT = "hccl_timeout"
    OOM_DEVICE = "oom_device"
    OOM_HOST = "oom_host"
    NAN_ABORT = "nan_abort"
    DATA_ERROR = "data_error"
    COMPILE_ERROR = "compile_error"
    KILLED = "killed"
    HANG = "hang"
    CONFIG_ERROR = "config_error"
    OTHER = "other"


class Phase(StrEnum):
    LAUNCH = "launch"
    COMPILE = "compile"
    FIRST_STEP = "first_step"
    TRAINING = "training"
    CHECKPOINT = "checkpoint"
    EVALUATION = "evaluation"


class Why(StrEnum):
    """Why an incident is a consequence, not the cause."""

    PEER_DIED = "peer_died"  # its text names another rank as the one that failed (heartbeat lost, remote rank)
    TIMEOUT_AFTER = "timeout_after"  # a communication timeout after another rank's own error
    DATA_CHANNEL = "data_channel"  # the data channel failed to send: training had already stopped
    TEARDOWN = "teardown"  # a crash while the process was being torn down after the error
    SCHEDULER = "scheduler"  # the launcher's word about a worker whose own log holds the error
    REPEAT = "repeat"  # the same rank's later errors


class Action(StrEnum):
    """The first things to try, per kind (the practitioner's playbook)."""

    RECOMPUTE = "recompute"
    SMALLER_MICRO_BATCH = "smaller_micro_batch"
    PARALLEL_OPTIMIZER = "parallel_optimizer"
    OFFLOAD = "offload"
    HOST_MEMORY = "host_memory"
    NAMED_RANK_LOG = "named_rank_log"
    HCCL_TIMEOUTS = "hccl_timeouts"
    CHECK_LINK = "check_link"
    BAD_SAMPLE = "bad_sample"
    DATASET_OP = "dataset_op"
    STEP_DATA = "step_data"
    LR_AT_STEP = "lr_at_step"
    LOSS_SCALE = "loss_scale"
    CONSTRUCT_CODE = "construct_code"
    SIGNAL_SOURCE = "signal_source"
    STUCK_RANK = "stuck_rank"
    CONFIG_NAMED = "config_named"
    ROOT_LOG = "root_log"


PLAYBOOK: dict[Kind, tuple[Action, ...]] = {
    Kind.OOM_DEVICE: (Action.RECOMPUTE, Action.SMALLER_MICRO_BATCH, Action.PARALLEL_OPTIMIZER, Action.OFFLOAD),
    Kind.OOM_HOST: (Action.HOST_MEMORY, Action.SIGNAL_SOURCE),
    Kind.HCCL_TIMEOUT: (Action.NAMED_RANK_LOG, Action.HCCL_TIMEOUTS, Action.CHECK_LINK),
    Kind.DATA_ERROR: (Action.BAD_SAMPLE, Action.DATASET_OP),
    Kind.NAN_ABORT: (Action.STEP_DATA, Action.LR_AT_STEP, Action.LOSS_SCALE),
    Kind.COMPILE_ERROR: (Action.CONSTRUCT_CODE, Action.ROOT_LOG),
    Kind.KILLED: (Action.SIGNAL_SOURCE, Action.HOST_MEMORY, Action.ROOT_LOG),
    Kind.HANG: (Action.STUCK_RANK, Action.HCCL_TIMEOUTS),
    Kind.CONFIG_ERROR: (Action.CONFIG_NAMED, Action.ROOT_LOG),
    Kind.OTHER: (Action.ROOT_LOG,),
}

@dataclass(frozen=True, slots=True)
class Evidence:
    """One rank's first incident: where it is written."""

    rank: int | None
    file: str
    line: int | None
    text: str
    consequence: Why | None  # None: a cause (the root's, or another cause beside it)


@dataclass(frozen=True, slots=True)
class ResumePoint:
    path: str  # the lowest rank's file of the step (relative to the run folder)
    step: int
    source: str  # "checkpoint" (ModelCheckpoint, MindFormers), "ttp" (TrainFaultTolerance's saved folder)
    ranks: int  # ranks that saved it


@dataclass(frozen=True)
class Failure:
    kind: Kind
    kind_basis: str  # "code" (the code's documented meaning), "framework" (MindSpore's Framework Error Message), "text",
    # "chain" (another incident's words), "progress" (a hang)
    error_code: str | None
    code_module: str | None  # the CANN module the code's second character names
    runtime_code: int | None
    exception: str | None
    first_failing_rank: int | None
    rank_basis: str | None  # "heartbeat_lost", "remote_rank", "earliest", "only", "stopped_first"; None: not said
    failed_at: Phase | None
    last_step: int | None
    last_loss: float | None
    message: str | None  # the root's line, verbatim
    message_file: str | None
    message_line: int | None
    failed_wall_time: float | None
    evidence: tuple[Evidence, ...]  # the root first, then each other rank's first incident
    consequences: int  # incidents told apart as consequences of the root
    consequence_ranks: int  # ranks other than the root's whose errors are consequences
    why_counts: dict[str, int]  # consequences by why (Why)
    ranks_failed: int  # ranks with an incident of their own
    resume_from: ResumePoint | None
    steps_lost: int | None
    hours_lost: float | None
    stalled_s: float | None  # a hang: how long the files went on after the last step
    actions: tuple[Action, ...]
    reasons: dict[str, str] = field(default_factory=dict)  # field -> why it is null (a reason code)
