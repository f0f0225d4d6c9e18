"""Sentences made from the analysis' typed values, for the report layer to word per language.

The analysis hands over kinds and parameters; here they become ``Text`` values whose keys pick the
right sentence of the catalogue (words/catalog/): the variant of a triage reason, its optional
clauses, the right plural. ``catalog.render`` words them in a language.
"""

from __future__ import annotations

from typing import Any

from ..analysis.triage import THRESHOLDS
from ..analysis.types import Delta, Finding, FindingKind
from ..text import Text
from ..words import name, render


def finding_text(f: Finding) -> Text:
    """A finding's sentence; the triage finding says its verdict and reason as the triage does."""
    if f.kind == FindingKind.TRIAGE and "verdict" in f.params and "reason" in f.params:
        return Text("triage.verdict-reason", verdict=f.params["verdict"],
                    reason=triage_reason(str(f.params["reason"]), f.params))
    return f.text


def _one(ranks: Any) -> bool:
    return len(list(ranks or ())) == 1


def triage_reason(reason: str, p: dict[str, Any]) -> Text:
    """The sentence of a triage reason (or of a signal of ``also``) from its parameters."""
    if reason == "data_wait":
        return Text("triage.reason.data_wait" + ("/strong" if p.get("strong") else ""), share=p.get("share"),
                    source="log" if p.get("source") == "log" else "profile")
    if reason == "data_queue_empty":
        slowest, idle = p.get("slowest"), p.get("idle_share")
        return Text("triage.reason.data_queue_empty", stage=p.get("stage"), share=p.get("share"), samples=p.get("samples"),
                    slowest=Text("triage.clause.slowest", stage=slowest) if slowest else None,
                    idle=Text("triage.clause.idle", share=idle) if idle is not None else None)
    if reason in ("pipeline_wait", "straggler"):
        keys = ("waiting", "awaited", "wait_share", "receive_share", "awaited_wait_share", "cause", "cause_share",
                "waiting_cause_share")
        return Text(f"triage.reason.{reason}" + ("/one" if _one(p.get("awaited")) else ""),
                    **{k: p.get(k) for k in keys})
    if reason == "pipeline_bubble":
        mb, st = p.get("micro_batches"), p.get("stages")
        return Text("triage.reason.pipeline_bubble", share=p.get("share"),
                    layout=Text("triage.clause.layout", micro_batches=mb, stages=st) if mb and st else None)
    if reason == "comm_exposed":
        return Text("triage.reason.comm_exposed", share=p.get("share"))
    if reason == "comm_kernels":
        top = p.get("top_type")
        return Text("triage.reason.comm_kernels", share=p.get("share"),
                    top=Text("triage.clause.top-comm", type=top, share=p.get("top_share")) if top else None,
                    broadcast=Text("triage.clause.broadcast") if p.get("broadcast") else None)
    if reason == "device_idle":
        awaited = list(p.get("awaited") or ())
        clause = ("triage.clause.idle-awaited-one" if len(awaited) == 1 else "triage.clause.idle-awaited")
        return Text("triage.reason.device_idle", share=p.get("share"),
                    awaited=Text(clause, ranks=awaited) if awaited else None)
    if reason == "memory_near_limit":
        return Text("triage.reason.memory_near_limit", share=p.get("share"), peak_bytes=p.get("peak_bytes"),
                    capacity_bytes=p.get("capacity_bytes"))
    if reason == "compute_busy":
        top = p.get("top_type")
        return Text("triage.reason.compute_busy", share=p.get("share"),
                    top=Text("triage.clause.top-op", type=top, share=p.get("top_share"), scope=p.get("scope") or "none")
                    if top else None)
    if reason == "no_dominant_part":
        items = [Text("triage.clause.evidence", key=k, value=v) for k, v in p.items() if k in THRESHOLDS and v is not None]
        return Text("triage.reason.no_dominant_part", items=items)
    return Text("triage.reason.no_evidence")


def reason_text(reason: str, params: dict, lang: str) -> str:
    return render(triage_reason(str(reason), params), lang)


def triage_text(verdict: str, reason: str, params: dict, lang: str) -> str:
    return render(Text("triage.verdict-reason", verdict=verdict, reason=triage_reason(str(reason), params)), lang)


def _name(prefix: str, code: Any, lang: str) -> str:

    return name(prefix, str(code), lang)


def verdict_text(verdict: str, lang: str) -> str:
    return _name("verdict.", verdict, lang)


def part_text(part: str, lang: str) -> str:
    return _name("part.", part, lang)


def evidence_text(key: str, lang: str) -> str:
    return _name("evidence.", key, lang)


def action_text(action: str, lang: str) -> str:
    return _name("action.", action, lang)


def ranks_text(ranks, lang: str) -> str:
    return ("、" if lang == "zh" else ", ").join(str(r) for r in ranks)


def check_name(check: str, lang: str) -> str:
    return _name("check.", check, lang)


def alignment(d: Delta) -> Text:
    """How a delta was aligned; by tokens with the token count compared at."""
    if str(d.alignment) == "by tokens":
        return Text("align.by-tokens-at", tokens=d.aligned_tokens) if d.aligned_tokens is not None else Text("align.by-tokens")
    return Text(f"align.{d.alignment}")


def alignment_text(code: str, lang: str, tokens: float | None = None) -> str:
    """An alignment from metrics.json: its code (``alignment_code``) and token count; an archive
    from before codes keeps its English text, "by tokens (at 76,800 tokens)", which is read back."""
    if code.startswith("by tokens (at ") and tokens is None:
        digits = code[len("by tokens (at "):].split(" ")[0].replace(",", "")
        try:
            tokens = float(digits)
        except ValueError:
            tokens = None
        code = "by tokens"
    if code.startswith("by tokens"):
        return render(Text("align.by-tokens-at", tokens=tokens) if tokens is not None else Text("align.by-tokens"), lang)
    return _name("align.", code, lang)


def dash(lang: str) -> str:
    return "——" if lang == "zh" else " — "
