"""What every profiler layout shares: the Format record, rank from the path, CSV helpers, units.

Each layout module (mindinsight, ascend, msprof, cluster) exports ``FORMATS``: the files it reads,
each a ``Format`` with a path pattern and a function that fills a ReadResult. The package's
reader dispatches on the first pattern that matches; a module never imports another layout.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import polars as pl

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from .. import guard
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
        infos = sorted(folder.glob("profiler_info_*.json"))  # names only: nothing is opened
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


# --------------------------------------------------------------------------- opening text, checking values

# Bytes the UTF-8 decoder replaced, per thread: the error handler counts as it replaces, so the
# check costs nothing on a clean file and no second pass over a large one.
_replaced = threading.local()


def _count_replaced(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _replaced.n = getattr(_replaced, "n", 0) + (exc.end - exc.start)
    return "\ufffd", exc.end


codecs.register_error("postmortem-count", _count_replaced)


@contextlib.contextmanager
def open_text(artifact: Artifact | str, result: ReadResult | None = None, rel: str | None = None,
              newline: str | None = None) -> Iterator[IO[str]]:
    """A text file through the guard (readers/guard.py), as UTF-8 with its BOM stripped; bytes that
    are not UTF-8 are replaced and, with ``result``, counted in one ``profiler-utf8`` warning."""
    path = artifact.path if isinstance(artifact, Artifact) else artifact
    rel = rel or (artifact.rel if isinstance(artifact, Artifact) else path)
    before = getattr(_replaced, "n", 0)
    try:
        with guard.open_file(path, "r", encoding="utf-8-sig", errors="postmortem-count", newline=newline) as fh:
            yield fh
    finally:  # said even when the content then fails to parse
        n = getattr(_replaced, "n", 0) - before
        if n and result is not None:
            result.diagnostics.append(dg.warning("profiler-utf8", path=rel, n=n))


def load_json(artifact: Artifact, result: ReadResult) -> object:
    """The parsed JSON file (BOM stripped, invalid UTF-8 counted); raises ValueError / RecursionError."""
    with open_text(artifact, result) as fh:
        return json.load(fh)


def side_json(path: str | Path, limit: int = 1 << 20) -> object | None:
    """A small side file (profiler_info_*.json, info.json.N) parsed, or None: not a regular file
    (a FIFO never blocks), larger than ``limit``, unreadable or not JSON."""
    try:
        if guard.size(path) > limit:
            return None
        with open_text(str(path)) as fh:
            return json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None


def csv_rows(path: str, result: ReadResult | None = None, rel: str | None = None) -> tuple[list[str], list[list[str]]]:
    with open_text(path, result, rel, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        return [h.strip() for h in header], list(reader)


def sound_csv(path: str | Path, columns: tuple[str, ...]) -> bool:
    """Whether a CSV beside the file being read would itself be read: a regular file whose header
    has ``columns``. A damaged, foreign or special file there never makes another count as covered."""
    if guard.refusal(path) is not None:
        return False
    try:
        with open_text(str(path), newline="") as fh:
            line = fh.readline(1 << 20)
    except OSError:
        return False
    header = {h.strip() for h in next(csv.reader([line]), [])}
    return all(c in header for c in columns)


DAY_S = 86400.0  # a kernel, an op or a step longer than a day is not a measurement


class Durations:
    """Counts durations refused at the door, per column: not finite, negative, or over a day
    (``limit_s``). ``ok(value, column, unit)`` says whether to keep a value; ``warn`` adds one
    ``profiler-bad-duration`` warning per column naming the file, the column and the counts."""

    def __init__(self, limit_s: float = DAY_S) -> None:
        self.limit_s = limit_s
        self.bad: dict[str, list[int]] = {}  # column -> [non-finite, negative, absurd]

    def ok(self, value: float | None, column: str, unit: float) -> bool:
        if value is None:
            return True  # absent, not bad: the caller decides what a missing value means
        kind = 0 if not math.isfinite(value) else 1 if value < 0 else 2 if value * unit > self.limit_s else -1
        if kind < 0:
            return True
        self.bad.setdefault(column, [0, 0, 0])[kind] += 1
        return False

    def add(self, column: str, non_finite: int = 0, negative: int = 0, absurd: int = 0) -> None:
        if non_finite or negative or absurd:
            counts = self.bad.setdefault(column, [0, 0, 0])
            counts[0] += non_finite
            counts[1] += negative
            counts[2] += absurd

    def warn(self, rel: str, result: ReadResult) -> None:
        for col, (non_finite, negative, absurd) in self.bad.items():
            result.diagnostics.append(dg.warning("profiler-bad-duration", path=rel, column=col, n=non_finite + negative + absurd,
                                                 non_finite=non_finite, negative=negative, absurd=absurd))


def last_row_per_step(keys: list, rel: str, result: ReadResult) -> list[int] | None:
    """Which rows of one step-time file to keep when a step is written more than once: the last
    row of each step (a writer that appends rewrites a step by writing it again), in file order.
    ``keys``: each row's step, or (rank, step) where one file holds several devices. The repeats
    are warned (``profiler-duplicate-steps``, naming the file); None when no step repeats."""
    last: dict = {}
    for i, key in enumerate(keys):
        last[key] = i
    repeated = len(keys) - len(last)
    if not repeated:
        return None
    result.diagnostics.append(dg.warning("profiler-duplicate-steps", path=rel, n=repeated, steps=len(last)))
    return sorted(last.values())


def take_rows(columns: dict[str, list], rows: list[int]) -> dict[str, list]:
    """The given rows of a table held as lists per column."""
    return {k: [v[i] for i in rows] for k, v in columns.items()}


def column(header: list[str], *names: str) -> int | None:
    for n in names:
        if n in header:
            return header.index(n)
    return None


def checked_durations(frame: pl.DataFrame, column: str, source_column: str, bad: Durations) -> pl.DataFrame:
    """``frame`` (a polars DataFrame whose ``column`` is in seconds) without its refused durations,
    counted in ``bad`` under ``source_column`` (the file's own column name). One pass over the
    column; the frame is filtered only where something was refused."""
    c = pl.col(column)
    if frame.select(c.is_between(0.0, bad.limit_s).all()).item():  # nulls ignored; NaN sorts above inf
        return frame
    counts = frame.select((~c.is_finite()).sum().alias("nf"), (c < 0).sum().alias("neg"),
                          (c.is_finite() & (c > bad.limit_s)).sum().alias("big")).row(0)
    non_finite, negative, absurd = (int(x or 0) for x in counts)
    if not (non_finite or negative or absurd):
        return frame
    bad.add(source_column, non_finite, negative, absurd)
    return frame.filter(c.is_null() | (c.is_finite() & (c >= 0) & (c <= bad.limit_s)))


def checked(frame: pl.DataFrame, artifact: Artifact, result: ReadResult, *columns: tuple[str, str]) -> pl.DataFrame:
    """``frame`` without the refused durations of each (column in seconds, the file's column name),
    warned per file and column."""
    bad = Durations()
    for column, source in columns:
        frame = checked_durations(frame, column, source, bad)
    bad.warn(artifact.rel, result)
    return frame



def replaced_names(frame: pl.DataFrame, columns: tuple[str, ...], rel: str, result: ReadResult) -> None:
    """For a CSV polars read as lossy UTF-8 (strings): one ``profiler-utf8/names`` warning with the
    rows whose names hold a replaced byte, counted over the columns in memory, not the file again."""
    hit = pl.any_horizontal([pl.col(c).str.contains("\ufffd", literal=True).fill_null(False) for c in columns])
    n = int(frame.select(hit.sum()).item() or 0)
    if n:
        result.diagnostics.append(dg.warning("profiler-utf8", path=rel, variant="names", n=n))
