"""metrics.json: the public, versioned contract for automation, built here and only here.

``to_metrics`` makes the whole document (the build's own keys too: when the run started and
finished, when and by what it was built), ``dumps`` writes it; the pipeline and the tests use
both. Fractions 0-1, times in seconds, unknown = null (never NaN/Inf). Keys sorted at write
time; lists keep analysis order (which is deterministic). Texts keep their stable keys and
parameters, with an English rendering (``message``) for people reading the JSON.

1.2 adds `diagnosis` (the verdict-first block as data), `identity` (the run's settings, grouped,
and the versions looked for), `run.started_at` / `run.finished_at`, `generated_at`, `generator`,
the parameters of every finding and diagnostic (`evidence` / `params`, `variant`), config checks'
`check` codes and parameters, deltas' `alignment_code` / `aligned_tokens`, `baseline.settings`
(the diff in explaining order, with each setting's group), `mfu.reason_text` and
`convergence.status_reason_text` (the keys and parameters behind the English reasons).

1.5 adds `failure` (report/failure_json.py): how a failed run died (kind, error code, exception,
first failing rank, where, last step and loss, the quoted line, evidence per rank, the checkpoint
to resume from and the steps lost); null for a run that did not fail.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.types import (
    BESIDE,
    PARTITION,
    Analysis,
    ConfigCheck,
    Diagnosis,
    Figure,
    Identity,
    Profile,
    ProfileBreakdown,
    Ranks,
    SlowLinks,
    SpikeSeries,
    Triage,
)
from ..analysis.history import MIN_RUNS
from ..analysis.identity import explaining_order, group
from ..analysis.ranks import group_params
from ..analysis.window import excluded_ranges
from ..archive import diagnostic_dict
from ..text import Text, jsonable
from ..words import english
from .failure_json import failure_block
from .messages import alignment, finding_text
from .sections.domains import metrics_block as domains_block
from .verdict import problem_text

SCHEMA_VERSION = "1.5"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "metrics.schema.json"


def config_check(c: ConfigCheck) -> dict[str, Any]:
    """One configuration check as data: metrics.json's config_checks and ``postmortem check --json``."""
    return {"name": english(Text(f"check.{c.name}")), "check": str(c.name), "status": str(c.status),
            "message": english(c.detail), "params": jsonable(c.detail.params),
            "fix": english(c.fix) if c.fix is not None else None, "evidence": jsonable(c.evidence)}


def _checkpoints(ph: Any) -> list[dict]:
    """Every checkpoint file read (1.3), saves marked: ``save`` is true for a training save at a
    known step (``save_s`` on the file the checkpoint tax timed for that step); a save event whose
    file is gone (keep_checkpoint_max) is listed with its path and no size; test, golden and
    exported checkpoints (no step) are listed with ``save`` false."""
    timed = {s.path: s for s in ph.checkpoint_saves}
    out = [{"step": f.step, "path": f.path, "rank": f.rank, "bytes": f.bytes, "params": f.params, "kind": f.kind,
            "save": f.save, "save_s": _num(timed[f.path].save_s) if f.save and f.path in timed else None}
           for f in ph.checkpoint_files]
    files = {f.path for f in ph.checkpoint_files}
    out += [{"step": s.step, "path": s.path, "rank": None, "bytes": s.bytes, "params": None, "kind": None,
             "save": True, "save_s": _num(s.save_s)} for s in ph.checkpoint_saves if s.path not in files]
    return sorted(out, key=lambda c: (c["step"] is None, c["step"] or 0, c["path"] or ""))


def _num(x: Any) -> float | int | None:
    if x is None:
        return None
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    x = float(x)
    return x if math.isfinite(x) else None


def _fig(f: Figure) -> float | None:
    return _num(f.value)


def _int(x: Any) -> int | None:
    v = _num(x)
    return int(v) if v is not None else None


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        return _num(float(x))
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, str) or x is None:
        return x
    return str(x)


