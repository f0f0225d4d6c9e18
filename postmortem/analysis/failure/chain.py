"""The chain: which incidents are consequences, the root and its rank, the kind (rules 1-3 of
analysis/failure/)."""

from __future__ import annotations

import polars as pl

from ...readers.failure import codes
from .quote import framework_sentence
from .types import Kind, Why
from .words import _DATA_CHANNEL, _NAMING, _SCHEDULER, _TEARDOWN, kind_of


def _consequence(row: dict, first_cause_time: float | None, other_rank_causes: bool) -> Why | None:
    named = row["named_rank"]
    if named is not None and row["named_how"] in _NAMING and named != row["rank"]:
        return Why.PEER_DIED
    if _SCHEDULER.search(row["file"] or ""):
        return Why.SCHEDULER
    if _DATA_CHANNEL.search(row["text"]):
        return Why.DATA_CHANNEL
    if _TEARDOWN.search(row["text"]) and first_cause_time is not None:
        return Why.TEARDOWN
    if named is not None and named != row["rank"] and row["rank"] is not None:
        return Why.PEER_DIED
    if other_rank_causes and _timeout(row):
        return Why.TIMEOUT_AFTER
    return None


def _order_key(row: dict) -> tuple:
    """Time order, CANN's own logs (plog, device) after the processes' logs: they tell the same
    failure from below, and the process's line is the one to quote."""
    t = row["wall_time"]
    return (row["source"] in _CANN_LOGS, t is None, t if t is not None else 0.0, row["rank"] is None, row["rank"] or 0,
            row["_order"])


_CANN_LOGS = ("plog", "device")


def _classified(rows: list[dict]) -> list[tuple[dict, Why | None]]:
    """Each incident with why it is a consequence (None: a cause), in time order."""
    rows = sorted(rows, key=_order_key)
    own = [r for r in rows if not _SCHEDULER.search(r["file"] or "")]
    # ranks with an error of their own that is no timeout: the others' timeouts came after it
    cause_ranks = {r["rank"] for r in own  # the header's cheap tests first: the words of a timeout cost a regex pass
                   if not _DATA_CHANNEL.search(r["text"]) and not _TEARDOWN.search(r["text"]) and not _timeout(r)}
    out: list[tuple[dict, Why | None]] = []
    first_time = None
    seen_cause_rank: set = set()
    for r in rows:
        others = len(cause_ranks) > 1 or (bool(cause_ranks) and r["rank"] not in cause_ranks)  # a cause on another rank
        why = _consequence(r, first_time, others)
        if why is None and r["rank"] in seen_cause_rank:
            why = Why.REPEAT
        if why is None:
            seen_cause_rank.add(r["rank"])
            if first_time is None:
                first_time = r["wall_time"] if r["wall_time"] is not None else float("-inf")
        out.append((r, why))
    return out


def _timeout(row: dict) -> bool:
    """A communication timeout, by its code or its words (worked out once per incident: 8,192
    ranks' timeouts are read more than once)."""
    if "_timeout" not in row:
        row["_timeout"] = codes.KINDS.get(row["code"] or "") == "hccl_timeout" or \
            kind_of(f"{row['text']}\n{(row['context'] or '')[:TIMEOUT_WORDS_CHARS]}") == Kind.HCCL_TIMEOUT
    return row["_timeout"]


TIMEOUT_WORDS_CHARS = 2000  # a timeout says so at its head: the rest of a long block is not searched per incident


def _with_worker_ranks(rows: list[dict], incidents: pl.DataFrame) -> list[dict]:
    """msrun's "Worker process 14466 exit": the rank whose log that process wrote (its files' pid)."""
    ends = incidents.filter((pl.col("level") == "end") & pl.col("pid").is_not_null() & pl.col("rank").is_not_null())
    by_pid = dict(zip(ends["pid"].to_list(), ends["rank"].to_list()))
    for r in rows:
        if r["named_pid"] is not None and r["named_rank"] is None and r["named_pid"] in by_pid:
            r["named_rank"], r["named_how"] = by_pid[r["named_pid"]], "worker_exit"
    return rows


def _root(classified: list[tuple[dict, Why | None]]) -> tuple[dict, int | None, str | None]:
    """The root incident, the first failing rank and how that rank is known."""
    lost = [r for r, _ in classified if r["named_how"] in _NAMING and r["named_rank"] is not None]
    if lost:
        rank = lost[0]["named_rank"]
        own = [r for r, why in classified if r["rank"] == rank and why in (None, Why.REPEAT)]
        first = next((r for r, why in classified if r["rank"] == rank and why != Why.SCHEDULER), None)
        if first is not None and first["named_rank"] not in (None, rank) and _timeout(first):
            # the lost rank died of waiting for another one (its collective timed out): that one is the root
            return first, first["named_rank"], "remote_rank"
        return (own[0] if own else lost[0]), rank, lost[0]["named_how"]
    causes = [r for r, why in classified if why is None]
    if causes:
        root = causes[0]
        ranks = {r["rank"] for r, _ in classified if r["rank"] is not None}
        basis = "only" if len(ranks) == 1 else "earliest"
        return root, root["rank"], basis if root["rank"] is not None else None
    remote = [r for r, _ in classified if r["named_how"] == "remote_rank" and r["named_rank"] is not None]
    if remote:
        return remote[0], remote[0]["named_rank"], "remote_rank"
    root = classified[0][0]
    return root, root["rank"], ("earliest" if root["rank"] is not None else None)


def _kind(root: dict, classified: list[tuple[dict, Why | None]]) -> tuple[Kind, str]:
    code = root["code"] or next((r["code"] for r, _ in classified if r["rank"] == root["rank"] and r["code"]), None)
    if root["level"] == "abnormal_global_norm":
        return Kind.NAN_ABORT, "text"
    said = framework_sentence([r for r, _ in classified if r["file"] == root["file"] and r["rank"] == root["rank"]])
    if said and kind_of(said) is not None:  # MindSpore's own sentence of the cause outranks the codes under it
        return kind_of(said), "framework"
    if code in codes.KINDS:
        return Kind(codes.KINDS[code]), "code"
    if code and codes.family_kind(code):
        return Kind(codes.family_kind(code)), "code"
    kind = kind_of(f"{root['text']}\n{root['context']}")
    if kind is not None:
        return kind, "text"
    hccl = bool(code) and code[1] == "I"  # an HCCL code: its timeouts are the kind, not a consequence's word
    for r, _ in classified:  # the chain's other words: a worker's exit the scheduler names, a consequence that says more
        kind = kind_of(f"{r['text']}\n{r['context']}")
        if kind is not None and (kind != Kind.HCCL_TIMEOUT or hccl):
            return kind, "chain"
    return Kind.OTHER, "text"
