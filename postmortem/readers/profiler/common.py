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

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from ..base import rank_from_path

US, MS, NS, TICK = 1e-6, 1e-3, 1e-9, 1e-8  # TICK: Ascend system counter, 100 MHz


@dataclass(frozen=True)
class Format:
    """One profiler file layout: which paths it reads and how (fills result.tables / diagnostics)."""

    name: str  # as the format notes (docs/formats/) name it
    pattern: re.Pattern[str]  # searched in the path relative to the run folder
    read: Callable[[Artifact, int | None, ReadResult], None]  # (file, rank, result to fill)


# The rank in a MindInsight-era file name: aicore_intermediate_1_type.csv, step_trace_raw_1_detail_time.csv.
NAMED_RANK = re.compile(r"_(\d+)(?:_detail_time|_type|_detail)?\.(?:csv|txt|json)$")


def not_read(slug: str, variant: str, target: str = "") -> Callable[[Artifact, int | None, ReadResult], None]:
    """A format for a known file that gives no rows: a warning (a claimed file that gives nothing
    is never silent) saying why (``variant``) and, for an intermediate file, the file read instead
    (``target``, whose ``<r>`` is the rank in this file's name)."""

    def read(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
        name = artifact.rel.rsplit("/", 1)[-1]
        m = NAMED_RANK.search(name)
        instead = target.replace("<r>", m.group(1)) if m else target
        result.diagnostics.append(dg.warning(slug, path=artifact.rel, variant=variant, name=name, target=instead))

    return read


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
