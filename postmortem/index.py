"""Archive indexes: out/index.{json,html} and out/<experiment>/index.{json,html}, newest first.

Indexes are derived from the archived runs' metrics.json files, so rewriting them is idempotent;
the caller holds the archive lock, and each file is replaced atomically.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from . import archive
from .report import format as fmt

INDEX_SCHEMA_VERSION = "1.0"


def _get(d: dict, path: str):
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def headline_figures(metrics: dict) -> list[tuple[str, str]]:
    """The few figures a reader wants first, formatted, with the delta against the baseline."""
    deltas = _get(metrics, "baseline.deltas") or {}

    def with_delta(text: str, key: str) -> str:
        d = deltas.get(key) or {}
        if d.get("rel") is None:
            return text
        mark = "" if d.get("significant") else ", not significant"
        return f"{text} ({fmt.rel_delta(d['rel'])}{mark})"

    spikes = _get(metrics, "stability.loss_spikes") or []
    nan_steps = _get(metrics, "stability.nan_steps") or []
    return [
        ("tokens/s", with_delta(fmt.tokens_per_s(_get(metrics, "throughput.steady.tokens_per_s")), "tokens_per_s")),
        ("step", with_delta(fmt.duration(_get(metrics, "throughput.steady.step_time_s")), "step_time_s")),
        ("MFU", with_delta(fmt.percent(_get(metrics, "mfu.value")), "mfu")),
        ("final loss", with_delta(fmt.loss(_get(metrics, "convergence.smoothed_final_loss")), "final_smoothed_loss")),
        ("loss spikes", str(len(spikes))),
        ("NaN steps", str(len(nan_steps) if isinstance(nan_steps, list) else nan_steps)),
    ]


def index_row(run: archive.ArchivedRun) -> dict:
    m = run.metrics
    return {
        "experiment": run.experiment,
        "run_id": run.run_id,
        "report": f"{run.experiment}/{run.run_id}/report.html",
        "finished_at": run.finished_at or None,
        "finished_text": fmt.datetime_(run.finished) if run.finished else (run.finished_at or run.built_at or fmt.MISSING),
        "built_at": run.built_at or None,
        "steps": _get(m, "run.steps.last"),
        "tokens_per_s": _get(m, "throughput.steady.tokens_per_s"),
        "step_time_s": _get(m, "throughput.steady.step_time_s"),
        "mfu": _get(m, "mfu.value"),
        "final_loss": _get(m, "convergence.smoothed_final_loss"),
        "loss_spikes": len(_get(m, "stability.loss_spikes") or []),
        "nan_steps": len(_get(m, "stability.nan_steps") or []),
        "baseline": _get(m, "baseline.run.id"),
        "verdicts": _get(m, "baseline.verdicts") or {},
    }


def write_indexes(archive_root: Path, generated_at: datetime) -> None:
    runs = archive.list_runs(archive_root)
    rows = [index_row(r) for r in runs]
    _write(archive_root, rows, generated_at, title="postmortem archive", prefix="")
    for experiment in sorted({r["experiment"] for r in rows}):
        mine = [r for r in rows if r["experiment"] == experiment]
        _write(archive_root / experiment, mine, generated_at, title=f"{experiment}", prefix="../")


def _write(folder: Path, rows: list[dict], generated_at: datetime, title: str, prefix: str) -> None:
    doc = {"schema_version": INDEX_SCHEMA_VERSION, "runs": rows}
    # The index's own time is left out of index.json so rebuilding an unchanged archive is a no-op.
    archive.write_atomic(folder / "index.json", json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    archive.write_atomic(folder / "index.html", render_index_html(rows, title, prefix, generated_at))


def render_index_html(rows: list[dict], title: str, prefix: str, generated_at: datetime) -> str:
    from importlib.resources import files

    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(files("postmortem.templates").joinpath("archive_index.html.j2").read_text(encoding="utf-8"))
    shown = [
        {
            **r,
            "href": prefix + r["report"] if prefix else r["report"],
            "tokens_per_s_text": fmt.tokens_per_s(r["tokens_per_s"]),
            "step_time_text": fmt.duration(r["step_time_s"]),
            "mfu_text": fmt.percent(r["mfu"]),
            "final_loss_text": fmt.loss(r["final_loss"]),
            "steps_text": fmt.step(r["steps"]),
            "verdict_items": sorted((r["verdicts"] or {}).items()),
        }
        for r in rows
    ]
    return template.render(title=title, rows=shown, generated_at=fmt.datetime_(generated_at))