def _spikes(s: SpikeSeries) -> list[dict]:
    return [{"step": p.step, "height": _num(p.height), "score": _num(p.score), "recovery": str(p.recovery),
             "recovery_steps": p.recovery_steps, "recovery_values": p.recovery_values} for p in s.spikes]


def _en(t: Text | None) -> str | None:
    return english(t) if t is not None else None


def _text(t: Text | None) -> dict | None:
    """A text's key and parameters, for programs that word it themselves."""
    return jsonable(t) if t is not None else None


def _source(f: Figure) -> str | None:
    """How a figure was obtained, or why it is missing (in English)."""
    if not f.known:
        return _en(f.reason)
    method, source = _en(f.method), _en(f.source)
    return f"{method} [{source}]" if method and source else method or source


def _breakdown(b: ProfileBreakdown) -> dict:
    return {"source": b.source, "ranks": b.ranks, "steps": b.steps, "excluded_steps": b.excluded,
            "step_time_s": _num(b.step_time_s), "total_basis": str(b.total_basis),
            "breakdown": {f"{p}_s": _num(b.seconds[p]) for p in (*PARTITION, *BESIDE)},
            "shares": {p: _num(b.shares[p]) for p in (*PARTITION, *BESIDE)},
            "comm_share": _num(b.comm_share), "comm_flag": b.comm_flag}


def _ops(stats) -> list[dict]:
    return [{"name": o.name, "type": o.type, "core": o.core, "total_s": _num(o.total_s), "share": _num(o.share),
             "calls": o.calls, "communication": o.communication} for o in stats]


def _profile(p: Profile | None) -> dict | None:
    """The profiler's figures; null without profiler data."""
    if p is None:
        return None
    b = p.breakdown
    out: dict[str, Any] = {
        **(_breakdown(b) if b else {"source": None, "ranks": 0, "steps": 0, "excluded_steps": 0, "step_time_s": None,
                                    "total_basis": None, "breakdown": None, "shares": None, "comm_share": None,
                                    "comm_flag": False}),
        "outliers": [{"rank": o.rank, "step": o.step, "total_s": _num(o.total_s), "median_s": _num(o.median_s),
                      "part": o.part, "part_s": _num(o.part_s)} for o in p.outliers],
        "alternatives": [_breakdown(x) for x in p.alternatives],
    }
    first = p.operators[0] if p.operators else None
    out["top_ops"] = _ops(first.by_name or first.by_type) if first else []
    out["operators"] = [{"scope": str(o.scope), "source": o.source, "ranks": o.ranks, "total_s": _num(o.total_s),
                         "types": o.types, "names": o.names, "comm_share": _num(o.comm_share),
                         "by_type": _ops(o.by_type), "by_name": _ops(o.by_name)} for o in p.operators]
    c = p.communication
    out["comm_ops"] = [{"name": o.type, "kind": o.kind, "total_s": _num(o.total_s), "share": _num(o.share),
                        "calls": o.calls, "wait_s": _num(o.wait_s), "transit_s": _num(o.transit_s)}
                       for o in (c.ops if c else ())]
    out["comm_share_basis"] = c.share_basis if c else None
    out["comm_links"] = [{"transport": x.transport, "bytes": _num(x.bytes), "transit_s": _num(x.transit_s),
                          "bandwidth_gbps": _num(x.bandwidth_gbps)} for x in (c.links if c else ())]
    out["slow_links"] = _links(p.links)
    out["domains"] = domains_block(p.domains)  # 1.5: communication by parallel domain (report/sections/domains.py)
    d = p.data
    out["data_pipeline"] = None if d is None else {
        "rank": d.rank, "queue_empty_share": _num(d.queue_empty_share), "queue_samples": d.queue_samples,
        "queue_stage": d.queue_stage, "slowest": d.slowest, "slowest_rule": str(d.slowest_rule) if d.slowest_rule else None,
        "stages": [{"stage": x.stage, "op_type": x.op_type, "workers": x.workers, "queue_usage": _num(x.queue_usage),
                    "queue_empty_share": _num(x.queue_empty_share), "time_s": _num(x.time_s),
                    "parent_stage": x.parent_stage} for x in d.stages]}
    m = p.memory
    out["memory"] = None if m is None else {
        "rank": m.rank, "component": m.component, "peak_bytes": _num(m.peak_bytes), "reserved_bytes": _num(m.reserved_bytes),
        "capacity_bytes": _num(m.capacity_bytes), "peak_share": _num(m.peak_share),
        "parameters_bytes": _num(m.parameters_bytes), "gradients_bytes": _num(m.gradients_bytes),
        "optimizer_bytes": _num(m.optimizer_bytes), "activations_bytes": _num(m.activations_bytes),
        "checkpoint": m.checkpoint, "gap": str(m.gap) if m.gap else None}
    out["tool"] = dict(sorted(p.tool.items()))
    return out


