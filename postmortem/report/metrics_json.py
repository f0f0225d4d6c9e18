"""metrics.json: the public, versioned contract for automation.

Fractions 0-1, times in seconds, unknown = null (never NaN/Inf). Keys sorted by json.dumps at
write time; lists keep analysis order (which is deterministic).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.types import BESIDE, PARTITION, Analysis, Figure, Profile, ProfileBreakdown, Ranks, SpikeSeries, Triage
from ..analysis.window import excluded_ranges

SCHEMA_VERSION = "1.1"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "metrics.schema.json"


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
    return [{"step": p.step, "height": _num(p.height), "score": _num(p.score), "recovery": str(p.recovery)}
            for p in s.spikes]


def _source(f: Figure) -> str | None:
    """How a figure was obtained, or why it is missing."""
    return (f"{f.method} [{f.source}]" if f.source and f.method else f.method or f.source) if f.known else f.reason


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
    return {"slow": list(r.slow_ranks), "spread": _num(r.spread), "rule": r.rule, "reason": r.reason,
            "stats": stats, "stragglers": None if g is None else {
        "awaited": list(g.awaited), "waiting": list(g.waiting), "awaited_wait_share": _num(g.awaited_wait_share),
        "waiting_wait_share": _num(g.waiting_wait_share), "waiting_receive_share": _num(g.waiting_receive_share),
        "cause": g.cause, "cause_share": _num(g.cause_share)}}


def to_metrics(a: Analysis) -> dict:
    tp, m, cv = a.throughput, a.mfu, a.convergence
    first, last, count = a.step_range if a.step_range else (None, None, 0)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run": {"id": a.run_id, "experiment": a.experiment,
                "steps": {"first": first, "last": last, "count": count}},
        "model": {"params": _int(m.model.params.value), "params_total": _int(m.model.params_total.value),
                  "params_method": m.model.params.method or m.model.params.reason},
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
                       "excluded_ranges": len(excluded_ranges(tp.window.excluded))},
            "excluded": [{"step": s, "reason": r} for s, r in tp.window.excluded.iter_rows()],
            "global_batch_size": _int(tp.global_batch_size.value), "seq_length": _int(tp.seq_length.value),
            "tokens_per_step": _fig(tp.tokens_per_step),
            "sources": {"global_batch_size": _source(tp.global_batch_size), "seq_length": _source(tp.seq_length),
                        "tokens_per_step": _source(tp.tokens_per_step)},
        },
        "mfu": {"value": _fig(m.mfu), "value_causal": _fig(m.mfu_causal), "flops_per_token": _fig(m.flops_per_token),
                "peak_flops": _fig(m.peak_flops), "devices": _int(m.devices.value),
                "achieved_tflops_per_device": _fig(m.achieved_tflops_per_device),
                "reason": m.mfu.reason, "logged": {k: _fig(f) for k, f in sorted(m.logged.items())}},
        "convergence": {"step": _int(cv.convergence_step.value), "tokens": _fig(cv.convergence_tokens),
                        "hours": _fig(cv.convergence_hours), "smoothed_final_loss": _fig(cv.final_smoothed_loss),
                        "final_loss_method": _source(cv.final_smoothed_loss), "final_loss_se": _fig(cv.final_loss_se),
                        "status": cv.status, "status_code": cv.status_code,
                        "status_reason": cv.convergence_step.reason,
                        "smoothing": {"window_steps": a.options.smoothing_window,
                                      "left_out": {k: list(v) for k, v in sorted(cv.left_out.items())}},
                        "targets": [{"target": _num(t.target), "source": t.target_source, "step": _int(t.step.value),
                                     "tokens": _fig(t.tokens), "hours": _fig(t.hours)} for t in cv.targets]},
        "stability": {"nan_steps": list(a.stability.nan_steps),
                      "loss_spikes": _spikes(a.stability.loss),
                      "grad_norm_spikes": _spikes(a.stability.grad_norm),
                      "overflow_steps": list(a.stability.overflow_steps)},
        "phases": [{"name": p.name, "start_step": p.start_step, "end_step": p.end_step,
                    "step_time_median_s": _num(p.step_time_median_s), "tokens_per_s": _num(p.tokens_per_s),
                    "max_allocated_bytes": _num(p.max_allocated_bytes), "data_wait_share": _num(p.data_wait_share),
                    "comm_share": _num(p.comm_share), "events": dict(sorted(p.events.items()))}
                   for p in a.phases.phases],
        "checkpoints": [{"step": c.step, "path": c.path, "bytes": c.bytes, "save_s": _num(c.save_s)}
                        for c in a.phases.checkpoint_saves],
        "checkpoint_tax": _fig(a.phases.checkpoint_tax),
        "profile": _profile(a.profile),
        "triage": _triage(a.triage),
        "ranks": _ranks(a.ranks),
        "plausibility": [{"check": p.check, "figures": list(p.figures), "value": _num(p.value), "against": p.against,
                          "against_value": _num(p.against_value), "rule": p.rule} for p in a.plausibility],
        "config_checks": [{"name": c.name, "status": str(c.status), "message": c.message} for c in a.config_checks],
        "findings": [{"kind": str(f.kind), "severity": str(f.severity), "message": f.message,
                      "evidence": _clean(f.evidence)} for f in a.findings],
        "data_quality": [d.to_dict() for d in a.diagnostics],
    }
    if a.comparison is not None:
        c = a.comparison
        out["baseline"] = {
            "run": {"id": c.baseline_id},
            "deltas": {d.figure: {"baseline": _num(d.baseline), "current": _num(d.current), "delta": _num(d.delta),
                                  "rel": _num(d.rel), "significant": d.significant, "alignment": d.alignment}
                       for d in c.deltas},
            "verdicts": {v.family: v.verdict for v in c.verdicts},
            "unjudged": {v.family: list(v.unjudged) for v in c.verdicts},
            "settings_changed": sorted(ch.key for ch in (*c.settings.added, *c.settings.removed, *c.settings.changed)),
        }
    return _clean(out)


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def dumps(metrics: dict) -> str:
    """Deterministic JSON text (sorted keys, no NaN allowed)."""
    return json.dumps(metrics, sort_keys=True, indent=2, allow_nan=False) + "\n"
