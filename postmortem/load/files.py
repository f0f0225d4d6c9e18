"""Which rank each claimed file belongs to, and the launch order of files (from the readers'
``locate``: loading knows no reader's naming rules)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..discover import Claimed


def by_rank(claimed: Sequence[Claimed]) -> list[tuple[int, list[Claimed]]]:
    """Files grouped by the rank their rows will carry (the reader's locate: the path's rank, a
    summary file's device id), else rank 0 (a single-rank run, or a run-level file such as the
    config); in rank order, each with its rank."""
    groups: dict[int, list[Claimed]] = {}
    for c in claimed:
        rank = c.reader.locate(c.artifact).rank
        groups.setdefault(rank if rank is not None else 0, []).append(c)
    return [(r, groups[r]) for r in sorted(groups)]


def file_order(claimed: Sequence[Claimed]) -> dict[str, int]:
    """Launch order of files: discovery (path) order, with the files that carry a launch key
    (summary and TensorBoard stamps) ordered by it among themselves. Only the order within one
    stream matters, so keeping every other file where discovery put it lets the usual case skip
    a sort of all rows."""
    order = {c.artifact.rel: i for i, c in enumerate(claimed)}
    keyed = [(c.reader.locate(c.artifact).launch, c.artifact.rel) for c in claimed]
    keyed = [(key, rel) for key, rel in keyed if key is not None]
    slots = sorted(order[rel] for _, rel in keyed)
    order.update({rel: slot for slot, (_, rel) in zip(slots, sorted(keyed))})
    return order


def natural_order(text: str) -> tuple[list[str | int], str]:
    """Sort key that puts rank_2 before rank_10: runs of digits compare as numbers."""
    parts = re.split(r"(\d+)", text)  # text, digits, text, ...: the odd places are digits
    return [int(p) if i % 2 else p for i, p in enumerate(parts)], text
