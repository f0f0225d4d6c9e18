"""Checkpoint headers (.ckpt protobuf stream, .safetensors) on damaged copies of real checkpoints.

Properties: never raises; every parameter stored entirely before the damage is listed exactly as
in the undamaged file; the reader reports ``ckpt-truncated`` / ``ckpt-corrupt`` /
``ckpt-unreadable`` where data was lost; declared lengths are never allocated.
"""

from __future__ import annotations

import json
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from postmortem.readers import checkpoints
from postmortem.readers.checkpoints import read_checkpoint_header

from .conftest import FIXTURES, SAMPLES, artifact, fuzz

CKPTS = [
    FIXTURES / "checkpoints/modelcheckpoint/net-1_4.ckpt",  # with the crc_num trailer
    FIXTURES / "checkpoints/mindformers/output/checkpoint/rank_0/llama_rank_0-2_2.ckpt",
    FIXTURES / "checkpoints/plain/dtypes.ckpt",
    SAMPLES / "gpt-tiny-base/checkpoint/tiny_gpt-2_100.ckpt",
]
SAFETENSORS = FIXTURES / "checkpoints/safetensors/net-1_4.safetensors"
DAMAGE_SLUGS = {"ckpt-truncated", "ckpt-corrupt", "ckpt-unreadable"}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7


def _header_and_peak(path: Path):
    """The checkpoint header of ``path`` and the peak of Python allocations while reading it."""
    tracemalloc.start()
    try:
        header = read_checkpoint_header(path)
        return header, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _enc_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _value_starts(data: bytes) -> tuple[list[int], int]:
    """Top-level Value offsets and where they end (the crc_num trailer, or the file end)."""
    starts, pos = [], 0
    while pos < len(data) and not data.startswith(b"crc_num", pos):
        assert data[pos] == 0x0A
        starts.append(pos)
        n, pos = _varint(data, pos + 1)
        pos += n
    return starts, pos


def _header(data: bytes, folder: Path, name: str):
    path = folder / name
    path.write_bytes(data)
    header = read_checkpoint_header(path)
    # the reader entry point too: a ReadResult, never an exception
    result = checkpoints.READER.read(artifact(path, name))
    got = {d.slug for d in result.diagnostics}
    if header.problem:
        assert header.problem in got
    return header, got


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ckpt")


@pytest.mark.parametrize("src", CKPTS, ids=lambda p: p.name)
def test_undamaged_checkpoints_are_complete(src: Path):
    header = read_checkpoint_header(src)
    starts, end = _value_starts(src.read_bytes())
    assert header.problem is None and header.format == "ckpt"
    assert [p.offset for p in header.params] == starts  # no sliced parameters in these files
    assert header.crc == (end < src.stat().st_size)


def _expect_cut(src_data: bytes, full, cut: int, header, got: set[str]):
    starts, end = _value_starts(src_data)
    complete = sum(1 for i, s in enumerate(starts) if (starts[i + 1] if i + 1 < len(starts) else end) <= cut)
    assert header.params == full.params[:complete], f"cut at {cut}"
    kept = {p.name for p in header.params}
    assert header.values == {k: v for k, v in full.values.items() if k in kept}
    if cut in starts or cut == end:
        assert header.problem is None
    elif complete == 0:
        assert header.problem in ("ckpt-truncated", "ckpt-unreadable")
    else:
        assert header.problem == "ckpt-truncated"
    if cut > end:
        assert header.crc is False and header.problem == "ckpt-truncated"  # the trailer cut short


@pytest.mark.parametrize("src", CKPTS, ids=lambda p: p.name)
def test_truncation_at_every_offset_of_the_tail(src: Path, work: Path):
    data = src.read_bytes()
    full = read_checkpoint_header(src)
    for cut in range(max(1, len(data) - 256), len(data)):
        path = work / src.name
        path.write_bytes(data[:cut])
        _expect_cut(data, full, cut, read_checkpoint_header(path), set())


@pytest.mark.parametrize("src", CKPTS, ids=lambda p: p.name)
@fuzz(40)
@given(st.data())
def test_truncation_anywhere(src: Path, work: Path, data):
    raw = src.read_bytes()
    cut = data.draw(st.integers(1, len(raw) - 1), label="cut")
    header, got = _header(raw[:cut], work, src.name)
    _expect_cut(raw, read_checkpoint_header(src), cut, header, got)
    if header.problem:
        assert got & DAMAGE_SLUGS


