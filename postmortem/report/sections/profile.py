"""The profiler section: the triage, the step breakdown, the article's three graphs (§5.3: data
preprocessing and iteration gap, operator time TopN, communication share and operators), the
ranks (who waits for whom) and the memory split — each beside the baseline's where there is one.

Only layout decisions here; the words are report/messages.py's, the numbers words/numbers.py's.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ...analysis import types as t
from ...analysis.thresholds import OUTLIER_RATIO, SLOW_LINK_RATIO
from ...text import Text
from ...words import MISSING, Labels, numbers as fmt, render
from .. import profile_charts
from ..blocks import Block, Cell, Chart, Item, ItemList, Paragraph, Section, Tone, cell, table
from ..messages import action_text, dash, evidence_text, part_text, reason_text, verdict_text
from .domains import domain_blocks

# The tool whose own analysis a layout is (for "MindSpore's own" beside ours).
TOOLS = {"cluster_analyse": "MindSpore", "cluster_step_trace_time": "msprof-analyze", "step_trace_time": "MindSpore / torch_npu",
         "trace_view": "MindSpore / torch_npu", "msprof_timeline": "msprof", "msprof_step_trace": "msprof"}
RANKS_SHOWN = 12  # per end, above that many ranks the chart and table show the ends and the stragglers
_VERDICT_TONE: dict[str, Tone] = {"unknown": "muted"}


def _names(lang: str) -> dict[str, str]:
    return {p: part_text(p, lang) for p in (*t.PARTITION, *t.BESIDE)}


def _pc(x: float | None) -> str:
    return fmt.percent(x) if x is not None else MISSING


# --------------------------------------------------------------------------- triage


def _triage(a: t.Analysis, L: Labels) -> list[Block]:
    tri = a.triage
    lang = L.lang
    blocks: list[Block] = [Paragraph(f"{L['triage']}{L['colon']}{verdict_text(tri.verdict, lang)}{dash(lang)}{reason_text(tri.reason, tri.params, lang)}",
                                     _VERDICT_TONE.get(str(tri.verdict), "warning"))]
    if tri.actions:
        blocks.append(Paragraph(L["triage_actions"]))
        blocks.append(ItemList(tuple(Item(action_text(x, lang), tag=str(i + 1)) for i, x in enumerate(tri.actions))))
    if tri.also:
        blocks.append(Paragraph(L["triage_also"]))
        blocks.append(ItemList(tuple(Item(reason_text(s.reason, s.params, lang), tag=verdict_text(s.verdict, lang))
                                     for s in tri.also)))
    if tri.evidence:
        has_base = a.baseline is not None
        rows = []
        for e in tri.evidence:
            row = [Cell(evidence_text(e.key, lang)), cell(e.value, _pc)]
            if has_base:
                row.append(cell(e.baseline, _pc))
            row.append(cell(e.threshold, lambda v: fmt.percent(v, 0)))
            rows.append(row)
        cols = [L["evidence"], L["current"], *([L["baseline"]] if has_base else []), L["threshold"]]
        blocks.append(table("triage-evidence", cols, "lr" + ("r" if has_base else "") + "r", rows))
    return blocks


# --------------------------------------------------------------------------- breakdown


def _breakdown(a: t.Analysis, L: Labels) -> list[Block]:
    p = a.profile
    assert p is not None
    b = p.breakdown
    if b is None:
        return [Paragraph(L["no_breakdown"], "muted")]
    names = _names(L.lang)
    base = a.baseline.profile.breakdown if a.baseline and a.baseline.profile else None
    # short bar names (the chart's labels are measured in one font and drawn in another on paper);
    # the table's caption says which layout each is
    short = [L["current"] if base else "postmortem"] + [TOOLS.get(x.source, x.source) for x in p.alternatives]
    short += [L["baseline"]] if base else []
    bars = list(zip(short, [b.shares, *(x.shares for x in p.alternatives), *([base.shares] if base else [])]))
    blocks: list[Block] = []
    spec = profile_charts.breakdown_chart(bars, names, L["profile_breakdown"], L)
    if spec:
        blocks.append(Chart("chart-profile", L["profile_breakdown"], spec))
    others = [*p.alternatives, *([base] if base else [])]
    rows = []
    for part in (*t.PARTITION, *t.BESIDE):
        if b.seconds[part] is None and all(x.seconds[part] is None for x in others):
            continue
        beside = part in t.BESIDE
        row = [Cell(names[part], tone="muted" if beside else "", title=L["beside"] if beside else ""),
               cell(b.seconds[part], fmt.duration, L["not_given"]), cell(b.shares[part], fmt.percent, L["not_given"])]
        row += [cell(x.shares[part], fmt.percent, L["not_given"]) for x in others]
        rows.append(row)
    rows.append([Cell(L["step_time"]), cell(b.step_time_s, fmt.duration), Cell("100%")]
                + [Cell("100%") for _ in others])
    cols = [L["part"], L["per_step"], *short]
    blocks.append(table("profile-breakdown", cols, "lrr" + "r" * len(others), rows,
                         caption=L["breakdown_note"].format(steps=fmt.integer(b.steps), ranks=fmt.integer(b.ranks),
                                                            source=b.source, excluded=fmt.integer(b.excluded))
                         + "".join(f" {name}{L['colon']}{L['tool_own'].format(tool=name, source=x.source)}{L['stop']}"
                                   for name, x in zip(short[1:], p.alternatives))))
    blocks.append(Paragraph(L["profile_comm_line"].format(label=L["comm_share"], share=_pc(b.comm_share), n=fmt.integer(b.steps)),
                            "bad" if b.comm_flag else ""))
    if p.outliers:
        rows = [[Cell(str(o.rank)), Cell(fmt.step(o.step)), Cell(fmt.duration(o.total_s)), Cell(fmt.duration(o.median_s)),
                 Cell(f"{names.get(o.part, o.part)} {fmt.duration(o.part_s)}" if o.part else MISSING)] for o in p.outliers]
        blocks.append(table("profile-outliers", [L["rank"], L["profiled_step"], L["step_time"], L["median"], L["grew"]], "rrrrl",
                             rows, caption=f"{L['outliers']}{L['colon']}{L['outliers_note'].format(ratio=fmt.number(OUTLIER_RATIO))}",
                             collapsed=len(rows) > 16))
    return blocks


# --------------------------------------------------------------------------- graph 1: data


def _step_rank(p: t.Profile, ranks: Sequence[t.RankProfile]) -> int | None:
    """The rank whose steps are drawn: a straggler's waiting rank shows the wait best; else the lowest."""
    if p.steps.is_empty():
        return None
    waiting = [r.rank for r in ranks if r.role == t.RankRole.WAITS]
    return waiting[0] if waiting else int(p.steps["rank"].min())


