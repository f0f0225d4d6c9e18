"""Archive indexes, the team's dashboard: out/index.{json,html} (every experiment) and
out/<experiment>/index.{json,html} (one), newest runs last in each experiment's table.

Indexes are derived from the archived runs (metrics.json and data/run.json), so rewriting them is
idempotent; the caller holds the archive lock, and each file is replaced atomically. The HTML
draws its trend charts in the browser with the vega bundle kept once next to the top index
(a file of the archive, nothing from the network).
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import quote
from pathlib import Path

from . import archive
from .words import MISSING, labels, numbers as fmt

INDEX_SCHEMA_VERSION = "1.1"  # 1.1: rows gain peak_memory_bytes, comm_share, data_wait_share, loss_at_equal_tokens
TOP_INDEX_RUNS = 12  # runs of each experiment on the archive's page; its own page lists all


def _get(d: dict, path: str):
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def headline_figures(metrics: dict, lang: str = "en") -> list[tuple[str, str]]:
    """The few figures a reader wants first, formatted, with the delta against the baseline."""
    L = labels(lang)
    deltas = _get(metrics, "baseline.deltas") or {}

    def with_delta(text: str, key: str) -> str:
        d = deltas.get(key) or {}
        if d.get("rel") is None:
            return text
        mark = "" if d.get("significant") else L["list_sep_md"] + L["not_significant"]
        return text + L["paren"].format(fmt.rel_delta(d["rel"]) + mark)

    spikes = _get(metrics, "stability.loss_spikes") or []
    nan_steps = _get(metrics, "stability.nan_steps") or []
    return [
        (L["cli_tokens"], with_delta(fmt.tokens_per_s(_get(metrics, "throughput.steady.tokens_per_s")), "tokens_per_s")),
        (L["cli_step"], with_delta(fmt.duration(_get(metrics, "throughput.steady.step_time_s")), "step_time_s")),
        ("MFU", with_delta(fmt.percent(_get(metrics, "mfu.value")), "mfu")),
        (L["cli_final_loss"], with_delta(fmt.loss(_get(metrics, "convergence.smoothed_final_loss")), "final_smoothed_loss")),
        (L["cli_spikes"], str(len(spikes))),
        (L["cli_nan"], str(len(nan_steps) if isinstance(nan_steps, list) else nan_steps)),
    ]


def headline_line(metrics: dict, run_id: str, baseline_id: str | None, lang: str = "en") -> str:
    """The build's one line on the terminal: the run, its baseline, the headline figures."""
    L = labels(lang)
    against = " " + L.fmt("vs_baseline", baseline=baseline_id) if baseline_id else ""
    from .report.sections.failure import brief

    failed = brief(metrics.get("failure"), L)  # a failed run: how it died, before the figures it could not reach
    figures = " · ".join(f"{label} {text}" for label, text in headline_figures(metrics, lang))
    if failed and not _get(metrics, "run.steps.count"):
        return f"{run_id}{against}{L['colon']}{failed}"  # no step: none of the figures exists
    return f"{run_id}{against}{L['colon']}" + (f"{failed} · {figures}" if failed else figures)


def index_row(run: archive.ArchivedRun) -> dict:
    m = run.metrics
    phases_memory = [p.get("max_allocated_bytes") for p in m.get("phases") or [] if isinstance(p, dict)]
    phases_memory = [x for x in phases_memory if isinstance(x, (int, float))]
    return {
        "experiment": run.experiment,
        "run_id": run.run_id,
        "report": f"{run.experiment}/{run.run_id}/report.html",
        "finished_at": run.finished_at or None,
        "finished_text": fmt.datetime_(run.finished) if run.finished else (run.finished_at or run.built_at or MISSING),
        "built_at": run.built_at or None,
        "steps": _get(m, "run.steps.last"),
        "tokens_per_s": _get(m, "throughput.steady.tokens_per_s"),
        "step_time_s": _get(m, "throughput.steady.step_time_s"),
        "mfu": _get(m, "mfu.value"),
        "final_loss": _get(m, "convergence.smoothed_final_loss"),
        "peak_memory_bytes": _get(m, "profile.memory.peak_bytes") or (max(phases_memory) if phases_memory else None),
        "comm_share": _get(m, "profile.comm_share"),
        "data_wait_share": _get(m, "throughput.steady.data_wait_share"),
        "loss_at_equal_tokens": _get(m, "baseline.deltas.loss_at_equal_tokens.current"),
        "loss_spikes": len(_get(m, "stability.loss_spikes") or []),
        "nan_steps": len(_get(m, "stability.nan_steps") or []),
        "baseline": _get(m, "baseline.run.id"),
        "verdicts": _get(m, "baseline.verdicts") or {},
        "failure": _failure_row(m.get("failure")),
    }


