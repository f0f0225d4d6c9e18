"""No analysis module returns prose: every sentence is a ``Text`` (a key and its parameters),
worded per language in the report layer.

The walk visits every field of the ``Analysis`` of the shipped samples and of real conformance
runs, recursively (dataclasses, mappings, sequences, Text parameters), and fails on a string that
reads as a sentence (a space or a CJK character) unless it sits in a place that holds input data:
a log line the run printed, a setting's value as its config wrote it, a field name a reader quotes.
Those places are listed here, explicitly; an enum member is a code, whatever its value.
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.load import load_run
from postmortem.text import Text

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "tests" / "fixtures" / "conformance"
SAMPLES = REPO / "samples"

SENTENCE = re.compile(r"[ \u3000-\u9fff\uff00-\uffef]")
# Places whose strings are input data, shown as they were read (paths in the walk's notation:
# [] an element of a sequence, [key] a mapping's value, <text.key>.param a Text's parameter).
INPUT_DATA = (
    re.compile(r"\.diagnostics\[\]\.params"),  # what a reader quotes: a line, field names, an OS error
    re.compile(r"\.findings\[\]\.params\[detail\]$"),  # the log's first error line
    re.compile(r"\.(identity\.settings\[\]|settings\.(changed|added|removed)\[\]|diagnosis\.changed\[\]"
               r"|diagnosis\.problems\[\]\.settings\[\])\.(value|baseline|current)"),  # a setting's value
    re.compile(r"\.(run_id|experiment)$"),
    re.compile(r"\.profile\."),  # operator and link names as the profiler wrote them
    re.compile(r"\.(path|checkpoint)$"),  # file names
    re.compile(r"\.failure\.(message|message_file|evidence\[\]\.(text|file)|resume_from\.path)$"),  # a failure's lines as the logs wrote them
)


def prose(value, path: str = "a", out: list[str] | None = None) -> list[str]:
    """Every sentence-like string outside the input-data places, with where it was found."""
    out = [] if out is None else out
    if isinstance(value, Enum) or value is None or isinstance(value, (int, float, bool, pl.DataFrame)):
        return out
    if isinstance(value, str):
        if SENTENCE.search(value) and not any(p.search(path) for p in INPUT_DATA):
            out.append(f"{path} = {value!r}")
    elif isinstance(value, Text):
        for k, v in value.params.items():
            prose(v, f"{path}<{value.key}>.{k}", out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            prose(getattr(value, f.name), f"{path}.{f.name}", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            prose(k, f"{path}{{key}}", out)
            prose(v, f"{path}[{k}]", out)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            prose(v, f"{path}[]", out)
    return out


def test_the_walk_finds_a_sentence_where_a_text_belongs():
    from postmortem.analysis.types import Figure, Finding, FindingKind, FindingSeverity

    assert prose(Figure(1.0, method="median of the steady window")) == ["a.method = 'median of the steady window'"]
    assert prose(Figure(1.0, method=Text("method.inverse-step-time"))) == []
    error_line = Finding(FindingKind.LOG_ERRORS, FindingSeverity.WARNING, {"count": 1, "detail": "RuntimeError: boom"})
    assert prose(error_line, "a.findings[]") == []  # the log's line, quoted
    assert prose(Finding(FindingKind.LOG_ERRORS, FindingSeverity.WARNING, {"why": "the log has errors"}), "a.findings[]")


def test_the_samples_against_their_baseline_return_no_prose():
    a = analyze(load_run(str(SAMPLES / "gpt-tiny-lr2x")), load_run(str(SAMPLES / "gpt-tiny-base")))
    assert a.diagnosis.problems, "the changed sample has problems to diagnose"
    assert prose(a) == []


@pytest.mark.parametrize("folder", [SAMPLES / "profiler-cpu", *sorted(p for p in CONF.iterdir() if p.is_dir())],
                         ids=lambda p: p.name)
def test_real_runs_return_no_prose(folder):
    assert prose(analyze(load_run(str(folder)))) == []
