"""When a run died: how (its kind), where (the phase, the last step), on which rank first, what the
other ranks' errors were a consequence of, and what to resume from. Pure: a Run's incidents
(readers/failure/) and its steps, losses and checkpoints in, a typed ``Failure`` out (or None for
a run that did not fail); the report words it (report/catalog/failure.py).

The rules, each in its function:
1. Which incidents are consequences (``_consequence``): a timeout that names another rank (HCCL's
   "remote rank [0]", its heartbeat's "deviceId[0], Heartbeat Lost"), a data channel that fails
   to send because training already stopped (acltdtSendTensor), a teardown after the error
   (``Exception ignored in``, a finalize), the scheduler's word about a worker, a later timeout
   after another rank's own error.
2. The root (``_root``): the rank HCCL's heartbeat names as lost, else the earliest cause by the
   aligned times, else the earliest consequence (a chain whose cause the files do not hold).
3. The kind (``kind_of``): a code whose documented meaning settles it (readers/failure/codes.py),
   else the root's words, else the other incidents' words.
4. A run failed when its root came after its last training step (a run that logged an error and
   trained on did not fail); a run with no error failed by a hang when its progress stopped long
   before its files did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

import polars as pl

from ..readers.failure import codes
from ..readers.failure.scan import EXCEPTION as EXCEPTION_LINE
from ..readers.failure.scan import _unprefixed


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

# A run whose progress stops this long before its files do hangs (and at least this many step times).
HANG_AFTER_S = 1800.0
HANG_STEPS = 30
# A run trained on after an error (a caught exception, a launch that died and was resumed) when it
# logged this many steps ending later than the error (by this much, or three step times): a rank
# that logs a step or two while another dies is not training on.
TRAINED_ON_STEPS = 3
AFTER_ERROR_S = 1.0

_I = re.IGNORECASE
# The words of each kind, most specific first. Host memory before device memory ("Cannot allocate
# memory" is the host's), NaN before the rest (its abort names the step's data).
_WORDS: tuple[tuple[Kind, re.Pattern], ...] = (
    (Kind.OOM_HOST, re.compile(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|oom-kill|Out of memory: Kill"
                               r"|host memory (?:is )?(?:not enough|insufficient)|ENOMEM|HostAlloc failed"
                               r"|plugin/cpu/[^\n]*mem\w*\.cc[^\n]*(?:fail|not enough)|cpu_memory_pool", _I)),
    (Kind.OOM_DEVICE, re.compile(r"out of memory|halMemAlloc|memory (?:isn't|is not|not) enough|Allocate (?:device )?memory failed"
                                 r"|Malloc (?:device )?memory failed|MallocDeviceMemory|device memory (?:is )?(?:not enough|insufficient)"
                                 r"|Malloc for kernel (?:output|input|workspace) failed|DEVICE_MEMORY|\b20700[12]\b|\b207018\b"
                                 r"|more than total mem size|mem_dynamic_allocator", _I)),
    (Kind.NAN_ABORT, re.compile(r"silent data corruption|\bSDC\b|SilentCheck|val = \[(?:nan|inf)\]|global.?norm[^\n]{0,60}(?:greater|abnormal|exceed)"
                                r"|loss (?:is|became|has) (?:nan|inf)|\bnan\b[^\n]{0,60}(?:stop|abort|terminat|detect)"
                                r"|(?:detect|found|contains?)[^\n]{0,30}\b(?:nan|inf)\b|CheckNumerics|abnormal_global_norm", _I)),
    (Kind.HCCL_TIMEOUT, re.compile(r"HCCL[^\n]{0,80}time ?out|time ?out[^\n]{0,80}HCCL|notify wait|Notify register times out"
                                   r"|HCCL_(?:EXEC|CONNECT)_TIMEOUT|event wait timeout|Heartbeat Lost|socket[^\n]{0,40}time[sd]? ?out"
                                   r"|wait for all ranks|collective[^\n]{0,40}time ?out|\b50704[678]\b|wait receiving"
                                   r"|Stream synchroni[sz]e timeout|stream sync timeout", _I)),
    (Kind.DATA_ERROR, re.compile(r"GetNext|\bdataset\b|MindRecord|MindDataset|data ?queue|device ?queue|PyFunc|map operation"
                                 r"|Exception thrown from (?:dataset|user defined Python function)|data ?loader|batch_op"
                                 r"|GeneratorDataset|minddata|UnicodeDecodeError|\bsample\b", _I)),
    (Kind.COMPILE_ERROR, re.compile(r"compil|build op|kernel build|Build kernel|graph_compiler|Type Join Failed|Shape Join Failed"
                                    r"|Traceback of Net Construct Code|infer ?shape|\bTBE\b|op_compile|Parse (?:graph|python)"
                                    r"|not supported in (?:graph|GRAPH)|JIT Fallback", _I)),
    (Kind.CONFIG_ERROR, re.compile(r"invalid device|device[_ ]id[^\n]{0,30}(?:invalid|out of range|must)|rank_?table|RANK_TABLE"
                                   r"|\.ya?ml\b|config(?:uration)? (?:file|item|key)|ASCEND_RT_VISIBLE_DEVICES|No module named"
                                   r"|ModuleNotFoundError|ImportError|FileNotFoundError|No such file|versions? (?:are )?inconsistent"
                                   r"|environment variable|device_num|world size|not (?:a )?valid (?:value|argument)|KeyError"
                                   r"|Address already in use|errno: 98|failed to bind", _I)),
    (Kind.KILLED, re.compile(r"\bKilled\b|SIGKILL|signal 9\b|SIGTERM|signal 15\b|Segmentation fault|SIGSEGV|core dumped"
                             r"|terminated by signal|was killed|exit(?:ed)? with (?:exception|signal|code -)|exitcode[=: ]+-?\d"
                             r"|received signal|Worker process[^\n]{0,60}exit|terminate called after throwing|\bAborted\b|SIGABRT"
                             r"|Fatal Python error", _I)),
)
_DATA_CHANNEL = re.compile(r"acltdtSendTensor|failed to send|tdt (?:channel|send)|TdtSend|Send data failed|data channel", _I)
_TEARDOWN = re.compile(r"Exception ignored in|Error in atexit|__del__|[Ff]inali[sz]e|Destroy|destroy|ClearResAndExit"
                       r"|terminate called|Release(?:Resource)?|KeyboardInterrupt|SystemExit|at exit|Aborted")
_SCHEDULER = re.compile(r"(?:^|/)(?:scheduler|msrun)[^/]*\.log$")  # msrun's scheduler and its console (every worker echoed)
_CHECKPOINT = re.compile(r"save_checkpoint|save checkpoint|saving checkpoint|ModelCheckpoint|\.ckpt\b|safetensors", _I)
_LOAD = re.compile(r"load_checkpoint|load checkpoint|load_param_into_net|loading checkpoint", _I)
_EVAL = re.compile(r"\beval(?:uat\w*)?\b|\bvalidat\w*", _I)
_TTP = re.compile(r"ttp_saved_checkpoints-step_(\d+)")
# How a text names the rank that failed first, for sure: HCCL saw its heartbeat stop, msrun saw it stop answering.
_NAMING = ("heartbeat_lost", "timed_out_node", "worker_exit")
_ERRORS = ("error", "critical", "exception", "killed", "abnormal_global_norm")


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


def kind_of(text: str) -> Kind | None:
    for kind, words in _WORDS:
        if words.search(text):
            return kind
    return None


def _consequence(row: dict, first_cause_time: float | None, other_rank_causes: bool) -> Why | None:
    whole = f"{row['text']}\n{row['context']}"
    named = row["named_rank"]
    if named is not None and row["named_how"] in _NAMING and named != row["rank"]:
        return Why.PEER_DIED
    if _SCHEDULER.search(row["file"] or ""):
        return Why.SCHEDULER
    if _DATA_CHANNEL.search(row["text"]):
        return Why.DATA_CHANNEL
    if _TEARDOWN.search(row["text"]) and first_cause_time is not None:
        return Why.TEARDOWN
    if named is not None and named != row["rank"] and row["rank"] is not None:
        return Why.PEER_DIED
    if other_rank_causes and codes.KINDS.get(row["code"] or "") == "hccl_timeout" or (
            other_rank_causes and kind_of(whole) == Kind.HCCL_TIMEOUT):
        return Why.TIMEOUT_AFTER
    return None


def _order_key(row: dict) -> tuple:
    t = row["wall_time"]
    return (t is None, t if t is not None else 0.0, row["rank"] is None, row["rank"] or 0, row["_order"])


def _classified(rows: list[dict]) -> list[tuple[dict, Why | None]]:
    """Each incident with why it is a consequence (None: a cause), in time order."""
    rows = sorted(rows, key=_order_key)
    own = [r for r in rows if not _SCHEDULER.search(r["file"] or "")]
    timeout_words = [kind_of(f"{r['text']}\n{r['context']}") == Kind.HCCL_TIMEOUT or
                     codes.KINDS.get(r["code"] or "") == "hccl_timeout" for r in own]
    # ranks with an error of their own that is no timeout: the others' timeouts came after it
    cause_ranks = {r["rank"] for r, timeout in zip(own, timeout_words)
                   if not timeout and not _DATA_CHANNEL.search(r["text"]) and not _TEARDOWN.search(r["text"])}
    out: list[tuple[dict, Why | None]] = []
    first_time = None
    seen_cause_rank: set = set()
    for r in rows:
        others = bool(cause_ranks - {r["rank"]})
        why = _consequence(r, first_time, others)
        if why is None and r["rank"] in seen_cause_rank:
            why = Why.REPEAT
        if why is None:
            seen_cause_rank.add(r["rank"])
            if first_time is None:
                first_time = r["wall_time"] if r["wall_time"] is not None else float("-inf")
        out.append((r, why))
    return out


def _timeout(row: dict) -> bool:
    return codes.KINDS.get(row["code"] or "") == "hccl_timeout" or kind_of(f"{row['text']}\n{row['context']}") == Kind.HCCL_TIMEOUT


def _with_worker_ranks(rows: list[dict], incidents: pl.DataFrame) -> list[dict]:
    """msrun's "Worker process 14466 exit": the rank whose log that process wrote (its files' pid)."""
    ends = incidents.filter((pl.col("level") == "end") & pl.col("pid").is_not_null() & pl.col("rank").is_not_null())
    by_pid = dict(zip(ends["pid"].to_list(), ends["rank"].to_list()))
    for r in rows:
        if r["named_pid"] is not None and r["named_rank"] is None and r["named_pid"] in by_pid:
            r["named_rank"], r["named_how"] = by_pid[r["named_pid"]], "worker_exit"
    return rows


def _root(classified: list[tuple[dict, Why | None]]) -> tuple[dict, int | None, str | None]:
    """The root incident, the first failing rank and how that rank is known."""
    lost = [r for r, _ in classified if r["named_how"] in _NAMING and r["named_rank"] is not None]
    if lost:
        rank = lost[0]["named_rank"]
        own = [r for r, why in classified if r["rank"] == rank and why in (None, Why.REPEAT)]
        first = next((r for r, why in classified if r["rank"] == rank and why != Why.SCHEDULER), None)
        if first is not None and first["named_rank"] not in (None, rank) and _timeout(first):
            # the lost rank died of waiting for another one (its collective timed out): that one is the root
            return first, first["named_rank"], "remote_rank"
        return (own[0] if own else lost[0]), rank, lost[0]["named_how"]
    causes = [r for r, why in classified if why is None]
    if causes:
        root = causes[0]
        ranks = {r["rank"] for r, _ in classified if r["rank"] is not None}
        basis = "only" if len(ranks) == 1 else "earliest"
        return root, root["rank"], basis if root["rank"] is not None else None
    remote = [r for r, _ in classified if r["named_how"] == "remote_rank" and r["named_rank"] is not None]
    if remote:
        return remote[0], remote[0]["named_rank"], "remote_rank"
    root = classified[0][0]
    return root, root["rank"], ("earliest" if root["rank"] is not None else None)


def _kind(root: dict, classified: list[tuple[dict, Why | None]]) -> tuple[Kind, str]:
    code = root["code"] or next((r["code"] for r, _ in classified if r["rank"] == root["rank"] and r["code"]), None)
    if root["level"] == "abnormal_global_norm":
        return Kind.NAN_ABORT, "text"
    said = framework_sentence([r for r, _ in classified if r["file"] == root["file"] and r["rank"] == root["rank"]])
    if said and kind_of(said) is not None:  # MindSpore's own sentence of the cause outranks the codes under it
        return kind_of(said), "framework"
    if code in codes.KINDS:
        return Kind(codes.KINDS[code]), "code"
    if code and codes.family_kind(code):
        return Kind(codes.family_kind(code)), "code"
    kind = kind_of(f"{root['text']}\n{root['context']}")
    if kind is not None:
        return kind, "text"
    hccl = bool(code) and code[1] == "I"  # an HCCL code: its timeouts are the kind, not a consequence's word
    for r, _ in classified:  # the chain's other words: a worker's exit the scheduler names, a consequence that says more
        kind = kind_of(f"{r['text']}\n{r['context']}")
        if kind is not None and (kind != Kind.HCCL_TIMEOUT or hccl):
            return kind, "chain"
    return Kind.OTHER, "text"


def _phase(kind: Kind, root: dict, last_step: int | None, compiled: bool) -> Phase:
    whole = f"{root['text']}\n{root['context']}"
    if kind == Kind.COMPILE_ERROR:
        return Phase.COMPILE
    if _LOAD.search(whole):
        return Phase.LAUNCH
    if last_step is not None and _CHECKPOINT.search(whole):
        return Phase.CHECKPOINT
    if last_step is not None and _EVAL.search(whole):
        return Phase.EVALUATION
    if last_step is not None or (root["step"] or 0) >= 1:  # a step logged, or the error's own text names one
        return Phase.TRAINING
    if kind in (Kind.CONFIG_ERROR,):
        return Phase.LAUNCH
    if kind in (Kind.OOM_DEVICE, Kind.HCCL_TIMEOUT, Kind.DATA_ERROR, Kind.NAN_ABORT) or compiled:
        return Phase.FIRST_STEP
    return Phase.LAUNCH


def resume_point(checkpoints: pl.DataFrame, last_step: int | None) -> ResumePoint | None:
    """The checkpoint to resume from: the latest step every saving rank wrote completely (an
    interrupted save, a .tmp, is no checkpoint), no later than the last step logged.
    TrainFaultTolerance's ttp_saved_checkpoints-step_N/ folder gives its files' step where they
    state none. (The coordinator's merge may prefer the last healthy one: this is the one place.)"""
    if checkpoints.is_empty():
        return None
    ck = checkpoints.filter(pl.col("kind") == "train").with_columns(
        pl.coalesce("step", pl.col("path").str.extract(_TTP.pattern, 1).cast(pl.Int64)).alias("_step"),
        pl.col("path").str.contains(_TTP.pattern).alias("_ttp"),
    ).filter(pl.col("_step").is_not_null())
    if last_step is not None:
        ck = ck.filter(pl.col("_step") <= last_step)
    if ck.is_empty():
        return None
    per = ck.group_by("_step").agg(pl.col("rank").n_unique().alias("ranks"), pl.col("_ttp").any().alias("ttp"),
                                   pl.col("path").sort_by("rank", "path").first().alias("path"))
    most = per["ranks"].max()
    best = per.filter(pl.col("ranks") == most).sort("_step").row(-1, named=True)
    return ResumePoint(best["path"], int(best["_step"]), "ttp" if best["ttp"] else "checkpoint", int(best["ranks"]))


def _progress(run_tables: dict) -> tuple[int | None, dict[int, tuple[int, float | None]]]:
    """The last step logged by any rank, and each rank's last step with its wall time."""
    steps = run_tables["steps"].select("rank", "step", "wall_time")
    scalars = run_tables["scalars"].select("rank", "step", "wall_time")
    both = pl.concat([steps, scalars]).drop_nulls("step")
    if both.is_empty():
        return None, {}
    per = both.group_by("rank").agg(pl.col("step").max().alias("last"), pl.col("wall_time").max().alias("wall"))
    return int(both["step"].max()), {r: (int(s), w) for r, s, w in per.iter_rows()}


def _loss_at(scalars: pl.DataFrame, step: int | None, rank: int | None) -> float | None:
    loss = scalars.filter((pl.col("tag") == "loss") & pl.col("step").is_not_null())
    if loss.is_empty() or step is None:
        return None
    if rank is not None and (loss["rank"] == rank).any():
        loss = loss.filter(pl.col("rank") == rank)
    else:
        loss = loss.filter(pl.col("rank") == loss["rank"].min())
    loss = loss.filter(pl.col("step") <= step).sort("step")
    return float(loss["value"][-1]) if loss.height else None


def _stalled(last_wall: float | None, files_end: float | None, med: float | None) -> float | None:
    """How long the files went on after progress stopped, where that makes a hang: the last step
    long before the files' last word (HANG_AFTER_S, and HANG_STEPS step times)."""
    if last_wall is None or files_end is None:
        return None  # steps without times (LossMonitor's lines) cannot tell a hang
    stalled = files_end - last_wall
    return stalled if stalled >= max(HANG_AFTER_S, HANG_STEPS * (med or 0.0)) else None


def _last_finite_step(scalars: pl.DataFrame, last: int, rank: int | None) -> int:
    """The last step whose loss is a number, where the last step's loss is NaN/Inf."""
    loss = scalars.filter((pl.col("tag") == "loss") & pl.col("step").is_not_null() & (pl.col("step") <= last))
    if rank is not None and (loss["rank"] == rank).any():
        loss = loss.filter(pl.col("rank") == rank)
    at_last = loss.filter(pl.col("step") == last)["value"]
    if at_last.len() == 0 or at_last.is_finite().any():
        return last
    finite = loss.filter(pl.col("value").is_finite())["step"]
    return int(finite.max()) if finite.len() else last


def _median_step_s(steps: pl.DataFrame) -> float | None:
    t = steps["step_time_s"].drop_nulls()
    return float(t.median()) if t.len() else None


def judge(tables: dict[str, pl.DataFrame]) -> Failure | None:
    """The run's failure, or None when it did not fail. ``tables``: a Run's tables."""
    incidents = tables["incidents"]
    last_step, per_rank = _progress(tables)
    last_wall = max((w for _, w in per_rank.values() if w is not None), default=None)
    ends = incidents.filter(pl.col("level") == "end")["wall_time"].drop_nulls()
    files_end = float(ends.max()) if ends.len() else None
    rows = _with_worker_ranks(incidents.filter(pl.col("level").is_in(_ERRORS)).with_row_index("_order").to_dicts(), incidents)
    if rows:
        classified = _classified(rows)
        root, rank, rank_basis = _root(classified)
        if _trained_on(root, last_wall, tables["steps"], tables["scalars"], rows):
            return None
        kind, basis = _kind(root, classified)
        stalled = None
        if kind == Kind.HCCL_TIMEOUT and rank_basis in ("earliest", "only"):
            # a timeout's reporter waited for another rank: the one it names, else none is known
            named = next((r for r, _ in classified if r["named_rank"] is not None and r["named_rank"] != r["rank"]), None)
            rank, rank_basis = (named["named_rank"], named["named_how"]) if named else (None, None)
    else:
        med = _median_step_s(tables["steps"])
        stalled = _stalled(last_wall, files_end, med)
        if stalled is None:
            return None
        classified, root = [], None
        kind, basis = Kind.HANG, "progress"
        stopped = sorted(per_rank.items(), key=lambda kv: (kv[1][1] if kv[1][1] is not None else float("inf"), kv[0]))
        rank = stopped[0][0] if len(per_rank) > 1 else None
        rank_basis = "stopped_first" if rank is not None else None
    rank_last = per_rank.get(rank, (last_step, None))[0] if rank is not None else last_step
    if kind == Kind.NAN_ABORT and rank_last is not None:
        rank_last = _last_finite_step(tables["scalars"], rank_last, rank)  # the NaN step stopped it: not one it completed
    compiled = not tables["events"].filter(pl.col("kind") == "compile").is_empty()
    phase = _phase(kind, root, last_step, compiled) if root is not None else Phase.TRAINING
    resume = resume_point(tables["checkpoints"], last_step)
    steps_lost = last_step - resume.step if resume is not None and last_step is not None else None
    hours = _hours_lost(tables["steps"], resume, last_step)
    reasons = {}
    if rank is None:
        reasons["first_failing_rank"] = "timeout_names_none" if kind == Kind.HCCL_TIMEOUT else "not_said"
    if last_step is None:
        reasons["last_step"] = "no_step_logged"
        reasons["last_loss"] = "no_step_logged"
    if resume is None:
        reasons["resume_from"] = "no_complete_checkpoint" if tables["checkpoints"].is_empty() is False else "no_checkpoint"
        reasons["steps_lost"] = reasons["resume_from"]
    code = root["code"] if root is not None and basis != "framework" else None
    if root is not None and code is None and basis != "framework":  # MindSpore's sentence is the cause: the codes under it are not
        code = next((r["code"] for r, why in classified if r["rank"] == root["rank"] and r["code"]), None)
    if code is None:
        reasons["error_code"] = "no_code"
    exception = root["exception"] if root is not None else None
    if exception is None and root is not None and root["rank"] is not None:  # the root rank's own exception
        exception = next((r["exception"] for r, why in classified if r["rank"] == root["rank"] and r["exception"]), None)
    if exception is None:
        reasons["exception"] = "no_exception"
    last_loss = _loss_at(tables["scalars"], rank_last, rank)
    if last_loss is None and "last_loss" not in reasons:
        reasons["last_loss"] = "no_loss_logged"
    evidence = _evidence(root, classified)
    return Failure(
        kind=kind, kind_basis=basis, error_code=code, code_module=codes.module(code) if code else None,
        runtime_code=root["runtime_code"] if root is not None else None, exception=exception,
        first_failing_rank=rank, rank_basis=rank_basis, failed_at=phase, last_step=rank_last, last_loss=last_loss,
        message=_quoted(root, code, rows, rank_basis, rank) if root is not None else None, message_file=root["file"] if root is not None else None,
        message_line=root["line"] if root is not None else None,
        failed_wall_time=root["wall_time"] if root is not None else last_wall,
        evidence=evidence, consequences=sum(1 for _, why in classified if why not in (None, Why.REPEAT)),
        consequence_ranks=len({r["rank"] for r, why in classified if why not in (None, Why.REPEAT)
                               and r["rank"] is not None and r["rank"] != rank}),
        why_counts=_why_counts(classified),
        ranks_failed=len({r["rank"] for r, why in classified if why is None}),
        resume_from=resume, steps_lost=steps_lost, hours_lost=hours, stalled_s=stalled,
        actions=PLAYBOOK[kind], reasons=reasons,
    )


_MESSAGE_BLOCK = re.compile(r"^-\s*Framework Error Message:?\s*$")  # (the Ascend block: its code lines, _quoted)
_HEARTBEAT_LINE = re.compile(r"Heartbeat Lost")
SAME_MOMENT_S = 60.0  # a rank's lines this close to its root are one failure told several times


_ABORT_HEADER = re.compile(r"terminate called after throwing")


def framework_sentence(rows: list[dict]) -> str | None:
    """The first line of an exception's "Framework Error Message" block:
    MindSpore's sentence of the cause (lines as written, a launcher's prefix kept)."""
    for r in rows:
        lines = (r["context"] or "").splitlines()
        for i, line in enumerate(lines):
            if _MESSAGE_BLOCK.match(_unprefixed(line).strip()):
                for x in lines[i + 1:]:
                    bare = _unprefixed(x).strip()
                    if bare and not set(bare) <= {"-"}:
                        return x.strip()
    return None


def _quoted(root: dict, code: str | None, rows: list[dict], rank_basis: str | None, rank: int | None) -> str:
    """The line a careful engineer quotes, verbatim. Of the root's own lines (its file, from the
    root on, at the same moment): the first line of an exception's "Framework Error Message"
    block (MindSpore's sentence of the cause), else the first header that carries the root's
    code, else the line below an announcing header that starts with the code (CANN's error
    manager prints the cause there). A rank named lost by HCCL's heartbeat with no log of its
    own: the heartbeat line that names it. Else the root's header."""
    if rank_basis == "heartbeat_lost" and root["rank"] != rank:
        line = next((x for x in f"{root['text']}\n{root['context']}".splitlines() if _HEARTBEAT_LINE.search(x)), None)
        if line:
            return line.strip()
    t0 = root["wall_time"]
    same = [r for r in rows if r["file"] == root["file"] and (r["line"] or 0) >= (root["line"] or 0)
            and (t0 is None or r["wall_time"] is None or abs(r["wall_time"] - t0) <= SAME_MOMENT_S)]
    same.sort(key=lambda r: r["line"] or 0)
    sentence = framework_sentence(same)
    if sentence:
        return sentence
    for r in same:  # a C++ exception's own words ("terminate called after throwing ...", then "what(): ...")
        what = next((x.strip() for x in (r["context"] or "").splitlines() if x.strip().startswith("what():")), None)
        if what and _ABORT_HEADER.search(r["text"]):
            return what
    if code is not None and codes.internal(code):
        # an internal code's first line only says "Inner Error!"; the next line of the code says what failed
        for r in same:
            for line in (r["text"], *(r["context"] or "").splitlines()):
                bare = _unprefixed(line).strip()
                if bare.startswith(code) and not _INNER.search(bare):
                    return line.strip()
    elif code is not None:
        for r in same:
            if code in r["text"]:
                return r["text"]
        for r in same:
            for line in (r["context"] or "").splitlines():
                stripped = line.strip()
                if code in stripped and (stripped.startswith(code) or EXCEPTION_LINE.match(stripped)):
                    return stripped
    inner = _innermost_exception(root)
    return inner if inner is not None else root["text"]


_INNER = re.compile(r"^E[0-9A-Z]\d{4}:?\s*(?:\[PID: \d+\]\s*)?(?:[\d:.-]+\s*)?Inner Error!?\s*$")


def _innermost_exception(root: dict) -> str | None:
    """The user's own exception under MindSpore's wrapper ("Exception thrown from user defined
    Python function in dataset", then its "Python Call Stack" ending in "ValueError: ..."): the
    last exception line of the incident's lines."""
    if root["exception"] is None:
        return None
    found = None
    for line in (root["context"] or "").splitlines():
        bare = _unprefixed(line)
        if bare[:1].strip() and EXCEPTION_LINE.match(bare.strip()) and not bare.strip().endswith(_TRACEBACK_TAIL):
            found = line.strip()
    return found


_TRACEBACK_TAIL = "(most recent call last):"


def _trained_on(root: dict, last_wall: float | None, steps: pl.DataFrame, scalars: pl.DataFrame, rows: list[dict]) -> bool:
    """The run logged steps well after its first error, or its errors name later steps (a check
    that only reports and lets training go on): it did not die of it."""
    if root["step"] is not None and any(r["step"] is not None and r["step"] > root["step"] and r["file"] == root["file"]
                                        for r in rows):
        return True
    if root["wall_time"] is None or last_wall is None:
        return False
    med = _median_step_s(steps) or 0.0
    walls = pl.concat([steps.select("step", "wall_time"), scalars.select("step", "wall_time")]).drop_nulls()
    later = walls.filter(pl.col("wall_time") > root["wall_time"] + max(AFTER_ERROR_S, 3 * med))["step"].n_unique()
    return later >= TRAINED_ON_STEPS


def _why_counts(classified: list[tuple[dict, Why | None]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, why in classified:
        if why not in (None, Why.REPEAT):
            counts[str(why)] = counts.get(str(why), 0) + 1
    return dict(sorted(counts.items()))


def _hours_lost(steps: pl.DataFrame, resume: ResumePoint | None, last_step: int | None) -> float | None:
    if resume is None or last_step is None:
        return None
    walls = steps.filter(pl.col("step").is_in([resume.step, last_step])).group_by("step").agg(pl.col("wall_time").max())
    w = dict(walls.iter_rows())
    if w.get(resume.step) is None or w.get(last_step) is None:
        return None
    return max(0.0, (w[last_step] - w[resume.step]) / 3600.0)


def _evidence(root: dict | None, classified: list[tuple[dict, Why | None]]) -> tuple[Evidence, ...]:
    """The root, then each other rank's first incident (the file and line to open)."""
    if root is None:
        return ()
    out = [Evidence(root["rank"], root["file"], root["line"], root["text"], None)]
    seen = {(root["rank"], root["file"])}
    for r, why in classified:
        key = (r["rank"], r["file"])
        if key in seen or why == Why.REPEAT:
            continue
        seen.add(key)
        out.append(Evidence(r["rank"], r["file"], r["line"], r["text"], why))
    return tuple(out)


__all__ = [
    "PLAYBOOK",
    "Action",
    "Evidence",
    "Failure",
    "Kind",
    "Phase",
    "ResumePoint",
    "Why",
    "judge",
    "kind_of",
    "resume_point",
]
