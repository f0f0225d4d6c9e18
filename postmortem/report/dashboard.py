"""The archive as the team's dashboard: per experiment, its runs over time, shaped like the case
table the practitioner's article ends with (run, what changed, throughput, MFU, memory,
communication share, data wait, loss, verdict), and trend charts with time on the x axis.

The archive index (index.py) and the weekly digest (weekly.py) both show it. The data is each
archived run's metrics.json and archived settings (data/run.json); these metrics.json keys are
read, and a run without one shows "—" with the reason:

    throughput.steady.tokens_per_s        throughput.steady.data_wait_share
    mfu.value (mfu.reason)                profile.comm_share
    profile.memory.peak_bytes, else the largest phases[].max_allocated_bytes
    convergence.smoothed_final_loss       stability.nan_steps
    baseline.run.id  baseline.verdicts  baseline.deltas.loss_at_equal_tokens
    baseline.settings_changed (only when the run's settings are not archived)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import quote
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import archive
from . import charts
from ..text import Text, from_jsonable
from ..words import MISSING, Labels, numbers as fmt, render
from .messages import alignment_text
from .blocks import Cell, Chart, Table, Tone
from .sections.failure import brief

_ABSENT = object()


def _get(d: Any, path: str, default: Any = _ABSENT) -> Any:
    """metrics.json value at a dotted path; `_ABSENT` (or default) when a key is not there."""
    for part in path.split("."):
        if d is None:  # a section the run has none of (profile: null): known to be missing
            return None
        if not isinstance(d, dict) or part not in d:
            return default
        d = d[part]
    return d


@dataclass(frozen=True)
class Value:
    """One figure of a run on the dashboard, or why it is missing."""

    value: float | None
    why: str = ""  # label key of the reason it is missing
    key: str = ""  # the metrics.json key it comes from
    detail: str | Text = ""  # the analysis's own reason (a Text; an archive from before 1.2: its English)


def _value(metrics: dict, key: str, why_null: str) -> Value:
    v = _get(metrics, key)
    if v is _ABSENT:
        return Value(None, "why_old_archive", key)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return Value(None, why_null, key)
    return Value(float(v), key=key)


def _peak_memory(metrics: dict) -> Value:
    v = _get(metrics, "profile.memory.peak_bytes")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return Value(float(v), key="profile.memory.peak_bytes")
    per_phase = [p.get("max_allocated_bytes") for p in metrics.get("phases") or [] if isinstance(p, dict)]
    per_phase = [x for x in per_phase if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if per_phase:
        return Value(float(max(per_phase)), key="phases[].max_allocated_bytes")
    return Value(None, "why_no_memory", "profile.memory.peak_bytes")


@dataclass(frozen=True)
class Change:
    key: str
    before: Any  # None: the setting was not there
    after: Any


@dataclass(frozen=True)
class RunPoint:
    """One archived run as the dashboard shows it."""

    experiment: str
    run_id: str
    report: str  # the report's path from the archive root
    finished: datetime | None
    tokens_per_s: Value
    mfu: Value
    peak_memory: Value
    comm_share: Value
    data_wait: Value
    final_loss: Value
    loss_equal: Value  # loss at equal tokens, this run's
    loss_equal_rel: float | None  # its change against the baseline's
    loss_equal_significant: bool | None
    loss_equal_alignment: str
    baseline: str | None
    verdicts: dict[str, str]
    nan_steps: int
    settings: dict[str, Any] | None  # None: not archived or unreadable
    changed_vs_baseline: tuple[str, ...]
    changes: tuple[Change, ...] | None = None  # against the previous run; None: unknown (why below)
    changes_why: str = ""  # "first_run" or the label key of why they are unknown
    normal: dict[str, Any] | None = None  # metrics.json history.figures (1.5): each figure's normal range as of this run

    failure: dict | None = None  # metrics.json's failure block: how the run died (None: it did not fail)


def run_point(run: archive.ArchivedRun, settings: dict[str, Any] | None) -> RunPoint:
    m = run.metrics
    mfu = _value(m, "mfu.value", "mfu")
    if mfu.value is None and mfu.why == "mfu":
        why = _get(m, "mfu.reason_text", None)  # its key and parameters, worded in the index's language
        mfu = Value(None, "", "mfu.value", from_jsonable(why) if isinstance(why, dict) else str(_get(m, "mfu.reason", "") or ""))
    loss_equal = _get(m, "baseline.deltas.loss_at_equal_tokens", None)
    has_baseline = isinstance(m.get("baseline"), dict)
    if isinstance(loss_equal, dict) and isinstance(loss_equal.get("current"), (int, float)):
        le = Value(float(loss_equal["current"]), key="baseline.deltas.loss_at_equal_tokens")
        rel, significant, alignment = loss_equal.get("rel"), loss_equal.get("significant"), str(loss_equal.get("alignment") or "")
    else:
        le = Value(None, "why_no_loss_equal" if has_baseline else "why_no_baseline", "baseline.deltas.loss_at_equal_tokens")
        rel, significant, alignment = None, None, ""
    nan = _get(m, "stability.nan_steps", [])
    verdicts = _get(m, "baseline.verdicts", {}) or {}
    return RunPoint(
        experiment=run.experiment,
        run_id=run.run_id,
        report=f"{run.experiment}/{run.run_id}/report.html",
        finished=run.finished,
        tokens_per_s=_value(m, "throughput.steady.tokens_per_s", "why_no_steady"),
        mfu=mfu,
        peak_memory=_peak_memory(m),
        comm_share=_value(m, "profile.comm_share", "why_no_comm"),
        data_wait=_value(m, "throughput.steady.data_wait_share", "why_no_data_wait"),
        final_loss=_value(m, "convergence.smoothed_final_loss", "why_not_computed"),
        loss_equal=le,
        loss_equal_rel=float(rel) if isinstance(rel, (int, float)) else None,
        loss_equal_significant=significant if isinstance(significant, bool) else None,
        loss_equal_alignment=alignment,
        baseline=_get(m, "baseline.run.id", None) if has_baseline else None,
        verdicts={str(k): str(v) for k, v in verdicts.items()} if isinstance(verdicts, dict) else {},
        nan_steps=len(nan) if isinstance(nan, list) else int(nan or 0),
        settings=settings,
        changed_vs_baseline=tuple(str(k) for k in _get(m, "baseline.settings_changed", []) or []),
        normal=_get(m, "history.figures", None) if isinstance(_get(m, "history.figures", None), dict) else None,

        failure=m.get("failure") if isinstance(m.get("failure"), dict) else None,
    )


# What changed between two runs, in the order a reader looks for it: hyperparameters, then the
# parallel layout, then the model, then data, versions and the rest. Outcomes the readers file as
# settings (the final loss, the checkpoint written, logged FLOPs) are not changes anyone made.
SETTING_ORDER = (
    "learning_rate", "lr_schedule", "warmup_steps", "global_batch_size", "micro_batch_size", "batch_size",
    "gradient_accumulation_steps", "seq_length", "optimizer", "weight_decay", "precision", "epoch",
    "device_num", "data_parallel", "model_parallel", "pipeline_stage", "micro_batch_num", "parallel_mode",
    "enable_parallel_optimizer", "sink_size",
    "network", "num_layers", "hidden_size", "num_heads", "ffn_hidden_size", "vocab_size",
    "dataset", "train_dataset_size", "framework_version", "mindformers_version", "cann_version", "device", "mode",
    "save_checkpoint_steps",
)
NOT_SETTINGS = frozenset({"last_loss", "model_path", "model_size_bytes", "framework"})


def _is_setting(key: str, both: set[str]) -> bool:
    if key in NOT_SETTINGS or "flops" in key or key.startswith("lineage."):
        return False
    # user.<name> repeats a setting the run also has under its own name
    return not (key.startswith("user.") and key[5:] in both)


def setting_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[Change, ...]:
    keys = set(before) | set(after)
    changed = [k for k in keys if _is_setting(k, keys) and before.get(k) != after.get(k)]
    rank = {k: i for i, k in enumerate(SETTING_ORDER)}
    changed.sort(key=lambda k: (rank.get(k, len(rank) + (1 if k.startswith("user.") else 0)), k))
    return tuple(Change(k, before.get(k), after.get(k)) for k in changed)


def experiment_points(runs: Sequence[archive.ArchivedRun], settings_of=archive.archived_settings) -> list[RunPoint]:
    """One experiment's runs, oldest first, each with what changed against the run before it."""
    ordered = sorted(runs, key=lambda r: (r.finished_at or r.built_at, r.built_at, r.run_id))
    points: list[RunPoint] = []
    for run in ordered:
        p = run_point(run, settings_of(run.path))
        if not points:
            p = _with_changes(p, None, "first_run")
        elif p.settings is None or points[-1].settings is None:
            p = _with_changes(p, None, "why_no_settings")
        else:
            p = _with_changes(p, setting_changes(points[-1].settings, p.settings), "")
        points.append(p)
    return points


