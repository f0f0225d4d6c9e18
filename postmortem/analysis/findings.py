"""Typed findings from the analysis results: what a reader should look at first.

A finding is its kind, severity and the numbers and names it is worded from; the report words
it (``words/catalog/findings.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..text import Text
from .history import unusual_findings
from .lrpeak import at_log_end
from .stability import EXPLOSION_RATIO
from .health import health_findings
from .types import CheckStatus, Finding, FindingKind, FindingSeverity, Outcome, Recovery

if TYPE_CHECKING:
    from ..model import Run
    from .types import Analysis

LOW_MFU = 0.20
CKPT_TAX = 0.05
STALL_SHARE = 0.02


def _implausible(a: Analysis) -> list[Finding]:
    out = []
    for p in a.plausibility:
        params = {"value": p.value, "against": p.against, "against_value": p.against_value, "figures": list(p.figures)}
        variant = p.check
        if p.check == "mfu_range":
            achieved, peak = a.mfu.achieved_tflops_per_device.value, a.mfu.peak_flops.value
            params.update(achieved_tflops_per_device=achieved, peak_flops=peak)
            if achieved is None or not peak:
                variant = "mfu_range_bare"
        if p.check == "tokens_vs_logged" and p.against_value:
            params["ratio"] = p.value / p.against_value
        out.append(Finding(FindingKind.IMPLAUSIBLE, FindingSeverity.ERROR, params, variant))
    return out


def _stall_time(steps: pl.DataFrame) -> tuple[float, float | None]:
    """Seconds the stall steps waited beyond the usual wait, and their share of all e2e step time."""
    wait = pl.max_horizontal("gap_s", "data_time_s")
    usual = steps.select(wait.median()).item()
    lost = steps.filter(pl.col("excluded") == "data_stall").select((wait - (usual or 0.0)).clip(0).sum()).item() or 0.0
    total = steps["step_time_s"].sum()
    share = float(lost / total) if total else None
    return float(lost), (share if share is not None and 0.0 <= share <= 1.0 else None)  # a share or none


def findings(a: Analysis, run: Run) -> tuple[Finding, ...]:
    out: list[Finding] = _implausible(a)
    W, C, I = FindingSeverity.WARNING, FindingSeverity.CRITICAL, FindingSeverity.INFO
    st = a.stability
    if st.nan_steps:
        out.append(Finding(FindingKind.NAN_LOSS, C, {"count": len(st.nan_steps), "first_step": st.nan_steps[0]}))
    for series, kind in ((st.loss, FindingKind.LOSS_SPIKES), (st.grad_norm, FindingKind.GRAD_NORM_SPIKES)):
        if series.spikes:
            # a spike at the log's last values has nothing after it to recover in: neither fast nor slow
            at_end = sum(1 for s in series.spikes if at_log_end(a, series.tag, s))
            slow = sum(1 for s in series.spikes if s.recovery != Recovery.FAST) - at_end
            top = max(series.spikes, key=lambda s: s.height)
            variant = "end_only" if at_end == len(series.spikes) else "_".join(x for x, n in (("slow", slow), ("end", at_end)) if n)
            out.append(Finding(kind, W if slow else I, {"count": len(series.spikes), "not_fast": slow, "at_end": at_end,
                                                        "height_max": series.height_max, "largest_step": top.step}, variant))
    for e in st.explosions:
        if e.nonfinite and st.nan_steps:
            continue  # the NaN finding says it
        variant = "nonfinite" if e.nonfinite else ("recovered" if e.recovered_step is not None else "")
        out.append(Finding(FindingKind.EXPLOSION, C, {
            "tag": e.tag, "step": e.step, "end_step": e.end_step, "before": e.before, "value": e.value, "level": e.level,
            "ratio": e.ratio, "recovered_step": e.recovered_step, "recovery_values": e.recovery_values,
            "gap_steps": e.recovered_step - e.end_step if e.recovered_step is not None else None,
            "factor": EXPLOSION_RATIO}, variant))
    unrecovered_explosion = any(e.tag == "loss" and e.recovered_step is None and not e.nonfinite for e in st.explosions)
    # a spike at the log's last values has nothing after it to recover in: that is no divergence
    last_loss = a.steps.filter(pl.col("loss").is_finite())["step"].max() if "loss" in a.steps.columns else None
    if (st.loss.spikes and st.loss.spikes[-1].recovery == Recovery.NONE and not unrecovered_explosion
            and last_loss is not None and st.loss.spikes[-1].end_step < last_loss):
        s = st.loss.spikes[-1]
        out.append(Finding(FindingKind.DIVERGENCE, C, {"step": s.step, "height": s.height}))
    if st.overflow_steps:
        # MindYOLO's "overflow, still update": the update was applied (the reader's event detail says so)
        ev = run.tables["events"].filter(pl.col("kind") == "overflow")["detail"].cast(pl.Utf8).fill_null("")
        applied = ev.len() > 0 and bool(ev.str.contains("not skipped").all())
        out.append(Finding(FindingKind.OVERFLOWS, I, {"count": len(st.overflow_steps)}, "applied" if applied else ""))
    cv = a.convergence
    if cv.status_code == "too_few":
        out.append(Finding(FindingKind.NOT_CONVERGED, I, {"code": cv.status_code, "why": cv.convergence_step.reason,
                                                          **cv.status_evidence}, "too_few"))
    if cv.status == "not_converged":
        out.append(Finding(FindingKind.NOT_CONVERGED, I, {"code": cv.status_code, "why": cv.convergence_step.reason,
                                                          **cv.status_evidence}))
    mf = a.mfu.mfu
    if a.flag("mfu"):
        pass  # the implausible finding says it
    elif mf.value is not None and mf.value < LOW_MFU:
        out.append(Finding(FindingKind.LOW_MFU, W, {"mfu": mf.value, "threshold": LOW_MFU}))
    elif mf.value is None:
        out.append(Finding(FindingKind.MFU_UNKNOWN, I, {"why": mf.reason}))
    ph = a.phases
    bd = a.profile.breakdown if a.profile else None
    if bd is not None and bd.comm_flag:
        out.append(Finding(FindingKind.COMM_BOUND, W, {"comm_share": bd.comm_share}))
    tri = a.triage
    if tri.verdict != "unknown":
        out.append(Finding(FindingKind.TRIAGE, I, {"verdict": tri.verdict, "reason": tri.reason, **tri.params}))
    stalls = a.throughput.window.excluded_counts.get("data_stall", 0)
    if stalls:
        lost, share = _stall_time(a.steps)
        out.append(Finding(FindingKind.DATA_STALLS, W if share is not None and share > STALL_SHARE else I,
                           {"count": stalls, "lost_s": lost, "share": share}, "" if share is not None else "no_share"))
    tax = ph.checkpoint_tax.value
    if tax is not None and tax > CKPT_TAX:
        out.append(Finding(FindingKind.CHECKPOINT_TAX, W, {"checkpoint_tax": tax, "threshold": CKPT_TAX}))
    events = run.tables["events"].sort("step", nulls_last=True)
    for kind, fk, sev in (
        ("checkpoint_interrupted", FindingKind.INTERRUPTED_CHECKPOINT, W),
        ("restart", FindingKind.RESTARTS, I),
        ("log_error", FindingKind.LOG_ERRORS, W),
    ):
        rows = events.filter(pl.col("kind") == kind)
        if kind == "log_error" and a.failure is not None:
            continue  # the failure tells these lines (analysis/failure.py reads the same logs): said once
        if rows.height:
            first = rows.row(0, named=True)
            # a log line is quoted as written (the run's own text); loading's own restart note is a diagnostic
            quoted = first["detail"] if kind != "restart" else None
            params = {"count": rows.height, "first_step": first["step"], "file": first["file"], "detail": quoted}
            out.append(Finding(fk, sev, params, "at_step" if first["step"] is not None else ""))
    if a.ranks.slow_ranks:
        out.append(Finding(FindingKind.SLOW_RANKS, W, {"ranks": list(a.ranks.slow_ranks)}))
    links = a.profile.links if a.profile else None
    if links is not None and links.slow:
        x = links.slow[0]
        out.append(Finding(FindingKind.SLOW_LINKS, W, {
            "n": len(links.slow), "of": len(links.links), "src": x.src_rank, "dst": x.dst_rank, "transport": x.transport,
            "bw": x.bandwidth_gbps, "ref": x.reference_gbps, "ratio": x.ratio}, "rank" if x.unit == "rank" else ""))
    for c in a.config_checks:
        if c.status in (CheckStatus.FAIL, CheckStatus.WARN):
            out.append(Finding(FindingKind.CONFIG, W if c.status == CheckStatus.FAIL else I,
                               {"check": c.name, "detail": c.detail,
                                **{k: v for k, v in c.evidence.items() if isinstance(v, (int, float, str, bool))}}))
    if a.comparison is not None:
        for v in a.comparison.verdicts:
            if v.verdict in (Outcome.REGRESSED, Outcome.IMPROVED):
                kind = FindingKind.REGRESSION if v.verdict == Outcome.REGRESSED else FindingKind.IMPROVEMENT
                changes = [d for d in a.comparison.deltas if d.figure in v.figures]
                params: dict = {d.figure: d.rel for d in changes}
                params.update(family=v.family, baseline=a.comparison.baseline_id,
                              changes=[_change(d) for d in changes])
                out.append(Finding(kind, W if v.verdict == Outcome.REGRESSED else I, params))
    if a.history is not None:
        out.extend(unusual_findings(a.history))

    out += health_findings(a.health)
    order = {C: 0, FindingSeverity.ERROR: 1, W: 2, I: 3}
    return tuple(sorted(out, key=lambda f: order[f.severity]))


def _change(d):
    """One figure's change as a clause: its name and its relative change, else both values."""
    if d.rel is not None:
        return Text("clause.figure-rel", figure=d.figure, rel=d.rel)
    return Text("clause.figure-change", figure=d.figure, baseline=d.baseline, current=d.current)
