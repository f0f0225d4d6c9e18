"""The text-log lexicon is data: a spelling is one string, a unit one row, a writer one entry
(readers/textlog/lexicon.py; docs/formats/textlogs.md "Extending the lexicon"). Here a lexicon in a
temporary module adds one of each, and a file is read with it, with and without the C scanner;
keys no family takes are listed in data quality, never dropped unsaid.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import Artifact
from postmortem.readers import textlog
from postmortem.readers.textlog import fields, shapes

EXTENDED = '''
from dataclasses import replace

from postmortem.readers.textlog import lexicon as base
from postmortem.readers.textlog.lexicon import Unit, Writer

# a spelling: one more string in the loss family (and the word it starts with, where keys are tried)
FAMILIES = tuple(replace(f, spellings=f.spellings + ("objective",), hints=f.hints + ("objective",)) if f.name == "loss"
                 else f for f in base.FAMILIES)
# a unit: one row
UNITS = base.UNITS + (Unit("days", "time", 86400.0),)
# a writer: one entry (its lines hold no word of the lexicon's writers: without it the scanner drops them)
WRITERS = base.WRITERS + (Writer("objective-printer", ("objective",), "iter 3 objective 2.5, step time: 0.001 days",
                                 "tests/readers/test_textlog_lexicon.py"),)
'''

LINES = "iter 3 objective 2.5, step time: 0.001 days\niter 4 objective 2.25, step time: 0.001 days\n"


def read_text(tmp_path: Path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return textlog.READER.read(Artifact(path=str(p), rel=name, size=p.stat().st_size, mtime=0.0, rank=None))


def rows(result, tag: str) -> list[tuple[int, float]]:
    df = result.tables["scalars"].filter(pl.col("tag") == tag)
    return list(zip(df["step"].to_list(), df["value"].to_list()))


@pytest.fixture
def extended(tmp_path, monkeypatch):
    """The reader with the temporary module's lexicon: its grammar and its writers' shapes."""
    (tmp_path / "extended_lexicon.py").write_text(textwrap.dedent(EXTENDED))
    monkeypatch.syspath_prepend(str(tmp_path))
    lex = importlib.import_module("extended_lexicon")
    monkeypatch.setattr(fields, "GRAMMAR", fields.Grammar(lex))
    monkeypatch.setattr(shapes, "SHAPES", shapes.with_writers(shapes.SHAPES, lex.WRITERS))
    monkeypatch.setattr(shapes, "FIELD_WORDS", tuple(dict.fromkeys(a for w in lex.WRITERS for a in w.anchors)))
    return lex


def test_the_base_lexicon_does_not_read_the_new_writer(tmp_path):
    assert rows(read_text(tmp_path, LINES), "loss") == []


@pytest.mark.parametrize("use_c", [True, False])
def test_a_spelling_a_unit_and_a_writer_are_one_entry_each(tmp_path, monkeypatch, extended, use_c):
    if not use_c:
        monkeypatch.setattr(textlog, "_logscan", None)
    elif textlog._logscan is None:
        pytest.skip("built without the C line scanner")
    r = read_text(tmp_path, LINES)
    assert rows(r, "loss") == [(3, 2.5), (4, 2.25)]
    assert rows(r, "step_time") == [(3, pytest.approx(86.4)), (4, pytest.approx(86.4))]  # 0.001 days, in s


def test_every_time_unit_is_one_row_of_the_units_table():
    """`step time: 1754 ns` is 1.754 us (before the units table it was read as 1.754 s: ns was no unit)."""
    for text, seconds in (("step 3 loss: 2.0 step time: 1754 ns", 1.754e-6), ("step 3 loss: 2.0 step time: 1754 us", 1.754e-3),
                          ("step 3 loss: 2.0 step time: 1754ms", 1.754), ("step 3 loss: 2.0 step time: 2 min", 120.0),
                          ("step 3 loss: 2.0, 0.5 min/it", 30.0)):
        rec = fields.read(fields.normalise(text))
        assert [v for t, _, v in rec.values if t == "step_time"] == [pytest.approx(seconds)], text
    assert shapes.key_tag("data_ns") == ("data_time", 1e-9) and shapes.key_tag("tokens_per_s")[1] == 1.0


def test_keys_no_family_takes_are_listed_in_data_quality(tmp_path):
    text = "".join(f"epoch: 1 step: {s}, loss: {3 - s / 10}, acc: 0.{s}, top5: 0.9\n" for s in range(1, 5))
    r = read_text(tmp_path, text)
    assert len(rows(r, "loss")) == 4
    note = [d for d in r.diagnostics if d.slug == "log-keys-unread"]
    assert len(note) == 1 and note[0].params["n"] == 4 and note[0].offset == 1
    assert note[0].params["keys"] == "acc (4), top5 (4)" and note[0].params["line"].startswith("epoch: 1 step: 1, loss:")
    # a line whose every key is the lexicon's says nothing
    clean = read_text(tmp_path, "".join(f"epoch: 1 step: {s}, loss: 2.0, lr: 0.1\n" for s in range(1, 5)), "clean.log")
    assert not [d for d in clean.diagnostics if d.slug == "log-keys-unread"]