def _long_steps(p: t.Profile, rank: int, run: str) -> pl.DataFrame:
    rows = p.steps.filter(pl.col("rank") == rank)
    return rows.select(pl.lit(run).alias("run"), "step", *t.PARTITION).unpivot(
        index=["run", "step"], variable_name="part", value_name="seconds")


def _graph_data(a: t.Analysis, L: Labels) -> list[Block]:
    p = a.profile
    assert p is not None
    blocks: list[Block] = []
    rank = _step_rank(p, a.ranks.profile)
    if rank is not None:
        base = a.baseline.profile if a.baseline and a.baseline.profile else None
        parts = [_long_steps(p, rank, L["current"] if base else f"{L['rank']} {rank}")]
        if base is not None and not base.steps.is_empty():
            brank = _step_rank(base, a.baseline.ranks.profile)
            parts.append(_long_steps(base, brank, L["baseline"]))
        title = f"{L['graph_data']}{dash(L.lang)}{L['steps_of_rank'].format(rank=rank)}"
        spec = profile_charts.profile_steps_chart(pl.concat(parts), _names(L.lang), title, L)
        if spec:
            blocks.append(Chart("chart-profile-steps", title, spec))
    d = p.data
    if d is not None:
        if d.queue_empty_share is not None:
            blocks.append(Paragraph(L["queue_line"].format(stage=d.queue_stage, share=_pc(d.queue_empty_share),
                                                            samples=fmt.integer(d.queue_samples), rank=d.rank),
                                    "bad" if d.queue_empty_share > 0.3 else ""))
        if d.slowest:
            blocks.append(Paragraph(L["slowest_line"].format(stage=d.slowest, rule=L[f"rule_{d.slowest_rule}"]), "warning"))
        elif d.slowest_rule == t.SlowestRule.NONE:
            blocks.append(Paragraph(L["no_slowest"].format(rule=L["rule_none"]), "good"))
        if d.stages:
            rows = [[Cell(s.stage, tone="bad" if s.stage == d.slowest else ""), cell(s.workers, fmt.integer),
                     cell(s.queue_usage, fmt.percent), cell(s.queue_empty_share, fmt.percent), cell(s.time_s, fmt.duration)]
                    for s in d.stages]
            blocks.append(table("data-pipeline", [L["stage"], L["workers"], L["queue_usage"], L["queue_empty"], L["duration"]],
                                 "lrrrr", rows, caption=L["data_pipeline"]))
    return blocks


