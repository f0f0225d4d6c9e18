"""Triage: memory, compute, communication, data or host — the article's §3.1 table and §5.3's
three graphs, decided from the profile (and the logged data wait), with its first moves.

Each piece of evidence past its threshold (thresholds.py) is a ``Signal``. The verdict is the
signal that accounts for the largest share of the step (data wait, exposed communication, device
idle); without one, memory near the device's limit, then a busy compute unit, decide; else the
verdict is unknown, with why. The other signals are kept in ``also``.
"""

from __future__ import annotations

from typing import Any

from . import thresholds as th
from .types import (
    Action,
    Evidence,
    OpScope,
    Profile,
    Signal,
    Stragglers,
    Triage,
    TriageReason,
    Verdict,
)

A = Action
ACTIONS: dict[TriageReason, tuple[Action, ...]] = {
    TriageReason.DATA_WAIT: (A.DATA_WORKERS, A.DATA_PREFETCH, A.DATA_OFFLOAD),
    TriageReason.DATA_QUEUE_EMPTY: (A.DATA_WORKERS, A.DATA_PREFETCH, A.DATA_OFFLOAD),
    TriageReason.PIPELINE_WAIT: (A.STAGE_BALANCE, A.MICRO_BATCHES, A.CHECK_STRAGGLER),
    TriageReason.STRAGGLER: (A.CHECK_STRAGGLER,),
    TriageReason.PIPELINE_BUBBLE: (A.MICRO_BATCHES, A.STAGE_BALANCE),
    TriageReason.COMM_EXPOSED: (A.PARALLEL_OPTIMIZER, A.COMM_ALGORITHM, A.COMM_TOPOLOGY),
    TriageReason.COMM_KERNELS: (A.PARALLEL_OPTIMIZER, A.COMM_ALGORITHM, A.COMM_TOPOLOGY),
    TriageReason.DEVICE_IDLE: (A.HOST_SINK_MODE, A.HOST_GRAPH_MODE, A.HOST_CALLBACKS),
    TriageReason.MEMORY_NEAR_LIMIT: (A.MIXED_PRECISION, A.GRAD_ACCUMULATION, A.RECOMPUTE, A.OPTIMIZER_OFFLOAD),
    TriageReason.COMPUTE_BUSY: (A.OP_FUSION, A.PARALLEL_STRATEGY, A.GRAPH_COMPILE),
    TriageReason.NO_DOMINANT_PART: (A.PROFILE_RUN,),
    TriageReason.NO_EVIDENCE: (A.PROFILE_RUN,),
}
# What a straggler's own time goes to -> the move that shortens it.
CAUSE_ACTIONS = {"compute": (A.PARALLEL_STRATEGY, A.OP_FUSION), "idle": (A.HOST_SINK_MODE, A.HOST_GRAPH_MODE),
                 "data_wait": (A.DATA_WORKERS, A.DATA_PREFETCH), "preparing": (A.HOST_GRAPH_MODE,)}


def _actions(reason: TriageReason, params: dict[str, Any]) -> tuple[Action, ...]:
    if reason == TriageReason.STRAGGLER:
        return (A.CHECK_STRAGGLER, *CAUSE_ACTIONS.get(params.get("cause", ""), ()))
    if reason == TriageReason.COMM_KERNELS and params.get("broadcast"):
        return (A.PARAMETER_BROADCAST, A.PROFILE_RUN)
    if reason == TriageReason.DEVICE_IDLE and params.get("awaited"):
        return (A.CHECK_STRAGGLER, *ACTIONS[reason])
    return ACTIONS[reason]


def _straggler_params(s: Stragglers) -> dict[str, Any]:
    return {"waiting": list(s.waiting), "awaited": list(s.awaited), "wait_share": s.waiting_wait_share,
            "awaited_wait_share": s.awaited_wait_share, "receive_share": s.waiting_receive_share,
            "cause": s.cause, "cause_share": s.cause_share, "waiting_cause_share": s.waiting_cause_share}


def wait_key(source: str) -> str:
    """The evidence key of the wait the run's own records give, by who wrote them: postmortem's
    callback measures the gap in the training process; a text log's is inferred from its timers."""
    return "callback_data_wait_share" if source == "callback" else "logged_data_wait_share"


