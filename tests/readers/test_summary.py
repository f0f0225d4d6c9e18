"""MindSpore summary reader against files written by MindSpore itself and decoded by its own
``summary_pb2`` (committed JSON, and live in a subprocess when mindspore is importable)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import HISTOGRAMS, SCALARS, Artifact
from postmortem.readers import mindspore_summary as ms_reader
from postmortem.readers.mindspore_summary import READER, summary_stamp

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "summary"
RECORDS = next((FIXTURES / "records").glob("*_MS"))
TRAIN = next((FIXTURES / "train").glob("*_MS"))


def artifact(path: Path, rel: str | None = None, rank: int | None = None) -> Artifact:
    st = path.stat()
    return Artifact(path=str(path), rel=rel or f"summary/{path.name}", size=st.st_size, mtime=st.st_mtime, rank=rank)


def _f(x: float | str) -> float:
    return float(x)  # "nan" / "inf" / "-inf" in the JSON


def expected_rows(events: list[dict]) -> tuple[list[tuple], list[tuple]]:
    """(step, tag, value, wall_time) scalars and histogram stats from a summary_pb2 decode."""
    scalars, hists = [], []
    for ev in events:
        for v in ev["values"]:
            if v["kind"] == "scalar_value":
                scalars.append((ev["step"], v["tag"], _f(v["value"]), ev["wall_time"]))
            elif v["kind"] == "tensor" and math.prod(v["dims"]) == 1:
                scalars.append((ev["step"], v["tag"], _f(v["float_data"][0]), ev["wall_time"]))
            elif v["kind"] == "histogram":
                hists.append((ev["step"], v["tag"], v["count"], _f(v["min"]), _f(v["max"]), _f(v["sum"]),
                              v["nan_count"], v["pos_inf_count"], v["neg_inf_count"]))
    return scalars, hists


def same(a: list[tuple], b: list[tuple]) -> bool:
    # Exact equality where NaN == NaN.
    def key(row: tuple) -> tuple:
        return tuple("nan" if isinstance(x, float) and math.isnan(x) else x for x in row)
    return [key(r) for r in a] == [key(r) for r in b]


def ours(path: Path) -> tuple[list[tuple], list[tuple]]:
    result = READER.read(artifact(path))
    s = result.tables["scalars"]
    h = result.tables["histograms"]
    scalars = list(zip(s["step"], s["raw_tag"], s["value"], s["wall_time"]))
    hists = list(zip(*(h[c] for c in ("step", "tag", "count", "min", "max", "sum",
                                       "nan_count", "pos_inf_count", "neg_inf_count"))))
    return scalars, hists


@pytest.mark.parametrize("path", [RECORDS, TRAIN], ids=["records", "train"])
def test_matches_committed_summary_pb2_decode(path):
    expected = json.loads(Path(f"{path}.expected.json").read_text())
    exp_scalars, exp_hists = expected_rows(expected)
    got_scalars, got_hists = ours(path)
    assert exp_scalars and same(got_scalars, exp_scalars)
    assert exp_hists and same(got_hists, exp_hists)


_LIVE = r"""
import json, math, struct, sys
from mindspore.train import summary_pb2
buf = open(sys.argv[1], "rb").read()
pos, out = 0, []
while pos < len(buf):
    n = struct.unpack_from("<Q", buf, pos)[0]
    ev = summary_pb2.Event.FromString(buf[pos + 12:pos + 12 + n]); pos += 16 + n
    for v in ev.summary.value:
        k = v.WhichOneof("value")
        if k == "scalar_value":
            out.append(["s", ev.step, v.tag, repr(v.scalar_value), ev.wall_time])
        elif k == "tensor" and math.prod(v.tensor.dims) == 1:
            out.append(["s", ev.step, v.tag, repr(v.tensor.float_data[0]), ev.wall_time])
        elif k == "histogram":
            h = v.histogram
            out.append(["h", ev.step, v.tag, h.count, repr(h.min), repr(h.max), repr(h.sum),
                        h.nan_count, h.pos_inf_count, h.neg_inf_count])
