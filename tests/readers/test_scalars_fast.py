"""The C scalar-Event decoder (readers/_scalars.c) gives exactly what the Python paths give.

Every summary and TensorBoard file is read twice: with the decoder, and without it (the general
per-record decoder, the reference). Tables and diagnostics must be identical, floats
bit for bit. Inputs: the fixtures and sample runs (real MindSpore and tensorboardX writers), and
files tensorboardX writes here with the layouts the decoder must leave alone: negative steps, long
and non-ASCII tags, NaN and infinite values, histograms and text between the scalars.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from postmortem.model import Artifact
from postmortem.readers import mindspore_summary, scalar_events, tensorboard

pytestmark = pytest.mark.skipif(scalar_events._c_decode is None, reason="built without the C decoder")

ROOT = Path(__file__).resolve().parents[2]
SUMMARIES = sorted(ROOT.glob("tests/fixtures/summary/**/*_MS")) + sorted(ROOT.glob("samples/**/*_MS"))
EVENTS = sorted(ROOT.glob("tests/fixtures/tensorboard/**/*tfevents*")) + sorted(ROOT.glob("samples/**/*tfevents*"))


def _read(module, path: Path):
    art = Artifact(path=str(path), rel=path.name, size=path.stat().st_size, mtime=0.0, rank=0)
    return module.READER.read(art)


def _both(module, path: Path, monkeypatch):
    fast = _read(module, path)
    with monkeypatch.context() as m:
        m.setattr(scalar_events, "_c_decode", None)
        ref = _read(module, path)
    return fast, ref


@pytest.mark.parametrize("path", SUMMARIES, ids=lambda p: str(p.relative_to(ROOT)))
def test_summary_files_read_the_same(path: Path, monkeypatch, same_result):
    same_result(*_both(mindspore_summary, path, monkeypatch))


@pytest.mark.parametrize("path", EVENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_event_files_read_the_same(path: Path, monkeypatch, same_result):
    same_result(*_both(tensorboard, path, monkeypatch))


def test_odd_layouts_read_the_same(tmp_path: Path, monkeypatch, same_result):
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(tmp_path))
    long_tag = "train/" + "x" * 140  # a tag of 128+ bytes: a two-byte length
    for step in range(-3, 300):
        writer.add_scalar("train/loss", 2.0 / (step + 5), step)
        writer.add_scalar("lr", float("nan") if step == 7 else 1e-4, step)
        writer.add_scalar("损失/ü", float("inf") if step == 9 else -0.0, step)
        writer.add_scalar(long_tag, step * 1.5, step)
        if step % 50 == 0:
            writer.add_histogram("weights", np.linspace(-1, 1, 64) * (step + 1), step)
            writer.add_text("note", f"step {step}", step)
    writer.add_scalar("train/loss", 0.5, 2**40)  # a step with a long varint
    writer.close()
    (path,) = tmp_path.glob("*tfevents*")
    fast, ref = _both(tensorboard, path, monkeypatch)
    same_result(fast, ref)
    scalars = ref.tables["scalars"]
    assert scalars.filter(pl.col("step") < 0).height > 0 and scalars["raw_tag"].cast(pl.String).str.len_bytes().max() > 128
    assert scalars.height >= 4 * 303


def test_decoder_takes_the_plain_records_and_leaves_the_rest():
    path = next(p for p in EVENTS if "samples" in p.parts)
    buf = path.read_bytes()
    from postmortem.readers.framing import spans

    records = spans(buf, path.name, "tensorboard", [])
    out = scalar_events._c_decode(buf, np.ascontiguousarray(records), 0x15, {})
    undone = np.frombuffer(out["undone"], dtype=np.int64)
    counts = np.frombuffer(out["count"], dtype=np.int32)
    assert 0 < len(undone) < len(records) // 10  # the version record and the like, not the scalars
    assert len(counts) == len(records) and (counts[undone] == 0).all()
    assert counts.sum() == len(out["step"]) // 8 == len(records) - len(undone)  # one scalar per tensorboardX record