def signals(profile: Profile | None, stragglers: Stragglers | None, logged_data_wait: float | None,
            settings: dict[str, Any], wait_source: str = "log") -> tuple[list[Signal], dict[str, float | None]]:
    """Every signal past its threshold, and the quantities looked at (evidence values).
    ``wait_source``: who wrote the records the logged wait comes from ("callback", "log", "summary")."""
    bd = profile.breakdown if profile else None
    sh = bd.shares if bd else {}
    kernels = next((o for o in (profile.operators if profile else ()) if o.scope == OpScope.KERNELS), None)
    ai_core = next((o for o in (profile.operators if profile else ()) if o.scope == OpScope.AI_CORE), None)
    dp = profile.data if profile else None
    mem = profile.memory if profile else None
    idle = (sh.get("idle") or 0.0) + (sh.get("preparing") or 0.0) if sh.get("idle") is not None else None
    values: dict[str, float | None] = {
        "data_wait_share": sh.get("data_wait"), wait_key(wait_source): logged_data_wait,
        "queue_empty_share": dp.queue_empty_share if dp else None, "comm_share": bd.comm_share if bd else None,
        "bubble_share": sh.get("bubble"), "idle_share": idle, "compute_share": sh.get("compute"),
        "comm_kernel_share": kernels.comm_share if kernels else None,
        "memory_peak_share": mem.peak_share if mem else None,
        "waiting_wait_share": stragglers.waiting_wait_share if stragglers else None,
    }
    # a value outside [0, 1] is no share (a negative logged wait: an in-step timer longer than the
    # step, plausibility.py): it is neither evidence nor a signal
    values = {k: (v if v is None or 0.0 <= v <= 1.0 else None) for k, v in values.items()}
    if logged_data_wait is not None and not 0.0 <= logged_data_wait <= 1.0:
        logged_data_wait = None
    out: list[Signal] = []
    waits = [(v, src) for v, src in ((sh.get("data_wait"), "profile"), (logged_data_wait, wait_source)) if v is not None]
    wait, wait_src = max(waits) if waits else (None, None)
    if wait is not None and wait >= th.DATA_NOTABLE:
        out.append(Signal(Verdict.DATA, TriageReason.DATA_WAIT,
                          {"share": wait, "source": wait_src, "strong": wait >= th.DATA_STRONG}, wait))
    queue_empty = dp is not None and dp.queue_empty_share is not None and dp.queue_empty_share > th.QUEUE_EMPTY
    queue_params = ({"share": dp.queue_empty_share, "samples": dp.queue_samples, "stage": dp.queue_stage,
                     "slowest": dp.slowest, "idle_share": None} if queue_empty and dp else {})
    comm = bd.comm_share if bd else None
    if comm is not None and comm > th.COMM_SHARE:
        stages, micro = settings.get("pipeline_stage"), settings.get("micro_batch_num")
        if stragglers and (stragglers.waiting_receive_share or 0.0) >= th.PIPELINE_RECEIVE:
            reason, params = TriageReason.PIPELINE_WAIT, _straggler_params(stragglers)
        elif stragglers:
            reason, params = TriageReason.STRAGGLER, _straggler_params(stragglers)
        elif (sh.get("bubble") or 0.0) >= th.BUBBLE:
            reason, params = TriageReason.PIPELINE_BUBBLE, {"share": sh["bubble"]}
        else:
            reason, params = TriageReason.COMM_EXPOSED, {"share": comm, "bubble_share": sh.get("bubble")}
        params.update(comm_share=comm, stages=stages, micro_batches=micro)
        out.append(Signal(Verdict.COMMUNICATION, reason, params, comm))
    if kernels is not None and kernels.comm_share is not None and kernels.comm_share > th.COMM_KERNELS:
        top = next((o for o in kernels.by_type if o.communication), None)
        params = {"share": kernels.comm_share, "top_type": top.type if top else None,
                  "top_share": top.share if top else None,
                  "broadcast": bool(top and "broadcast" in top.type.lower())}
        # the kernels' view decides only where no step breakdown measured the exposed part
        out.append(Signal(Verdict.COMMUNICATION, TriageReason.COMM_KERNELS, params,
                          kernels.comm_share if bd is None else 0.0))
    if idle is not None and idle >= th.IDLE:
        if queue_empty:  # the device idles while its data queue is empty: the data pipeline
            out.append(Signal(Verdict.DATA, TriageReason.DATA_QUEUE_EMPTY, {**queue_params, "idle_share": idle}, idle))
            queue_empty = False
        else:
            params = {"share": idle, "awaited": list(stragglers.awaited) if stragglers and stragglers.cause == "idle" else []}
            out.append(Signal(Verdict.HOST, TriageReason.DEVICE_IDLE, params, idle))
    if queue_empty:  # not a time share: decides only where no wait was measured
        out.append(Signal(Verdict.DATA, TriageReason.DATA_QUEUE_EMPTY, queue_params, 0.0))
    if mem is not None and mem.peak_share is not None and mem.peak_share >= th.MEMORY_NEAR:
        out.append(Signal(Verdict.MEMORY, TriageReason.MEMORY_NEAR_LIMIT,
                          {"share": mem.peak_share, "peak_bytes": mem.peak_bytes, "capacity_bytes": mem.capacity_bytes}, 0.0))
    compute = sh.get("compute")
    if compute is not None and compute >= th.COMPUTE_BUSY:
        ops = kernels or ai_core
        top = ops.by_type[0] if ops and ops.by_type else None
        out.append(Signal(Verdict.COMPUTE, TriageReason.COMPUTE_BUSY,
                          {"share": compute, "top_type": top.type if top else None, "top_share": top.share if top else None,
                           "scope": str(ops.scope) if ops else None}, 0.0))
    return out, values