# --------------------------------------------------------------------------- graph 2: operators


def _op_rows(stats: Sequence[t.OpStat], by_name: bool, L: Labels) -> list[list[Cell]]:
    rows = []
    for o in stats:
        flag = o.communication and o.share > 0.25
        row = [Cell(o.name or o.type, tone="bad" if flag else "", title=o.name or "")] if by_name else []
        row += [Cell(o.type, tone="bad" if flag and not by_name else ""), text_or_missing(o.core), cell(o.calls, fmt.integer),
                Cell(fmt.duration(o.total_s)), Cell(fmt.percent(o.share), tone="bad" if flag else "")]
        rows.append(row)
    return rows


def text_or_missing(value: str | None) -> Cell:
    return Cell(value) if value else Cell(MISSING, tone="muted")


def _graph_ops(a: t.Analysis, L: Labels) -> list[Block]:
    p = a.profile
    assert p is not None
    base_ops = {o.scope: o for o in (a.baseline.profile.operators if a.baseline and a.baseline.profile else ())}
    blocks: list[Block] = []
    for o in p.operators:
        scope = L[f"scope_{o.scope}"]
        share_title = L["share_of"].format(scope=scope)
        rows = [{"label": x.type, "run": L["current"], "share": x.share, "flag": x.communication} for x in o.by_type]
        b = base_ops.get(o.scope)
        if b is not None:
            rows += [{"label": x.type, "run": L["baseline"], "share": x.share, "flag": x.communication} for x in b.by_type]
        title = f"{L['graph_ops']} ({scope.strip()})"
        spec = profile_charts.share_bars_chart(rows, title, share_title, L)
        if spec:
            blocks.append(Chart(f"chart-ops-{o.scope}", title, spec))
        top_comm = next((x for x in o.by_type if x.communication), None)
        if o.scope == t.OpScope.KERNELS and top_comm is not None and top_comm.share > 0.25:
            blocks.append(Paragraph(L["comm_kernels_flag"].format(type=top_comm.type, share=fmt.percent(top_comm.share)), "bad"))
        note = L["ops_note"].format(source=o.source, ranks=fmt.integer(o.ranks), total=fmt.duration(o.total_s),
                                    types=fmt.integer(o.types), names=fmt.integer(o.names))
        cols = [L["op_type"], L["core"], L["calls"], L["time_per_rank"], share_title]
        blocks.append(table(f"ops-types-{o.scope}", cols, "llrrr", _op_rows(o.by_type, False, L), caption=f"{L['by_type']} · {note}"))
        if o.by_name and any(x.name != x.type for x in o.by_name):  # AI CPU files name ops by type only
            blocks.append(table(f"ops-names-{o.scope}", [L["operator"], *cols], "lllrrr", _op_rows(o.by_name, True, L),
                                 caption=L["by_name"], collapsed=True))
    return blocks


# --------------------------------------------------------------------------- graph 3: communication


