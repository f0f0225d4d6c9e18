"""Lineage reader against the lineage files a real SummaryCollector run wrote, and against their
decode by MindSpore's own ``lineage_pb2`` (committed JSON)."""

from __future__ import annotations

import json
from pathlib import Path

from postmortem.model import EVENTS, Artifact, SETTING_KEYS
from postmortem.readers.lineage import READER

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "summary" / "train"
TRAIN_LINEAGE, EVAL_LINEAGE = sorted(FIXTURES.glob("*_lineage"))


def artifact(path: Path, rank: int | None = None) -> Artifact:
    st = path.stat()
    return Artifact(path=str(path), rel=f"summary/{path.name}", size=st.st_size, mtime=st.st_mtime, rank=rank)


def expected(path: Path, kind: str) -> dict:
    events = [e["event"] for e in json.loads(Path(f"{path}.expected.json").read_text()) if e["what"] == kind]
    return events[-1]


def test_train_lineage_settings_match_lineage_pb2():
    result = READER.read(artifact(TRAIN_LINEAGE))
    s = {k: v.value for k, v in result.settings.items()}
    assert {v.source for v in result.settings.values()} == {"lineage"}
    train = expected(TRAIN_LINEAGE, "train_lineage")["trainLineage"]
    hp = train["hyperParameters"]
    assert s["optimizer"] == hp["optimizer"] == "Momentum"
    assert s["loss_function"] == hp["lossFunction"] == "MSELoss"
    assert s["parallel_mode"] == hp["parallelMode"]
    assert (s["epoch"], s["device_num"], s["batch_size"]) == (hp["epoch"], hp["deviceNum"], hp["batchSize"]) == (2, 1, 4)
    assert s["learning_rate"] == 0.01  # float32 0.01, shown as the value the user set
    assert s["train_dataset_size"] == train["trainDataset"]["trainDatasetSize"] == 32
    assert s["network"] == train["algorithm"]["network"] == "Dense"
    assert abs(s["last_loss"] - train["algorithm"]["loss"]) < 1e-6
    # No checkpoint was saved: path {"ckpt": null}, size 0 are not reported as a model.
    assert "model_path" not in s and "model_size_bytes" not in s
    # custom_lineage_data, decoded from UserDefinedInfo's nested maps
    assert s["user.owner"] == "postmortem-tests" and s["user.seed"] == 7 and s["user.ratio"] == 0.5
    assert s["lineage.dataset_graph"] is True
    canonical = {k for k in s if not k.startswith(("user.", "lineage.", "eval."))}
    assert canonical <= set(SETTING_KEYS)
    assert result.diagnostics == []


def test_evaluation_lineage_becomes_eval_event():
    result = READER.read(artifact(EVAL_LINEAGE, rank=2))
    ev = result.tables["events"]
    assert ev.columns == list(EVENTS) and ev.height == 1
    assert ev["kind"][0] == "eval" and ev["rank"][0] == 2 and ev["source"][0] == "lineage"
    want = expected(EVAL_LINEAGE, "evaluation_lineage")
    assert ev["wall_time"][0] == want["wallTime"]
    assert result.settings["eval.valid_dataset_size"].value == 32


def test_last_event_of_each_kind_wins(tmp_path):
    from postmortem.readers.framing import frame_record, scan

    buf = TRAIN_LINEAGE.read_bytes()
    records = [buf[s:e] for _, s, e in scan(buf, "x", "lineage", [])]
    # An older run's train lineage before the real one: replace optimizer name bytes in a copy.
    older = [r.replace(b"Momentum", b"Adamxxxx") for r in records]
    path = tmp_path / TRAIN_LINEAGE.name
    path.write_bytes(b"".join(frame_record(r) for r in older + records))
    assert READER.read(artifact(path)).settings["optimizer"].value == "Momentum"
    path.write_bytes(b"".join(frame_record(r) for r in records + older))
    assert READER.read(artifact(path)).settings["optimizer"].value == "Adamxxxx"


def test_damaged_lineage_never_raises(tmp_path):
    buf = TRAIN_LINEAGE.read_bytes()
    path = tmp_path / TRAIN_LINEAGE.name
    path.write_bytes(buf[:-10])
    r = READER.read(artifact(path))
    assert [d.slug for d in r.diagnostics] == ["lineage-truncated"]
    assert r.settings["user.owner"].value == "postmortem-tests"  # records before the cut are kept
    for i in range(0, len(buf), 7):
        damaged = bytearray(buf)
        damaged[i] ^= 0xFF
        path.write_bytes(bytes(damaged))
        r = READER.read(artifact(path))
        assert r.diagnostics, i


def test_claims():
    def a(rel: str) -> Artifact:
        return Artifact(path="/x/" + rel, rel=rel, size=1, mtime=0.0)

    assert READER.claims(a("s/events.out.events.summary.1700000000.0.host_lineage"))
    assert not READER.claims(a("s/events.out.events.summary.1700000000.0.host_MS"))
    assert not READER.claims(a("s/notes_lineage"))
