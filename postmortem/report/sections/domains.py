"""Communication by parallel domain in the report (analysis/domains.py): the profiler section's
tables (domains, groups, AI Core frequency, idle gaps), the verdict's item naming the costliest
domain with the article's moves for it, and metrics.json's ``profile.domains`` block.

Only layout decisions here; the words are words/catalog/domains.py's.
"""

from __future__ import annotations

from typing import Any

from ...analysis import types as t
from ...analysis.domains import IDLE_MHZ, CommDomains, DomainCost
from ...text import Text
from ...words import MISSING, Labels, labels, numbers as fmt, render
from ..blocks import Block, Cell, VerdictItem, cell, table

# The article's moves per domain (§3.1's table, §3.3), first to try first.
MOVES = {
    "DP": ("DP.parallel-optimizer", "DP.segmented", "DP.topology"),
    "PP": ("PP.micro", "PP.balance", "world.granularity"),
    "TP": ("TP.node", "TP.split", "world.granularity"),
    "CP": ("CP.overlap", "world.algorithm"),
    "EP": ("EP.node", "world.algorithm"),
    "world": ("world.algorithm", "world.granularity"),
}
COMM_ATTENTION = 0.25  # the article (§2.1, §5.3): communication past 25 % of the step needs attention
DOMAIN_NOTED = 0.05  # a domain below this share of the step is not worth a verdict line
GROUPS_SHOWN = 40


def _domain(d: str, lang: str) -> str:
    return render(Text(f"domain.{d}"), lang)


def _short(op_type: str) -> str:
    """hcom_allReduce -> allReduce: the table's column stays narrow (every HCCL type has the prefix)."""
    return op_type.removeprefix("hcom_")


def _layout_text(layout: dict[str, int], source: str | None) -> str:
    """"TP 8 × CP 1 × DP 4 × PP 2 = 64, EP 4 (source)"; a partial layout listed ("PP 2, world 4")."""
    if not layout:
        return ""
    if {"TP", "DP", "world"} <= layout.keys():
        text = " × ".join(f"{k} {layout[k]}" for k in ("TP", "CP", "DP", "PP") if k in layout) + f" = {layout['world']}"
        if layout.get("EP", 1) > 1:  # expert parallel subdivides the data-parallel ranks: beside the product
            text += f", EP {layout['EP']}"
    else:
        text = ", ".join(f"{k} {v}" for k, v in layout.items())
    return text + (f" ({source})" if source else "")


def _share(c: DomainCost) -> float | None:
    return c.exposed_share if c.exposed_share is not None else c.share


# --------------------------------------------------------------------------- the verdict


def domain_line(c: DomainCost, lang: str) -> str:
    exposed = None
    if c.exposed_share is not None:
        exposed = (Text("verdict.domain.hidden") if c.exposed_share <= 0 else Text("verdict.domain.all-exposed")
                   if c.share and c.exposed_share >= c.share * 0.995 else Text("verdict.domain.exposed", exposed=c.exposed_share))
    slowest = None
    if c.slowest_rank is not None and c.judged_steps:
        slowest = Text("verdict.domain.slowest", rank=c.slowest_rank, n=c.slowest_steps, of=c.judged_steps,
                       wait=c.others_wait_s, own=c.slowest_wait_s, transit=c.slowest_transit_s)
    sep = labels(lang)["list_sep"]
    return render(Text("verdict.domain", domain=_domain(c.domain, lang), types=sep.join(c.types) or "—", share=c.share,
                       total=c.total_s, exposed=exposed, slowest=slowest), lang)