def _graph_comm(a: t.Analysis, L: Labels) -> list[Block]:
    p = a.profile
    assert p is not None
    c = p.communication
    blocks: list[Block] = []
    if c is None:
        return blocks
    base = a.baseline.profile.communication if a.baseline and a.baseline.profile else None
    share_title = L["share_of_step"] if c.share_basis == "step" else L["share_of"].format(scope=L["scope_kernels"])
    if c.ops:
        rows = [{"label": x.type, "run": L["current"], "share": x.share, "flag": False} for x in c.ops[:20]]
        if base is not None and base.share_basis == c.share_basis:
            rows += [{"label": x.type, "run": L["baseline"], "share": x.share, "flag": False} for x in base.ops[:20]]
        spec = profile_charts.share_bars_chart(rows, L["graph_comm"], share_title, L)
        if spec:
            blocks.append(Chart("chart-comm-ops", L["graph_comm"], spec))
        trows = [[Cell(x.type), Cell(L.get(f"kind_{x.kind}", x.kind)), cell(x.calls, fmt.integer), Cell(fmt.duration(x.total_s)), cell(x.share, fmt.percent),
                  cell(x.wait_s, fmt.duration), cell(x.transit_s, fmt.duration)] for x in c.ops]
        note = L["comm_note"] if c.share_basis == "step" else L["comm_kernels_note"]
        blocks.append(table("comm-ops", [L["comm_type"], L["kind"], L["calls"], L["time_per_rank"], share_title, L["wait"],
                                          L["transit"]], "llrrrrr", trows, caption=note.format(source=c.source)))
    if c.links:
        lrows = [[Cell(x.transport), Cell(fmt.bytes_(x.bytes)), Cell(fmt.duration(x.transit_s)),
                  cell(x.bandwidth_gbps, lambda v: f"{fmt.number(v)} GB/s"), Cell(fmt.integer(x.ops))] for x in c.links]
        blocks.append(table("comm-links", [L["transport"], L["bytes_per_rank"], L["transit"], L["bandwidth"], L["rows"]], "lrrrr",
                             lrows, caption=L["links_note"].format(source=c.link_source)))
    return blocks + _slow_links(p.links, L) + domain_blocks(p, L)


LINKS_SHOWN = 20  # the slowest against their peers; every slow one is shown


def _slow_links(s: t.SlowLinks | None, L: Labels) -> list[Block]:
    """Per-link bandwidth against its peers (analysis/links.py), slowest first; or why no link can be judged."""
    if s is None:
        return []
    lang = L.lang
    if not s.links:
        return [Paragraph(render(s.reason, lang), "muted")] if s.reason is not None else []
    shown = [*s.slow, *[x for x in s.links if not x.slow][:max(LINKS_SHOWN - len(s.slow), 0)]]
    gbps = lambda v: f"{fmt.number(v)} GB/s"  # noqa: E731
    rows = [[Cell(f"{x.src_rank}→{x.dst_rank}" if x.dst_rank is not None else fmt.integer(x.src_rank), tone="bad" if x.slow else ""),
             Cell(x.transport), Cell(gbps(x.bandwidth_gbps), tone="bad" if x.slow else ""), Cell(gbps(x.reference_gbps)),
             Cell(fmt.percent(x.ratio, 0)), Cell(fmt.bytes_(x.bytes)), Cell(fmt.integer(x.transfers))] for x in shown]
    first = render(Text("links.col.rank" if s.unit == t.LinkUnit.RANK else "links.col.link"), lang)
    cols = [first, *(render(Text(f"links.col.{k}"), lang) for k in ("transport", "bandwidth", "peers", "ratio", "bytes", "transfers"))]
    note = render(Text("links.note", measured=s.measured, small=s.small, source=s.source, rule=s.rule), lang)
    blocks: list[Block] = []
    if not s.slow:
        blocks.append(Paragraph(render(Text("links.none-slow", ratio=SLOW_LINK_RATIO), lang)))
    blocks.append(table("comm-slow-links", cols, "llrrrrr", rows, caption=f"{render(Text('links.title'), lang)} · {note}",
                         collapsed=not s.slow))
    return blocks


# --------------------------------------------------------------------------- ranks


