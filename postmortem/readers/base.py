"""The reader contract: a reader claims files by name/path and reads one file into a ReadResult.

Readers are pure functions of one file (picklable in, picklable out), so load.py can read many
ranks' files in parallel processes. A reader never raises for bad content: it returns what it
could read plus diagnostics. It may raise OSError for unreadable files; load.py reports those.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..model import Artifact, ReadResult


@dataclass(frozen=True)
class Reader:
    name: str  # "summary", "lineage", "tensorboard", "textlog", "checkpoint", "profiler", "config"
    claims: Callable[[Artifact], bool]
    read: Callable[[Artifact], ReadResult]


_RANK_PATTERNS = (
    re.compile(r"(?:^|/)rank_?(\d+)(?:/|$)"),
    re.compile(r"(?:^|/)worker_(\d+)\.log$"),
    re.compile(r"(?:^|/)device_?(\d+)(?:/|$)"),
    re.compile(r"_rank_(\d+)-"),
)


def rank_from_path(rel: str) -> int | None:
    """Rank encoded in a path: rank_3/, worker_3.log, device_3/, {prefix}_rank_3-1_10.ckpt."""
    for pattern in _RANK_PATTERNS:
        m = pattern.search(rel)
        if m:
            return int(m.group(1))
    return None
