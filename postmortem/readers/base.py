"""The reader contract: a reader claims files by name/path and reads one file into a ReadResult.

Readers are pure functions of one file (picklable in, picklable out), so loading can read many
ranks' files in parallel processes. A reader never raises for bad content: it returns what it
could read plus diagnostics. It may raise OSError for unreadable files; loading reports those.

``locate`` tells loading, from the name alone, which rank a file's rows carry and where the file
stands among the launches of its stream (a summary file's stamp), so that loading never needs to
know a particular reader's naming rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..model import Artifact, ReadResult


@dataclass(frozen=True, slots=True)
class Location:
    rank: int | None  # the rank the file's rows carry; None: a single-rank or run-level file (rank 0)
    launch: int | None = None  # orders the files of one stream by launch (a stamp); None: by path


def locate_by_path(artifact: Artifact) -> Location:
    return Location(artifact.rank)


@dataclass(frozen=True)
class Reader:
    name: str  # "summary", "lineage", "tensorboard", "textlog", "checkpoint", "profiler", "config"
    claims: Callable[[Artifact], bool]
    read: Callable[[Artifact], ReadResult]
    locate: Callable[[Artifact], Location] = locate_by_path


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
