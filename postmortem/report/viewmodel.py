"""Analysis -> ReportView: the report's sections in their order, each built by its module in
``sections/`` from the view's blocks (``blocks.py``).

Renderers (html, pdf, markdown) only walk the view; they make no decisions about numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..analysis import types as t
from ..model import InventoryEntry
from ..words import CATALOGS, labels, numbers as fmt
from .blocks import ReportView
from .sections import (appendix, checkpoints, config, convergence, data_quality, diff, failure, findings, headline, health, history,
                       layout, mfu, phases, profile, settings, stability, throughput)
from .sections.common import recorder_format
from .verdict import verdict_block


def build_view(
    analysis: t.Analysis,
    *,
    lang: str = "en",
    generated_at: datetime,
    version: str,
    inventory: Sequence[InventoryEntry] | None = None,
) -> ReportView:
    """The report's content for one analysis. ``inventory`` is the run's file list (Run.inventory);
    it defaults to ``analysis.inventory`` when the analysis carries one."""
    L = labels(lang)
    a = analysis
    if inventory is None:
        inventory = getattr(a, "inventory", ()) or ()
    base = a.baseline
    base_id = a.comparison.baseline_id if a.comparison else (base.run_id if base else "")
    sections = [
        failure.section(a.failure, L),  # a failed run: how it died, first
        headline.section(a, L),
        findings.section(a, L),
        history.section(a.history, L),  # what is normal for the experiment, with or without a baseline
        settings.section(a, L),
        data_quality.section(a, L),
        throughput.section(a, L, base),
        mfu.section(a, L),
        convergence.section(a, L, base, base_id),
        stability.section(a, L),
        phases.section(a, L, base),
        profile.section(a, L),
        checkpoints.section(a, L),
        layout.section(a, L),
        health.section(a, L),
        config.section(a, L),
        diff.section(a, L),
        appendix.section(inventory, L),
    ]
    meta = [(L["run"], a.run_id)]
    if a.experiment:
        meta.append((L["experiment"], a.experiment))
    if base_id:
        meta.append((L["baseline"], base_id))
    if recorder_format(a) is not None:
        meta.append((L["recorded_by"], L["recorder_callback"].format(format=recorder_format(a))))
    if a.step_range:
        first, last, count = a.step_range
        meta.append((L["steps"], f"{fmt.step(first)} – {fmt.step(last)}" + L['paren'].format(fmt.integer(count))))
    shown = [sec for sec in sections if sec is not None]
    if a.failure is not None and a.step_range is None:  # died before its first step: no figure to show
        shown = [sec for sec in shown if sec.id != "headline"]
    return ReportView(
        verdict=verdict_block(a, L, {sec.id for sec in shown}),
        lang=lang,
        title=f"{L['report_title']}{L['colon']}{a.run_id}",
        run_id=a.run_id,
        experiment=a.experiment or "",
        baseline_id=base_id,
        generated_at=fmt.datetime_(generated_at),
        version=version,
        labels=dict(CATALOGS[lang]),
        summary=headline.failed_summary(a, L) or headline.summary(a, L),
        sections=tuple(shown),
        meta=tuple(meta),
    )