print(json.dumps(out))
"""


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="mindspore is not installed")
@pytest.mark.parametrize("path", [RECORDS, TRAIN], ids=["records", "train"])
def test_live_conformance_with_mindspore_summary_pb2(path):
    # MindSpore runs in a subprocess: importing it here would slow protobuf for the whole session.
    proc = subprocess.run([sys.executable, "-c", _LIVE, str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    exp_scalars = [(r[1], r[2], float(r[3]), r[4]) for r in rows if r[0] == "s"]
    exp_hists = [(r[1], r[2], r[3], float(r[4]), float(r[5]), float(r[6]), r[7], r[8], r[9]) for r in rows if r[0] == "h"]
    got_scalars, got_hists = ours(path)
    assert same(got_scalars, exp_scalars)
    assert same(got_hists, exp_hists)


def test_frames_have_schema_tags_rank_and_special_values():
    result = READER.read(artifact(RECORDS, rel="run/summary/" + RECORDS.name))
    s = result.tables["scalars"]
    assert s.schema == pl.Schema(SCALARS) and result.tables["histograms"].schema == pl.Schema(HISTOGRAMS)
    assert set(s["source"]) == {"summary"} and set(s["file"]) == {"run/summary/" + RECORDS.name}
    assert set(s["rank"]) == {0}  # device id 0 from the name
    tags = dict(zip(s["raw_tag"], s["tag"]))
    assert tags["grad_norm"] == "grad_norm" and tags["lr"] == "lr" and tags["tensor11"] == "tensor11"
    loss = s.filter(pl.col("raw_tag") == "loss")
    by_step = dict(zip(loss["step"], loss["value"]))
    assert math.isnan(by_step[5]) and by_step[9] == math.inf and by_step[13] == -math.inf
    # The same (tag, step) written twice is kept twice (load.py deduplicates).
    assert loss.filter(pl.col("step") == 20)["value"].to_list() == [0.5, 0.25]
    # The three-element tensor is not a scalar.
    assert "tensor3" not in set(s["raw_tag"])
    (skipped,) = [d for d in result.diagnostics if d.slug == "summary-skipped"]
    assert "1 image" in skipped.message and "20 tensor" in skipped.message


def test_collector_file_loss_auto_is_loss_and_graph_counted():
    result = READER.read(artifact(TRAIN, rank=3))
    s = result.tables["scalars"]
    assert set(s["raw_tag"]) == {"loss/auto"} and set(s["tag"]) == {"loss"}
    assert set(s["rank"]) == {3}  # the artifact's rank wins over the name
    assert any(d.slug == "summary-skipped" and "graph" in d.message for d in result.diagnostics)
    assert result.settings["framework"].value == "MindSpore"


def test_fast_path_and_general_decoder_agree(monkeypatch):
    from postmortem.readers import scalar_events

    for path in (RECORDS, TRAIN):
        fast = READER.read(artifact(path))
        monkeypatch.setattr(scalar_events, "_c_decode", None)
        slow = ms_reader.read(artifact(path))
        monkeypatch.undo()
        assert fast.tables["scalars"].equals(slow.tables["scalars"], null_equal=True)
        assert fast.tables["histograms"].equals(slow.tables["histograms"], null_equal=True)


def test_truncated_and_corrupted_copies(tmp_path):
    buf = RECORDS.read_bytes()
    full = READER.read(artifact(RECORDS)).tables["scalars"]
    cut = tmp_path / RECORDS.name
    cut.write_bytes(buf[:-7])
    r = READER.read(artifact(cut, rel="s/" + RECORDS.name))
    assert 0 < r.tables["scalars"].height < full.height
    assert r.tables["scalars"].drop("file").equals(full.head(r.tables["scalars"].height).drop("file"))
    (d,) = [d for d in r.diagnostics if d.slug == "summary-truncated"]
    assert d.path == "s/" + RECORDS.name and d.offset is not None and d.offset < len(buf)

    flipped = bytearray(buf)
    flipped[len(buf) // 2] ^= 0x40
    cut.write_bytes(bytes(flipped))
    r = READER.read(artifact(cut))
    assert any(d.slug == "summary-record-crc" for d in r.diagnostics)
    assert 0 < r.tables["scalars"].height < full.height

    cut.write_bytes(b"")
    r = READER.read(artifact(cut))
    assert r.tables["scalars"].height == 0 and [d.slug for d in r.diagnostics] == ["summary-file-empty"]


def test_valid_crc_but_bad_protobuf_is_a_diagnostic(tmp_path):
    from postmortem.readers.framing import frame_record

    good = RECORDS.read_bytes()
    bad = tmp_path / RECORDS.name
    bad.write_bytes(good + frame_record(b"\x2a\x7f\x01"))  # summary field claiming 127 bytes
    r = READER.read(artifact(bad))
    assert [d.slug for d in r.diagnostics if d.severity != "info"] == ["summary-bad-record"]
    assert r.tables["scalars"].height == READER.read(artifact(RECORDS)).tables["scalars"].height


def test_claims_and_names():
    def a(rel: str) -> Artifact:
        return Artifact(path="/x/" + rel, rel=rel, size=1, mtime=0.0)

    assert READER.claims(a("s/events.out.events.summary.1700000000.3.host_MS"))
    assert READER.claims(a("s/events.out.events.summary.1700000000host_MS"))  # old: no device id
    assert not READER.claims(a("s/events.out.events.summary.1700000000.3.host_lineage"))
    assert not READER.claims(a("s/events.out.tfevents.1700000000.host"))
    assert summary_stamp("events.out.events.summary.1700000123.3.host_MS") == 1700000123
    assert summary_stamp("train.log") is None
    assert ms_reader.device_id("events.out.events.summary.1700000123.3.host_MS") == 3


def test_locate_gives_the_rank_from_path_or_device_id_and_the_stamp():
    name = "events.out.events.summary.1796116804.3.vm_MS"
    assert READER.locate(Artifact("/x/" + name, f"summary/{name}", 0, 0.0)) == ms_reader.Location(3, 1796116804)
    assert READER.locate(Artifact("/x/" + name, f"rank_5/summary/{name}", 0, 0.0, rank=5)).rank == 5