def _shown_ranks(ranks: Sequence[t.RankProfile]) -> list[t.RankProfile]:
    """All ranks in rank order when few; else the RANKS_SHOWN that wait most and least and every
    straggler, the most waiting first."""
    if len(ranks) <= 2 * RANKS_SHOWN:
        return sorted(ranks, key=lambda r: r.rank)
    order = sorted(ranks, key=lambda r: (-(r.wait_share or 0.0), r.rank))
    keep = {r.rank for r in order[:RANKS_SHOWN]} | {r.rank for r in order[-RANKS_SHOWN:]}
    keep |= {r.rank for r in order if r.role == t.RankRole.AWAITED}
    return [r for r in order if r.rank in keep]


def _role(r: t.RankProfile, L: Labels) -> str:
    return L[f"role_{r.role}"] if r.role != t.RankRole.NONE else ""


def _ranks(a: t.Analysis, L: Labels) -> list[Block]:
    ranks = a.ranks.profile
    if len(ranks) < 2:
        return []
    names = _names(L.lang)
    shown = _shown_ranks(ranks)
    blocks: list[Block] = []
    g = a.ranks.stragglers
    if g is not None:
        reason = "pipeline_wait" if (g.waiting_receive_share or 0.0) >= 0.5 else "straggler"
        params = {"waiting": g.waiting, "awaited": g.awaited, "wait_share": g.waiting_wait_share,
                  "awaited_wait_share": g.awaited_wait_share, "receive_share": g.waiting_receive_share, "cause": g.cause,
                  "cause_share": g.cause_share, "waiting_cause_share": g.waiting_cause_share}
        blocks.append(Paragraph(reason_text(reason, params, L.lang), "warning"))
    else:
        blocks.append(Paragraph(L["stragglers_none"], "muted"))
    rows = []
    for r in shown:
        label = f"{r.rank}" + (f" · {_role(r, L)}" if r.role != t.RankRole.NONE else "")
        for part in t.PARTITION:
            v = getattr(r, f"{part}_s", None) if part not in ("preparing",) else None
            rows.append({"label": label, "part": part, "share": v / r.step_time_s if v is not None and r.step_time_s else None})
    spec = profile_charts.rank_parts_chart(pl.DataFrame(rows, schema={"label": pl.Utf8, "part": pl.Utf8, "share": pl.Float64}), names,
                                   L["per_rank_profile"], L)
    if spec:
        blocks.append(Chart("chart-rank-profile", L["per_rank_profile"], spec))
    if len(ranks) > 2 * RANKS_SHOWN:
        blocks.append(Paragraph(L["ranks_shown"].format(shown=fmt.integer(len(shown)), n=fmt.integer(len(ranks)),
                                                        k=fmt.integer(RANKS_SHOWN)), "muted"))
        spec = profile_charts.distribution_chart([r.wait_share for r in ranks if r.wait_share is not None], L["wait_distribution"],
                                         L["wait_share_col"], L)
        if spec:
            blocks.append(Chart("chart-rank-wait-distribution", L["wait_distribution"], spec))
    tool_keys = sorted({k for r in ranks for k in r.tool if k.endswith(":wait_share") or k == "flops_utilization"})
    tool_names = {k: TOOLS.get(k.split(":")[0], k.split(":")[0]) if k.endswith(":wait_share") else "FLOPs" for k in tool_keys}
    tool_cols = list(tool_names.values())

    def share(v: float | None, r: t.RankProfile) -> float | None:
        return v / r.step_time_s if v is not None and r.step_time_s else None

    columns = [  # (header, align, cell of a rank); a column no rank has a value in is left out
        (L["rank"], "r", lambda r: Cell(str(r.rank))),
        (L["role"], "w", lambda r: Cell(_role(r, L), tone="bad" if r.role == t.RankRole.AWAITED else "")),
        (L["step_time"], "r", lambda r: cell(r.step_time_s, fmt.duration)),
        (L["compute_share_col"], "r", lambda r: cell(r.compute_share, fmt.percent)),
        (L["wait_share_col"], "r", lambda r: cell(r.wait_share, fmt.percent)),
        (L["receive_share_col"], "r", lambda r: cell(r.receive_share, fmt.percent)),
        (L["data_wait_col"], "r", lambda r: cell(share(r.data_wait_s, r), fmt.percent)),
        (L["idle_col"], "r", lambda r: cell(share(r.idle_s, r), fmt.percent)),
        *((col, "r", lambda r, k=k: cell(r.tool.get(k), fmt.percent)) for k, col in zip(tool_keys, tool_cols)),
    ]
    body = [[make(r) for _, _, make in columns] for r in shown]
    keep = [i for i in range(len(columns)) if i < 2 or any(row[i].text not in (MISSING, "") for row in body)]
    cols = [columns[i][0] for i in keep]
    trows = [[row[i] for i in keep] for row in body]
    align = "".join(columns[i][1] for i in keep)
    caption = " ".join(f"{name}{L['colon']}" + (L["tool_wait_share"].format(tool=name) if k.endswith(":wait_share")
                                                  else L["tool_flops_utilization"]) + L["stop"]
                       for k, name in tool_names.items())
    blocks.append(table("rank-profile", cols, align, trows, caption=caption, collapsed=len(trows) > 16))
    return blocks