def _with_changes(p: RunPoint, changes: tuple[Change, ...] | None, why: str) -> RunPoint:
    from dataclasses import replace

    return replace(p, changes=changes, changes_why=why)


# --------------------------------------------------------------------------- view

COLUMNS = ("col_run", "col_finished", "col_changed", "col_tokens_per_s", "col_mfu", "col_memory", "col_comm",
           "col_data_wait", "col_loss_equal", "col_verdict")
WIDTHS = ("run", "finished", "changed", "tokens", "mfu", "memory", "comm", "wait", "loss", "verdict")
SHOWN_CHANGES = 3
_ARROW = {"improved": "▲", "regressed": "▼", "mixed": "◆"}
_TONE: dict[str, Tone] = {"improved": "good", "regressed": "bad", "mixed": "warning"}


def setting_text(value: Any) -> str:
    """A setting's value as people write it in a config: 0.003, 4096, true, AdamWeightDecay."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 32 else text[:31] + "…"


def _change_line(c: Change) -> str:
    return f"{c.key} {setting_text(c.before)} → {setting_text(c.after)}"


def _missing(v: Value, L: Labels) -> str:
    if isinstance(v.detail, Text):
        return L.text(v.detail)
    if v.detail:
        return v.detail
    return L.fmt(v.why, key=v.key) if v.why else ""


def _figure_cell(v: Value, text, L: Labels, before: Value | None = None, title: str = "") -> Cell:
    if v.value is None:
        return Cell(MISSING, reason=_missing(v, L), tone="muted")
    sub = ""
    if before is not None and before.value:
        rel = fmt.rel_delta(v.value / before.value - 1)
        sub, title = rel, (title or text(v.value)) + L["colon"] + L.fmt("delta_vs_previous", rel=rel)
    return Cell(text(v.value), sub=sub, title=title)


def _changes_cell(p: RunPoint, L: Labels) -> Cell:
    if p.changes is None:
        if p.changes_why == "first_run":
            return Cell(L["first_run"], tone="muted")
        if p.changed_vs_baseline and p.baseline:  # settings not archived: what metrics.json says
            keys = L.join(p.changed_vs_baseline)
            return Cell(L.fmt("changed_vs_baseline", baseline=p.baseline, keys=keys), tone="muted")
        return Cell(MISSING, reason=L[p.changes_why or "why_no_settings"], tone="muted")
    if not p.changes:
        return Cell(L["no_setting_changed"], tone="muted")
    lines = [_change_line(c) for c in p.changes]
    shown = lines[:SHOWN_CHANGES]
    # one part per change: a list separator without a space (，) would glue two changes into one
    # long word that paper breaks inside a number
    parts = tuple(Cell(line + (L["list_sep_md"].rstrip() if i < len(shown) - 1 else "")) for i, line in enumerate(shown))
    sub = L.fmt("more_changes", n=len(lines) - SHOWN_CHANGES) if len(lines) > SHOWN_CHANGES else ""
    return Cell(L["list_sep_md"].join(shown), sub=sub, title="\n".join(lines), parts=parts)


def _loss_cell(p: RunPoint, L: Labels) -> Cell:
    v = p.loss_equal
    if v.value is None:
        return Cell(MISSING, reason=_missing(v, L), tone="muted")
    rel = fmt.rel_delta(p.loss_equal_rel) if p.loss_equal_rel is not None else ""
    tone: Tone = ""
    if p.loss_equal_significant and p.loss_equal_rel:
        tone = "good" if p.loss_equal_rel < 0 else "bad"
    significance = L["significant"] if p.loss_equal_significant else L["not_significant"]
    title = L.fmt("loss_equal_title", value=fmt.loss(v.value), baseline=p.baseline or "?",
                  alignment=alignment_text(p.loss_equal_alignment, L.lang), rel=rel + L["paren"].format(significance))
    return Cell(fmt.loss(v.value), sub=rel, tone=tone, title=title)


def _verdict_cell(p: RunPoint, L: Labels) -> Cell:
    parts = []
    if p.failure is not None:  # a failed run: its kind, rank and step lead the cell
        parts.append(Cell(brief(p.failure, L) or "", tone="critical"))
    if p.nan_steps:
        parts.append(Cell(L.fmt("nan_flag", n=p.nan_steps), tone="bad"))
    if not p.verdicts:
        if parts:
            return Cell("", parts=tuple(parts))
        return Cell(MISSING, reason=L["why_no_baseline"], tone="muted")
    for family, verdict in sorted(p.verdicts.items(), key=lambda kv: (kv[1] != "regressed", kv[0])):
        if verdict in _ARROW:
            parts.append(Cell(f"{L.name('family_', family)}\u00a0{_ARROW[verdict]}", tone=_TONE[verdict]))
    listed = L.join(f"{L.name('family_', f)}{L['colon']}{L.name('v_', v)}" for f, v in sorted(p.verdicts.items()))
    title = L.fmt("verdicts_title", baseline=p.baseline or "?", verdicts=listed)
    if not parts:
        return Cell(L["verdict_none"], tone="muted", title=title)
    return Cell("", parts=tuple(parts), title=title)


def _finished_cell(p: RunPoint) -> Cell:
    if p.finished is None:
        return Cell(MISSING, tone="muted")
    return Cell(f"{p.finished:%Y-%m-%d}", sub=f"{p.finished:%H:%M}", title=fmt.datetime_(p.finished))


# The versions a run's result is bound to (the article, §1.2), as the index's run cell shows them.
_VERSION_NAMES = (("framework_version", "MindSpore"), ("mindformers_version", "MindFormers"), ("cann_version", "CANN"))


def versions_text(settings: dict[str, Any] | None) -> str:
    """'MindSpore 2.10.0 · CANN 8.0.RC2': the versions the archived settings hold, "" for none."""
    if not settings:
        return ""
    return " · ".join(f"{name} {settings[k]}" for k, name in _VERSION_NAMES if settings.get(k) not in (None, ""))


def dataset_text(settings: dict[str, Any] | None, L: Labels) -> str:
    """The dataset's identity (name or path, and size) where the settings give it, for the run cell's tooltip."""
    if not settings or settings.get("dataset") in (None, ""):
        return ""
    size = settings.get("train_dataset_size")
    return f"{L['dataset']}{L['colon']}{settings['dataset']}" + (L["paren"].format(fmt.integer(size)) if isinstance(size, (int, float)) else "")


def runs_table(points: Sequence[RunPoint], L: Labels, href_prefix: str, table_id: str) -> Table:
    """The experiment's runs, oldest first; changes of throughput and memory against the run above."""
    rows = []
    for i, p in enumerate(points):
        before = points[i - 1] if i else None
        rows.append((
            Cell(p.run_id, href=href_prefix + quote(p.report), sub=versions_text(p.settings),  # run ids may hold '#', '?', spaces
                 title=dataset_text(p.settings, L)),
            _finished_cell(p),
            _changes_cell(p, L),
            _figure_cell(p.tokens_per_s, lambda v: fmt.si(v, ""), L, before.tokens_per_s if before else None),
            _figure_cell(p.mfu, fmt.percent, L),
            _figure_cell(p.peak_memory, fmt.bytes_, L, before.peak_memory if before else None),
            _figure_cell(p.comm_share, fmt.percent, L),
            _figure_cell(p.data_wait, fmt.percent, L),
            _loss_cell(p, L),
            _verdict_cell(p, L),
        ))
    return Table(
        id=table_id, columns=tuple(L[c] for c in COLUMNS), align=tuple("right" if 3 <= i <= 8 else "left" for i in range(10)),
        rows=tuple(rows), widths=WIDTHS,
    )


