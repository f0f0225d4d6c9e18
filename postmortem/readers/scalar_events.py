"""The scalars of a file of Event records: shared by the MindSpore summary and TensorBoard readers,
whose Events differ only in the float field's number (summary ``scalar_value = 3``, TensorBoard
``simple_value = 2``).

Two paths, one result:
* the C decoder (``_scalars.c``) takes every record of the plain scalar layout (nearly all of a
  long run's records) straight from the file buffer into columns;
* every other record, and every record where the extension was not built (native.py), goes to
  the reader's ``general`` decoder (protowire, one record at a time): the reference.
tests/readers/test_scalars_fast.py reads every fixture and sample file both ways.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from ..model import SCALARS, empty
from ..tags import canonical_tag
from .native import extension

_scalars = extension("_scalars")
_c_decode = _scalars.decode if _scalars else None


class ScalarColumns:
    """One file's decoded values: the C decoder's columns, and the rows the general decoder adds
    (lists, each row with the index of the record it came from, so that both can be put back in
    file order); histograms and what was counted, not decoded."""

    def __init__(self) -> None:
        self.native: dict[str, bytearray] | None = None  # the C decoder's output (see _scalars.c)
        self.native_tags: list[str] = []  # the text of its tag codes
        self.ords: list[int] = []
        self.steps: list[int] = []
        self.tags: list[str] = []
        self.values: list[float] = []
        self.walls: list[float] = []
        self.h_steps: list[int] = []
        self.h_tags: list[str] = []
        self.h_stats: list[tuple[int, float, float, float, int, int, int]] = []
        self.skipped: dict[str, int] = {}

    def skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1


def decode_records(buf: bytes, spans: np.ndarray, cols: ScalarColumns, value_key: int,
                   general: Callable[[int, int, int], None]) -> None:
    """Decode every record (``spans``: ``(record_offset, data_start, data_end)`` rows from
    ``framing.spans``): the plain scalar Events in C, the rest by ``general(offset, start, end)``,
    which appends to ``cols``. ``value_key``: the float field's key byte (0x1D summary, 0x15
    TensorBoard)."""
    if not len(spans):
        return
    rest: list[int] | range = range(len(spans))
    if _c_decode is not None:
        codes: dict[bytes, int] = {}
        cols.native = _c_decode(buf, np.ascontiguousarray(spans, dtype=np.int64), value_key, codes)
        cols.native_tags = [tag.decode("utf-8", errors="replace") for tag in codes]
        rest = np.frombuffer(cols.native["undone"], dtype=np.int64).tolist()
    for k in rest:
        offset, start, end = spans[k].tolist()
        before = len(cols.steps)
        general(offset, start, end)
        cols.ords.extend([k] * (len(cols.steps) - before))


def scalars_frame(cols: ScalarColumns, rank: int | None, source: str, rel: str) -> pl.DataFrame:
    """SCALARS rows, in file order; canonical tags are mapped once per distinct raw tag."""
    parts = []
    native = cols.native
    if native is not None and len(native["step"]):
        codes = np.frombuffer(native["tag"], dtype=np.int32)
        parts.append(pl.DataFrame({
            "step": np.frombuffer(native["step"], dtype=np.int64),
            "raw_tag": pl.Series(cols.native_tags, dtype=pl.Categorical).gather(codes),
            "tag": pl.Series([canonical_tag(t) for t in cols.native_tags], dtype=pl.Categorical).gather(codes),
            "value": np.frombuffer(native["value"], dtype=np.float64),
            "wall_time": np.frombuffer(native["wall"], dtype=np.float64),
        }))
    if cols.steps:
        canonical = {raw: canonical_tag(raw) for raw in set(cols.tags)}
        parts.append(pl.DataFrame({
            "step": pl.Series(cols.steps, dtype=pl.Int64),
            "raw_tag": pl.Series(cols.tags, dtype=pl.Categorical),
            "tag": pl.Series([canonical[t] for t in cols.tags], dtype=pl.Categorical),
            "value": pl.Series(cols.values, dtype=pl.Float64),
            "wall_time": pl.Series(cols.walls, dtype=pl.Float64),
        }))
    if not parts:
        return empty(SCALARS)
    if len(parts) == 1:
        rows = parts[0]
    else:  # both: in file order, by the index of the record each row came from (stably)
        counts = np.frombuffer(native["count"], dtype=np.int32)
        ords = np.concatenate([np.repeat(np.arange(len(counts)), counts), np.array(cols.ords, dtype=np.int64)])
        rows = pl.concat(parts)[np.argsort(ords, kind="stable")]
    return rows.select(
        "step", "tag", "raw_tag", "value", "wall_time",
        pl.lit(rank, dtype=SCALARS["rank"]).alias("rank"), pl.lit(source, dtype=SCALARS["source"]).alias("source"),
        pl.lit(rel, dtype=SCALARS["file"]).alias("file"),
    )