def _pick(found: list[Signal], measured_wait: bool) -> Signal | None:
    timed = [s for s in found if s.strength > 0]
    if timed:
        return max(timed, key=lambda s: s.strength)
    for verdict, reason in ((Verdict.COMMUNICATION, TriageReason.COMM_KERNELS),
                            (Verdict.DATA, TriageReason.DATA_QUEUE_EMPTY), (Verdict.MEMORY, None),
                            (Verdict.COMPUTE, None)):
        for s in found:
            if s.verdict == verdict and (reason is None or s.reason == reason):
                if s.reason == TriageReason.DATA_QUEUE_EMPTY and measured_wait:
                    continue  # the step trace measured the wait and it is small: the queue sample does not decide
                return s
    return None


THRESHOLDS = {"data_wait_share": th.DATA_NOTABLE, "logged_data_wait_share": th.DATA_NOTABLE,
              "callback_data_wait_share": th.DATA_NOTABLE,
              "queue_empty_share": th.QUEUE_EMPTY, "comm_share": th.COMM_SHARE, "bubble_share": th.BUBBLE,
              "idle_share": th.IDLE, "compute_share": th.COMPUTE_BUSY, "comm_kernel_share": th.COMM_KERNELS,
              "memory_peak_share": th.MEMORY_NEAR, "waiting_wait_share": th.COMM_SHARE}


def triage(profile: Profile | None, stragglers: Stragglers | None, logged_data_wait: float | None,
           settings: dict[str, Any], baseline: Triage | None = None, wait_source: str = "log") -> Triage:
    found, values = signals(profile, stragglers, logged_data_wait, settings, wait_source)
    base = {e.key: e.value for e in baseline.evidence} if baseline else {}
    evidence = tuple(Evidence(k, v, base.get(k), THRESHOLDS.get(k)) for k, v in values.items()
                     if v is not None or base.get(k) is not None)
    measured = values["data_wait_share"] is not None or values[wait_key(wait_source)] is not None
    chosen = _pick(found, measured)
    if chosen is None:
        params = {k: v for k, v in values.items() if v is not None}
        reason = TriageReason.NO_DOMINANT_PART if params else TriageReason.NO_EVIDENCE
        return Triage(Verdict.UNKNOWN, reason, params, evidence, ACTIONS[reason], tuple(found))
    also = tuple(s for s in found if s is not chosen)
    return Triage(chosen.verdict, chosen.reason, chosen.params, evidence, _actions(chosen.reason, chosen.params), also)