# The trends: (label key, field, unit of the axis, its factor, tick format, text of a value)
TRENDS = (
    ("col_tokens_per_s", "tokens_per_s", "", 1.0, "~s", lambda v: fmt.si(v, "tokens/s")),
    ("col_mfu", "mfu", "", 1.0, ".0%", fmt.percent),
    ("col_memory", "peak_memory", "GiB", 1 / 1024**3, "~g", fmt.bytes_),  # as the table: binary units
    ("col_comm", "comm_share", "", 1.0, ".0%", fmt.percent),
    ("col_data_wait", "data_wait", "", 1.0, ".0%", fmt.percent),
    ("fig_final_smoothed_loss", "final_loss", "", 1.0, "~g", fmt.loss),
)


# The trends that have a normal range (analysis/history.py's figure names).
NORMAL_FIGURES = {"tokens_per_s": "tokens_per_s", "mfu": "mfu", "comm_share": "comm_share", "data_wait": "data_wait_share"}


def normal_band(points: Sequence[RunPoint], figure: str | None, factor: float) -> tuple[float, float] | None:
    """The normal range of a figure as of the latest run that has one (its metrics.json history):
    the band drawn behind the figure's trend."""
    if figure is None:
        return None
    for p in reversed(points):
        f = (p.normal or {}).get(figure) or {}
        if isinstance(f.get("low"), (int, float)) and isinstance(f.get("high"), (int, float)):
            return f["low"] * factor, f["high"] * factor
    return None


