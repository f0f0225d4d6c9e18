"""Reading the big CSVs of Ascend profiles: the header alone, and some columns as strings by
polars (fast, multi-threaded), row by row with the csv module where polars refuses a damaged
file (a stray quote), so rows before the damage are kept."""

from __future__ import annotations

import csv

import polars as pl

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from .. import guard
from .common import open_text


def header_of(path: str) -> list[str]:
    """The CSV header, read without reading the file (a kernel_details.csv can be GBs)."""
    with open_text(path, newline="") as fh:
        line = fh.readline(1 << 20)
    return [h.strip() for h in next(csv.reader([line]), [])]


def scan(path: str, columns: list[str]) -> pl.LazyFrame:
    """The columns as strings, lazily (values may carry the writers' trailing tab)."""
    return pl.scan_csv(guard.checked(path), infer_schema=False, truncate_ragged_lines=True, encoding="utf8-lossy").select(columns)


def row_by_row(artifact: Artifact, columns: list[str], result: ReadResult, why: Exception) -> pl.DataFrame:
    """The columns of every row the csv module can split, for a file polars refused."""
    result.diagnostics.append(dg.warning("profiler-damaged", path=artifact.rel, detail=str(why).splitlines()[0][:200]))
    with open_text(artifact, result, newline="") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader, [])]
        idx = [header.index(c) for c in columns]
        out: list[list[str | None]] = [[] for _ in columns]
        for row in reader:
            if len(row) != len(header):
                continue
            for values, i in zip(out, idx):
                values.append(row[i])
    return pl.DataFrame(dict(zip(columns, out)), schema={c: pl.Utf8 for c in columns})


def num(name: str) -> pl.Expr:
    """A string column as numbers (trailing tabs stripped; what does not parse becomes null)."""
    return pl.col(name).str.strip_chars().cast(pl.Float64, strict=False)