def _links(s: SlowLinks | None) -> dict | None:
    """Per-link bandwidth against its peers (analysis/links.py); null without transfer records."""
    if s is None:
        return None
    return {"unit": str(s.unit) if s.unit else None, "source": s.source, "measured": s.measured, "small": s.small,
            "gap": str(s.gap) if s.gap else None, "rule": _en(s.rule), "reason": _en(s.reason), "reason_text": _text(s.reason),
            "slow": len(s.slow),
            "links": [{"src_rank": x.src_rank, "dst_rank": x.dst_rank, "group": x.group, "transport": x.transport,
                       "bytes": _num(x.bytes), "transit_s": _num(x.transit_s), "transfers": x.transfers,
                       "bandwidth_gbps": _num(x.bandwidth_gbps), "reference_gbps": _num(x.reference_gbps), "peers": x.peers,
                       "ratio": _num(x.ratio), "slow": x.slow} for x in s.links]}


def _triage(t: Triage) -> dict:
    return {"verdict": str(t.verdict), "reason": str(t.reason), "params": _clean(t.params),
            "actions": [str(x) for x in t.actions],
            "evidence": [{"key": e.key, "value": _num(e.value), "baseline": _num(e.baseline),
                          "threshold": _num(e.threshold)} for e in t.evidence],
            "also": [{"verdict": str(s.verdict), "reason": str(s.reason), "params": _clean(s.params)} for s in t.also]}


def _ranks(r: Ranks) -> dict:
    """Per rank: the step-time figures (where the rank logged step times) and the profiler's."""
    step = {x.rank: x for x in r.ranks}
    prof = {x.rank: x for x in r.profile}
    stats = []
    for rank in sorted(step.keys() | prof.keys()):
        s, p = step.get(rank), prof.get(rank)
        stats.append({
            "rank": rank, "steps": s.steps if s else None, "median_step_time_s": _num(s.median_step_time_s) if s else None,
            "others_median_s": _num(s.others_median_s) if s else None,
            "in_step_median_s": _num(s.in_step_median_s) if s else None,
            "excess": _num(s.excess) if s else None, "slow": s.slow if s else False,
            "profile": None if p is None else {
                "steps": p.steps, "source": p.source, "step_time_s": _num(p.step_time_s), "compute_s": _num(p.compute_s),
                "comm_exposed_s": _num(p.comm_exposed_s), "bubble_s": _num(p.bubble_s),
                "data_wait_s": _num(p.data_wait_s), "idle_s": _num(p.idle_s), "wait_share": _num(p.wait_share),
                "compute_share": _num(p.compute_share), "receive_share": _num(p.receive_share),
                "role": str(p.role) or None, "outlier_steps": list(p.outlier_steps), "tool": dict(sorted(p.tool.items()))},
        })
    g = r.stragglers
    return {"slow": list(r.slow_ranks), "spread": _num(r.spread), "rule": _en(r.rule), "reason": _en(r.reason),
            "stats": stats, "groups": _clean(group_params(r)), "basis": r.basis, "node_size": r.node_size,
            "node_source": r.node_source, "stragglers": None if g is None else {
        "awaited": list(g.awaited), "waiting": list(g.waiting), "awaited_wait_share": _num(g.awaited_wait_share),
        "waiting_wait_share": _num(g.waiting_wait_share), "waiting_receive_share": _num(g.waiting_receive_share),
        "cause": g.cause, "cause_share": _num(g.cause_share)}}


