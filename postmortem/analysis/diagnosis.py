"""Verdict first: what the first screen says, typed.

For each family that regressed or improved against the baseline (throughput, efficiency,
convergence, stability), and for what stands out in the run itself (a figure that cannot be
right, NaN, divergence, spikes, the profiler's bottleneck, data stalls, the checkpoint tax, slow
ranks, errors): the deciding quantities in both runs, the side it points to (data / model /
environment) and the layer (memory / compute / communication / host / data), the first things
to try from the article's playbook (§3.1's table, §5), and which changed settings can or cannot
explain it (analysis/identity.py). A regression no changed setting can explain points at the
environment: the baseline ran the same settings faster.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from . import thresholds as th
from .identity import base_key, effects, explaining_order, group, model_growth, per_run
from .links import link_params
from .triage import wait_key
from .lrpeak import at_log_end, logged_after, lr_at
from .ranks import group_params
from .types import (
    Action,
    Diagnosis,
    Family,
    FindingKind,
    FindingSeverity,
    Outcome,
    Problem,
    Quantity,
    SettingChange,
    SettingLink,
    Side,
    Symptom,
    TriageReason,
    Verdict,
)

if TYPE_CHECKING:
    from .types import Analysis, Delta

A = Action
# The playbook by layer (§3.1's table and §4.3): the triage's own first moves when it decided.
PLAYBOOK: dict[Verdict, tuple[Action, ...]] = {
    Verdict.DATA: (A.DATA_WORKERS, A.DATA_PREFETCH, A.DATA_OFFLOAD),
    Verdict.MEMORY: (A.MIXED_PRECISION, A.GRAD_ACCUMULATION, A.RECOMPUTE),
    Verdict.COMPUTE: (A.OP_FUSION, A.PARALLEL_STRATEGY),
    Verdict.COMMUNICATION: (A.PARALLEL_OPTIMIZER, A.COMM_ALGORITHM, A.COMM_TOPOLOGY, A.MICRO_BATCHES),
    Verdict.HOST: (A.HOST_SINK_MODE, A.HOST_GRAPH_MODE, A.HOST_CALLBACKS),
}
SIDES = {Verdict.DATA: Side.DATA, Verdict.COMPUTE: Side.MODEL, Verdict.MEMORY: Side.MODEL,
         Verdict.COMMUNICATION: Side.ENVIRONMENT, Verdict.HOST: Side.ENVIRONMENT}
# The triage evidence each reason rests on.
CAUSE_KEYS = {
    TriageReason.DATA_QUEUE_EMPTY: "queue_empty_share", TriageReason.PIPELINE_WAIT: "waiting_wait_share",
    TriageReason.STRAGGLER: "waiting_wait_share", TriageReason.PIPELINE_BUBBLE: "bubble_share",
    TriageReason.COMM_EXPOSED: "comm_share", TriageReason.COMM_KERNELS: "comm_kernel_share",
    TriageReason.DEVICE_IDLE: "idle_share", TriageReason.MEMORY_NEAR_LIMIT: "memory_peak_share",
    TriageReason.COMPUTE_BUSY: "compute_share",
}
# Step-time shares whose growth can explain a slower step when the triage decided nothing.
GROWING_SHARES = {"data_wait_share": Verdict.DATA, "logged_data_wait_share": Verdict.DATA,
                  "callback_data_wait_share": Verdict.DATA, "comm_share": Verdict.COMMUNICATION,
                  "bubble_share": Verdict.COMMUNICATION, "idle_share": Verdict.HOST}
MIN_GROWTH = 0.02  # a share that grew by this much of the step (2 points) explains a slower step
STABILITY_PLAYBOOK = (A.CHECK_LR, A.CHECK_DATA, A.CHECK_LOSS_SCALE, A.CHECK_PRECISION)
# §5.2's order of checks for a loss that explodes or turns NaN: data, learning rate, precision /
# loss scale, optimizer state; a changed setting that can explain it moves its own check first.
EXPLOSION_PLAYBOOK = (A.CHECK_DATA, A.CHECK_LR, A.CHECK_LOSS_SCALE, A.CHECK_PRECISION, A.CHECK_OPTIMIZER_STATE)
# What a changed setting of these groups / keys points at first.
_POINTS_AT = {"precision": (A.CHECK_LOSS_SCALE, A.CHECK_PRECISION), "data": (A.CHECK_DATA,)}
_OPTIMIZER_STATE_KEYS = {"optimizer", "beta1", "beta2", "eps", "weight_decay", "enable_parallel_optimizer"}
# A fixed bad sample repeats at a fixed step (§5.2) only when these are the same in both runs.
SAME_DATA_KEYS = {"seed", "shuffle", "data_order", "dataset", "data_path", "dataset_dir", "train_dataset_size",
                  "global_batch_size", "batch_size", "micro_batch_size", "data_parallel", "gradient_accumulation_steps",
                  "micro_batch_num", "device_num"}
CONVERGENCE_PLAYBOOK = (A.CHECK_DATA_ALIGNMENT, A.CHECK_LR, A.CHECK_PARALLEL_SPLIT)
MAX_PROBLEMS = 6
_ORDER = {FindingSeverity.CRITICAL: 0, FindingSeverity.ERROR: 1, FindingSeverity.WARNING: 2, FindingSeverity.INFO: 3}


def _changes(a: Analysis) -> tuple[SettingChange, ...]:
    """The changed settings that can cause something: per-run values left out, and a user's copy of
    a setting (user.peak_lr) when a setting of its group changed the same way."""
    if a.comparison is None:
        return ()
    d = a.comparison.settings
    found = [c for c in (*d.changed, *d.added, *d.removed) if not per_run(c.key)]
    plain = {(group(c.key), repr(c.baseline), repr(c.current)) for c in found if not c.key.startswith("user.")}
    kept = [c for c in found if not (c.key.startswith("user.") and (group(c.key), repr(c.baseline), repr(c.current)) in plain)]
    return tuple(sorted(kept, key=lambda c: explaining_order(c.key)))


def _links(changes: tuple[SettingChange, ...], family: Family) -> tuple[SettingLink, ...]:
    return tuple(SettingLink(c.key, c.baseline, c.current, family in effects(c.key)) for c in changes)


def _q(d: Delta) -> Quantity:
    return Quantity(d.figure, d.current, d.baseline)


def _evidence(a: Analysis, key: str) -> Quantity | None:
    e = next((e for e in a.triage.evidence if e.key == key), None)
    return Quantity(e.key, e.value, e.baseline, e.threshold) if e is not None else None


def _cause(a: Analysis) -> tuple[Quantity | None, Verdict | None]:
    """What points at the layer: the triage's own evidence when it decided, else the step-time
    share that grew the most against the baseline."""
    tri = a.triage
    if tri.verdict != Verdict.UNKNOWN:
        if tri.reason == TriageReason.DATA_WAIT:
            source = tri.params.get("source")
            key = "data_wait_share" if source == "profile" else wait_key(str(source))
        else:
            key = CAUSE_KEYS.get(tri.reason, "")
        return _evidence(a, key), tri.verdict
    # a share names a bottleneck only when it passes its mark (and is a share: in [0, 1])
    grown = [(e.value - e.baseline, e) for e in tri.evidence
             if e.key in GROWING_SHARES and e.value is not None and e.baseline is not None
             and 0.0 <= e.value <= 1.0 and 0.0 <= e.baseline <= 1.0
             and (e.threshold is None or e.value >= e.threshold)]
    if grown:
        growth, e = max(grown, key=lambda x: x[0])
        # scale: a share below its own mark (or below 0: a timer longer than the step) names no layer
        if growth >= MIN_GROWTH and e.value >= 0 and (e.threshold is None or e.value >= e.threshold):
            return Quantity(e.key, e.value, e.baseline, e.threshold), GROWING_SHARES[e.key]
    return None, None


def _layer_actions(a: Analysis, verdict: Verdict | None) -> tuple[Action, ...]:
    if verdict is not None and verdict == a.triage.verdict:
        return a.triage.actions
    return PLAYBOOK.get(verdict, (A.PROFILE_RUN,)) if verdict is not None else (A.PROFILE_RUN,)


def _speed(a: Analysis, family: Family, outcome: Outcome, deltas: list[Delta], changes) -> Problem:
    """Throughput or efficiency against the baseline."""
    regressed = outcome == Outcome.REGRESSED
    cause, verdict = _cause(a)
    links = _links(changes, family)
    actions = _layer_actions(a, verdict) if regressed else ()
    if regressed and not any(x.explains for x in links):
        actions = (A.CHECK_ENVIRONMENT, *actions)  # the baseline ran the same settings (as far as they explain it) faster
    tax = next((d for d in deltas if d.figure == "checkpoint_tax"), None)
    if family == Family.EFFICIENCY and regressed and tax is not None:
        actions = (A.CHECKPOINT_INTERVAL, *actions)
    symptom = {(Family.THROUGHPUT, True): Symptom.SLOWER, (Family.THROUGHPUT, False): Symptom.FASTER,
               (Family.EFFICIENCY, True): Symptom.LESS_EFFICIENT, (Family.EFFICIENCY, False): Symptom.MORE_EFFICIENT}
    return Problem(
        symptom[(family, regressed)], FindingSeverity.WARNING if regressed else FindingSeverity.INFO, family,
        tuple(_q(d) for d in deltas), cause if regressed else None, SIDES.get(verdict) if regressed and verdict else None,
        verdict if regressed else None, actions, links,
        ("throughput", "profile") if family == Family.THROUGHPUT else ("mfu", "checkpoints", "profile"),
        {"explained": any(x.explains for x in links), "changed": bool(changes),
         **(model_growth(changes) if family in (Family.THROUGHPUT, Family.EFFICIENCY) else {})})  # scale: a grown model


def _lr_at(a: Analysis, step: int) -> float | None:
    """The learning rate at a step as a share of its peak (a surge at the peak: §5.2); how the
    peak is known is ``_lr_basis`` (lrpeak.py: the highest rate in the log is not the schedule's peak)."""
    return lr_at(a, step)[0]


def _lr_basis(a: Analysis, step: int) -> str | None:
    return lr_at(a, step)[1]


def _stability(a: Analysis, outcome: Outcome, deltas: list[Delta], changes) -> Problem:
    regressed = outcome == Outcome.REGRESSED
    links = _links(changes, Family.STABILITY)
    lr_changed = any(x.explains and group(x.key).value == "optimizer" for x in links)
    actions = ((A.CHECK_LR, A.CHECK_DATA, A.CHECK_LOSS_SCALE, A.CHECK_PRECISION) if lr_changed
               else (A.CHECK_DATA, A.CHECK_LR, A.CHECK_LOSS_SCALE, A.CHECK_PRECISION)) if regressed else ()
    spikes = [*a.stability.loss.spikes, *a.stability.grad_norm.spikes]
    params: dict = {"explained": any(x.explains for x in links), "changed": bool(changes)}
    if spikes:
        top = max(spikes, key=lambda s: s.height)  # "largest": the relative excursion over the running median, as everywhere
        params.update(step=top.step, lr_share=_lr_at(a, top.step), lr_basis=_lr_basis(a, top.step), same_step_sample=same_step_sample(a, top.step))
    severity = FindingSeverity.CRITICAL if regressed and a.stability.nan_steps else (
        FindingSeverity.WARNING if regressed else FindingSeverity.INFO)
    return Problem(Symptom.LESS_STABLE if regressed else Symptom.MORE_STABLE, severity, Family.STABILITY,
                   tuple(_q(d) for d in deltas), side=Side.MODEL if regressed else None, actions=actions,
                   settings=links, evidence=("stability", "convergence"), params=params)


def _convergence(a: Analysis, outcome: Outcome, deltas: list[Delta], changes) -> Problem:
    regressed = outcome == Outcome.REGRESSED
    links = _links(changes, Family.CONVERGENCE)
    return Problem(Symptom.LOSS_WORSE if regressed else Symptom.LOSS_BETTER,
                   FindingSeverity.WARNING if regressed else FindingSeverity.INFO, Family.CONVERGENCE,
                   tuple(_q(d) for d in deltas), side=Side.MODEL if regressed else None,
                   actions=CONVERGENCE_PLAYBOOK if regressed else (), settings=links, evidence=("convergence",),
                   params={"explained": any(x.explains for x in links), "changed": bool(changes)})


def _against_baseline(a: Analysis, changes) -> list[Problem]:
    if a.comparison is None:
        return []
    out = []
    for v in a.comparison.verdicts:
        if v.verdict not in (Outcome.REGRESSED, Outcome.IMPROVED, Outcome.MIXED):
            continue
        outcome = Outcome.REGRESSED if v.verdict in (Outcome.REGRESSED, Outcome.MIXED) else Outcome.IMPROVED
        deltas = [d for d in a.comparison.deltas if d.figure in v.figures]
        if v.family in (Family.THROUGHPUT, Family.EFFICIENCY):
            # one step-time story: the rates move with the step time
            if v.family == Family.THROUGHPUT:
                deltas = [d for d in deltas if d.figure in ("step_time_s", "tokens_per_s")] or deltas
            out.append(_speed(a, v.family, outcome, deltas, changes))
        elif v.family == Family.STABILITY:
            out.append(_stability(a, outcome, deltas, changes))
        else:
            out.append(_convergence(a, outcome, deltas, changes))
    return out


def _ordered_checks(links: tuple[SettingLink, ...]) -> tuple[Action, ...]:
    """EXPLOSION_PLAYBOOK, with the checks a changed setting that can explain it points at first."""
    first: list[Action] = []
    for x in links:
        if not x.explains:
            continue
        k = base_key(x.key)
        g = group(x.key).value
        if k in _OPTIMIZER_STATE_KEYS:
            first.append(A.CHECK_OPTIMIZER_STATE)
        elif g == "optimizer":
            first.append(A.CHECK_LR)
        first.extend(_POINTS_AT.get(g, ()))
    return tuple(dict.fromkeys((*first, *EXPLOSION_PLAYBOOK)))


def _unstable_steps(b: Analysis) -> set[int]:
    """The steps where a run's loss or grad norm spiked, exploded or was NaN/Inf."""
    st = b.stability
    return ({s.step for s in (*st.loss.spikes, *st.grad_norm.spikes)} | {e.step for e in st.explosions}
            | set(st.nan_steps))


def same_step_sample(a: Analysis, step: int) -> bool:
    """A spike / explosion / NaN at ``step`` in the baseline too, with the seed, the data order and the
    global batch unchanged: a fixed bad sample at a fixed step (§5.2)."""
    if a.baseline is None or a.comparison is None:
        return False
    d = a.comparison.settings
    moved = {base_key(c.key) for c in (*d.changed, *d.added, *d.removed)}
    return step in _unstable_steps(a.baseline) and not (moved & SAME_DATA_KEYS)


def _exploded(a: Analysis, changes) -> list[Problem]:
    """The first explosion leads the verdict, with or without a baseline (a NaN/Inf value is one too:
    the NaN problem says it, with the learning rate at that step)."""
    ex = tuple(e for e in a.stability.explosions if not e.nonfinite)
    if not ex:
        return []
    e = next((x for x in ex if x.tag == "loss"), ex[0])
    links = _links(changes, Family.STABILITY)
    sample = same_step_sample(a, e.step)
    actions = (A.CHECK_DATA, *_ordered_checks(links)) if sample else _ordered_checks(links)
    params = {"tag": e.tag, "step": e.step, "end_step": e.end_step, "before": e.before, "value": e.value,
              "ratio": e.ratio, "level": e.level, "recovered_step": e.recovered_step,
              "recovery_values": e.recovery_values, "nonfinite": e.nonfinite,
              "gap_steps": e.recovered_step - e.end_step if e.recovered_step is not None else None,
              "log_ends": logged_after(a, e.tag, e.end_step) == 0,
              "count": len(ex), "lr_share": _lr_at(a, e.step), "lr_basis": _lr_basis(a, e.step), "same_step_sample": sample,
              "explained": any(x.explains for x in links), "changed": bool(changes)}
    return [Problem(Symptom.EXPLODED, FindingSeverity.CRITICAL, Family.STABILITY, (), side=Side.DATA if sample else Side.MODEL,
                    actions=tuple(dict.fromkeys(actions)), settings=links, evidence=("stability", "convergence"),
                    params=params)]


def _leading(a: Analysis, changes) -> list[Problem]:
    """An explosion, else a divergence (a loss spike that never recovered), leads the verdict, with
    or without a baseline."""
    exploded = _exploded(a, changes)
    if exploded or _finding(a, FindingKind.DIVERGENCE) is None:
        return exploded
    st = a.stability
    s = st.loss.spikes[-1]
    links = _links(changes, Family.STABILITY)
    return [Problem(Symptom.DIVERGED, FindingSeverity.CRITICAL, Family.STABILITY,
                    (Quantity("loss_spikes", float(len(st.loss.spikes))),), side=Side.MODEL,
                    actions=_ordered_checks(links), settings=links, evidence=("stability",),
                    params={"step": s.step, "lr_share": _lr_at(a, s.step), "lr_basis": _lr_basis(a, s.step), "same_step_sample": same_step_sample(a, s.step),
                            "explained": any(x.explains for x in links), "changed": bool(changes)})]


def _finding(a: Analysis, kind: FindingKind):
    return next((f for f in a.findings if f.kind == kind), None)


def _in_run(a: Analysis, covered: set[Family], data_bound: bool = False) -> list[Problem]:
    """What stands out in the run itself (all of it without a baseline; with one, what the
    families against it do not already say). ``data_bound``: a slower run already points at the
    data, with the same playbook: its stalls are said there."""
    out: list[Problem] = []
    W, I, E, C = FindingSeverity.WARNING, FindingSeverity.INFO, FindingSeverity.ERROR, FindingSeverity.CRITICAL
    for p in a.plausibility:
        family = Family.EFFICIENCY if "mfu" in p.figures else Family.THROUGHPUT
        out.append(Problem(Symptom.IMPLAUSIBLE, E, family, (Quantity(p.figures[0], p.value), Quantity(p.against, p.against_value)),
                           side=Side.INPUTS, actions=(A.CHECK_INPUTS,), evidence=("mfu" if family == Family.EFFICIENCY else "throughput",),
                           params={"check": p.check}))
    st = a.stability
    if Family.STABILITY not in covered:
        if st.nan_steps:
            out.append(Problem(Symptom.NAN, C, Family.STABILITY, (Quantity("nan_steps", float(len(st.nan_steps))),),
                               side=Side.DATA, actions=(A.CHECK_DATA, A.CHECK_LR, A.CHECK_LOSS_SCALE, A.CHECK_PRECISION),
                               evidence=("stability",), params={"step": st.nan_steps[0], "lr_share": _lr_at(a, st.nan_steps[0]), "lr_basis": _lr_basis(a, st.nan_steps[0]),
                                                                "same_step_sample": same_step_sample(a, st.nan_steps[0])}))
        finite_explosions = any(not e.nonfinite for e in st.explosions)
        if _finding(a, FindingKind.DIVERGENCE) is not None:
            pass  # it leads the verdict (_leading)
        elif (st.loss.spikes or st.grad_norm.spikes) and a.comparison is None and not finite_explosions:
            spikes = [*st.loss.spikes, *st.grad_norm.spikes]
            top = max(spikes, key=lambda s: s.height)  # "largest": the relative excursion, as in the findings
            slow = any(s.recovery != "fast" and not at_log_end(a, s_tag, s)
                       for s_tag, series in (("loss", st.loss.spikes), ("grad_norm", st.grad_norm.spikes)) for s in series)
            out.append(Problem(Symptom.SPIKES, W if slow else I, Family.STABILITY,
                               (Quantity("loss_spikes", float(len(st.loss.spikes))),
                                Quantity("grad_norm_spikes", float(len(st.grad_norm.spikes)))),
                               side=Side.MODEL, actions=STABILITY_PLAYBOOK, evidence=("stability",),
                               params={"step": top.step, "lr_share": _lr_at(a, top.step), "lr_basis": _lr_basis(a, top.step), "slow": slow,
                                       "same_step_sample": same_step_sample(a, top.step)}))
    tri = a.triage
    if tri.verdict != Verdict.UNKNOWN and Family.THROUGHPUT not in covered:
        cause, _ = _cause(a)
        strong = (cause is not None and cause.current is not None and cause.threshold is not None
                  and cause.current >= max(th.DATA_STRONG, cause.threshold) if tri.verdict == Verdict.DATA
                  else tri.verdict in (Verdict.COMMUNICATION, Verdict.MEMORY))
        out.append(Problem(Symptom.BOTTLENECK, W if strong else I, Family.THROUGHPUT, (cause,) if cause else (),
                           cause=cause, side=SIDES.get(tri.verdict), bottleneck=tri.verdict, actions=tri.actions,
                           evidence=("profile", "throughput")))
    stalls = _finding(a, FindingKind.DATA_STALLS)
    if stalls is not None and stalls.severity == W and not data_bound:
        out.append(Problem(Symptom.DATA_STALLS, W, Family.THROUGHPUT, (Quantity("stall_share", stalls.params.get("share")),),
                           side=Side.DATA, bottleneck=Verdict.DATA, actions=PLAYBOOK[Verdict.DATA],
                           evidence=("throughput", "phases"), params={"count": stalls.params.get("count"),
                                                                      "lost_s": stalls.params.get("lost_s")}))
    tax = _finding(a, FindingKind.CHECKPOINT_TAX)
    if tax is not None and Family.EFFICIENCY not in covered:
        out.append(Problem(Symptom.CHECKPOINT_TAX, W, Family.EFFICIENCY,
                           (Quantity("checkpoint_tax", tax.params.get("checkpoint_tax"), threshold=tax.params.get("threshold")),),
                           side=Side.ENVIRONMENT, actions=(A.CHECKPOINT_INTERVAL,), evidence=("checkpoints",)))
    if a.ranks.slow_ranks:
        stage = any(g.kind == "stage" for g in a.ranks.groups)  # scale: a slow stage is balanced, not a host looked at
        out.append(Problem(Symptom.SLOW_RANKS, W, Family.THROUGHPUT, (), side=Side.MODEL if stage else Side.ENVIRONMENT,
                           actions=(A.STAGE_BALANCE, A.CHECK_STRAGGLER) if stage else (A.CHECK_STRAGGLER,),
                           evidence=("phases",), params={"ranks": list(a.ranks.slow_ranks),
                                                         "groups": group_params(a.ranks)}))  # scale: rank groups
    links = a.profile.links if a.profile else None
    if links is not None and links.slow:  # beside slow ranks: a link its peers outrun (analysis/links.py)
        out.append(Problem(Symptom.SLOW_LINKS, W, Family.THROUGHPUT, (), side=Side.ENVIRONMENT,
                           bottleneck=Verdict.COMMUNICATION, actions=(A.CHECK_LINK, A.COMM_TOPOLOGY), evidence=("profile",),
                           params={"links": [link_params(x) for x in links.slow], "of": len(links.links)}))
    errors = _finding(a, FindingKind.LOG_ERRORS)
    restarts = _finding(a, FindingKind.RESTARTS)
    if errors is not None or restarts is not None:
        params = {"errors": errors.params.get("count") if errors else 0,
                  "error_step": errors.params.get("first_step") if errors else None,
                  "restarts": restarts.params.get("count") if restarts else 0,
                  "restart_step": restarts.params.get("first_step") if restarts else None}
        out.append(Problem(Symptom.ERRORS, W if errors else I, None, (), side=Side.ENVIRONMENT,
                           evidence=("findings", "data-quality"), params=params))
    if a.convergence.status == "not_converged" and Family.CONVERGENCE not in covered and a.comparison is None:
        out.append(Problem(Symptom.NOT_CONVERGED, I, Family.CONVERGENCE, (Quantity("final_smoothed_loss",
                           a.convergence.final_smoothed_loss.value),), side=Side.MODEL, evidence=("convergence",),
                           params={"code": a.convergence.status_code}))
    return out


def diagnose(a: Analysis) -> Diagnosis:
    changes = _changes(a)
    families = _against_baseline(a, changes)
    covered = {p.family for p in families if p.family is not None}
    stalls = _finding(a, FindingKind.DATA_STALLS)
    data_bound = False
    for i, p in enumerate(families):
        if p.symptom == Symptom.SLOWER and p.bottleneck == Verdict.DATA and stalls is not None:
            families[i] = replace(p, params={**p.params, "stalls": stalls.params.get("count"), "lost_s": stalls.params.get("lost_s")})
            data_bound = True
    problems = _leading(a, changes) + families + _in_run(a, covered, data_bound)
    # stable: the families keep their order within a severity
    problems.sort(key=lambda p: _ORDER[p.severity])
    return Diagnosis(tuple(problems[:MAX_PROBLEMS]), a.comparison.baseline_id if a.comparison else None, changes)


__all__ = ["diagnose", "PLAYBOOK", "base_key"]