def _failure_row(block) -> dict | None:
    """index.json's word on a failed run: its kind, first failing rank and last step (null: did not fail)."""
    if not isinstance(block, dict):
        return None
    return {k: block.get(k) for k in ("kind", "error_code", "first_failing_rank", "failed_at", "last_step")}


def write_indexes(archive_root: Path, generated_at: datetime, lang: str = "en") -> None:
    """Every index of the archive, in `lang` (the build's language)."""
    from .report.dashboard import anchor, experiment_points, trend_chart

    runs = archive.list_runs(archive_root)
    rows = [index_row(r) for r in runs]
    by_experiment: dict[str, list[archive.ArchivedRun]] = {}
    for run in runs:
        by_experiment.setdefault(run.experiment, []).append(run)
    points = {name: experiment_points(mine) for name, mine in by_experiment.items()}
    L = labels(lang)
    trends = {name: trend_chart(mine, L, f"trends-{anchor(name)}") for name, mine in points.items()}  # one per experiment
    bundle = _write_bundle(archive_root) if runs else ""
    _write(archive_root, rows, render_index_html(points, lang, generated_at, prefix="", bundle=bundle, trends=trends))
    for name in sorted(points):
        mine = [r for r in rows if r["experiment"] == name]
        html = render_index_html({name: points[name]}, lang, generated_at, prefix="../", bundle="../" + bundle, title=name, trends=trends)
        _write(archive_root / name, mine, html)


def _write(folder: Path, rows: list[dict], html: str) -> None:
    doc = {"schema_version": INDEX_SCHEMA_VERSION, "runs": rows}
    # The index's own time is left out of index.json so rebuilding an unchanged archive is a no-op.
    archive.write_atomic(folder / "index.json", json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    archive.write_atomic(folder / "index.html", html)


def _write_bundle(archive_root: Path) -> str:
    """The vega bundle the index pages draw their charts with, once per archive and vl-convert
    version (1.4 MB: inlined it would be rewritten into every index page on every build)."""
    import vl_convert

    from .report.html import javascript_bundle

    name = f"postmortem-vega-{vl_convert.__version__}.js"
    if not (archive_root / name).is_file():
        archive.write_atomic(archive_root / name, javascript_bundle())
    return name


def render_index_html(
    points: dict, lang: str, generated_at: datetime, *, prefix: str, bundle: str, title: str = "", trends: dict | None = None
) -> str:
    """`points`: experiment -> its runs (RunPoints), oldest first. The archive's page (several
    experiments, most recently active first) lists each one's latest runs and links its own page."""
    from . import __version__
    from .report.dashboard import experiment_view
    from .report.html import json_for_script, render

    L = labels(lang)

    def latest(name: str):
        finished = [p.finished.isoformat() for p in points[name] if p.finished is not None]
        return max(finished) if finished else ""

    names = sorted(points, key=lambda n: (latest(n), n), reverse=True)
    top = not title
    views = []
    for name in names:
        mine = points[name]
        shown = mine[-TOP_INDEX_RUNS:] if top else mine
        more = L.fmt("latest_runs", shown=len(shown), n=len(mine)) if len(shown) < len(mine) else ""
        views.append(experiment_view(name, mine, L, href_prefix=prefix, page=quote(f"{name}/index.html") if top else "", shown=shown,
                                     more=more, trends=(trends or {}).get(name)))
    specs = {v.chart.id: json_for_script(v.chart.spec) for v in views if v.chart}
    meta = L.fmt("dashboard_meta", runs=sum(len(p) for p in points.values()), experiments=len(points), when=fmt.datetime_(generated_at))
    return render(
        "index.html.j2", lang=lang, version=__version__, title=title or L["dashboard_title"], meta=meta,
        experiments=views, specs=specs, images={}, bundle_src=bundle if specs else "", back="" if top else "../index.html",
    )