def _identity(i: Identity) -> dict:
    return {"settings": [{"key": s.key, "value": jsonable(s.value), "source": s.source, "group": str(s.group)}
                         for s in i.settings],
            "versions": dict(i.versions)}


def _diagnosis(d: Diagnosis) -> dict:
    def q(x):
        return None if x is None else {"key": x.key, "current": _num(x.current), "baseline": _num(x.baseline),
                                       "threshold": _num(x.threshold)}

    return {"baseline_id": d.baseline_id,
            "changed": [{"key": c.key, "baseline": jsonable(c.baseline), "current": jsonable(c.current)} for c in d.changed],
            "problems": [{"symptom": str(p.symptom), "severity": str(p.severity), "family": str(p.family) if p.family else None,
                          "message": english(problem_text(p, d.baseline_id)),
                          "quantities": [q(x) for x in p.quantities], "cause": q(p.cause),
                          "side": str(p.side) if p.side else None,
                          "bottleneck": str(p.bottleneck) if p.bottleneck else None,
                          "actions": [str(x) for x in p.actions],
                          "settings": [{"key": s.key, "baseline": jsonable(s.baseline), "current": jsonable(s.current),
                                        "explains": s.explains} for s in p.settings],
                          "evidence": list(p.evidence), "params": jsonable(p.params)} for p in d.problems]}


def _history(h: Any) -> dict | None:
    """1.5: each headline figure against its experiment's normal range (analysis/history.py)."""
    if h is None:
        return None
    return {"experiment": h.experiment, "wanted": h.wanted, "considered": h.considered, "min_runs": MIN_RUNS,
            "rule": _en(h.rule),
            "figures": {f.figure: {"family": str(f.family), "better": str(f.better), "value": _num(f.value),
                                   "low": _num(f.low), "high": _num(f.high), "median": _num(f.median), "mad": _num(f.mad),
                                   "runs": list(f.runs), "values": [_num(v) for v in f.values], "unusual": f.unusual,
                                   "direction": f.direction, "worse": f.worse, "trend": f.trend,
                                   "slope_per_run": _num(f.slope), "aligned_tokens": _num(f.aligned_tokens),
                                   "reason": _en(f.reason), "reason_text": _text(f.reason),
                                   "kept_apart": [{"run": r, "settings": list(k)} for r, k in f.apart]}
                        for f in h.figures}}

def _health(h: Any) -> dict | None:
    """MindFormers' health records (analysis/health.py); None where the run left none."""
    if h is None:
        return None

    def save(s) -> dict:
        return {"position": s.position, "ckpt_name": s.ckpt_name, "is_health": s.is_health, "healthy": s.healthy,
                "step": s.step, "epoch": s.epoch, "step_in_epoch": s.step_in_epoch, "on_disk": s.on_disk}

    e = h.embedding
    return {
        "record": h.record,
        "saves": [save(s) for s in h.saves],
        "resume": save(h.resume) if h.resume is not None else None,
        "embedding_norm": None if e is None else {
            "tag": e.tag, "threshold": _num(e.threshold), "threshold_source": e.threshold_source,
            "first_step_over": e.first_over, "steps_over": e.over, "steps": e.steps, "peak": _num(e.peak),
            "peak_step": e.peak_step, "judged": e.judged},
        "expert_load": [{"layer": x.layer, "experts": x.experts, "step": x.step, "busiest": x.busiest,
                         "busiest_share": _num(x.busiest_share), "max_over_mean": _num(x.max_over_mean)} for x in h.expert_load],
        "drop_rate": [{"layer": d.layer, "first_step": d.first_step, "peak": _num(d.peak), "peak_step": d.peak_step,
                       "steps_dropping": d.steps_dropping, "steps": d.steps} for d in h.drops],
    }


