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

from .types import Analysis, Figure, SpikeSeries
from .window import excluded_ranges

SCHEMA_VERSION = "1.0"
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
                       "gap_share": _fig(tp.gap_share)},
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
        "triage": {"verdict": a.phases.triage.verdict, "reason": a.phases.triage.reason},
        "ranks": {"slow": list(a.ranks.slow_ranks), "spread": _num(a.ranks.spread), "rule": a.ranks.rule,
                  "reason": a.ranks.reason,
                  "stats": [{"rank": r.rank, "steps": r.steps, "median_step_time_s": _num(r.median_step_time_s),
                             "others_median_s": _num(r.others_median_s), "in_step_median_s": _num(r.in_step_median_s),
                             "excess": _num(r.excess), "slow": r.slow} for r in a.ranks.ranks]},
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
