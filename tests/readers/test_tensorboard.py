"""TensorBoard reader against event files written by tensorboardX's real SummaryWriter, checked
against tensorboardX's own ``event_pb2`` decode (committed JSON and live)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import SCALARS, Artifact
from postmortem.readers import tensorboard as tb
from postmortem.readers.tensorboard import READER

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tensorboard"
FILES = sorted(FIXTURES.glob("rank_*/events.out.tfevents.*"))


def artifact(path: Path, rank: int | None = 0) -> Artifact:
    st = path.stat()
    rel = f"tensorboard/{path.parent.name}/{path.name}"
    return Artifact(path=str(path), rel=rel, size=st.st_size, mtime=st.st_mtime, rank=rank)


def key(rows):
    return [tuple("nan" if isinstance(x, float) and math.isnan(x) else x for x in r) for r in rows]


def expected_scalars(rows: list[dict]) -> list[tuple]:
    out = []
    for r in rows:
        if "value" in r and r["kind"] in ("simple_value", "tensor"):
            value = float(r["value"])
            if r["tag"] == "iteration-time":
                value /= 1000.0  # MindFormers writes integer milliseconds
            out.append((r["step"], r["tag"], value, r["wall_time"]))
    return out


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_matches_event_pb2_decode(path):
    rows = json.loads((path.parent / "expected.json").read_text())
    result = READER.read(artifact(path))
    s = result.tables["scalars"]
    got = list(zip(s["step"], s["raw_tag"], s["value"], s["wall_time"]))
    want = expected_scalars(rows)
    assert len(want) == 30 * 12 and key(got) == key(want)
    h = result.tables["histograms"]
    want_h = [(r["step"], r["tag"], r["num"], r["min"], r["max"], r["sum"]) for r in rows if r["kind"] == "histo"]
    assert list(zip(h["step"], h["tag"], h["count"], h["min"], h["max"], h["sum"])) == want_h


def test_live_event_pb2_conformance():
    from tensorboardX.proto import event_pb2  # upb protobuf, the reference TensorBoard decoder

    buf = FILES[0].read_bytes()
    want, pos = [], 0
    while pos < len(buf):
        (n,) = struct.unpack_from("<Q", buf, pos)
        ev = event_pb2.Event.FromString(buf[pos + 12:pos + 12 + n])
        pos += 16 + n
        for v in ev.summary.value:
            if v.WhichOneof("value") == "simple_value":
                want.append((ev.step, v.tag, v.simple_value))
    s = READER.read(artifact(FILES[0])).tables["scalars"].filter(~pl.col("raw_tag").cast(pl.String).str.starts_with("train/"))
    got = [(st, t, v * 1000.0 if t == "iteration-time" else v) for st, t, v in zip(s["step"], s["raw_tag"], s["value"])]
    assert key(got) == key(want)


def test_canonical_tags_and_units():
    result = READER.read(artifact(FILES[1], rank=1))
    s = result.tables["scalars"]
    assert s.schema == pl.Schema(SCALARS)
    tags = dict(zip(s["raw_tag"], s["tag"]))
    assert tags["loss"] == "loss" and tags["learning-rate"] == "lr" and tags["grad-norm"] == "grad_norm"
    assert tags["iteration-time"] == "step_time" and tags["throughput"] == "throughput"
    assert tags["model-flops-throughput-per-npu"] == "tflops_per_device" and tags["lm-loss"] == "lm_loss"
    # "vs samples" twins keep their names: their x axis is samples, not steps
    assert tags["loss_vs_samples"] == "loss_vs_samples"
    step_time = s.filter(pl.col("tag") == "step_time")
    assert step_time["value"].to_list() == [(800 + k % 3) / 1000 for k in range(1, 31)]  # seconds
    twin = s.filter(pl.col("raw_tag") == "iteration-time_vs_samples")
    assert twin["value"].to_list() == [800.0 + k % 3 for k in range(1, 31)]
    loss = dict(zip(*s.filter(pl.col("tag") == "loss").select("step", "value")))
    assert math.isnan(loss[7]) and loss[8] == math.inf
    assert set(s["rank"]) == {1} and set(s["source"]) == {"tensorboard"}
    tensor = s.filter(pl.col("raw_tag") == "train/tensor_f64")
    assert tensor["value"].to_list() == [k / 3.0 for k in range(1, 31)]  # double kept exactly
    (skipped,) = [d for d in result.diagnostics if d.slug == "tensorboard-skipped"]
    assert "1 image" in skipped.message


def test_fast_path_and_general_decoder_agree(monkeypatch):
    fast = READER.read(artifact(FILES[0]))
    from postmortem.readers import scalar_events

    monkeypatch.setattr(scalar_events, "_c_decode", None)
    slow = tb.read(artifact(FILES[0]))
    assert fast.tables["scalars"].equals(slow.tables["scalars"], null_equal=True)


def test_damaged_copies(tmp_path):
    buf = FILES[0].read_bytes()
    full = READER.read(artifact(FILES[0])).tables["scalars"]
    path = tmp_path / FILES[0].name
    path.write_bytes(buf[: len(buf) - 30])
    r = READER.read(artifact(path))
    assert [d.slug for d in r.diagnostics if d.slug != "tensorboard-skipped"] == ["tensorboard-truncated"]
    assert r.tables["scalars"].drop("file").equals(full.head(r.tables["scalars"].height).drop("file"))
    from postmortem.readers.framing import scan

    spans = list(scan(buf, "x", "tensorboard", []))
    _, start, end = spans[len(spans) // 3]  # a one-scalar record's payload
    damaged = bytearray(buf)
    damaged[end - 2] ^= 0x10
    path.write_bytes(bytes(damaged) + b"trailing garbage bytes")
    r = READER.read(artifact(path))
    crc = [d for d in r.diagnostics if d.slug == "tensorboard-record-crc"]
    assert len(crc) == 2  # the damaged record (skipped) and the garbage (stop)
    assert r.tables["scalars"].height == full.height - 1


def test_claims():
    assert READER.claims(Artifact(path="/x", rel="tb/rank_0/events.out.tfevents.1700000000.host", size=1, mtime=0))
    assert not READER.claims(Artifact(path="/x", rel="s/events.out.events.summary.1.0.h_MS", size=1, mtime=0))


def test_locate_gives_the_path_rank_and_the_writers_stamp():
    """The reader contract (readers/base.py): loading orders a stream's files by the stamp
    tensorboardX puts in the name (events.out.tfevents.{unix seconds}.{host})."""
    truth = Path(__file__).resolve().parent.parent / "fixtures" / "truth" / "mf-tb-ms" / "tensorboard" / "rank_0"
    path = next(truth.iterdir())
    rel = f"tensorboard/rank_0/{path.name}"
    where = READER.locate(Artifact(str(path), rel, path.stat().st_size, 0.0, rank=0))
    assert where.rank == 0 and where.launch == int(path.name.split(".")[3])
    assert READER.locate(Artifact(str(path), "events.out.tfevents.x", 0, 0.0)).launch is None
