"""Typed findings from the analysis results: what a reader should look at first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from .types import CheckStatus, Finding, FindingKind, FindingSeverity, Recovery

if TYPE_CHECKING:
    from ..model import Run
    from .types import Analysis

LOW_MFU = 0.20
CKPT_TAX = 0.05
STALL_SHARE = 0.02


# Plain names for figure keys in finding messages (the report has its own, translated labels).
FIGURE_NAMES = {
    "step_time_s": "step time", "tokens_per_s": "tokens/s", "samples_per_s": "samples/s", "mfu": "MFU",
    "final_smoothed_loss": "final loss", "loss_at_equal_tokens": "loss at equal tokens",
    "convergence_step": "convergence step", "loss_spikes": "loss spikes", "grad_norm_spikes": "grad-norm spikes",
    "nan_steps": "NaN steps", "checkpoint_tax": "checkpoint tax", "loss": "loss", "grad_norm": "grad-norm",
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _change(d) -> str:
    if d.rel is not None:
        return f"{d.rel:+.1%}"
    if d.baseline is not None and d.current is not None:
        return f"{d.baseline:g} → {d.current:g}"
    return "changed"


def _implausible(a: Analysis) -> list[Finding]:
    out = []
    for p in a.plausibility:
        if p.check == "mfu_range":
            side = "above" if p.value > p.against_value else "below"
            achieved, peak = a.mfu.achieved_tflops_per_device.value, a.mfu.peak_flops.value
            inputs = (f": {achieved:.3g} TFLOPS achieved per device against a peak of {peak / 1e12:.3g} TFLOPS"
                      if achieved is not None and peak else "")
            message = f"MFU {p.value * 100:.3g}% is {side} {p.against}{inputs}; the MFU is not shown as a result"
        elif p.check == "step_vs_gap":
            message = (f"the logged in-step time {p.value:.3g} s is under a tenth of the wall-clock gap between step "
                       f"ends {p.against_value:.3g} s: the timer's unit or the steps between wall times is wrong")
        else:
            message = (f"tokens/s {p.value:,.0f} contradicts the run's own logged tokens_per_s "
                       f"{p.against_value:,.0f} ({p.value / p.against_value:.2f}x): the batch size or sequence "
                       "length is wrong")
        evidence = {"check": p.check, "value": p.value, "against": p.against, "against_value": p.against_value,
                    "figures": ",".join(p.figures)}
        if p.check == "mfu_range":
            evidence.update(achieved_tflops_per_device=a.mfu.achieved_tflops_per_device.value,
                            peak_flops=a.mfu.peak_flops.value)
        out.append(Finding(FindingKind.IMPLAUSIBLE, FindingSeverity.ERROR, message, evidence))
    return out


def _stall_time(steps: pl.DataFrame) -> tuple[float, float | None]:
    """Seconds the stall steps waited beyond the usual wait, and their share of all e2e step time."""
    wait = pl.max_horizontal("gap_s", "data_time_s")
    usual = steps.select(wait.median()).item()
    lost = steps.filter(pl.col("excluded") == "data_stall").select((wait - (usual or 0.0)).clip(0).sum()).item() or 0.0
    total = steps["step_time_s"].sum()
    return float(lost), (float(lost / total) if total else None)


def findings(a: Analysis, run: Run) -> tuple[Finding, ...]:
    out: list[Finding] = _implausible(a)
    W, C, I = FindingSeverity.WARNING, FindingSeverity.CRITICAL, FindingSeverity.INFO
    st = a.stability
    if st.nan_steps:
        out.append(Finding(FindingKind.NAN_LOSS, C, f"{len(st.nan_steps)} steps with NaN/Inf loss or grad norm, "
                           f"first at step {st.nan_steps[0]}",
                           {"count": len(st.nan_steps), "first_step": st.nan_steps[0]}))
    for series, kind in ((st.loss, FindingKind.LOSS_SPIKES), (st.grad_norm, FindingKind.GRAD_NORM_SPIKES)):
        if series.spikes:
            slow = sum(1 for s in series.spikes if s.recovery != Recovery.FAST)
            top = max(series.spikes, key=lambda s: s.height)
            name = FIGURE_NAMES.get(series.tag, series.tag)
            recovery = "all recovered fast" if not slow else f"{slow} without fast recovery"
            out.append(Finding(kind, W if slow else I, f"{_count(len(series.spikes), name + ' spike')} ({recovery}); "
                               f"largest at step {top.step}, {top.height:+.0%} over the running median",
                               {"count": len(series.spikes), "not_fast": slow, "height_max": series.height_max,
                                "largest_step": top.step}))
    if st.loss.spikes and st.loss.spikes[-1].recovery == Recovery.NONE:
        s = st.loss.spikes[-1]
        out.append(Finding(FindingKind.DIVERGENCE, C, f"loss spike at step {s.step} never recovered",
                           {"step": s.step, "height": s.height}))
    if st.overflow_steps:
        out.append(Finding(FindingKind.OVERFLOWS, I, f"{len(st.overflow_steps)} loss-scale overflow steps",
                           {"count": len(st.overflow_steps)}))
    cv = a.convergence
    if cv.status == "not_converged":
        out.append(Finding(FindingKind.NOT_CONVERGED, I, cv.convergence_step.reason or "not converged",
                           {"code": cv.status_code, **cv.status_evidence}))
    mf = a.mfu.mfu
    if a.flag("mfu"):
        pass  # the implausible finding says it
    elif mf.value is not None and mf.value < LOW_MFU:
        out.append(Finding(FindingKind.LOW_MFU, W, f"MFU {mf.value:.1%} is below {LOW_MFU:.0%}", {"mfu": mf.value}))
    elif mf.value is None:
        out.append(Finding(FindingKind.MFU_UNKNOWN, I, f"MFU unknown: {mf.reason}", {"reason": mf.reason}))
    ph = a.phases
    bd = a.profile.breakdown if a.profile else None
    if bd is not None and bd.comm_flag:
        out.append(Finding(FindingKind.COMM_BOUND, W, f"communication no compute hides is {bd.comm_share:.0%} "
                           "of the profiled step time (> 25%)", {"comm_share": bd.comm_share}))
    tri = a.triage
    if tri.verdict != "unknown":
        evidence = {k: v for k, v in tri.params.items() if isinstance(v, (int, float, str, bool)) or v is None}
        evidence.update({k: ",".join(map(str, v)) for k, v in tri.params.items() if isinstance(v, (list, tuple))})
        evidence.update(verdict=str(tri.verdict), reason=str(tri.reason))
        out.append(Finding(FindingKind.TRIAGE, I, f"{tri.verdict}: {tri.reason}", evidence))
    stalls = a.throughput.window.excluded_counts.get("data_stall", 0)
    if stalls:
        lost, share = _stall_time(a.steps)
        out.append(Finding(FindingKind.DATA_STALLS, W if share is not None and share > STALL_SHARE else I,
                           f"{_count(stalls, 'data-stall step')}, {lost:.3g} s of waiting"
                           + (f" ({share:.1%} of the run's step time)" if share is not None else ""),
                           {"count": stalls, "lost_s": lost, "share": share}))
    tax = ph.checkpoint_tax.value
    if tax is not None and tax > CKPT_TAX:
        out.append(Finding(FindingKind.CHECKPOINT_TAX, W, f"checkpoint saves take {tax:.1%} of wall time",
                           {"checkpoint_tax": tax}))
    events = run.tables["events"].sort("step", nulls_last=True)
    for kind, fk, sev, what in (
        ("checkpoint_interrupted", FindingKind.INTERRUPTED_CHECKPOINT, W, "interrupted checkpoint save"),
        ("restart", FindingKind.RESTARTS, I, "restart"),
        ("log_error", FindingKind.LOG_ERRORS, W, "error in the logs"),
    ):
        rows = events.filter(pl.col("kind") == kind)
        if rows.height:
            first = rows.row(0, named=True)
            where = f" at step {first['step']}" if first["step"] is not None else ""
            detail = f": {first['detail']}" if first["detail"] else (f": {first['file']}" if first["file"] else "")
            plural = "errors in the logs" if kind == "log_error" else what + "s"
            label = what if rows.height == 1 else plural
            out.append(Finding(fk, sev, f"{rows.height} {label}; first{where}{detail}",
                               {"count": rows.height, "first_step": first["step"], "file": first["file"],
                                "detail": first["detail"]}))
    if a.ranks.slow_ranks:
        out.append(Finding(FindingKind.SLOW_RANKS, W, f"slow ranks: {', '.join(map(str, a.ranks.slow_ranks))}",
                           {"ranks": ",".join(map(str, a.ranks.slow_ranks))}))
    for c in a.config_checks:
        if c.status in (CheckStatus.FAIL, CheckStatus.WARN):
            out.append(Finding(FindingKind.CONFIG, W if c.status == CheckStatus.FAIL else I, f"{c.name}: {c.message}",
                               {k: v for k, v in c.evidence.items() if isinstance(v, (int, float, str, bool))}))
    if a.comparison is not None:
        for v in a.comparison.verdicts:
            if v.verdict in ("regressed", "improved"):
                kind = FindingKind.REGRESSION if v.verdict == "regressed" else FindingKind.IMPROVEMENT
                changes = [
                    f"{FIGURE_NAMES.get(d.figure, d.figure)} {_change(d)}"
                    for d in a.comparison.deltas if d.figure in v.figures
                ]
                evidence: dict = {d.figure: d.rel for d in a.comparison.deltas if d.figure in v.figures}
                evidence.update(family=v.family, baseline=a.comparison.baseline_id, changes=", ".join(changes))
                out.append(Finding(kind, W if v.verdict == "regressed" else I,
                                   f"{v.family} {v.verdict} vs {a.comparison.baseline_id}: {', '.join(changes)}",
                                   evidence))
    order = {C: 0, FindingSeverity.ERROR: 1, W: 2, I: 3}
    return tuple(sorted(out, key=lambda f: order[f.severity]))