def to_metrics(a: Analysis, *, started_at: str | None = None, finished_at: str | None = None,
               generated_at: str | None = None, generator: str | None = None, baseline_id: str | None = None) -> dict:
    """The whole document. ``started_at``/``finished_at``: the run's first and last wall time (ISO,
    UTC); ``generated_at``/``generator``: when and by what it was built; ``baseline_id``: the
    baseline's id in the archive (else the comparison's own)."""
    tp, m, cv = a.throughput, a.mfu, a.convergence
    first, last, count = a.step_range if a.step_range else (None, None, 0)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": generated_at,
        "generator": generator,
        "run": {"id": a.run_id, "experiment": a.experiment, "started_at": started_at, "finished_at": finished_at,
                "steps": {"first": first, "last": last, "count": count}},
        "model": {"params": _int(m.model.params.value), "params_total": _int(m.model.params_total.value),
                  "params_method": _en(m.model.params.method or m.model.params.reason)},
        "throughput": {
            "steady": {"tokens_per_s": _fig(tp.tokens_per_s), "samples_per_s": _fig(tp.samples_per_s),
                       "step_time_s": _fig(tp.step_time_s), "steps_per_s": _fig(tp.steps_per_s),
                       "step_time_p90_s": _num(tp.step_time.p90) if tp.step_time else None,
                       "step_time_ci95_s": [_num(tp.step_time.median_ci_low), _num(tp.step_time.median_ci_high)]
                       if tp.step_time else None,
                       "timing": tp.timing, "in_step_time_s": _fig(tp.in_step_time_s),
                       "gap_share": _fig(tp.gap_share),
                       # data / host wait over the steady window: the gap between steps, or a logged
                       # data time where larger (what triage reads)
                       "data_wait_share": _num(a.phases.data_wait_share)},
            "window": {"start_step": tp.window.start_step, "end_step": tp.window.end_step,
                       "steps": tp.window.steps_kept, "excluded_steps": tp.window.excluded.height,
                       "excluded_ranges": len(excluded_ranges(tp.window.excluded)),
                       "basis": tp.window.basis, "rests_on": list(tp.window.used_steps),
                       "caveat": _en(tp.window.caveat), "caveat_text": _text(tp.window.caveat)},
            "excluded": [{"step": s, "reason": r} for s, r in tp.window.excluded.iter_rows()],
            "global_batch_size": _int(tp.global_batch_size.value), "seq_length": _int(tp.seq_length.value),
            "tokens_per_step": _fig(tp.tokens_per_step),
            "sources": {"global_batch_size": _source(tp.global_batch_size), "seq_length": _source(tp.seq_length),
                        "tokens_per_step": _source(tp.tokens_per_step)},
        },
        "mfu": {"value": _fig(m.mfu), "value_causal": _fig(m.mfu_causal), "flops_per_token": _fig(m.flops_per_token),
                "peak_flops": _fig(m.peak_flops), "devices": _int(m.devices.value),
                "achieved_tflops_per_device": _fig(m.achieved_tflops_per_device),
                "reason": _en(m.mfu.reason), "reason_text": _text(m.mfu.reason),
                "logged": {k: _fig(f) for k, f in sorted(m.logged.items())}},
        "convergence": {"step": _int(cv.convergence_step.value), "tokens": _fig(cv.convergence_tokens),
                        "hours": _fig(cv.convergence_hours), "smoothed_final_loss": _fig(cv.final_smoothed_loss),
                        "final_loss_method": _source(cv.final_smoothed_loss), "final_loss_se": _fig(cv.final_loss_se),
                        "status": cv.status, "status_code": cv.status_code,
                        "status_reason": _en(cv.convergence_step.reason),
                        "status_reason_text": _text(cv.convergence_step.reason),
                        "smoothing": {"window_steps": a.options.smoothing_window,
                                      "left_out": {k: list(v) for k, v in sorted(cv.left_out.items())}},
                        "targets": [{"target": _num(t.target), "source": t.target_source, "step": _int(t.step.value),
                                     "tokens": _fig(t.tokens), "hours": _fig(t.hours)} for t in cv.targets]},
        "stability": {"nan_steps": list(a.stability.nan_steps),
                      "loss_spikes": _spikes(a.stability.loss),
                      "grad_norm_spikes": _spikes(a.stability.grad_norm),
                      "overflow_steps": list(a.stability.overflow_steps),
                      "skip_steps": list(a.stability.skip_steps),
                      "explosions": [{"tag": e.tag, "step": e.step, "end_step": e.end_step, "before": _num(e.before),
                                      "value": _num(e.value), "level": _num(e.level), "ratio": _num(e.ratio),
                                      "recovered_step": e.recovered_step, "recovery_values": e.recovery_values,
                                      "nonfinite": e.nonfinite} for e in a.stability.explosions]},
        "phases": [{"name": p.name, "start_step": p.start_step, "end_step": p.end_step,
                    "step_time_median_s": _num(p.step_time_median_s), "tokens_per_s": _num(p.tokens_per_s),
                    "max_allocated_bytes": _num(p.max_allocated_bytes), "data_wait_share": _num(p.data_wait_share),
                    "comm_share": _num(p.comm_share), "events": dict(sorted(p.events.items()))}
                   for p in a.phases.phases],
        "checkpoints": _checkpoints(a.phases),
        "checkpoint_tax": _fig(a.phases.checkpoint_tax),
        "profile": _profile(a.profile),
        "triage": _triage(a.triage),
        "ranks": _ranks(a.ranks),
        "plausibility": [{"check": p.check, "figures": list(p.figures), "value": _num(p.value), "against": p.against,
                          "against_value": _num(p.against_value), "rule": _en(p.rule)} for p in a.plausibility],
        "config_checks": [config_check(c) for c in a.config_checks],
        "findings": [{"kind": str(f.kind), "severity": str(f.severity), "variant": f.variant or None,
                      "message": english(finding_text(f)), "evidence": jsonable(f.params)} for f in a.findings],
        "data_quality": [diagnostic_dict(d) for d in a.diagnostics],
        "identity": _identity(a.identity),
        "diagnosis": _diagnosis(a.diagnosis),
        "history": _history(a.history),  # 1.5

        "health": _health(a.health),

        "failure": failure_block(a.failure),
    }
    if a.comparison is not None:
        c = a.comparison
        diff = [(kind, ch) for kind, changes in (("changed", c.settings.changed), ("added", c.settings.added),
                                                 ("removed", c.settings.removed)) for ch in changes]
        diff.sort(key=lambda kc: explaining_order(kc[1].key))
        out["baseline"] = {
            "run": {"id": baseline_id or c.baseline_id},
            "deltas": {d.figure: {"baseline": _num(d.baseline), "current": _num(d.current), "delta": _num(d.delta),
                                  "rel": _num(d.rel), "significant": d.significant, "alignment": english(alignment(d)),
                                  "alignment_code": str(d.alignment), "aligned_tokens": _num(d.aligned_tokens),
                                  "family": str(d.family), "better": str(d.better)}
                       for d in c.deltas},
            "verdicts": {str(v.family): str(v.verdict) for v in c.verdicts},
            "unjudged": {str(v.family): list(v.unjudged) for v in c.verdicts},
            "settings_changed": sorted(ch.key for ch in (*c.settings.added, *c.settings.removed, *c.settings.changed)),
            "settings": [{"key": ch.key, "change": kind, "group": str(group(ch.key)), "baseline": jsonable(ch.baseline),
                          "current": jsonable(ch.current)} for kind, ch in diff],
        }
    return _clean(out)


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def dumps(metrics: dict) -> str:
    """The file's text: deterministic (sorted keys, no NaN allowed), UTF-8 names kept as written."""
    return json.dumps(metrics, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