def verdict_item(a: t.Analysis, L: Labels) -> Any:
    """The verdict's item for the costliest domain (None when no domain is known or it is small)."""
    d = a.profile.domains if a.profile is not None else None
    if not isinstance(d, CommDomains):
        return None
    lang = L.lang
    lines: list[str] = []
    c = d.costliest
    if c is not None and (_share(c) or 0) >= DOMAIN_NOTED:
        lines.append(domain_line(c, lang))
        idle = {r: (reason, total) for r, reason, total in (d.idle.by_rank if d.idle else ())}
        if c.slowest_rank in idle:  # what the awaited rank's device waited on: the host or the device itself
            reason, total = idle[c.slowest_rank]
            lines.append(render(Text("verdict.domain.awaited-idle", rank=c.slowest_rank, total=total,
                                     reason=Text(f"idle.{reason}")), lang))
        rest = [x for x in d.domains if x is not c and x.domain != "unknown" and (x.share or 0) >= DOMAIN_NOTED]
        if rest:
            lines.append(render(Text("verdict.domain.next", domain=_domain(rest[0].domain, lang), share=rest[0].share), lang))
    unknown = next((x for x in d.domains if x.domain == "unknown"), None)
    if unknown is not None and (unknown.share or 0) >= DOMAIN_NOTED:
        reasons = sorted({g.reason for g in d.groups if g.domain == "unknown" and g.reason})
        lines.append(render(Text("verdict.domain.unknown", share=unknown.share,
                                 reason="; ".join(render(Text(f"domain.reason.{r}"), lang) for r in reasons)), lang))
    if d.frequency is not None and d.frequency.dropped:
        low = min(r.min_mhz for r in d.frequency.ranks if r.state == "drop")
        lines.append(render(Text("verdict.domain.freq", nominal=d.frequency.nominal_mhz, ranks=list(d.frequency.dropped),
                                 low=low), lang))
    if not lines:
        return None
    heavy = c is not None and (_share(c) or 0) >= COMM_ATTENTION or bool(d.frequency and d.frequency.dropped)
    sev = "warning" if heavy else "info"
    actions = tuple(L.text(Text(f"action.domain.{m}")) for m in MOVES.get(c.domain, ())[:3]) if c is not None else ()
    return VerdictItem(tone=sev, tag=L.get(sev, sev), title=L.sentence(Text("verdict.title.comm_domain")), numbers="",
                       lines=tuple(lines), actions=actions, evidence=((L["profile_section"], "#profile"),))


# --------------------------------------------------------------------------- the section


def domain_blocks(p: t.Profile, L: Labels) -> list[Block]:
    d = p.domains
    if not isinstance(d, CommDomains):
        return []
    lang = L.lang
    tr = lambda key, **kw: render(Text(key, **kw), lang)  # noqa: E731
    blocks: list[Block] = []
    if d.domains:
        rows = []
        for c in d.domains:
            slow = (tr("domains.slowest", rank=c.slowest_rank, n=c.slowest_steps, of=c.judged_steps)
                    if c.slowest_rank is not None else MISSING)
            waits = (f"{fmt.duration(c.wait_stage_s)} / {fmt.duration(c.transmit_stage_s)}"
                     if c.wait_stage_s is not None and c.transmit_stage_s is not None else MISSING)
            heavy = (_share(c) or 0) >= COMM_ATTENTION
            rows.append([Cell(_domain(c.domain, lang), tone="bad" if heavy and c is d.costliest else ""),
                         Cell(L["list_sep"].join(_short(x) for x in c.types) or MISSING), Cell(fmt.duration(c.total_s)),
                         cell(c.share, fmt.percent), cell(c.exposed_share, fmt.percent, title=tr(f"domain.exposed.{c.exposed_basis}")
                                                          if c.exposed_basis else ""),
                         cell(c.bandwidth_gbps, lambda v: f"{fmt.number(v)} GB/s"), Cell(slow), Cell(waits)])
        bases = sorted({g.basis for g in d.groups if g.basis})
        placed = (tr("domains.placed", basis=L["list_sep"].join(tr(f"domain.basis.{b}", name="pg_name") for b in bases)) if bases
                  else tr("domains.unplaced", reasons=L["list_sep"].join(
                      tr(f"domain.reason.{r}") for r in sorted({g.reason for g in d.groups if g.reason}))))
        layout = _layout_text(d.layout, d.layout_source) or tr("domains.layout.none")
        cols = [tr(f"domains.col.{k}") for k in ("domain", "types", "time", "share", "exposed", "bandwidth", "slowest", "wait")]
        steps = max((c.steps for c in d.domains), default=0)
        blocks.append(table("comm-domains", cols, "wlrrrrrr", rows,
                             caption=f"{tr('domains.title')} · {tr('domains.note', placed=placed, steps=steps, layout=layout)}"))
        grows = [[Cell(g.group if len(g.group) <= 24 else g.group[:23] + "…", title=g.group), Cell(g.name or MISSING),
                  Cell(_domain(g.domain, lang), tone="muted" if g.domain == "unknown" else ""),
                  Cell(tr("domains.ranks", ranks=list(g.ranks)) if g.ranks else MISSING),
                  Cell(tr(f"domain.basis.{g.basis}", name=g.name or "") if g.basis else tr(f"domain.reason.{g.reason}"))]
                 for g in d.groups[:GROUPS_SHOWN]]
        gcols = [tr(f"domains.col.{k}") for k in ("group", "name", "domain", "ranks", "how")]
        blocks.append(table("comm-domain-groups", gcols, "llwll", grows, caption=tr("domains.groups.title"), collapsed=True))
    f = d.frequency
    if f is not None:
        frows = [[Cell(fmt.integer(r.rank)), Cell(fmt.integer(r.samples)), Cell(f"{fmt.number(r.min_mhz)} MHz"),
                  Cell(f"{fmt.number(r.max_mhz)} MHz"), Cell(tr(f"domains.freq.{r.state}"), tone="bad" if r.state == "drop" else ""),
                  cell(r.first_drop_s, fmt.duration)] for r in f.ranks]
        fcols = [tr(f"domains.col.{k}") for k in ("rank", "samples", "min", "max", "state", "first_drop")]
        blocks.append(table("device-frequency", fcols, "rrrrwr", frows, collapsed=not f.dropped,
                             caption=f"{tr('domains.freq.title')} · {tr('domains.freq.note', idle=IDLE_MHZ, nominal=f.nominal_mhz)}"))
    i = d.idle
    if i is not None:
        irows = [[Cell(tr(f"idle.{r.reason}")), Cell(fmt.integer(r.gaps)), Cell(fmt.duration(r.total_s))] for r in i.reasons]
        icols = [tr(f"domains.col.{k}") for k in ("reason", "gaps", "total")]
        note = tr("domains.idle.note", ranks=i.ranks, longest=i.longest_s, rank=i.longest_rank, reason=tr(f"idle.{i.longest_reason}"))
        blocks.append(table("device-idle", icols, "lrr", irows, caption=f"{tr('domains.idle.title')} · {note}"))
    return blocks


