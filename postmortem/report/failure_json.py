"""metrics.json's ``failure`` block (schema 1.5): how the run died, as data; null for a run that
did not fail. Every field the files do not give is null, and ``reasons`` says why (a code, with
its English in ``reason_text``)."""

from __future__ import annotations

from typing import Any

from ..analysis.failure import Failure
from ..text import Text
from ..words import english
from .sections.failure import MAX_EVIDENCE_ROWS, title


def failure_block(f: Failure | None) -> dict[str, Any] | None:
    if f is None:
        return None
    r = f.resume_from
    return {
        "kind": str(f.kind), "kind_basis": f.kind_basis,
        "title": english(title(f)),
        "error_code": f.error_code, "code_module": f.code_module, "runtime_code": f.runtime_code,
        "exception": f.exception,
        "first_failing_rank": f.first_failing_rank, "rank_basis": f.rank_basis,
        "failed_at": str(f.failed_at) if f.failed_at else None,
        "last_step": f.last_step, "last_loss": f.last_loss,
        "message": f.message, "message_file": f.message_file, "message_line": f.message_line,
        "evidence": [{"rank": e.rank, "file": e.file, "line": e.line, "text": e.text,
                      "role": "cause" if e.consequence is None else "consequence",
                      "why": str(e.consequence) if e.consequence is not None else None}
                     for e in f.evidence[:MAX_EVIDENCE_ROWS]],
        "evidence_total": len(f.evidence),
        "consequences": f.consequences, "consequence_ranks": f.consequence_ranks, "consequences_by_why": f.why_counts,
        "ranks_failed": f.ranks_failed,
        "resume_from": {"path": r.path, "step": r.step, "source": r.source, "ranks": r.ranks} if r else None,
        "steps_lost": f.steps_lost, "hours_lost": f.hours_lost, "stalled_s": f.stalled_s,
        "actions": [str(a) for a in f.actions],
        "reasons": dict(sorted(f.reasons.items())),
        "reason_text": {k: english(Text(f"failure.reason.{v}")) for k, v in sorted(f.reasons.items())},
    }