def trend_chart(points: Sequence[RunPoint], L: Labels, chart_id: str) -> tuple[Chart | None, str]:
    """Small multiples of the experiment's figures over time, and a note naming the figures
    without two runs to draw."""
    series, missing = [], []
    for label, field, unit, factor, axis_format, text in TRENDS:
        normal = NORMAL_FIGURES.get(field)
        rows = [
            {"t": p.finished.isoformat(), "when": f"{p.finished:%Y-%m-%d %H:%M}", "v": v.value * factor, "run": p.run_id,
             "text": text(v.value), "unusual": bool(normal and ((p.normal or {}).get(normal) or {}).get("unusual"))}
            for p in points
            if p.finished is not None and (v := getattr(p, field)).value is not None
        ]
        if len(rows) >= 2:
            series.append((L[label] + (L["paren"].format(unit) if unit else ""), axis_format, rows,
                           normal_band(points, normal, factor)))
        else:
            missing.append(L[label])
    note = L.fmt("trends_missing", names=L.join(missing)) if missing else ""
    banded = next((p.run_id for p in reversed(points) if p.normal), None) if any(x[3] for x in series) else None
    if banded is not None:  # what the band is: the normal range as of the latest run that has one
        band = render(Text("history.band", run=banded), L.lang)
        note = f"{band} {note}".strip() if L.lang != "zh" else band + note
    if not series:
        return None, note
    times = sorted({p.finished for p in points if p.finished is not None})
    span = (times[-1] - times[0]).total_seconds()
    # month-day on a long history, the time of day on a short one (vega's own labels are English),
    # ticks at up to four of the runs' times: vega's own ticks crowd a short history
    time_format = "%m-%d" if span > 3 * 86400 else "%m-%d %H:%M" if span > 3600 else "%H:%M:%S"
    ticks = [times[round(i * (len(times) - 1) / 3)] for i in range(4)] if len(times) > 4 else times
    spec = charts.trend_chart(series, L, time_format, [t.timestamp() * 1000 for t in dict.fromkeys(ticks)])
    return Chart(chart_id, L["trends"], spec), note