# --------------------------------------------------------------------------- metrics.json


def _num(x: float | None) -> float | None:
    import math

    return float(x) if x is not None and math.isfinite(x) else None


def metrics_block(d: Any) -> dict | None:
    """``profile.domains`` (schema 1.5); null without communication, frequency or idle records."""
    if not isinstance(d, CommDomains):
        return None
    return {
        "layout": dict(d.layout), "layout_source": d.layout_source,
        "costliest": d.costliest.domain if d.costliest else None,
        "domains": [{"domain": c.domain, "steps": c.steps, "ranks": c.ranks, "groups": c.groups, "types": list(c.types),
                     "total_s": _num(c.total_s), "exposed_s": _num(c.exposed_s), "share": _num(c.share),
                     "exposed_share": _num(c.exposed_share), "exposed_basis": c.exposed_basis or None,
                     "bandwidth_gbps": _num(c.bandwidth_gbps), "slowest_rank": c.slowest_rank,
                     "slowest_steps": c.slowest_steps, "judged_steps": c.judged_steps,
                     "slowest_wait_s": _num(c.slowest_wait_s), "slowest_transit_s": _num(c.slowest_transit_s),
                     "others_wait_s": _num(c.others_wait_s), "wait_stage_s": _num(c.wait_stage_s),
                     "transmit_stage_s": _num(c.transmit_stage_s)} for c in d.domains],
        "groups": [{"group": g.group, "name": g.name, "domain": g.domain, "basis": g.basis or None, "reason": g.reason or None,
                    "ranks": list(g.ranks)} for g in d.groups],
        "steps": [{"domain": s.domain, "step": s.step, "ranks": s.ranks, "total_s": _num(s.total_s), "exposed_s": _num(s.exposed_s),
                   "step_s": _num(s.step_s), "bytes": _num(s.bytes), "bandwidth_gbps": _num(s.bandwidth_gbps),
                   "slowest_rank": s.slowest_rank, "slowest_wait_s": _num(s.slowest_wait_s),
                   "slowest_transit_s": _num(s.slowest_transit_s), "others_wait_s": _num(s.others_wait_s),
                   "wait_stage_s": _num(s.wait_stage_s), "transmit_stage_s": _num(s.transmit_stage_s)} for s in d.steps],
        "frequency": None if d.frequency is None else {
            "nominal_mhz": d.frequency.nominal_mhz, "dropped": list(d.frequency.dropped),
            "ranks": [{"rank": r.rank, "samples": r.samples, "min_mhz": r.min_mhz, "max_mhz": r.max_mhz, "state": r.state,
                       "first_drop_s": _num(r.first_drop_s)}
                      for r in d.frequency.ranks]},
        "idle": None if d.idle is None else {
            "ranks": d.idle.ranks, "longest_rank": d.idle.longest_rank, "longest_step": d.idle.longest_step,
            "longest_s": _num(d.idle.longest_s), "longest_reason": d.idle.longest_reason,
            "reasons": [{"reason": r.reason, "gaps": r.gaps, "total_s": _num(r.total_s)} for r in d.idle.reasons]},
    }
