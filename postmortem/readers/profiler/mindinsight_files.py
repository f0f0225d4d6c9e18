"""Reading helpers shared by the mindinsight_* modules (CSV lines, JSON files)."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from .common import load_json, open_text


def csv_lines(path: str, result: ReadResult | None = None, rel: str | None = None) -> Iterator[tuple[int, list[str]]]:
    """(line number, stripped cells) of every non-empty CSV line, the header first."""
    with open_text(path, result, rel, newline="") as fh:
        reader = csv.reader(fh)
        for row in reader:
            if row:
                yield reader.line_num, [cell.strip() for cell in row]


def csv_open(artifact: Artifact, result: ReadResult) -> tuple[Iterator[tuple[int, list[str]]], list[str]] | None:
    """(the lines after the header, the header), or None with a profiler-empty warning."""
    lines = csv_lines(artifact.path, result, artifact.rel)
    _, header = next(lines, (1, []))
    if not header:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="file"))
        return None
    return lines, header


def json_file(artifact: Artifact, result: ReadResult) -> object | None:
    """The parsed file, or None with a profiler-json warning."""
    try:
        return load_json(artifact, result)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, detail=str(exc)))
        return None
