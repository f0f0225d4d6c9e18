"""When a run died: how (its kind), where (the phase, the last step), on which rank first, what the
other ranks' errors were a consequence of, and what to resume from. Pure: a Run's incidents
(readers/failure/) and its steps, losses and checkpoints in, a typed ``Failure`` out (or None for
a run that did not fail); the report words it (words/catalog/failure.py).

The rules, each in its function:
1. Which incidents are consequences (``_consequence``): a timeout that names another rank (HCCL's
   "remote rank [0]", its heartbeat's "deviceId[0], Heartbeat Lost"), a data channel that fails
   to send because training already stopped (acltdtSendTensor), a teardown after the error
   (``Exception ignored in``, a finalize), the scheduler's word about a worker, a later timeout
   after another rank's own error.
2. The root (``_root``): the rank HCCL's heartbeat names as lost, else the earliest cause by the
   aligned times, else the earliest consequence (a chain whose cause the files do not hold).
3. The kind (``kind_of``): a code whose documented meaning settles it (readers/failure/codes.py),
   else the root's words, else the other incidents' words.
4. A run failed when its root came after its last training step (a run that logged an error and
   trained on did not fail); a run with no error failed by a hang when its progress stopped long
   before its files did.

The modules: types.py (the typed data), words.py (what each kind's lines say), chain.py (rules
1-3), quote.py (the line to quote), progress.py (rule 4, the last step, the resume point); the
judge here puts them together.
"""

from __future__ import annotations

import polars as pl

from ...readers.failure import codes
from .chain import _classified, _kind, _root, _with_worker_ranks
from .progress import (
    _hours_lost,
    _last_finite_step,
    _loss_at,
    _median_step_s,
    _progress,
    _stalled,
    _trained_on,
    resume_point,
    went_on,
)
from .quote import _quoted
from .types import PLAYBOOK, Action, Evidence, Failure, Kind, Phase, ResumePoint, Why
from .words import _CHECKPOINT, _ERRORS, _EVAL, _LOAD, kind_of


def _phase(kind: Kind, root: dict, last_step: int | None, compiled: bool) -> Phase:
    whole = f"{root['text']}\n{root['context']}"
    if kind == Kind.COMPILE_ERROR:
        return Phase.COMPILE
    if _LOAD.search(whole):
        return Phase.LAUNCH
    if last_step is not None and _CHECKPOINT.search(whole):
        return Phase.CHECKPOINT
    if last_step is not None and _EVAL.search(whole):
        return Phase.EVALUATION
    if last_step is not None or (root["step"] or 0) >= 1:  # a step logged, or the error's own text names one
        return Phase.TRAINING
    if kind in (Kind.CONFIG_ERROR,):
        return Phase.LAUNCH
    if kind in (Kind.OOM_DEVICE, Kind.HCCL_TIMEOUT, Kind.DATA_ERROR, Kind.NAN_ABORT) or compiled:
        return Phase.FIRST_STEP
    return Phase.LAUNCH


