"""Profiler output of every layout Ascend users have, one module per layout.

- ``mindinsight``: MindInsight-era flat ``profiler/`` folders (step_trace_raw, hccl_raw, ...).
- ``ascend``: MindSpore 2.x ``*_ascend_ms/`` and torch_npu ``*_ascend_pt/`` (ASCEND_PROFILER_OUTPUT).
- ``msprof``: CANN ``PROF_*/`` folders.
- ``cluster``: msprof-analyze's cluster outputs.
- ``db``: the database exports of all three (``ascend_*_profiler*.db``, ``msprof_*.db``).

A file is read by the first format whose pattern matches its path. Any other file inside a
profiler folder is claimed and gets a warning saying its format is not read, so no profiler file
is taken silently. Units and meanings of every column are in docs/formats/.
"""

from __future__ import annotations

import csv
import re

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from ..base import Reader
from . import ascend, cluster, db, mindinsight, msprof
from .common import Format, file_rank

# msprof before ascend: every msprof pattern is inside a PROF_* folder, where a PROF_*/analyze/
# communication.json has msprof's flat layout, not the step-keyed one ascend reads. msprof's
# catch-alls for the rest of a PROF folder come last.
FORMATS: tuple[Format, ...] = (
    *mindinsight.FORMATS, *db.FORMATS, *msprof.FORMATS, *ascend.FORMATS, *cluster.FORMATS, *msprof.FALLBACK
)

_DIR_RE = re.compile(
    r"(?:^|/)(?:[^/]*_ascend_(?:ms|pt)|ASCEND_PROFILER_OUTPUT|profiler|PROF_[^/]*|profiler_data)(?:/|$)", re.IGNORECASE
)


def format_of(rel: str) -> Format | None:
    return next((f for f in FORMATS if f.pattern.search(rel)), None)


def _claims(artifact: Artifact) -> bool:
    # A stray communication.json outside profiler output is still profiler data by its name.
    return format_of(artifact.rel) is not None or bool(_DIR_RE.search(artifact.rel))


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="profiler")
    fmt = format_of(artifact.rel)
    if fmt is None:
        name = artifact.rel.rsplit("/", 1)[-1]
        result.diagnostics.append(dg.warning("profiler-format-not-read", path=artifact.rel, name=name))
        return result
    try:
        fmt.read(artifact, file_rank(artifact), result)
    except (ValueError, KeyError, TypeError, IndexError, csv.Error) as exc:  # bad content, never raise
        result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=str(exc)))
    return result


READER = Reader(name="profiler", claims=_claims, read=read)