# --------------------------------------------------------------------------- memory, tool figures


def _memory(p: t.Profile, L: Labels) -> list[Block]:
    m = p.memory
    if m is None:
        return []
    gap = L[f"gap_{m.gap}"] if m.gap else ""
    peak = m.peak_bytes

    def of_peak(v: float | None) -> Cell:
        return cell(v / peak if v is not None and peak else None, fmt.percent)

    rows = [
        [Cell(L["mem_peak"]), cell(m.peak_bytes, fmt.bytes_, gap), cell(m.peak_share, fmt.percent)],
        [Cell(L["mem_reserved"]), cell(m.reserved_bytes, fmt.bytes_), Cell("")],
        [Cell(L["mem_capacity"]), cell(m.capacity_bytes, fmt.bytes_, L["unknown"]), Cell("")],
        [Cell(L["mem_params"]), cell(m.parameters_bytes, fmt.bytes_, gap), of_peak(m.parameters_bytes)],
        [Cell(L["mem_grads"]), cell(m.gradients_bytes, fmt.bytes_, gap), of_peak(m.gradients_bytes)],
        [Cell(L["mem_optim"]), cell(m.optimizer_bytes, fmt.bytes_, gap), of_peak(m.optimizer_bytes)],
        [Cell(L["mem_act"]), cell(m.activations_bytes, fmt.bytes_, gap), of_peak(m.activations_bytes)],
    ]
    caption = L["mem_note"].format(rank=m.rank, component=m.component or MISSING, checkpoint=m.checkpoint or MISSING)
    blocks: list[Block] = [table("memory-split", [L["memory_split"], L["value"], L["mem_of_peak"]], "lrr", rows, caption=caption)]
    if gap:
        blocks.append(Paragraph(gap, "muted"))
    return blocks


def _tool(p: t.Profile, L: Labels) -> list[Block]:
    if not p.tool:
        return []
    units = {"flops_utilization": fmt.percent, "total_flops": lambda v: fmt.si(v, "FLOP"), "mean_op_flops_per_s": fmt.flops,
             "process_cpu_cores": fmt.number, "cpu_count": fmt.integer}
    rows = [[Cell(L.get(f"tool_{k}", k)), Cell(units.get(k, fmt.percent)(v))] for k, v in sorted(p.tool.items())]
    return [table("profile-tool", [L["tool_figures"], L["value"]], "lr", rows)]


# --------------------------------------------------------------------------- entry


def section(a: t.Analysis, L: Labels) -> Section:
    blocks: list[Block] = _triage(a, L)
    p = a.profile
    if p is None:
        blocks.append(Paragraph(L["no_profile"], "muted"))
        return Section("profile", L["profile_section"], tuple(blocks))
    blocks += _breakdown(a, L)
    for graph, make in (("graph_data", _graph_data), ("graph_ops", _graph_ops), ("graph_comm", _graph_comm)):
        made = make(a, L)
        blocks += made or [Paragraph(f"{L[graph]}{L['colon']}{L['no_' + graph]}", "muted")]
    blocks += _ranks(a, L)
    blocks += _memory(p, L)
    blocks += _tool(p, L)
    return Section("profile", L["profile_section"], tuple(blocks))


__all__ = ["section"]
