"""The first block of every report: the diagnosis (analysis/diagnosis.py) in a few sentences.

For each problem: a title, the deciding numbers in both runs, what points at the layer, which
changed settings can or cannot explain it, the first things to try, and links to the sections
holding the evidence. The sentences are ``Text`` values made here from the typed problem and worded
by the catalogue (words/catalog/diagnosis.py); ``problem_text`` is the one-line form (metrics.json's
English message, summary.md, the CLI line).
"""

from __future__ import annotations

from ..analysis import types as t
from ..analysis.stability import EXPLOSION_RATIO
from ..text import Text
from ..words import Labels, labels
from .blocks import VerdictBlock, VerdictItem
from .sections.domains import verdict_item as domain_item
from .sections.failure import one_line as failure_line, verdict_item as failure_item

# How each deciding quantity is written: the catalogue's q.change.<kind> / q.value.<kind>.
KINDS = {
    "step_time_s": "dur", "tokens_per_s": "tps", "samples_per_s": "sps", "mfu": "pct", "checkpoint_tax": "pct",
    "final_smoothed_loss": "loss", "loss_at_equal_tokens": "loss", "convergence_step": "step",
    "loss_spikes": "int", "grad_norm_spikes": "int", "nan_steps": "int", "stall_share": "pct",
}
MAX_ACTIONS = 3
MAX_LINKS = 5  # slow links named one per line; the rest counted
# Triage evidence that is not a share of the step time.
NOT_OF_STEP = {"memory_peak_share": "memory", "queue_empty_share": "queue"}
# The section each evidence id names (its title's label).
SECTIONS = {"throughput": "throughput", "profile": "profile_section", "stability": "stability",
            "convergence": "convergence", "mfu": "mfu_derivation", "checkpoints": "checkpoints", "phases": "phases",
            "findings": "findings", "data-quality": "data_quality", "settings": "settings"}


def quantity(q: t.Quantity) -> Text:
    """A deciding quantity: its name, the baseline's value, the run's, and the change."""
    kind = KINDS.get(q.key, "pct" if q.key.endswith("_share") else "num")
    if q.baseline is None:
        return Text(f"q.value.{kind}", name=q.key, current=q.current)
    rel = (q.current - q.baseline) / abs(q.baseline) if q.current is not None and q.baseline else None
    return Text(f"q.change.{kind}", name=q.key, baseline=q.baseline, current=q.current,
                rel=Text("q.rel", rel=rel) if rel is not None and kind not in ("int", "pct") else None)


def title(p: t.Problem) -> Text:
    """The problem's title; an explosion's carries its step and values ("loss exploded at step 300: 8.85 → 8,713")."""
    if p.symptom == t.Symptom.EXPLODED:
        pp = p.params
        return Text("verdict.title.exploded" + ("/nonfinite" if pp.get("nonfinite") else ""), tag=pp.get("tag"),
                    step=pp.get("step"), before=pp.get("before"), value=pp.get("value"))
    return Text(f"verdict.title.{p.symptom}", verdict=p.bottleneck or "unknown")


def problem_text(p: t.Problem, baseline_id: str | None = None) -> Text:
    """The problem in one sentence: its title and its deciding numbers."""
    numbers = [quantity(q) for q in p.quantities if q is not None]
    title_ = title(p)
    if not numbers:
        return Text("verdict.line.bare", title=title_)
    return Text("verdict.line", title=title_, numbers=numbers)


def _cause(p: t.Problem) -> Text | None:
    c = p.cause
    if c is None:
        if p.symptom == t.Symptom.SLOWER:
            return Text("verdict.cause.unknown")
        return None
    # the side is said unless the layer already says it (data-bound: on the data side)
    where = Text("verdict.where", side=p.side) if p.side and not (p.side == t.Side.DATA and p.bottleneck == t.Verdict.DATA) else None
    verdict = p.bottleneck or "unknown"
    if c.key in NOT_OF_STEP:  # a share of something else than the step time: its own sentence
        return Text(f"verdict.cause.{NOT_OF_STEP[c.key]}", current=c.current, threshold=c.threshold, verdict=verdict, where=where)
    if c.baseline is not None and c.current is not None and c.current > c.baseline:
        return Text("verdict.cause.rose", name=c.key, baseline=c.baseline, current=c.current, verdict=verdict, where=where)
    if c.threshold is not None:
        return Text("verdict.cause.is-threshold", name=c.key, current=c.current, threshold=c.threshold, verdict=verdict,
                    where=where)
    return Text("verdict.cause.is", name=c.key, current=c.current, verdict=verdict, where=where)


def lr_variant(share: float | None, basis: str | None) -> str:
    """The learning rate's clause: against the schedule's peak where it is known (lrpeak.py), else
    against the highest rate in the log, said so."""
    if share is None:
        return ""
    if basis == "log":
        return "/logtop" if share >= 0.999 else "/logmax"
    return "/peak" if share >= 0.9 else "/lr"


