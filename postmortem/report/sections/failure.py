"""A failed run in the report: the verdict's first item (what died, where, on which rank, the line
to quote, what it cost, what to try) and the failure section (each rank's first error, the cause
first). Made from analysis/failure.py's typed Failure; worded by words/catalog/failure.py."""

from __future__ import annotations

from ...analysis.failure import Failure, Phase
from ...readers.failure import codes
from ...text import Text
from ...words import Labels
from ..blocks import Cell, Paragraph, Section, Table, VerdictItem

MAX_EVIDENCE_ROWS = 64  # 8,192 ranks: the first ones say it, the count says the rest
MAX_ACTIONS = 3
MAX_LINE_SHOWN = 240  # a log line in the table; the whole line is its tooltip and in metrics.json


def where(f: Failure) -> Text:
    phase = f.failed_at or Phase.TRAINING
    if phase in (Phase.TRAINING, Phase.CHECKPOINT, Phase.EVALUATION) and f.last_step is None:
        return Text(f"failure.at.{phase}/nostep")
    return Text(f"failure.at.{phase}", step=f.last_step)


def title(f: Failure) -> Text:
    if f.first_failing_rank is None:
        return Text("failure.title/norank", kind=f.kind, where=where(f))
    return Text("failure.title", kind=f.kind, rank=f.first_failing_rank, where=where(f))


def numbers(f: Failure) -> Text | None:
    code = f.error_code or (str(f.runtime_code) if f.runtime_code is not None else None)
    if code is None and f.exception is None:
        return None
    return Text("failure.numbers", code=code, exception=f.exception, sep=" · " if code and f.exception else None)


def lines(f: Failure) -> list[Text]:
    out: list[Text] = []
    if f.message is not None:
        key = "failure.quote" if f.message_line is not None else "failure.quote/noline"
        out.append(Text(key, file=f.message_file, line=f.message_line, message=f.message))
    if f.stalled_s is not None:
        out.append(Text("failure.stalled", s=f.stalled_s))
    if f.error_code and f.code_module:
        out.append(Text("failure.code" + ("/internal" if codes.internal(f.error_code) else ""), code=f.error_code,
                        module=f.code_module))
    if f.runtime_code is not None:
        out.append(Text("failure.runtime", code=f.runtime_code, family=codes.runtime_family(f.runtime_code)))
    if f.first_failing_rank is not None and f.rank_basis:
        out.append(Text(f"failure.named.{f.rank_basis}", rank=f.first_failing_rank))
    elif f.first_failing_rank is None:
        reason = f.reasons.get("first_failing_rank")
        out.append(Text(f"failure.rank.{'timeout_names_none' if reason == 'timeout_names_none' else 'none'}"))
    if f.consequences:
        whys = [Text(f"failure.why.{w}") for w in f.why_counts]
        key = "failure.chain" if f.consequence_ranks else "failure.chain/norank"
        out.append(Text(key, n=f.consequences, ranks=f.consequence_ranks, why=whys))
    if f.last_step is not None:
        key = "failure.last" if f.last_loss is not None else "failure.last/noloss"
        out.append(Text(key, step=f.last_step, loss=f.last_loss))
    else:
        out.append(Text("failure.last/none"))
    r = f.resume_from
    if r is not None:
        key = "failure.resume/hours" if f.hours_lost is not None and f.steps_lost is not None else (
            "failure.resume" if f.steps_lost is not None else "failure.resume/nolost")
        out.append(Text(key, path=r.path, step=r.step, lost=f.steps_lost, hours=f.hours_lost))
    else:
        out.append(Text("failure.resume.none"))
    return out


def actions(f: Failure) -> list[Text]:
    return [Text(f"failure.action.{a}") for a in f.actions[:MAX_ACTIONS]]


def verdict_item(f: Failure, L: Labels, sections: set[str]):
    """The verdict's first item (report/verdict.py's VerdictItem)."""
    n = numbers(f)
    return VerdictItem(
        tone="critical", tag=L.get("critical", "critical"), title=L.sentence(title(f)),
        numbers=L.text(n) if n is not None else "",
        lines=tuple(L.sentence(x) for x in lines(f)),
        actions=tuple(L.text(x) for x in actions(f)),
        evidence=((L["failure_section"], "#failure"),) if "failure" in sections else (),
    )


def one_line(f: Failure, L: Labels) -> str:
    """The terminal's line: the title and the line to quote."""
    head = L.sentence(title(f))
    return head if f.message is None else f"{head} {L.text(Text('failure.quote/noline', file=f.message_file, message=f.message))}"


def section(f: Failure | None, L: Labels):
    """The failure section: each rank's first error, the cause first, the file and line to open."""
    if f is None:
        return None
    rows = []
    for e in f.evidence[:MAX_EVIDENCE_ROWS]:
        role = Text("failure.role.cause") if e.consequence is None else Text("failure.role.consequence", why=e.consequence)
        shown = e.text if len(e.text) <= MAX_LINE_SHOWN else e.text[:MAX_LINE_SHOWN] + "…"
        rows.append((Cell("—" if e.rank is None else str(e.rank)), Cell(e.file + (f":{e.line}" if e.line else "")),
                     Cell(L.text(role), tone="critical" if e.consequence is None else "muted"),
                     Cell(shown, title=e.text if shown != e.text else "")))
    blocks = [Paragraph(L.sentence(title(f)), tone="critical")]
    if f.stalled_s is not None:
        blocks.append(Paragraph(L.sentence(Text("failure.stalled", s=f.stalled_s))))
    if rows:
        blocks.append(Paragraph(L.text(Text("failure.section.note"))))
        caption = "" if len(f.evidence) <= MAX_EVIDENCE_ROWS else L.fmt("failure_more", n=len(f.evidence) - MAX_EVIDENCE_ROWS)
        blocks.append(Table("failure-evidence", (L["rank"], L["failure_where"], L["failure_role"], L["failure_line"]),
                            ("right", "left word", "left word", "left"), tuple(rows), caption=caption))
    return Section("failure", L["failure_section"], tuple(blocks))


def brief(block: dict | None, L: Labels) -> str | None:
    """A failed run in a few words from its metrics.json block (the dashboard, the digest, the
    terminal): the kind, the first failing rank, where (the step). None: the run did not fail."""
    if not isinstance(block, dict) or block.get("kind") is None:
        return None
    phase, step = block.get("failed_at") or "training", block.get("last_step")
    with_step = phase in ("training", "checkpoint", "evaluation")
    at = Text(f"failure.at.{phase}" + ("/nostep" if with_step and step is None else ""), step=step)
    rank = block.get("first_failing_rank")
    key = "failure.brief" if rank is not None else "failure.brief/norank"
    return L.text(Text(key, kind=block["kind"], rank=rank, where=at))