@pytest.mark.parametrize("src", CKPTS, ids=lambda p: p.name)
@fuzz(60)
@given(st.data())
def test_bit_flips(src: Path, work: Path, data):
    raw = bytearray(src.read_bytes())
    starts, end = _value_starts(bytes(raw))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=4))
    for pos, bit in flips:
        raw[pos] ^= 1 << bit
    first = min(p for p, _ in flips)
    header, _ = _header(bytes(raw), work, src.name)
    full = read_checkpoint_header(src)
    # Parameters stored entirely before the first damaged byte are listed as undamaged (the one
    # just before it only by name: a flipped name can equal it and be merged as a slice).
    i = sum(1 for s in starts if s <= first) - 1  # value holding the first flip (-1: none)
    intact = max(0, i - 1)
    assert header.params[:intact] == full.params[:intact]
    if i >= 1:
        assert len(header.params) >= i and header.params[i - 1].name == full.params[i - 1].name


@pytest.mark.parametrize("src", CKPTS[:2], ids=lambda p: p.name)
@pytest.mark.parametrize("where", ["value-length", "name-length"])
@pytest.mark.parametrize("length", [2**60, 2**63 + 5, 2**32])
def test_absurd_lengths_are_never_allocated(src: Path, work: Path, where: str, length: int):
    raw = src.read_bytes()
    starts, _ = _value_starts(raw)
    i = len(starts) // 2
    pos = starts[i] + 1
    n, after = _varint(raw, pos)
    if where == "value-length":
        damaged = raw[:pos] + _enc_varint(length) + raw[after:]
    else:  # Value{tag = 1}: key 0x0a then the name's length
        assert raw[after] == 0x0A
        _, name_at = _varint(raw, after + 1)
        damaged = raw[: after + 1] + _enc_varint(length) + raw[name_at:]
    path = work / src.name
    path.write_bytes(damaged)
    header, peak = _header_and_peak(path)
    assert peak < 2 << 20, f"peak {peak} bytes"
    full = read_checkpoint_header(src)
    assert header.params[:i] == full.params[:i]
    assert header.problem in ("ckpt-truncated", "ckpt-corrupt")
    assert header.problem_offset is not None and header.problem_offset >= starts[i] - 0


@pytest.mark.parametrize("name", ["empty.ckpt", "empty.safetensors"])
def test_zero_length_checkpoint(work: Path, name: str):
    header, got = _header(b"", work, name)
    assert header.problem == "ckpt-unreadable" and header.params == ()
    assert "ckpt-unreadable" in got


# --------------------------------------------------------------------------- safetensors


def _st_layout() -> tuple[bytes, int, dict]:
    raw = SAFETENSORS.read_bytes()
    (n,) = struct.unpack_from("<Q", raw)
    return raw, 8 + n, json.loads(raw[8 : 8 + n])


def test_safetensors_truncation_at_every_offset_of_the_tail_and_header(work: Path):
    raw, data_at, meta = _st_layout()
    full = read_checkpoint_header(SAFETENSORS)
    assert full.problem is None and full.format == "safetensors"
    ends = {name: data_at + e["data_offsets"][1] for name, e in meta.items() if name != "__metadata__"}
    cuts = [*range(max(9, len(raw) - 256), len(raw)), *range(9, data_at + 1, 7)]
    for cut in cuts:
        path = work / "net.safetensors"
        path.write_bytes(raw[:cut])
        header = read_checkpoint_header(path)
        if cut < data_at:
            assert header.params == () and header.problem == "ckpt-truncated"
            continue
        kept = {n for n, end in ends.items() if end <= cut}
        assert header.params == tuple(p for p in full.params if p.name in kept)
        assert header.problem == ("ckpt-truncated" if len(kept) < len(ends) else None), cut


@fuzz(60)
@given(st.data())
def test_safetensors_bit_flips_never_raise(work: Path, data):
    raw = bytearray(SAFETENSORS.read_bytes())
    _, data_at, _ = _st_layout()
    pos = data.draw(st.integers(0, len(raw) - 1), label="byte")
    raw[pos] ^= 1 << data.draw(st.integers(0, 7), label="bit")
    header, got = _header(bytes(raw), work, "net.safetensors")
    full = read_checkpoint_header(SAFETENSORS)
    if pos >= data_at:  # tensor bytes are never read except the few step counters
        assert [p.name for p in header.params] == [p.name for p in full.params]
    elif header.problem is not None:
        assert header.problem in DAMAGE_SLUGS and got & DAMAGE_SLUGS


def test_safetensors_header_length_is_not_allocated(work: Path):
    raw = SAFETENSORS.read_bytes()
    damaged = struct.pack("<Q", (100 << 20) - 1) + raw[8:]
    path = work / "huge-header.safetensors"
    path.write_bytes(damaged)
    header, peak = _header_and_peak(path)
    assert header.problem == "ckpt-truncated"
    assert peak < 8 << 20, f"peak {peak / 1e6:.0f} MB for a {len(raw)}-byte file"