def _details(p: t.Problem, a: t.Analysis) -> list[Text]:
    """What the problem's own numbers add (a spike's step and the lr then, errors, ranks)."""
    out: list[Text] = []
    pp = p.params
    if p.symptom == t.Symptom.EXPLODED and not pp.get("nonfinite") and pp.get("ratio") is not None:
        if pp.get("recovered_step") is not None:
            out.append(Text("verdict.exploded.back", ratio=pp["ratio"], factor=EXPLOSION_RATIO, step=pp["recovered_step"],
                            n=pp.get("recovery_values"), gap=pp.get("gap_steps")))
        elif pp.get("log_ends"):  # nothing logged after it: "never came back" would claim what the log cannot show
            out.append(Text("verdict.exploded.log-ends", ratio=pp["ratio"], factor=EXPLOSION_RATIO, level=pp.get("level")))
        else:
            out.append(Text("verdict.exploded.never", ratio=pp["ratio"], factor=EXPLOSION_RATIO, level=pp.get("level")))
    if p.symptom == t.Symptom.EXPLODED and (pp.get("count") or 0) > 1:
        out.append(Text("verdict.exploded.more", n=pp["count"]))
    if pp.get("same_step_sample") and a.comparison is not None:
        out.append(Text("verdict.same-step-sample", baseline=a.comparison.baseline_id))
    if p.symptom == t.Symptom.NOT_CONVERGED and a.convergence.convergence_step.reason is not None:
        out.append(a.convergence.convergence_step.reason)  # why: rose, flat, still moving
    if p.symptom in (t.Symptom.LESS_STABLE, t.Symptom.SPIKES, t.Symptom.NAN, t.Symptom.DIVERGED) and pp.get("step") is not None:
        lr = pp.get("lr_share")
        key = {t.Symptom.NAN: "verdict.nan-at", t.Symptom.DIVERGED: "verdict.diverged-at"}.get(p.symptom, "verdict.spike-at")
        out.append(Text(key + lr_variant(lr, pp.get("lr_basis")), step=pp["step"], lr_share=lr))
    if p.symptom == t.Symptom.ERRORS:
        if pp.get("errors"):
            out.append(Text("verdict.errors" + ("/at" if pp.get("error_step") is not None else ""), n=pp["errors"],
                            step=pp.get("error_step")))
        if pp.get("restarts"):
            out.append(Text("verdict.restarts" + ("/at" if pp.get("restart_step") is not None else ""), n=pp["restarts"],
                            step=pp.get("restart_step")))
    if p.symptom == t.Symptom.SLOW_RANKS:
        groups = [rank_group_text(g) for g in pp.get("groups") or ()]
        out.extend(groups or [Text("verdict.slow-ranks", ranks=pp.get("ranks", []))])
    if p.symptom == t.Symptom.SLOW_LINKS:
        shown = (pp.get("links") or [])[:MAX_LINKS]
        out.extend(slow_link_text(x) for x in shown)
        if len(pp.get("links") or []) > len(shown):
            out.append(Text("verdict.slow-links.more", n=len(pp["links"]) - len(shown)))
    if p.symptom == t.Symptom.DATA_STALLS:
        out.append(Text("verdict.stalls", n=pp.get("count"), lost=pp.get("lost_s")))
    if p.symptom == t.Symptom.SLOWER and pp.get("stalls"):  # the data stalls of a data-bound slower run
        out.append(Text("verdict.stalls", n=pp["stalls"], lost=pp.get("lost_s")))
    return out


def slow_link_text(x: dict) -> Text:
    """One slow link (analysis/links.py link_params): src -> dst, or a rank's transfers over a transport."""
    return Text("verdict.slow-link" + ("/rank" if x.get("unit") == "rank" else ""), src=x["src"], dst=x.get("dst"),
                transport=x["transport"], bw=x["bw"], ref=x["ref"], ratio=x["ratio"], peers=x["peers"], bytes=x["bytes"],
                transfers=x["transfers"])


def rank_group_text(g: dict) -> Text:
    """One group of slow ranks (analysis/ranks.py group_params) as a sentence: stages, nodes or
    hosts, the odd or even ranks, a device slot, ranges; the awaited ranks with their waiting."""
    kind, units = g["kind"], g.get("units") or []
    figures = {"ranks": g["ranks"], "count": g["count"], "of": g["of"], "excess": g.get("excess"),
               "median": g.get("median_s"), "reference": g.get("reference_s")}
    if g.get("awaited"):
        return Text("verdict.rank-group.awaited" + ("/one" if g["count"] == 1 else ""), ranks=g["ranks"], count=g["count"], of=g["of"],
                    awaited=g.get("awaited_share"), waiting=g.get("waiting_share"))
    many = "/many" if len(units) > 1 else ""
    if kind == "stage":
        return Text("verdict.rank-group.stage" + many, units=[int(u) for u in units], size=g.get("unit_size"), **figures)
    if kind == "node" and g.get("by") == "host":
        names = list(units) if len(units) <= 6 else [*units[:5], "…"]  # hundreds of hosts: the ranks say the rest
        return Text("verdict.rank-group.host" + many, units=names, **figures)
    if kind == "node":
        return Text("verdict.rank-group.node" + many, units=[int(u) for u in units], size=g.get("unit_size"), **figures)
    if kind == "parity":
        return Text("verdict.rank-group.parity", parity=Text("rank-parity.odd" if units == ["1"] else "rank-parity.even"),
                    **figures)
    if kind == "slot":
        return Text("verdict.rank-group.slot", units=[int(u) for u in units], **figures)
    return Text("verdict.rank-group.ranks" + ("/one" if g["count"] == 1 else ""), **figures)


