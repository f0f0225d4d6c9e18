"""What every profiler layout shares: the Format record, rank from the path, CSV helpers, units.

Each layout module (mindinsight, ascend, msprof, cluster) exports ``FORMATS``: the files it reads,
each a ``Format`` with a path pattern and a function that fills a ReadResult. The package's
reader dispatches on the first pattern that matches; a module never imports another layout.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...model import Artifact, ReadResult
from ..base import rank_from_path

US, MS, NS, TICK = 1e-6, 1e-3, 1e-9, 1e-8  # TICK: Ascend system counter, 100 MHz


@dataclass(frozen=True)
class Format:
    """One profiler file layout: which paths it reads and how (fills result.tables / diagnostics)."""

    name: str  # as the format notes (docs/formats/) name it
    pattern: re.Pattern[str]  # searched in the path relative to the run folder
    read: Callable[[Artifact, int | None, ReadResult], None]  # (file, rank, result to fill)


def file_rank(artifact: Artifact) -> int | None:
    """rank_N in the path, profiler_info_{r}.json beside the file, or _{r} in the file name."""
    r = artifact.rank if artifact.rank is not None else rank_from_path(artifact.rel)
    if r is not None:
        return r
    here = Path(artifact.path).parent
    for folder in (here, here.parent):
        infos = sorted(folder.glob("profiler_info_*.json"))
        if len(infos) == 1:
            m = re.search(r"profiler_info_(\d+)\.json$", infos[0].name)
            if m:
                return int(m.group(1))
    m = re.search(r"_(\d+)(?:_detail_time)?\.(?:csv|txt|json)$", artifact.rel)
    return int(m.group(1)) if m else None


def number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip().rstrip("\t"))
    except ValueError:
        return None


def csv_rows(path: str) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        return [h.strip() for h in header], list(reader)


def column(header: list[str], *names: str) -> int | None:
    for n in names:
        if n in header:
            return header.index(n)
    return None