@dataclass(frozen=True)
class ExperimentView:
    """One experiment's part of the index or the digest."""

    name: str
    anchor: str  # its id in the page
    page: str  # the experiment's own index page (a link from the archive's), or ""
    meta: str
    table: Table
    chart: Chart | None
    trends_note: str  # which trends are not drawn, and why
    more: str = ""  # "only the latest N of M runs are shown"


def anchor(name: str) -> str:
    return "exp-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)


def experiment_view(
    name: str, points: Sequence[RunPoint], L: Labels, *, href_prefix: str, page: str = "",
    shown: Sequence[RunPoint] | None = None, more: str = "", trends: tuple[Chart | None, str] | None = None,
) -> ExperimentView:
    """`points`: the experiment's runs, oldest first, drawn in the trends (`trends`: already
    made). The table lists `shown` (default: all of them); `more` says where the others are."""
    shown = list(points if shown is None else shown)
    finished = [p.finished for p in points if p.finished is not None]
    last = fmt.datetime_(max(finished)) if finished else MISSING
    chart, note = trends if trends is not None else trend_chart(points, L, f"trends-{anchor(name)}")
    return ExperimentView(
        name=name, anchor=anchor(name), page=page, meta=L.fmt("experiment_meta", runs=len(points), when=last),
        table=runs_table(shown, L, href_prefix, f"runs-{anchor(name)}"), chart=chart, trends_note=note, more=more,
    )