def judge(tables: dict[str, pl.DataFrame], healthy_step: int | None = None) -> Failure | None:
    """The run's failure, or None when it did not fail. ``tables``: a Run's tables; ``healthy_step``:
    the step of the last save MindFormers' health record calls healthy (analysis/health.py), if any."""
    incidents = tables["incidents"]
    last_step, per_rank = _progress(tables)
    last_wall = max((w for _, w in per_rank.values() if w is not None), default=None)
    ends = incidents.filter(pl.col("level") == "end")["wall_time"].drop_nulls()
    files_end = float(ends.max()) if ends.len() else None
    rows = _with_worker_ranks(incidents.filter(pl.col("level").is_in(_ERRORS)).with_row_index("_order").to_dicts(), incidents)
    file_lines = {f: n for f, n in incidents.filter(pl.col("level") == "end").select("file", "line").iter_rows() if n is not None}
    rows = [r for r in rows if not went_on(r, file_lines, rows)]
    if rows:
        classified = _classified(rows)
        root, rank, rank_basis = _root(classified)
        if _trained_on(root, last_wall, tables["steps"], tables["scalars"], rows):
            return None
        kind, basis = _kind(root, classified)
        stalled = None
        if kind == Kind.HCCL_TIMEOUT and (rank_basis in ("earliest", "only") or rank is None):
            # a timeout's reporter waited for another rank: the one it names, else none is known
            named = next((r for r, _ in classified if r["named_rank"] is not None and r["named_rank"] != r["rank"]), None)
            rank, rank_basis = (named["named_rank"], named["named_how"]) if named else (None, None)
    else:
        med = _median_step_s(tables["steps"])
        stalled = _stalled(last_wall, files_end, med)
        if stalled is None:
            return None
        classified, root = [], None
        kind, basis = Kind.HANG, "progress"
        stopped = sorted(per_rank.items(), key=lambda kv: (kv[1][1] if kv[1][1] is not None else float("inf"), kv[0]))
        rank = stopped[0][0] if len(per_rank) > 1 else None
        rank_basis = "stopped_first" if rank is not None else None
    rank_last = per_rank.get(rank, (last_step, None))[0] if rank is not None else last_step
    if kind == Kind.NAN_ABORT and rank_last is not None:
        rank_last = _last_finite_step(tables["scalars"], rank_last, rank)  # the NaN step stopped it: not one it completed
    compiled = not tables["events"].filter(pl.col("kind") == "compile").is_empty()
    phase = _phase(kind, root, last_step, compiled) if root is not None else Phase.TRAINING
    resume = resume_point(tables["checkpoints"], last_step, healthy_step)
    steps_lost = last_step - resume.step if resume is not None and last_step is not None else None
    hours = _hours_lost(tables["steps"], resume, last_step)
    reasons = {}
    if rank is None:
        reasons["first_failing_rank"] = "timeout_names_none" if kind == Kind.HCCL_TIMEOUT else "not_said"
    if last_step is None:
        reasons["last_step"] = "no_step_logged"
        reasons["last_loss"] = "no_step_logged"
    if resume is None:
        reasons["resume_from"] = "no_complete_checkpoint" if tables["checkpoints"].is_empty() is False else "no_checkpoint"
        reasons["steps_lost"] = reasons["resume_from"]
    code = root["code"] if root is not None and basis != "framework" else None
    if root is not None and code is None and basis != "framework":  # MindSpore's sentence is the cause: the codes under it are not
        code = next((r["code"] for r, why in classified if r["rank"] == root["rank"] and r["code"]), None)
    if code is None:
        reasons["error_code"] = "no_code"
    exception = root["exception"] if root is not None else None
    if exception is None and root is not None and root["rank"] is not None:  # the root rank's own exception
        exception = next((r["exception"] for r, why in classified if r["rank"] == root["rank"] and r["exception"]), None)
    if exception is None:
        reasons["exception"] = "no_exception"
    last_loss = _loss_at(tables["scalars"], rank_last, rank)
    if last_loss is None and "last_loss" not in reasons:
        reasons["last_loss"] = "no_loss_logged"
    evidence = _evidence(root, classified)
    return Failure(
        kind=kind, kind_basis=basis, error_code=code, code_module=codes.module(code) if code else None,
        runtime_code=root["runtime_code"] if root is not None else None, exception=exception,
        first_failing_rank=rank, rank_basis=rank_basis, failed_at=phase, last_step=rank_last, last_loss=last_loss,
        message=_quoted(root, code, rows, rank_basis, rank) if root is not None else None, message_file=root["file"] if root is not None else None,
        message_line=root["line"] if root is not None else None,
        failed_wall_time=root["wall_time"] if root is not None else last_wall,
        evidence=evidence, consequences=sum(1 for _, why in classified if why not in (None, Why.REPEAT)),
        consequence_ranks=len({r["rank"] for r, why in classified if why not in (None, Why.REPEAT)
                               and r["rank"] is not None and r["rank"] != rank}),
        why_counts=_why_counts(classified),
        ranks_failed=len({r["rank"] for r, why in classified if why is None}),
        resume_from=resume, steps_lost=steps_lost, hours_lost=hours, stalled_s=stalled,
        actions=PLAYBOOK[kind], reasons=reasons,
    )


def _why_counts(classified: list[tuple[dict, Why | None]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, why in classified:
        if why not in (None, Why.REPEAT):
            counts[str(why)] = counts.get(str(why), 0) + 1
    return dict(sorted(counts.items()))


def _evidence(root: dict | None, classified: list[tuple[dict, Why | None]]) -> tuple[Evidence, ...]:
    """The root, then each other rank's first incident (the file and line to open)."""
    if root is None:
        return ()
    out = [Evidence(root["rank"], root["file"], root["line"], root["text"], None)]
    seen = {(root["rank"], root["file"])}
    for r, why in classified:
        key = (r["rank"], r["file"])
        if key in seen or why == Why.REPEAT:
            continue
        seen.add(key)
        out.append(Evidence(r["rank"], r["file"], r["line"], r["text"], why))
    return tuple(out)


__all__ = [
    "PLAYBOOK",
    "Action",
    "Evidence",
    "Failure",
    "Kind",
    "Phase",
    "ResumePoint",
    "Why",
    "judge",
    "kind_of",
    "resume_point",
]