def _settings(p: t.Problem, d: t.Diagnosis) -> list[Text]:
    """Which changed settings can or cannot explain it."""
    if d.baseline_id is None or p.family is None:
        return []
    if not d.changed:
        return [Text("verdict.nothing-changed", baseline=d.baseline_id)]
    out = [Text("verdict.setting.can" if s.explains else "verdict.setting.cannot", key=s.key, baseline=s.baseline,
                current=s.current, effect=p.family) for s in p.settings]
    regressed = p.symptom in (t.Symptom.SLOWER, t.Symptom.LESS_EFFICIENT, t.Symptom.LOSS_WORSE, t.Symptom.LESS_STABLE,
                              t.Symptom.EXPLODED, t.Symptom.DIVERGED)
    ratio = p.params.get("params_ratio")
    if ratio is not None and p.family == t.Family.THROUGHPUT:  # a grown model: how much more a step computes
        step = next((q for q in p.quantities if q is not None and q.key == "step_time_s"), None)
        step_ratio = step.current / step.baseline if step and step.current and step.baseline else None
        # the same direction, and no more than a quarter beyond the model's own growth (or shrinkage)
        same = step_ratio is not None and (ratio > 1) == (step_ratio > 1) and ratio != 1
        covers = same and (step_ratio <= ratio * 1.25 if ratio > 1 else step_ratio >= ratio / 1.25)
        key = "verdict.model-size" + ("/body" if p.params.get("params_basis") == "body" else "")
        out.insert(0, Text(key + ("/covers" if covers else "/step" if same else ""), ratio=ratio,
                           baseline=p.params.get("params_baseline"), current=p.params.get("params_current"),
                           step=step_ratio))
    if regressed and not any(s.explains for s in p.settings):
        out.append(Text("verdict.unexplained-speed" if p.family in (t.Family.THROUGHPUT, t.Family.EFFICIENCY)
                        else "verdict.unexplained"))
    return out


_TONE = {t.Symptom.FASTER: "good", t.Symptom.MORE_EFFICIENT: "good", t.Symptom.LOSS_BETTER: "good",
         t.Symptom.MORE_STABLE: "good"}


def verdict_block(a: t.Analysis, L: Labels, sections: set[str]) -> VerdictBlock:
    """``sections``: the ids of the report's sections, so every evidence link has a target."""
    d = a.diagnosis
    items = []
    for p in d.problems:
        numbers = [quantity(q) for q in p.quantities if q is not None]
        lines = [x for x in (_cause(p), *_details(p, a), *_settings(p, d)) if x is not None]
        sev = str(p.severity)
        evidence = tuple((L[SECTIONS[e]], f"#{e}") for e in p.evidence if e in SECTIONS and e in sections)
        items.append(VerdictItem(
            tone=_TONE.get(p.symptom, sev), tag=L.get(sev, sev),
            title=L.sentence(title(p)),
            # the bottleneck's one number is its cause's: said once, in the cause's sentence
            numbers=L.text(Text("verdict.numbers", numbers=numbers)) if numbers and p.symptom != t.Symptom.BOTTLENECK else "",
            lines=tuple(L.sentence(x) for x in lines),
            actions=tuple(L.text(Text(f"action.{x}")) for x in p.actions[:MAX_ACTIONS]),
            evidence=evidence,
        ))
    domain = domain_item(a, L)  # communication by parallel domain: an item of its own
    if domain is not None:
        items.append(domain)

    if a.failure is not None:  # a failed run: how it died leads, before any figure
        items.insert(0, failure_item(a.failure, L, sections))
    note = (L.text(Text("verdict.note.baseline", baseline=d.baseline_id)) if d.baseline_id
            else L.text(Text("verdict.note.run")))
    empty = "" if items else L.text(Text("verdict.empty.baseline" if d.baseline_id else "verdict.empty.run"))
    return VerdictBlock(L["verdict_title"], note, tuple(items), empty)


def verdict_lines(a: t.Analysis, lang: str, limit: int = 3) -> list[str]:
    """The first problems, one line each, for the terminal: severity, title and deciding numbers."""

    L = labels(lang)
    d = a.diagnosis
    out = [f"[{L.get(str(p.severity), str(p.severity))}] {L.sentence(problem_text(p, d.baseline_id))}" for p in d.problems[:limit]]
    if a.failure is not None:
        out.insert(0, f"[{L.get('critical', 'critical')}] {failure_line(a.failure, L)}")
    if len(d.problems) > limit:
        out.append(L.fmt("verdict_more", n=len(d.problems) - limit))
    return out
