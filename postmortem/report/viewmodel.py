"""Analysis -> ReportView: every string the renderers show, already formatted, never escaped.

Renderers (html, pdf, markdown) only walk this structure; they make no decisions about numbers.
Sections are lists of generic blocks (paragraph, table, chart, list) so other documents (e.g. a
weekly digest) can reuse the same templates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import polars as pl

from ..analysis import types as t
from ..analysis.ranks import group_params
from ..analysis.window import excluded_ranges
from ..model import InventoryEntry
from ..text import Text
from . import charts, format as fmt
from .format import MISSING, Labels
from .messages import alignment, check_name, finding_text
from .verdict import rank_group_text

Align = Literal["left", "right", "left word"]  # CSS classes of a column's cells
Tone = Literal["", "good", "bad", "muted", "info", "warning", "error", "critical"]


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    reason: str = ""  # why the value is missing: a tooltip in HTML, a footnote in PDF
    tone: Tone = ""
    title: str = ""  # extra tooltip (e.g. the method behind a number)
    href: str = ""  # a link (the archive index links each run to its report)
    sub: str = ""  # a second, smaller line (a change against the previous run)
    parts: tuple[Cell, ...] = ()  # shown instead of text: several short texts, each with its tone


@dataclass(frozen=True)
class Table:
    id: str
    columns: tuple[str, ...]
    align: tuple[Align, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    collapsed: bool = False  # HTML puts it in a <details>, closed
    kind: str = "table"
    widths: tuple[str, ...] = ()  # column classes of a fixed layout (the dashboard's), none: automatic


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    spec: dict[str, Any]  # Vega-Lite, data inline
    kind: str = "chart"


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: Tone = ""
    kind: str = "paragraph"


@dataclass(frozen=True)
class Item:
    text: str
    tone: Tone = ""
    tag: str = ""  # short badge text before the item (severity)


@dataclass(frozen=True)
class ItemList:
    items: tuple[Item, ...]
    kind: str = "list"


Block = Table | Chart | Paragraph | ItemList


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Stat:
    """One big headline number with its change against the baseline."""

    key: str
    label: str
    value: str
    reason: str = ""
    baseline: str = ""
    delta: str = ""
    rel: str = ""
    verdict: str = ""  # localized: "better" / "worse" / "within noise" / "not comparable"
    tone: Tone = ""


@dataclass(frozen=True)
class Badge:
    label: str
    verdict: str
    tone: Tone


@dataclass(frozen=True)
class Summary:
    badges: tuple[Badge, ...]
    stats: tuple[Stat, ...]
    findings: tuple[Item, ...]  # the most severe few
    note: str = ""  # e.g. "no baseline"


@dataclass(frozen=True)
class ReportView:
    lang: str
    title: str
    run_id: str
    experiment: str
    baseline_id: str
    generated_at: str  # formatted; the only thing that differs between two renders of one analysis
    version: str
    labels: dict[str, str]
    summary: Summary
    sections: tuple[Section, ...]
    meta: tuple[tuple[str, str], ...] = field(default=())  # key facts under the title
    verdict: Any = None  # report/verdict.py's VerdictBlock: the first block, above the headline figures

    @property
    def charts(self) -> tuple[Chart, ...]:
        return tuple(b for s in self.sections for b in s.blocks if isinstance(b, Chart))


# --------------------------------------------------------------------------- helpers


def cell(value: float | None, formatter: Callable[[Any], str], reason: str | None = "", title: str = "") -> Cell:
    if value is None:
        return Cell(MISSING, reason=reason or "", tone="muted", title=title)
    return Cell(formatter(value), title=title)


def fig_cell(figure: t.Figure, formatter: Callable[[Any], str], L: Labels) -> Cell:
    return cell(figure.value, formatter, L.text(figure.reason), L.text(figure.method))


def text(value: Any) -> Cell:
    if value is None or value == "":
        return Cell(MISSING, tone="muted")
    if isinstance(value, float):
        return Cell(fmt.number(value, 4))
    return Cell(str(value))


def _table(id: str, columns: Sequence[str], align: str, rows: Sequence[Sequence[Cell]], **kw: Any) -> Table:
    """``align`` is one letter per column: l, r, or w (left, and a word is never broken: short
    labels such as a status, which a narrow column would otherwise split mid-word)."""
    return Table(
        id=id,
        columns=tuple(columns),
        align=tuple({"r": "right", "w": "left word"}.get(a, "left") for a in align),
        rows=tuple(tuple(r) for r in rows),
        **kw,
    )


def _pp(x: float) -> str:
    return fmt.number(x * 100, 2)


# figure name -> (label key, value formatter, delta formatter)
FIGURES: dict[str, tuple[str, Callable[[Any], str], Callable[[float], str]]] = {
    "tokens_per_s": ("fig_tokens_per_s", fmt.tokens_per_s, lambda d: fmt.delta(d, fmt.tokens_per_s)),
    "samples_per_s": ("fig_samples_per_s", fmt.samples_per_s, lambda d: fmt.delta(d, fmt.samples_per_s)),
    "step_time_s": ("fig_step_time_s", fmt.duration, lambda d: fmt.delta(d, fmt.duration)),
    "mfu": ("fig_mfu", lambda v: fmt.percent(v, 2 if abs(v) < 0.01 else 1), lambda d: fmt.delta(d, _pp)),
    "final_smoothed_loss": ("fig_final_smoothed_loss", fmt.loss, lambda d: fmt.delta(d, fmt.loss)),
    "loss_spikes": ("fig_loss_spikes", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "grad_norm_spikes": ("fig_grad_norm_spikes", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "loss_at_equal_tokens": ("fig_loss_at_equal_tokens", fmt.loss, lambda d: fmt.delta(d, fmt.loss)),
    "nan_steps": ("fig_nan_steps", fmt.integer, lambda d: fmt.delta(d, fmt.integer)),
    "checkpoint_tax": ("fig_checkpoint_tax", fmt.percent, lambda d: fmt.delta(d, _pp)),
    "convergence_step": ("fig_convergence_step", fmt.step, lambda d: fmt.delta(d, fmt.integer)),
}
PERCENTAGE_POINTS = {"mfu", "checkpoint_tax"}  # their deltas are in percentage points (L["pp"])
HEADLINE = ("tokens_per_s", "step_time_s", "mfu", "final_smoothed_loss", "loss_spikes", "checkpoint_tax")


def _current_figure(a: t.Analysis, name: str) -> t.Figure:
    match name:
        case "tokens_per_s":
            return a.throughput.tokens_per_s
        case "samples_per_s":
            return a.throughput.samples_per_s
        case "step_time_s":
            return a.throughput.step_time_s
        case "mfu":
            return a.mfu.mfu
        case "final_smoothed_loss":
            return a.convergence.final_smoothed_loss
        case "loss_spikes":
            s = a.stability.loss
            return t.Figure(float(len(s.spikes)) if s.reason is None else None, s.rule, s.reason)
        case "nan_steps":
            return t.Figure(float(len(a.stability.nan_steps)))
        case "checkpoint_tax":
            return a.phases.checkpoint_tax
        case "convergence_step":
            return a.convergence.convergence_step
    return t.missing("unknown figure")


def _figure_label(name: str, L: Labels, a: t.Analysis | None = None) -> str:
    if name == "step_time_s" and a is not None and a.throughput.timing == "timer":
        return L["step_time_timer"]  # not the e2e time: say so wherever it is shown
    return L.get("fig_" + name, name.replace("_", " "))


def _fmt_value(name: str, value: float | None) -> str:
    formatter = FIGURES.get(name, ("", lambda v: fmt.number(v, 4), None))[1]
    return MISSING if value is None else formatter(value)


def _fmt_delta(name: str, d: float | None, L: Labels) -> str:
    if d is None:
        return MISSING
    entry = FIGURES.get(name)
    text = entry[2](d) if entry else fmt.delta(d)
    return f"{text} {L['pp']}" if name in PERCENTAGE_POINTS else text


def _verdict(d: t.Delta | None, L: Labels) -> tuple[str, Tone]:
    if d is None or d.delta is None:
        return L["verdict_unknown"], "muted"
    if d.significant is None:
        return L["unknown"], "muted"
    if not d.significant or d.delta == 0:
        return L["within_noise"], ""
    better = (d.delta > 0) == (d.better == "higher")
    return (L["verdict_better"], "good") if better else (L["verdict_worse"], "bad")


_SEVERITY_ORDER = {"critical": 0, "error": 0, "warning": 1, "info": 2}


def _flag_text(a: t.Analysis, name: str, L: Labels) -> str:
    """Why a headline figure cannot be right (the implausible finding's text), or ""."""
    p = a.flag(name)
    if p is None:
        return ""
    f = next((f for f in a.findings if f.kind == t.FindingKind.IMPLAUSIBLE and f.variant.startswith(p.check)), None)
    return L.sentence(finding_text(f)) if f is not None else L.sentence(p.rule)


def _flagged(value: str, flag: str, L: Labels) -> str:
    return f"{value} ({L['implausible']})" if flag else value
_VERDICT_TONE: dict[str, Tone] = {"improved": "good", "regressed": "bad", "mixed": "warning", "unknown": "muted"}


# --------------------------------------------------------------------------- sections


def _summary(a: t.Analysis, L: Labels) -> Summary:
    comp = a.comparison
    badges = tuple(
        Badge(L.name("family_", v.family), L.name("v_", v.verdict), _VERDICT_TONE.get(str(v.verdict), ""))
        for v in (comp.verdicts if comp else ())
    )
    stats = []
    for name in HEADLINE:
        f = _current_figure(a, name)
        d = comp.delta(name) if comp else None
        verdict, tone = _verdict(d, L) if comp else ("", "")
        flag = _flag_text(a, name, L)
        stats.append(
            Stat(
                key=name,
                label=_figure_label(name, L, a),
                value=_flagged(_fmt_value(name, f.value), flag, L),
                reason=flag or L.text(f.reason) or L.text(f.caveat) or (L.text(d.reason) if d and d.reason else ""),
                baseline=_fmt_value(name, d.baseline) if d else "",
                delta=_fmt_delta(name, d.delta, L) if d and d.delta is not None else "",
                rel=fmt.rel_delta(d.rel) if d and d.rel is not None else "",
                verdict=verdict,
                tone="error" if flag else tone,
            )
        )
    findings = sorted(a.findings, key=lambda f: _SEVERITY_ORDER.get(str(f.severity), 3))
    items = tuple(_finding_item(f, L) for f in findings[:3])
    return Summary(badges, tuple(stats), items, "" if comp else L["no_baseline"])


def _finding_item(f: t.Finding, L: Labels) -> Item:
    sev = str(f.severity)
    return Item(L.sentence(finding_text(f)), tone="critical" if sev == "critical" else sev, tag=L.get(sev, sev))  # type: ignore[arg-type]


def _flag_cell(a: t.Analysis, name: str, c: Cell, L: Labels) -> Cell:
    """The cell of a figure, marked when the figure cannot be right."""
    flag = _flag_text(a, name, L)
    return Cell(_flagged(c.text, flag, L), tone="error", title=flag) if flag else c


def _headline_section(a: t.Analysis, L: Labels) -> Section:
    comp = a.comparison
    blocks: list[Block] = []
    if comp is None:
        rows = [[Cell(_figure_label(n, L, a)), _flag_cell(a, n, fig_cell(_current_figure(a, n), lambda v, n=n: _fmt_value(n, v), L), L)]
                for n in HEADLINE]
        blocks.append(_table("headline", [L["figure"], L["current"]], "lr", rows))
        blocks.append(Paragraph(L["no_baseline"], "muted"))
    else:
        names = list(dict.fromkeys([*HEADLINE, *(d.figure for d in comp.deltas)]))
        rows = []
        for name in names:
            d = comp.delta(name)
            if d is None:
                continue
            verdict, tone = _verdict(d, L)
            rows.append(
                [
                    Cell(_figure_label(name, L, a), title=L.text(alignment(d))),
                    cell(d.baseline, lambda v, n=name: _fmt_value(n, v), L.text(d.reason)),
                    _flag_cell(a, name, cell(d.current, lambda v, n=name: _fmt_value(n, v), L.text(d.reason)), L),
                    cell(d.delta, lambda v, n=name: _fmt_delta(n, v, L), L.text(d.reason)),
                    cell(d.rel, fmt.rel_delta, L.text(d.reason)),
                    Cell(verdict, tone=tone, title=L.text(d.method)),
                    Cell(L.text(alignment(d))),
                ]
            )
        cols = [L["figure"], L['baseline'] + L['paren'].format(comp.baseline_id), L["current"], L["delta"], L["rel_delta"], L["significance"], L["alignment"]]
        blocks.append(_table("headline", cols, "lrrrrll", rows))
    return Section("headline", L["headline"], tuple(blocks))


def _data_quality(a: t.Analysis, L: Labels) -> Section:
    if not a.diagnostics:
        return Section("data-quality", L["data_quality"], (Paragraph(L["no_diagnostics"], "good"),))
    diags = sorted(a.diagnostics, key=lambda d: (_SEVERITY_ORDER.get(str(d.severity), 3), d.path or "", d.offset or 0, d.slug))
    # The same note on every rank's file (a zone-less clock, one epoch) is one row with its files
    # counted: 1,024 ranks would otherwise make a hundred pages of the same sentence.
    same: dict[tuple, list] = {}
    for d in diags:
        sentence = L.sentence(d.text)
        key = (str(d.severity), d.slug, sentence) if d.offset is None and d.path else (id(d),)
        same.setdefault(key, []).append((d, sentence))
    rows = []
    for group in same.values():
        d, sentence = group[0]
        where = (text(d.path) if len(group) == 1 else
                 Cell(L.text(Text("data-quality.files", first=d.path, n=len(group) - 1)), title=d.path))
        rows.append([
            Cell(L.get(str(d.severity), str(d.severity)), tone=str(d.severity)),  # type: ignore[arg-type]
            Cell(d.slug),
            Cell(sentence),
            where,
            cell(d.offset, fmt.integer),
        ])
    cols = [L["severity"], L["code"], L["message"], L["file"], L["location"]]
    return Section("data-quality", L["data_quality"], (_table("diagnostics", cols, "wwllw", rows, collapsed=len(rows) > 30),))


def _throughput(a: t.Analysis, L: Labels, base: t.Analysis | None) -> Section:
    tp = a.throughput
    w = tp.window
    blocks: list[Block] = []
    ranges = excluded_ranges(w.excluded)
    if w.start_step is not None and w.end_step is not None:
        blocks.append(
            Paragraph(
                L["window_summary"].format(
                    start=fmt.step(w.start_step), end=fmt.step(w.end_step), kept=fmt.integer(w.steps_kept),
                    excluded=fmt.integer(w.excluded.height), ranges=fmt.integer(len(ranges)),
                )
            )
        )
    else:
        blocks.append(Paragraph(L["no_window"].format(reason=L.text(w.reason) or L["unknown"]), "warning"))
    if w.caveat is not None:  # the figures rest on few or marked steps (analysis/window.py)
        blocks.append(Paragraph(L.sentence(w.caveat), "warning"))
    if tp.timing in ("timer", "logged"):
        blocks.append(Paragraph(L[f"timing_{tp.timing}"], "warning" if tp.timing == "timer" else "muted"))
    elif recorder_format(a) is not None:
        blocks.append(Paragraph(L["timing_callback"], "muted"))
    phases = [(p.name, p.start_step, p.end_step) for p in a.phases.phases]
    window = (w.start_step, w.end_step) if w.start_step is not None and w.end_step is not None else None
    spec = charts.step_time_chart(a.steps, window, L, phases)
    if spec:
        blocks.append(Chart("chart-step-time", L["step_time"], spec))
    # figures table, with the baseline beside when there is one
    bt = base.throughput if base else None
    figs: list[tuple[str, str, Callable[[t.Throughput], t.Figure], Callable[[Any], str]]] = [
        ("step_time_s", {"e2e": "step_time_e2e", "timer": "step_time_timer"}.get(tp.timing, "fig_step_time_s"),
         lambda x: x.step_time_s, fmt.duration),
        ("", "step_time_in_step", lambda x: x.in_step_time_s, fmt.duration),
        ("", "gap_share", lambda x: x.gap_share, fmt.percent),
        ("tokens_per_s", "fig_tokens_per_s", lambda x: x.tokens_per_s, fmt.tokens_per_s),
        ("samples_per_s", "fig_samples_per_s", lambda x: x.samples_per_s, fmt.samples_per_s),
        ("", "fig_steps_per_s", lambda x: x.steps_per_s, lambda v: fmt.number(v) + " steps/s"),
        ("", "global_batch_size", lambda x: x.global_batch_size, fmt.integer),
        ("", "seq_length", lambda x: x.seq_length, fmt.integer),
        ("", "tokens_per_step", lambda x: x.tokens_per_step, fmt.integer),
    ]
    rows = []
    for name, key, get, f in figs:
        cur = get(tp)
        row = [Cell(L.get(key, key.replace("_", " ")), title=L.text(cur.method)), _flag_cell(a, name, fig_cell(cur, f, L), L)]
        if bt:
            row.append(fig_cell(get(bt), f, L))
        row.append(Cell(_how(cur, L), tone="muted"))
        rows.append(row)
    if tp.step_time:
        s = tp.step_time
        stat_rows = [
            (L["median"], fmt.duration(s.median)),
            (L["ci95"], f"{fmt.duration(s.median_ci_low)} – {fmt.duration(s.median_ci_high)}"),
            (L["trimmed_mean"], fmt.duration(s.trimmed_mean)),
            (L["p10_p90"], f"{fmt.duration(s.p10)} – {fmt.duration(s.p90)}"),
            ("p99", fmt.duration(s.p99)),
            ("MAD", fmt.duration(s.mad)),
        ]
        for label, value in stat_rows:
            row = [Cell(f"{L['step_time']}{L['colon']}{label}"), Cell(value)]
            if bt:
                row.append(Cell(MISSING, tone="muted"))
            row.append(Cell(f"n = {fmt.integer(s.count)}", tone="muted"))
            rows.append(row)
    for key, f in sorted(tp.implied.items()):
        row = [Cell(L.fmt("logged", tag=L.get(key, key))), fig_cell(f, lambda v: fmt.number(v, 4), L)]
        if bt:
            row.append(fig_cell(bt.implied[key], lambda v: fmt.number(v, 4), L) if key in bt.implied else Cell(MISSING, tone="muted"))
        row.append(Cell(L.text(f.method), tone="muted"))
        rows.append(row)
    for tag, f in sorted(tp.logged.items()):
        row = [Cell(L.fmt("logged", tag=tag)), fig_cell(f, lambda v: fmt.number(v, 4), L)]
        if bt:
            row.append(fig_cell(bt.logged[tag], lambda v: fmt.number(v, 4), L) if tag in bt.logged else Cell(MISSING, tone="muted"))
        row.append(Cell(L.text(f.source or f.method), tone="muted"))
        rows.append(row)
    cols = [L["figure"], L["current"]] + ([L["baseline"]] if bt else []) + [L["source"]]
    blocks.append(_table("throughput", cols, "lr" + ("r" if bt else "") + "l", rows))
    # excluded steps: counts by reason with the rule, then the steps (collapsed)
    if w.excluded_counts:
        rows = [[Cell(L.name("reason_", r)), Cell(fmt.integer(c)), Cell(L.text(w.rules.get(r)), tone="muted")] for r, c in sorted(w.excluded_counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        blocks.append(_table("excluded-counts", [L["excluded_reason"], L["steps"], L["rule"]], "lrl", rows, caption=L["excluded_steps"]))
    if ranges:
        rows = [[Cell(fmt.step(s) if s == e else f"{fmt.step(s)} – {fmt.step(e)}"), Cell(fmt.integer(e - s + 1)), Cell(L.name("reason_", r))]
                for s, e, r in ranges]
        blocks.append(_table("excluded-steps", [L["step_range"], L["steps"], L["excluded_reason"]], "rrl", rows, caption=L["excluded_ranges"], collapsed=True))
    return Section("throughput", L["throughput"], tuple(blocks))


def _how(f: t.Figure, L: Labels) -> str:
    """How a figure was obtained and from where ("setting x" says no more than its source)."""
    if not f.known:
        return L.text(f.reason)
    if f.method is None or f.method.key == "method.setting":
        return L.text(f.source)
    return f"{L.text(f.method)} · {L.text(f.source)}" if f.source else L.text(f.method)


def _mfu(a: t.Analysis, L: Labels) -> Section:
    m = a.mfu
    rows = [
        (L["mfu"], m.mfu, fmt.percent),
        (L["mfu_causal"], m.mfu_causal, fmt.percent),
        (L["mfu_params"], m.model.params, fmt.si_count),
        (L["params_total"], m.model.params_total, fmt.si_count),
        (L["params_non_embedding"], m.model.params_non_embedding, fmt.si_count),
        (L["embedding_params"], m.model.embedding_params, fmt.si_count),
        (L["position_embedding_params"], m.model.position_embedding_params, fmt.si_count),
        (L["flops_per_token"], m.flops_per_token, lambda v: fmt.si(v, "FLOP")),
        (L["flops_per_token_causal"], m.flops_per_token_causal, lambda v: fmt.si(v, "FLOP")),
        (L["peak_per_device"], m.peak_flops, fmt.flops),
        (L["devices"], m.devices, fmt.integer),
        (L["achieved_per_device"], m.achieved_tflops_per_device, lambda v: fmt.flops(v * 1e12)),
    ]
    rows += [(L.fmt("logged", tag=k), f, lambda v: fmt.number(v, 4)) for k, f in sorted(m.logged.items())]
    rows += [(k, f, lambda v: fmt.integer(v) if float(v).is_integer() else fmt.number(v, 4)) for k, f in sorted(m.architecture.items())]
    table_rows = [
        [Cell(label), _flag_cell(a, "mfu", fig_cell(f, ff, L), L) if f is m.mfu else fig_cell(f, ff, L), Cell(L.text(f.method), tone="muted"),
         Cell(L.text(f.source or f.reason), tone="muted")]
        for label, f, ff in rows
    ]
    blocks: list[Block] = [
        Paragraph(L["mfu_formula"]),
        _table("mfu", [L["quantity"], L["value"], L["method"], L["source"]], "lrll", table_rows),
    ]
    if m.model.checkpoint:
        blocks.append(Paragraph(L.fmt("params_from", path=m.model.checkpoint), "muted"))
    return Section("mfu", L["mfu_derivation"], tuple(blocks))


def _convergence(a: t.Analysis, L: Labels, base: t.Analysis | None, base_id: str) -> Section:
    blocks: list[Block] = []
    bsteps = base.steps if base else None
    for x in ("step", "tokens"):
        if x == "tokens" and a.steps.filter(pl.col("tokens").is_not_null()).is_empty():
            continue
        spec = charts.loss_chart(a.steps, bsteps, L, x=x, baseline_name=base_id)
        if spec:
            blocks.append(Chart(f"chart-loss-{x}", L[f"loss_by_{x}"], spec))
    for make, cid, title in (
        (lambda: charts.grad_norm_chart(a.steps, L), "chart-grad-norm", L["grad_norm"]),
        (lambda: charts.lr_chart(a.steps, bsteps, L, base_id), "chart-lr", L["learning_rate"]),
    ):
        spec = make()
        if spec:
            blocks.append(Chart(cid, title, spec))
    c = a.convergence
    bc = base.convergence if base else None
    figs: list[tuple[str, Callable[[t.Convergence], t.Figure], Callable[[Any], str]]] = [
        (L["initial_loss"], lambda x: x.initial_loss, fmt.loss),
        (L["fig_final_smoothed_loss"], lambda x: x.final_smoothed_loss, fmt.loss),
        (L["min_loss"], lambda x: x.min_smoothed_loss, fmt.loss),
        (L["fig_convergence_step"], lambda x: x.convergence_step, fmt.step),
        (L["convergence_tokens"], lambda x: x.convergence_tokens, fmt.tokens),
        (L["time_to_converge"], lambda x: x.convergence_hours, lambda v: fmt.duration(v * 3600)),
        (L["eval_loss"], lambda x: x.eval_loss_last, fmt.loss),
    ]
    rows = []
    for label, get, f in figs:
        row = [Cell(label), fig_cell(get(c), f, L)] + ([fig_cell(get(bc), f, L)] if bc else []) + [Cell(L.text(get(c).method), tone="muted")]
        rows.append(row)
    cols = [L["figure"], L["current"]] + ([L["baseline"]] if bc else []) + [L["method"]]
    blocks.append(_table("convergence", cols, "lr" + ("r" if bc else "") + "l", rows, caption=L['smoothing'] + L['colon'] + L.text(c.smoothing)))
    if c.status == "not_converged":
        blocks.append(Paragraph(f"{L['not_converged']}{L['colon']}{L.text(c.convergence_step.reason)}", "warning"))
    left = [(L[f"left_out_{k}"], steps) for k, steps in sorted(c.left_out.items()) if steps]
    if left:
        blocks.append(Paragraph(f"{L['left_out']}{L['colon']}" + L["sentence_sep"].join(f"{k} {_step_list(v, L)}" for k, v in left), "muted"))
    if c.targets:
        trows = [
            [Cell(fmt.loss(tt.target) if tt.target is not None else MISSING), Cell(L[f"target_{tt.target_source}"], tone="muted"),
             fig_cell(tt.step, fmt.step, L), fig_cell(tt.tokens, fmt.tokens, L), fig_cell(tt.hours, lambda v: fmt.duration(v * 3600), L)]
            for tt in c.targets
        ]
        blocks.append(_table("time-to-target", [L["target"], L["source"], L["step"], L["tokens"], L["duration"]], "rlrrr", trows, caption=L["time_to_target"]))
    if c.aux_losses:
        arows = [[Cell(x.tag), text(x.first), text(x.last), text(x.min), text(x.final_smoothed), Cell(fmt.integer(x.nonfinite))] for x in c.aux_losses]
        cols = [L["loss"], L["aux_first"], L["aux_last"], L["aux_min"], L["aux_final"], L["nonfinite"]]
        blocks.append(_table("aux-losses", cols, "lrrrrr", arows))
    return Section("convergence", L["convergence"], tuple(blocks))


def _stability(a: t.Analysis, L: Labels) -> Section:
    st = a.stability
    blocks: list[Block] = []
    facts = [
        [Cell(L["nan_steps"]), Cell(fmt.integer(len(st.nan_steps))), Cell(_step_list(st.nan_steps, L), tone="muted")],
        [Cell(L["overflow_steps"]), Cell(fmt.integer(len(st.overflow_steps))), Cell(_step_list(st.overflow_steps, L), tone="muted")],
        [Cell(L["grad_leads_loss"]), fig_cell(st.grad_leads_loss, fmt.percent, L), Cell(L.fmt("within_steps", n=st.lead_window_steps), tone="muted")],
    ]
    blocks.append(_table("stability-facts", [L["figure"], L["value"], L["steps"]], "lrl", facts))
    # explosions, at any log density (analysis/stability.py): said where the spikes are
    blocks += [Paragraph(L.sentence(finding_text(f)), "warning") for f in a.findings if f.kind == t.FindingKind.EXPLOSION]
    for series in (st.loss, st.grad_norm):
        title = L["spikes_of"].format(tag=series.tag)
        if series.reason:
            blocks.append(Paragraph(f"{title}{L['colon']}{L.text(series.reason)}", "muted"))
            continue
        if not series.spikes:
            blocks.append(Paragraph(f"{title}{L['colon']}{L['no_spikes']}{L['paren'].format(L.text(series.rule))}", "good"))
            continue
        spec = charts.spike_height_chart([s.height for s in series.spikes], [str(s.recovery) for s in series.spikes], L)
        if spec and series is st.loss and len(series.spikes) >= MIN_SPIKES_FOR_HISTOGRAM:
            blocks.append(Chart("chart-spike-heights", L["spike_heights"], spec))
        summary = L.fmt(
            "spike_stats", title=title, n=fmt.integer(len(series.spikes)), p50=fmt.percent(series.height_p50),
            p90=fmt.percent(series.height_p90), max=fmt.percent(series.height_max), rule_label=L["rule"], rule=L.text(series.rule),
        )
        blocks.append(Paragraph(summary))
        rows = [
            [Cell(fmt.step(s.step)), Cell(fmt.number(s.value, 4)), Cell(fmt.number(s.baseline, 4)), Cell(fmt.percent(s.height)),
             Cell(fmt.number(s.score, 3)), Cell(fmt.integer(s.duration)),
             Cell(L.name("recovery_", s.recovery), tone="bad" if s.recovery == t.Recovery.NONE else ""),
             cell(s.recovery_steps, fmt.integer)]
            for s in series.spikes
        ]
        cols = [L["step"], L["peak"], L["median"], L["height"], "z", L["duration"], L["recovery"], L["steps"]]
        blocks.append(_table(f"spikes-{_slug(series.tag)}", cols, "rrrrrrlr", rows, collapsed=len(rows) > 20))
    return Section("stability", L["stability"], tuple(blocks))


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in s.lower()).strip("-") or "x"


def _step_list(steps: Sequence[int], L: Labels, limit: int = 12) -> str:
    shown = L.join(fmt.step(s) for s in steps[:limit])
    return shown + (f"{L['list_sep']}… (+{len(steps) - limit})" if len(steps) > limit else "")


def _phases(a: t.Analysis, L: Labels, base: t.Analysis | None) -> Section:
    p = a.phases
    blocks: list[Block] = []
    if p.reason:
        blocks.append(Paragraph(L.sentence(p.reason), "muted"))
    if p.phases:
        rows = [
            [Cell(L.name("phase_", ph.name), title=L.text(ph.rule)), Cell(fmt.step(ph.start_step)), Cell(fmt.step(ph.end_step)),
             cell(ph.step_time_median_s, fmt.duration), cell(ph.tokens_per_s, fmt.tokens_per_s),
             cell(ph.max_allocated_bytes, fmt.bytes_), cell(ph.data_wait_share, fmt.percent), cell(ph.comm_share, fmt.percent),
             Cell(L.join(f"{L.name('event_', k)} × {v}" for k, v in sorted(ph.events.items())), tone="muted")]
            for ph in p.phases
        ]
        cols = [L["phase"], L["first_step"], L["last_step"], L["step_time"], L["tokens_per_s"], L["max_memory"], L["wait_share"], L["comm_share"], L["events"]]
        blocks.append(_table("phases", cols, "lrrrrrrrl", rows, caption=L.sentence(p.rule)))
    r = a.ranks
    if r.reason:
        blocks.append(Paragraph(f"{L['per_rank']}{L['colon']}{L.text(r.reason)}", "muted"))
    elif r.ranks:
        rdf = pl.DataFrame(
            [{"rank": x.rank, "median_step_time_s": x.median_step_time_s, "slow": x.slow, "excess": x.excess} for x in r.ranks],
            schema={"rank": pl.Int64, "median_step_time_s": pl.Float64, "slow": pl.Boolean, "excess": pl.Float64},
        )
        spec = charts.rank_chart(rdf, L)
        if spec:
            blocks.append(Chart("chart-ranks", L["per_rank"], spec))
        # Slowest first: the chart shows rank order, and on paper a long table keeps its first rows only.
        slowest_first = sorted(r.ranks, key=lambda x: (-(x.median_step_time_s or 0.0), x.rank))
        rows = [[Cell(str(x.rank)), Cell(fmt.integer(x.steps)), cell(x.median_step_time_s, fmt.duration),
                 cell(x.others_median_s, fmt.duration), cell(x.excess, fmt.rel_delta),
                 Cell(L["slow"] if x.slow else "", tone="bad" if x.slow else "")] for x in slowest_first]
        # the slow ranks as groups (stages, nodes, odd/even, ranges), said before the long table
        groups = [L.sentence(rank_group_text(g)) for g in group_params(r)]
        notes = [L.text(Text("ranks.basis.profile"))] if r.basis == "profile" else []
        if r.node_size and any(g.kind == t.RankGroupKind.NODE for g in r.groups):
            notes.append(L.text(Text(f"ranks.nodes.{r.node_source}", size=r.node_size)))
        if groups or notes:
            sep = L["stop"] + ("" if L.lang == "zh" else " ")
            blocks.append(Paragraph(sep.join([*groups, *notes]) + (L["stop"] if groups and not notes else "")))
        spread = f" {L['rank_spread']}{L['colon']}{fmt.percent(r.spread)}{L['stop']}" if r.spread is not None else ""
        blocks.append(_table("ranks", [L["rank"], L["steps"], L["median"], L["others_median"], L["excess"], ""], "rrrrrl", rows,
                             caption=f"{L.sentence(r.rule)}{L['stop']}{spread}", collapsed=len(rows) > 16))
    return Section("phases", L["phases"], tuple(blocks))


def _checkpoints(a: t.Analysis, L: Labels) -> Section:
    saves = a.phases.checkpoint_saves
    tax = a.phases.checkpoint_tax
    tax_text = fmt.percent(tax.value) if tax.known else f"{MISSING} {L.text(tax.reason)}"
    blocks: list[Block] = [Paragraph(f"{L['checkpoint_tax']}{L['colon']}{tax_text} · {L.fmt('saves', n=fmt.integer(len(saves)))}")]
    if saves:
        df = pl.DataFrame(
            [{"step": s.step, "save_s": s.save_s, "size": fmt.bytes_(s.bytes) if s.bytes is not None else MISSING} for s in saves],
            schema={"step": pl.Int64, "save_s": pl.Float64, "size": pl.Utf8},
        )
        spec = charts.checkpoint_chart(df, L)
        if spec:
            blocks.append(Chart("chart-checkpoints", L["checkpoints"], spec))
        rows = [[cell(s.step, fmt.step), text(s.path), cell(s.bytes, fmt.bytes_), cell(s.save_s, fmt.duration), Cell(L.text(s.method), tone="muted")] for s in saves]
        blocks.append(_table("checkpoints", [L["step"], L["file"], L["size"], L["save_time"], L["method"]], "rlrrl", rows, collapsed=len(rows) > 20))
    others = [f for f in a.phases.checkpoint_files if not f.save]
    if others:  # every file read is listed: these are the ones that are not saves (the tax leaves them out)
        rows = [[text(f.path), cell(f.rank, fmt.integer), cell(f.step, fmt.step), cell(f.bytes, fmt.bytes_),
                 cell(f.params, fmt.integer), Cell(f.kind or MISSING, tone="muted")] for f in others]
        blocks.append(Paragraph(L.fmt("other_checkpoints", n=fmt.integer(len(others)))))
        blocks.append(_table("checkpoint-files", [L["file"], L["rank"], L["step"], L["size"], L["model_params"], L["kind"]],
                             "lrrrrl", rows, collapsed=len(rows) > 20))
    return Section("checkpoints", L["checkpoints"], tuple(blocks))


_CHECK_TONE: dict[str, Tone] = {"pass": "good", "warn": "warning", "fail": "bad", "unknown": "muted"}
def _evidence(value) -> str:
    """Config evidence as people write it: 8, not 8.0; 0.0312, not 0.031234567."""
    if isinstance(value, float) and value.is_integer():
        return fmt.integer(value)
    if isinstance(value, float):
        return fmt.number(value)
    return str(value)


MIN_SPIKES_FOR_HISTOGRAM = 5

_CHECK_LABEL = {"pass": "ok", "warn": "warn", "fail": "fail", "unknown": "unknown"}


def _config_checks(a: t.Analysis, L: Labels) -> Section:
    if not a.config_checks:
        return Section("config", L["config_checks"], (Paragraph(L["section_empty"], "muted"),))
    rows = [
        [Cell(check_name(c.name, L.lang)), Cell(L[_CHECK_LABEL.get(str(c.status), "unknown")], tone=_CHECK_TONE.get(str(c.status), "")), Cell(L.text(c.detail) + (f" — {L['check_fix']}{L['colon']}{L.text(c.fix)}" if c.fix is not None else "")),
         Cell(", ".join(f"{k}={_evidence(v)}" for k, v in sorted(c.evidence.items()) if v is not None), tone="muted")]
        for c in a.config_checks
    ]
    return Section("config", L["config_checks"], (_table("config-checks", [L["check"], L["status"], L["detail"], L["value"]], "lwll", rows),))


def _value(v: Any, L: Labels) -> Cell:
    from .catalog import setting_value

    return Cell(MISSING, tone="muted") if v is None or v == "" else Cell(setting_value(v, L.lang))


def _effects(key: str, L: Labels) -> str:
    """The families of figures a change of the setting can move (analysis/identity.py)."""
    from ..analysis.identity import effects

    moved = [f for f in t.Family if f in effects(key)]
    return L.join(L.name("family_", f) for f in moved) if moved else L["nothing"]


def recorder_format(a: t.Analysis) -> str | None:
    """The format of postmortem's callback records the run was read from (the `recorder` setting), or None."""
    from ..records import RECORDER

    for r in a.identity.settings:
        if r.key == "recorder" and str(r.value).startswith(RECORDER):
            return str(r.value)[len(RECORDER):].strip() or "?"
    return None


def _settings(a: t.Analysis, L: Labels) -> Section:
    """The run's identity: the settings that define it, grouped, with the file each was read from;
    the run's own values (outcomes, paths, derived counts) apart and collapsed."""
    from .catalog import render, source_text

    ident = a.identity
    blocks: list[Block] = []
    versions = [f"{render(Text('version.' + k), L.lang)}{L['colon']}{v if v else MISSING}" for k, v in ident.versions.items()]
    if versions:
        blocks.append(Paragraph(" · ".join(versions)))
        if not all(ident.versions.values()):
            blocks.append(Paragraph(L["versions_missing"] + L["colon"] + render(Text("version.not-found"), L.lang), "muted"))
    rows, run_rows, last = [], [], None
    for r in ident.settings:
        if str(r.group) in ("framework",) and r.key in ident.versions:
            continue  # said above
        row = [Cell(render(Text(f"group.{r.group}"), L.lang) if r.group != last else ""), Cell(r.key), _value(r.value, L),
               Cell(source_text(r.source, L.lang), tone="muted")]
        (run_rows if r.group == t.SettingGroup.RUN else rows).append(row)
        last = r.group
    if rows:
        blocks.append(_table("settings", [L["group"], L["setting"], L["value"], L["source"]], "lllw", rows, caption=L["settings_note"]))
    elif not versions:
        blocks.append(Paragraph(L["no_settings"], "muted"))
    if run_rows:
        for r in run_rows:
            r[0] = Cell("")
        blocks.append(_table("run-values", [" ", L["setting"], L["value"], L["source"]], "lllw", run_rows, caption=L["run_values"],
                             collapsed=True))
    return Section("settings", L["settings"], tuple(blocks))


def _settings_diff(a: t.Analysis, L: Labels) -> Section | None:
    """Changed against the baseline, what can explain a change first (hyperparameters, the parallel
    layout); the run's own values (the last loss, paths, FLOPs derived from other settings) apart."""
    from ..analysis.identity import explaining_order, per_run

    comp = a.comparison
    if comp is None:
        return None
    d = comp.settings
    changes = sorted(((kind, c) for kind, cs in (("changed", d.changed), ("added", d.added), ("removed", d.removed)) for c in cs),
                     key=lambda kc: explaining_order(kc[1].key))
    rows, run_rows = [], []
    for kind, c in changes:
        row = [Cell(c.key), _value(c.baseline, L), _value(c.current, L), Cell(L[kind], tone="warning" if kind == "changed" else "")]
        if per_run(c.key):
            run_rows.append(row)
        else:
            rows.append([*row, Cell(_effects(c.key, L), tone="muted")])
    if not rows and not run_rows:
        return Section("diff", L["diff"], (Paragraph(L["no_diff"]),))
    base = L['baseline'] + L['paren'].format(comp.baseline_id)
    blocks: list[Block] = []
    if rows:
        blocks.append(_table("settings-diff", [L["setting"], base, L["current"], L["change"], L["can_explain"]], "lllwl", rows,
                             caption=L["settings_diff"]))
    else:
        blocks.append(Paragraph(L["no_diff"]))
    if run_rows:
        blocks.append(_table("run-values-diff", [L["setting"], base, L["current"], L["change"]], "lllw", run_rows,
                             caption=L["run_values"], collapsed=True))
    return Section("diff", L["diff"], tuple(blocks))


def _findings(a: t.Analysis, L: Labels) -> Section:
    if not a.findings:
        return Section("findings", L["findings"], (Paragraph(L["no_findings"], "good"),))
    findings = sorted(a.findings, key=lambda f: _SEVERITY_ORDER.get(str(f.severity), 3))
    return Section("findings", L["findings"], (ItemList(tuple(_finding_item(f, L) for f in findings)),))


def _appendix(inventory: Sequence[InventoryEntry], L: Labels) -> Section:
    claimed = [e for e in inventory if e.reader]
    unclaimed = [e for e in inventory if not e.reader]
    blocks: list[Block] = []
    if claimed:
        rows = [[Cell(e.rel), Cell(e.reader or ""), Cell(fmt.integer(e.rows)), Cell(fmt.bytes_(e.size)), cell(e.rank, str), Cell(_note(e.note, L), tone="muted")] for e in claimed]
        blocks.append(_table("inventory", [L["file"], L["reader"], L["rows"], L["size"], L["rank"], L["note"]], "llrrrl", rows, collapsed=len(rows) > 30))
    elif not inventory:
        blocks.append(Paragraph(L["section_empty"], "muted"))
    if unclaimed:
        rows = [[Cell(e.rel), Cell(fmt.bytes_(e.size)), cell(e.rank, str), Cell(_note(e.note, L), tone="muted")] for e in unclaimed]
        blocks.append(_table("unclaimed", [L["file"], L["size"], L["rank"], L["note"]], "lrrl", rows, caption=L["unclaimed"]))
    elif inventory:
        blocks.append(Paragraph(L["no_unclaimed"], "muted"))
    return Section("appendix", L["appendix"], tuple(blocks))


def _note(note: str, L: Labels) -> str:
    """Why a file was not read (a code; an archive from before codes keeps its words)."""
    from .catalog import name

    return name("inventory.", note, L.lang) if note else ""


# --------------------------------------------------------------------------- entry point


def _failed_summary(a: t.Analysis, L: Labels) -> Summary | None:
    """A run that died before its first step has no figure to show: the summary says so once
    instead of a row of missing marks (the failure leads the verdict above it)."""
    if a.failure is None or a.step_range is not None:
        return None
    return Summary(badges=(), stats=(), findings=(), note=L.text(Text("failure.no-steps")))


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
    from .health_view import health_section  # it builds on this module's blocks
    from .layout_view import layout_section
    from .profile_view import profile_section  # it builds on this module's blocks

    L = fmt.labels(lang)
    a = analysis
    if inventory is None:
        inventory = getattr(a, "inventory", ()) or ()
    base = a.baseline
    base_id = a.comparison.baseline_id if a.comparison else (base.run_id if base else "")
    from .history_view import history_section

    from .failure_view import section as failure_section

    sections = [
        failure_section(a.failure, L),  # a failed run: how it died, first
        _headline_section(a, L),
        _findings(a, L),
        history_section(a.history, L),  # what is normal for the experiment, with or without a baseline
        _settings(a, L),
        _data_quality(a, L),
        _throughput(a, L, base),
        _mfu(a, L),
        _convergence(a, L, base, base_id),
        _stability(a, L),
        _phases(a, L, base),
        profile_section(a, L),
        _checkpoints(a, L),
        layout_section(a, L),
        health_section(a, L),
        _config_checks(a, L),
        _settings_diff(a, L),
        _appendix(inventory, L),
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
    from .verdict import verdict_block

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
        labels=dict(fmt.CATALOGS[lang]),
        summary=_failed_summary(a, L) or _summary(a, L),
        sections=tuple(shown),
        meta=tuple(meta),
    )
