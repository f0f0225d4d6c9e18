"""Summary (_MS), lineage and TensorBoard readers on damaged copies of real event files.

Properties, for every damage: the reader returns a ReadResult (never raises); every record
before the damaged one is decoded exactly as in the undamaged file; a diagnostic with a stable
slug and the damaged record's byte offset says where data was lost; absurd length fields are
never allocated.
"""

from __future__ import annotations

import struct
import tracemalloc
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st

from postmortem.readers import lineage, mindspore_summary, tensorboard

from .conftest import FIXTURES, SAMPLES, fuzz, read_bytes, slugs, table_rows

EXHAUSTIVE_TAIL = 200  # every truncation offset in the last this many bytes is tried


def _masked(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record_starts(data: bytes) -> list[int]:
    """Record offsets of an undamaged TFRecord file, walked independently of the code under test."""
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        (length,) = struct.unpack_from("<Q", data, pos)
        pos += 12 + length + 4
    assert pos == len(data), "fixture is not a whole number of records"
    return starts


@dataclass
class Framed:
    reader: object
    prefix: str  # diagnostic slug prefix
    path: Path
    name: str  # file name the reader claims

    @cached_property
    def data(self) -> bytes:
        return self.path.read_bytes()

    @cached_property
    def starts(self) -> list[int]:
        return _record_starts(self.data)

    def record_of(self, offset: int) -> int:
        """Index of the record that holds byte ``offset``."""
        i = 0
        while i + 1 < len(self.starts) and self.starts[i + 1] <= offset:
            i += 1
        return i

    def end_of(self, i: int) -> int:
        return self.starts[i + 1] if i + 1 < len(self.starts) else len(self.data)

    def view(self, result) -> tuple:
        """Everything a reader produced from the file except diagnostics."""
        tables = tuple((n, tuple(table_rows(result, n))) for n in sorted(result.tables))
        settings = tuple(sorted((k, repr(v.value), v.source) for k, v in result.settings.items()))
        return tables, settings


def _framed_files() -> list[Framed]:
    out = []
    for path in sorted([*SAMPLES.glob("*/summary/*_MS"), *FIXTURES.glob("summary/*/*_MS"), *FIXTURES.glob("runs/*/summary/*_MS")]):
        out.append(Framed(mindspore_summary, "summary", path, path.name))
    for path in sorted([*SAMPLES.glob("*/summary/*_lineage"), *FIXTURES.glob("summary/*/*_lineage"), *FIXTURES.glob("runs/*/summary/*_lineage")]):
        out.append(Framed(lineage, "lineage", path, path.name))
    for path in sorted([*SAMPLES.glob("*/tensorboard/*/events.out.tfevents.*"), *FIXTURES.glob("tensorboard/*/events.out.tfevents.*")]):
        out.append(Framed(tensorboard, "tensorboard", path, path.name))
    return out


FILES = _framed_files()
IDS = [f"{f.prefix}:{f.path.parent.name}/{f.path.name[-24:]}" for f in FILES]


def _pick(prefix: str, part: str) -> Framed:
    return next(f for f in FILES if f.prefix == prefix and part in str(f.path))


# Hypothesis runs on one file of each shape (the suite must stay fast on 2 shared cores):
# the sample's scalar-only summary, the fixture summary with histograms/tensors/images, the NaN
# run's summary, a lineage file with every event kind, a tensorboardX file with histograms.
FUZZED = [
    _pick("summary", "gpt-tiny-base"),
    _pick("summary", "fixtures/summary/train"),
    _pick("summary", "runs/nan"),
    _pick("lineage", "gpt-tiny-base"),
    _pick("lineage", "fixtures/summary/train/events.out.events.summary.1796035504"),
    _pick("tensorboard", "fixtures/tensorboard/rank_0"),
]
FUZZED_IDS = [f"{f.prefix}:{f.path.parts[-3]}" for f in FUZZED]
# The exhaustive tail sweep: one file of each kind.
SWEEP = [FUZZED[1], FUZZED[3], FUZZED[5]]


def test_fixtures_found():
    kinds = {f.prefix for f in FILES}
    assert kinds == {"summary", "lineage", "tensorboard"}
    assert len(FILES) >= 12


def _read(f: Framed, data: bytes, tmp: Path):
    return read_bytes(f.reader, data, tmp, f.name)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("framed")


@pytest.mark.parametrize("f", FILES, ids=IDS)
def test_undamaged_file_reads_clean_and_prefixes_decode_alike(f: Framed, work: Path):
    """The reference: cutting an undamaged file at record boundaries gives the leading records."""
    full = _read(f, f.data, work)
    assert not {s for s in slugs(full) if s.endswith(("-truncated", "-record-crc", "-bad-record", "-file-empty"))}
    if f.prefix == "lineage":
        return  # lineage keeps the last event of each kind: no row prefix to compare
    full_rows = table_rows(full, "scalars")
    for b in f.starts[:: max(1, len(f.starts) // 8)]:
        part = table_rows(_read(f, f.data[:b], work), "scalars")
        assert part == full_rows[: len(part)]


@pytest.mark.parametrize("f", SWEEP, ids=lambda f: f"{f.prefix}:{f.path.name[-24:]}")
def test_truncation_at_every_offset_of_the_tail(f: Framed, work: Path):
    data, size = f.data, len(f.data)
    expected_at: dict[int, tuple] = {}
    for cut in range(max(1, size - EXHAUSTIVE_TAIL), size):
        i = f.record_of(cut)
        b = f.starts[i]
        if b not in expected_at:
            expected_at[b] = f.view(_read(f, data[:b], work))
        result = _read(f, data[:cut], work)
        assert f.view(result) == expected_at[b], f"records before byte {b} changed when cut at {cut}"
        if cut == b:
            assert f"{f.prefix}-truncated" not in slugs(result)
        else:
            hits = [d for d in result.diagnostics if d.slug == f"{f.prefix}-truncated"]
            assert hits and hits[0].offset == b, f"cut at {cut}: no truncation diagnostic at {b}"


@pytest.mark.parametrize("f", FUZZED, ids=FUZZED_IDS)
@fuzz(30)
@given(st.data())
def test_truncation_anywhere(f: Framed, work: Path, data):
    cut = data.draw(st.integers(0, len(f.data) - 1), label="cut")
    result = _read(f, f.data[:cut], work)
    i = f.record_of(cut)
    b = f.starts[i]
    assert f.view(result) == f.view(_read(f, f.data[:b], work))
    if cut == 0:
        assert f"{f.prefix}-file-empty" in slugs(result)
    elif cut != b:
        assert any(d.slug == f"{f.prefix}-truncated" and d.offset == b for d in result.diagnostics)


@pytest.mark.parametrize("f", FUZZED, ids=FUZZED_IDS)
@fuzz(50)
@given(st.data())
def test_single_bit_flip(f: Framed, work: Path, data):
    """CRC-32C catches every single-bit error: the damaged record is reported and dropped.

    A flip in the 12-byte header makes the length untrustworthy: reading stops there.
    A flip in the payload or its CRC loses that record only: reading continues after it.
    """
    pos = data.draw(st.integers(0, len(f.data) - 1), label="byte")
    bit = data.draw(st.integers(0, 7), label="bit")
    damaged = bytearray(f.data)
    damaged[pos] ^= 1 << bit
    result = _read(f, bytes(damaged), work)
    i = f.record_of(pos)
    start, end = f.starts[i], f.end_of(i)
    if pos < start + 12:
        expected = f.data[:start]
    else:
        expected = f.data[:start] + f.data[end:]
    assert f.view(result) == f.view(_read(f, expected, work))
    assert any(d.slug == f"{f.prefix}-record-crc" and d.offset == start for d in result.diagnostics), slugs(result)


@pytest.mark.parametrize("f", FUZZED, ids=FUZZED_IDS)
@fuzz(30)
@given(st.data())
def test_garbage_between_records(f: Framed, work: Path, data):
    i = data.draw(st.integers(0, len(f.starts) - 1), label="record")
    garbage = data.draw(st.binary(min_size=1, max_size=64), label="garbage")
    b = f.starts[i]
    result = _read(f, f.data[:b] + garbage + f.data[b:], work)
    before = f.view(_read(f, f.data[:b], work))
    if f.prefix != "lineage":
        # every record before the garbage is present, in order, as undamaged
        got = dict(f.view(result)[0]).get("scalars", ())
        want = dict(before[0]).get("scalars", ())
        assert got[: len(want)] == want
    lost = [d for d in result.diagnostics if d.slug in (f"{f.prefix}-record-crc", f"{f.prefix}-truncated")]
    assert lost and lost[0].offset == b


def _forge_length(data: bytes, at: int, length: int) -> bytes:
    """Rewrite a record's length with a *valid* length CRC, so only the size check can stop it."""
    head = struct.pack("<Q", length)
    return data[:at] + head + struct.pack("<I", _masked(head)) + data[at + 12 :]


@pytest.mark.parametrize("f", SWEEP, ids=lambda f: f"{f.prefix}:{f.path.name[-24:]}")
@pytest.mark.parametrize("length", [2**60, 2**64 - 1, 2**31, "past-end"])
def test_absurd_length_is_never_allocated(f: Framed, work: Path, length):
    i = len(f.starts) // 2
    b = f.starts[i]
    n = len(f.data) - b if length == "past-end" else length  # 12 + n + 4 > what is left
    damaged = _forge_length(f.data, b, n)
    path = work / f.name
    path.write_bytes(damaged)
    tracemalloc.start()
    try:
        result = _read(f, damaged, work)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(f.data) + (4 << 20), f"peak {peak} bytes for a {len(f.data)}-byte file"
    assert f.view(result) == f.view(_read(f, f.data[:b], work))
    assert any(d.slug == f"{f.prefix}-truncated" and d.offset == b for d in result.diagnostics)


@pytest.mark.parametrize("f", SWEEP, ids=lambda f: f"{f.prefix}:{f.path.name[-24:]}")
def test_zero_length_file(f: Framed, work: Path):
    result = _read(f, b"", work)
    assert f"{f.prefix}-file-empty" in slugs(result)
    assert result.rows() == 0


@pytest.mark.parametrize("f", [FUZZED[0], FUZZED[1], FUZZED[5]], ids=lambda f: f"{f.prefix}:{f.path.parts[-3]}")
@fuzz(30)
@given(st.data())
def test_valid_crc_but_garbage_payload(f: Framed, work: Path, data):
    """A record whose CRCs check but whose bytes are not an Event: the records around it are kept."""
    i = data.draw(st.integers(1, len(f.starts) - 1), label="record")
    payload = data.draw(st.binary(min_size=1, max_size=48), label="payload")
    start, end = f.starts[i], f.end_of(i)
    head = struct.pack("<Q", len(payload))
    record = head + struct.pack("<I", _masked(head)) + payload + struct.pack("<I", _masked(payload))
    result = _read(f, f.data[:start] + record + f.data[end:], work)
    got = list(dict(f.view(result)[0]).get("scalars", ()))
    before = list(dict(f.view(_read(f, f.data[:start], work))[0]).get("scalars", ()))
    without = list(dict(f.view(_read(f, f.data[:start] + f.data[end:], work))[0]).get("scalars", ()))
    after = without[len(before):]
    assert got[: len(before)] == before  # every record before it, as undamaged
    assert got[len(got) - len(after):] == after  # and every record after it
    assert f"{f.prefix}-record-crc" not in slugs(result)
