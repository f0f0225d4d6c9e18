"""Checkpoint reader against real MindSpore 2.10 files (tests/fixtures/checkpoints/make_fixtures.py).

Expected numbers come from the fixture network (Dense(8, 16) -> Dense(16, 4): 212 weights), the
training schedule in the generator (4 steps per epoch) and expected.json, which the generator
wrote from ``mindspore.load_checkpoint``; never from this reader's own output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postmortem.model import CHECKPOINT_PARAMS, CHECKPOINTS, EVENTS, Artifact
from postmortem.readers.base import rank_from_path
from postmortem.readers.checkpoints import READER, param_role, read_checkpoint_header

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoints"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())

NET = [("fc1.weight", [16, 8]), ("fc1.bias", [16]), ("fc2.weight", [4, 16]), ("fc2.bias", [4])]
MODEL_ELEMENTS = 16 * 8 + 16 + 4 * 16 + 4  # 212
# safetensors names dtypes by its own short codes
SAFETENSORS_DTYPES = {"F32": "Float32", "F16": "Float16", "BF16": "BFloat16", "I32": "Int32", "I64": "Int64",
                      "F64": "Float64", "BOOL": "Bool"}
HAVE_MINDSPORE = importlib.util.find_spec("mindspore") is not None


def artifact(root: Path, rel: str) -> Artifact:
    path = root / rel
    st_ = path.stat()
    return Artifact(path=str(path), rel=rel, size=st_.st_size, mtime=st_.st_mtime, rank=rank_from_path(rel))


def read(root: Path, rel: str):
    a = artifact(root, rel)
    assert READER.claims(a)
    return READER.read(a)


def triples(rel_or_path: str | Path) -> list[list]:
    header = read_checkpoint_header(rel_or_path if isinstance(rel_or_path, Path) else FIXTURES / rel_or_path)
    return [[p.name, list(p.shape), SAFETENSORS_DTYPES.get(p.dtype, p.dtype)] for p in header.params]


# --------------------------------------------------------------------------- protobuf helpers
# An independent encoder for checkpoint.proto, built from the schema (MindSpore's checkpoint_pb2
# field numbers), so tests can rewrite real files the way MindSpore's save code does.


def _checkpoint_class():
    fd = descriptor_pb2.FileDescriptorProto(name="test_checkpoint.proto", package="testckpt")
    F = descriptor_pb2.FieldDescriptorProto
    tensor = fd.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    tensor.field.add(name="tensor_type", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    tensor.field.add(name="tensor_content", number=3, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    ckpt = fd.message_type.add(name="Checkpoint")
    value = ckpt.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    value.field.add(name="tensor", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".testckpt.TensorProto")
    value.field.add(name="maptensor", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".testckpt.MapTensorProto")
    maptensor = fd.message_type.add(name="MapTensorProto")
    maptensor.field.add(name="tensor", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                        type_name=".testckpt.TensorProto")
    ckpt.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".testckpt.Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("testckpt.Checkpoint"))


Checkpoint = _checkpoint_class()


def split_checkpoint(src: Path, dst: Path, name: str, slices: int) -> None:
    """Rewrite ``src`` with parameter ``name`` split along axis 0, as _write_parameter_data does."""
    data = src.read_bytes()
    whole = Checkpoint()
    whole.ParseFromString(data)
    out = bytearray()
    for value in whole.value:
        t = value.tensor
        if value.tag == name:
            rows = np.frombuffer(t.tensor_content, np.uint8).reshape(t.dims[0], -1)
            parts = [p.tobytes() for p in np.array_split(rows, slices)]
        else:
            parts = [t.tensor_content]
        for part in parts:
            one = Checkpoint()
            v = one.value.add(tag=value.tag)
            v.tensor.dims.extend(t.dims)
            v.tensor.tensor_type = t.tensor_type
            v.tensor.tensor_content = part
            out += one.SerializeToString()
    dst.write_bytes(bytes(out))


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


# --------------------------------------------------------------------------- inventory vs MindSpore


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_names_shapes_dtypes_match_load_checkpoint(rel: str) -> None:
    expected = EXPECTED[rel]
    got = triples(rel)
    if rel.endswith(".safetensors"):  # header order is not file order; compare as sets
        expected, got = sorted(expected), sorted(got)
    assert got == expected
    assert read_checkpoint_header(FIXTURES / rel).problem is None


@pytest.mark.skipif(not HAVE_MINDSPORE, reason="mindspore not installed")
def test_against_live_load_checkpoint(tmp_path: Path) -> None:
    split = tmp_path / "split.ckpt"
    split_checkpoint(FIXTURES / "plain" / "net.ckpt", split, "fc1.weight", 3)
    files = {rel: FIXTURES / rel for rel in EXPECTED} | {"split": split}
    script = (
        "import json, sys\n"
        "import mindspore as ms\n"
        "out = {}\n"
        "for key, path in json.loads(sys.argv[1]).items():\n"
        "    fmt = 'safetensors' if path.endswith('.safetensors') else 'ckpt'\n"
        "    d = ms.load_checkpoint(path, format=fmt)\n"
        "    out[key] = [[n, list(getattr(v, 'shape', [])), str(getattr(v, 'dtype', 'str'))] for n, v in d.items()]\n"
        "print('JSON' + json.dumps(out))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps({k: str(v) for k, v in files.items()})],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    live = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("JSON"))[4:])
    for key, path in files.items():
        got = triples(path)
        exp = live[key]
        if key.endswith(".safetensors"):
            exp, got = sorted(exp), sorted(got)
        assert got == exp, key


def test_split_parameter_is_merged(tmp_path: Path) -> None:
    split = tmp_path / "net-1_1.ckpt"
    split_checkpoint(FIXTURES / "plain" / "net.ckpt", split, "fc1.weight", 2)
    whole = read_checkpoint_header(FIXTURES / "plain" / "net.ckpt")
    header = read_checkpoint_header(split)
    assert header.problem is None
    assert [(p.name, p.shape, p.elements) for p in header.params] == [
        (p.name, p.shape, p.elements) for p in whole.params
    ]
    parts = {p.name: p.parts for p in header.params}
    assert parts == {"fc1.weight": 2, "fc1.bias": 1, "fc2.weight": 1, "fc2.bias": 1}
    assert header.params[0].nbytes == 16 * 8 * 4
    result = read(tmp_path, "net-1_1.ckpt")
    row = result.tables["checkpoints"].row(0, named=True)
    assert row["tensors"] == 4 and row["model_params"] == MODEL_ELEMENTS


def test_map_parameter_slices(tmp_path: Path) -> None:
    """MapParameter cannot be saved on the CPU; build its Values as _write_mapparameter does:
    one Value per exported slice with tensors (keys, values, status), numpy dtype names."""
    out = bytearray((FIXTURES / "plain" / "net.ckpt").read_bytes())
    for rows in (3, 2):
        one = Checkpoint()
        v = one.value.add(tag="emb_table")
        for arr in (np.arange(rows, dtype=np.int32), np.ones((rows, 3), np.float32), np.zeros(rows, np.int32)):
            t = v.maptensor.tensor.add(tensor_type=str(arr.dtype), tensor_content=arr.reshape(-1).tobytes())
            t.dims.extend(arr.shape)
        out += one.SerializeToString()
    (tmp_path / "m-1_1.ckpt").write_bytes(bytes(out))
    header = read_checkpoint_header(tmp_path / "m-1_1.ckpt")
    assert header.problem is None
    emb = header.params[-1]
    assert (emb.name, emb.shape, emb.dtype, emb.elements, emb.parts) == ("emb_table", (5, 3), "float32", 15, 2)


# --------------------------------------------------------------------------- ModelCheckpoint runs


def test_modelcheckpoint_with_append_info_and_crc() -> None:
    root = FIXTURES / "modelcheckpoint"
    for rel, epoch, step in (("net-1_4.ckpt", 1, 4), ("net-2_4.ckpt", 2, 8)):
        result = read(root, rel)
        assert result.diagnostics == []
        ckpt = result.tables["checkpoints"]
        assert ckpt.schema == pl.Schema(CHECKPOINTS)
        row = ckpt.row(0, named=True)
        assert row["step"] == step and row["step_source"] == "append_info"
        assert (row["epoch"], row["step_in_epoch"]) == (epoch, 4)
        assert row["crc"] is True and row["format"] == "ckpt" and row["kind"] == "train"
        # Adam: model, adam_m, adam_v + global_step, learning_rate, beta1/2_power, epoch_num, step_num
        assert row["tensors"] == 4 * 3 + 6
        assert row["model_params"] == MODEL_ELEMENTS
        assert row["optimizer_params"] == 2 * MODEL_ELEMENTS + 6
        assert row["bytes"] == (root / rel).stat().st_size
        params = result.tables["checkpoint_params"]
        assert params.schema == pl.Schema(CHECKPOINT_PARAMS)
        roles = dict(zip(params["name"], params["role"]))
        # nn.Adam in MindSpore 2.10 names its state moment1.* / moment2.*
        assert roles["fc1.weight"] == "model" and roles["moment2.fc2.bias"] == "optimizer"
        assert roles["beta2_power"] == "bookkeeping" and roles["step_num"] == "bookkeeping"
        events = result.tables["events"]
        assert events.schema == pl.Schema(EVENTS)
        ev = events.row(0, named=True)
        assert ev["kind"] == "checkpoint_save" and ev["step"] == step
        assert ev["wall_time"] == pytest.approx((root / rel).stat().st_mtime)
        assert ev["duration_s"] is None and ev["file"] == rel


def test_rerun_prefix_without_append_info_uses_optimizer_counter() -> None:
    # second run in the same folder: prefix net_1, AdamWeightDecay, no append_info, no crc
    row = read(FIXTURES / "modelcheckpoint", "net_1-1_4.ckpt").tables["checkpoints"].row(0, named=True)
    assert (row["epoch"], row["step_in_epoch"]) == (1, 4)
    assert row["step"] == 4 and row["step_source"] == "global_step"  # 4 optimizer updates
    assert row["crc"] is False
    assert row["tensors"] == 4 * 3 + 2  # + global_step, learning_rate
    assert row["optimizer_params"] == 2 * MODEL_ELEMENTS + 2
    params = read(FIXTURES / "modelcheckpoint", "net_1-1_4.ckpt").tables["checkpoint_params"]
    assert params.filter(pl.col("name").str.starts_with("adam_"))["role"].unique().to_list() == ["optimizer"]


def test_name_only_checkpoint_leaves_step_null(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "plain" / "net.ckpt", tmp_path / "resnet-3_17.ckpt")
    result = read(tmp_path, "resnet-3_17.ckpt")
    row = result.tables["checkpoints"].row(0, named=True)
    assert row["step"] is None and (row["epoch"], row["step_in_epoch"]) == (3, 17)
    assert row["step_source"] == "name"
    assert result.tables["events"]["step"].to_list() == [None]


def test_graph_meta_and_landscape_metadata_are_claimed_without_rows() -> None:
    for root, rel in ((FIXTURES / "modelcheckpoint", "net-graph.meta"),
                      (FIXTURES / "landscape", "summary/ckpt_dir/train_metadata.json")):
        result = read(root, rel)
        # nothing to tabulate, and an info saying so (a claimed file is never silent)
        assert result.rows() == 0 and result.settings == {}
        assert [(d.severity, d.slug) for d in result.diagnostics] == [("info", "checkpoint-companion")]


def test_landscape_checkpoints_are_not_saves() -> None:
    result = read(FIXTURES / "landscape", "summary/ckpt_dir/Net_2_step.ckpt")
    row = result.tables["checkpoints"].row(0, named=True)
    assert row["kind"] == "landscape" and row["step"] == 2 and row["model_params"] == MODEL_ELEMENTS
    assert "events" not in result.tables or result.tables["events"].is_empty()


def test_safetensors() -> None:
    rel = "net-1_4.safetensors"
    header = read_checkpoint_header(FIXTURES / "safetensors" / rel)
    assert header.format == "safetensors" and header.metadata["format"] == "ms"
    row = read(FIXTURES / "safetensors", rel).tables["checkpoints"].row(0, named=True)
    assert row["format"] == "safetensors" and row["step"] == 4 and row["step_source"] == "append_info"
    assert row["model_params"] == MODEL_ELEMENTS and row["optimizer_params"] == 2 * MODEL_ELEMENTS + 6


def test_mindformers_layout_and_meta_json() -> None:
    root = FIXTURES / "mindformers"
    rel = "output/checkpoint/rank_0/llama_rank_0-2_2.ckpt"
    row = read(root, rel).tables["checkpoints"].row(0, named=True)
    assert row["rank"] == 0 and row["step"] == 6 and row["step_source"] == "append_info"
    assert (row["epoch"], row["step_in_epoch"]) == (2, 2)
    assert read_checkpoint_header(root / rel).values["loss_scale"] == 1024.0
    meta = read(root, "output/checkpoint/rank_0/meta.json")
    assert meta.rows() == 0
    assert {k: (s.value, s.source) for k, s in meta.settings.items()} == {
        "last_ckpt_file": ("llama_rank_0-2_2.ckpt", "meta.json"),
        "last_step": (2, "meta.json"),
        "last_epoch": (2, "meta.json"),
    }


def test_dtypes_and_str_values() -> None:
    header = read_checkpoint_header(FIXTURES / "plain" / "dtypes.ckpt")
    by_name = {p.name: p for p in header.params}
    assert by_name["proj.weight"].dtype == "BFloat16" and by_name["proj.weight"].nbytes == 3 * 5 * 2
    assert by_name["counter"].shape == () and by_name["counter"].elements == 1
    assert by_name["note"].dtype == "str" and by_name["note"].role == "bookkeeping"
    assert header.values == {"step_num": 42.0}


# --------------------------------------------------------------------------- interrupted and bad input


def test_interrupted_save() -> None:
    root = FIXTURES / "interrupted"
    result = read(root, "net-3_4.tmp")
    row = result.tables["checkpoints"].row(0, named=True)
    assert row["kind"] == "interrupted" and (row["epoch"], row["step_in_epoch"]) == (3, 4)
    # the generator cut 20 bytes off the last tensor (fc2.bias): three parameters survive
    assert result.tables["checkpoint_params"]["name"].to_list() == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert result.tables["events"]["kind"].to_list() == ["checkpoint_interrupted"]
    [diag] = result.diagnostics
    assert diag.slug == "ckpt-truncated" and diag.path == "net-3_4.tmp" and diag.offset > 0


def test_unrelated_files_are_not_claimed(tmp_path: Path) -> None:
    for rel in ("session.tmp", "meta.json", "logs/train_metadata.json", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
        assert not READER.claims(artifact(tmp_path, rel)), rel


def test_encrypted_checkpoint_is_unreadable() -> None:
    result = read(FIXTURES / "plain", "encrypted.ckpt")
    [diag] = result.diagnostics
    assert diag.slug == "ckpt-unreadable" and diag.offset == 0 and diag.path == "encrypted.ckpt"
    assert result.tables["checkpoint_params"].is_empty()
    assert result.tables["checkpoints"]["tensors"].to_list() == [0]


def value_ends(path: Path) -> list[int]:
    """End offsets of the top-level Values, from the independent protobuf encoder."""
    whole = Checkpoint()
    whole.ParseFromString(path.read_bytes()[:-17] if path.read_bytes()[-17:-10] == b"crc_num" else path.read_bytes())
    ends, at = [], 0
    for value in whole.value:
        one = Checkpoint()
        one.value.append(value)
        at += one.ByteSize()
        ends.append(at)
    return ends


def test_every_truncation_of_a_real_checkpoint(tmp_path: Path) -> None:
    src = FIXTURES / "modelcheckpoint" / "net-1_4.ckpt"  # with crc trailer
    data = src.read_bytes()
    ends = value_ends(src)
    names = [n for n, _, _ in EXPECTED["modelcheckpoint/net-1_4.ckpt"]]
    cut = tmp_path / "cut.ckpt"
    for n in range(len(data)):
        cut.write_bytes(data[:n])
        header = read_checkpoint_header(cut)
        complete = sum(1 for e in ends if e <= n)
        assert [p.name for p in header.params] == names[:complete], n
        if n in ends:
            assert header.problem is None, n
        elif n == 0:
            assert header.problem == "ckpt-unreadable"
        elif complete == 0 and n < 5:  # before the first name: 0a, 2-byte length, 0a, name length
            assert header.problem in ("ckpt-truncated", "ckpt-unreadable"), n
        else:
            assert header.problem == "ckpt-truncated", n
            assert header.problem_offset == (ends[complete - 1] if complete else 0), n


def test_truncated_train_checkpoint_reports_warning(tmp_path: Path) -> None:
    data = (FIXTURES / "modelcheckpoint" / "net-2_4.ckpt").read_bytes()
    (tmp_path / "net-2_4.ckpt").write_bytes(data[: len(data) // 2])
    result = read(tmp_path, "net-2_4.ckpt")
    [diag] = result.diagnostics
    assert diag.slug == "ckpt-truncated" and diag.severity == "warning"
    assert 0 < result.tables["checkpoints"]["tensors"][0] < 18
    assert result.tables["events"]["kind"].to_list() == ["checkpoint_save"]


def test_absurd_lengths_do_not_allocate(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ckpt"
    # a Value declaring 2^62 bytes; a tag declaring 2^40 bytes inside a plausible Value
    bad.write_bytes(b"\x0a" + varint(1 << 62) + b"\x0a\x03abc")
    assert read_checkpoint_header(bad).problem == "ckpt-truncated"
    bad.write_bytes(b"\x0a" + varint(20) + b"\x0a" + varint(1 << 40) + b"x" * 18)
    assert read_checkpoint_header(bad).problem in ("ckpt-truncated", "ckpt-corrupt", "ckpt-unreadable")
    bad.write_bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")  # overlong varint
    assert read_checkpoint_header(bad).problem == "ckpt-unreadable"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 3183), st.integers(0, 255)), min_size=1, max_size=6))
def test_corrupted_bytes_never_raise(tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    data = bytearray((FIXTURES / "modelcheckpoint" / "net-1_4.ckpt").read_bytes())
    for at, byte in flips:
        data[at % len(data)] = byte
    path = tmp_path / "net-1_4.ckpt"
    path.write_bytes(bytes(data))
    result = READER.read(artifact(tmp_path, "net-1_4.ckpt"))
    assert result.tables["checkpoints"].height == 1
    for d in result.diagnostics:
        assert d.slug in ("ckpt-truncated", "ckpt-corrupt", "ckpt-unreadable") and d.offset is not None


def test_corrupted_safetensors(tmp_path: Path) -> None:
    data = (FIXTURES / "safetensors" / "net-1_4.safetensors").read_bytes()
    (tmp_path / "a-1_1.safetensors").write_bytes(data[: len(data) - 100])
    [diag] = read(tmp_path, "a-1_1.safetensors").diagnostics
    assert diag.slug == "ckpt-truncated"
    (tmp_path / "b-1_1.safetensors").write_bytes(data[:8] + b"{not json" + data[17:])
    [diag] = read(tmp_path, "b-1_1.safetensors").diagnostics
    assert diag.slug == "ckpt-corrupt" and diag.offset == 8


# --------------------------------------------------------------------------- roles, names


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("model.layers.0.attention.wq.weight", "model"),
        ("adam_m.model.layers.0.attention.wq.weight", "optimizer"),
        ("moments.fc1.weight", "optimizer"),
        ("accu_grads.fc1.weight", "optimizer"),
        ("moment1.fc.bias", "optimizer"),
        ("global_step", "bookkeeping"),
        ("scale_sense", "bookkeeping"),
        ("current_iterator_step", "bookkeeping"),
        ("learning_rate", "bookkeeping"),
        ("layer_norm.beta", "model"),  # not beta1_power
    ],
)
def test_param_roles(name: str, role: str) -> None:
    assert param_role(name) == role


# --------------------------------------------------------------------------- a 10 GB checkpoint


def test_sparse_10gb_checkpoint(tmp_path: Path) -> None:
    """A real small checkpoint followed by one 10 GiB tensor whose bytes are a sparse hole."""
    huge = 10 << 30
    dims = [81920, 65536]  # BFloat16: 81920 * 65536 * 2 bytes = 10 GiB
    tensor = b"".join(b"\x08" + varint(d) for d in dims) + b"\x12\x08BFloat16" + b"\x1a" + varint(huge)
    value = b"\x0a" + varint(len("huge.weight")) + b"huge.weight" + b"\x12" + varint(len(tensor) + huge) + tensor
    head = (FIXTURES / "plain" / "net.ckpt").read_bytes() + b"\x0a" + varint(len(value) + huge) + value
    path = tmp_path / "big-1_1.ckpt"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + huge)  # the hole: no data blocks written
    assert path.stat().st_size > huge

    t0 = time.perf_counter()
    header = read_checkpoint_header(path)
    elapsed = time.perf_counter() - t0
    print(f"\nsparse 10 GiB header walk: {elapsed * 1000:.2f} ms")

    assert header.problem is None
    assert [p.name for p in header.params] == [n for n, _ in NET] + ["huge.weight"]
    big = header.params[-1]
    assert big.shape == tuple(dims) and big.dtype == "BFloat16" and big.nbytes == huge
    assert big.elements == 81920 * 65536
    row = read(tmp_path, "big-1_1.ckpt").tables["checkpoints"].row(0, named=True)
    assert row["model_params"] == MODEL_ELEMENTS + 81920 * 65536 and row["bytes"] == path.stat().st_size
    os.remove(path)


def test_zero_filled_region_is_corrupt_not_crawled(tmp_path: Path) -> None:
    """A Value whose tensor header is wrong runs into a 1 GiB hole of zeros: field number 0 is
    invalid protobuf, so the walk stops there instead of reading the hole byte by byte."""
    hole = 1 << 30
    tensor = b"\x08\x04\x12\x09BFloat16"  # declares 9 type bytes for an 8-byte name: eats the next key
    value = b"\x0a\x01w\x12" + varint(len(tensor) + hole) + tensor
    head = (FIXTURES / "plain" / "net.ckpt").read_bytes() + b"\x0a" + varint(len(value) + hole) + value
    path = tmp_path / "bad-1_1.ckpt"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + hole)
    header = read_checkpoint_header(path)
    assert header.problem == "ckpt-corrupt" and header.problem_offset == len(head) + 1  # the type string ate one zero
    assert [p.name for p in header.params] == [n for n, _ in NET]
