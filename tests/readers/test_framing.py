"""Record framing: CRC checks and the bad-input policy, on real summary / event files damaged here."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postmortem.readers import framing
from postmortem.readers.framing import FOOTER, frame_record, masked_crc, scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SUMMARY = next((FIXTURES / "summary" / "records").glob("*_MS"))
TFEVENTS = next((FIXTURES / "tensorboard" / "rank_0").glob("events.out.tfevents.*"))


@pytest.fixture(autouse=True, params=["c", "reference"])
def either_path(request, monkeypatch):
    """Every test here runs on the C scanner and on the Python reference."""
    if request.param == "reference":
        monkeypatch.setattr(framing, "_c_scan", None)
    elif framing._c_scan is None:
        pytest.skip("built without the C framing helper")


def _scan(buf: bytes, prefix: str = "summary"):
    diags: list = []
    records = list(scan(buf, "x/file", prefix, diags))
    return records, diags


def test_crc32c_known_vector_and_mask():
    # CRC-32C("123456789") = 0xE3069283 (RFC 3720 check value); mask per formats.md section 1.
    crc = 0xE3069283
    assert masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_real_files_scan_clean_and_reframe_byte_identical():
    for path in (SUMMARY, TFEVENTS):
        buf = path.read_bytes()
        records, diags = _scan(buf)
        assert diags == []
        assert len(records) > 10
        # Re-framing each payload with our CRCs reproduces the writer's bytes exactly.
        assert b"".join(frame_record(buf[s:e]) for _, s, e in records) == buf


def test_truncated_last_record_keeps_everything_before():
    buf = SUMMARY.read_bytes()
    records, _ = _scan(buf)
    last = records[-1][0]
    for cut in (1, 5, len(buf) - last - 3):  # inside footer, inside data, inside header
        got, diags = _scan(buf[:-cut])
        assert got == records[:-1]
        assert [d.slug for d in diags] == ["summary-truncated"]
        assert diags[0].offset == last and diags[0].path == "x/file"


def test_absurd_length_is_truncation_not_allocation():
    buf = bytearray(SUMMARY.read_bytes())
    records, _ = _scan(bytes(buf))
    last = records[-1][0]
    length = struct.pack("<Q", 1 << 60)
    buf[last:last + 12] = length + struct.pack("<I", masked_crc(length))  # valid header CRC
    got, diags = _scan(bytes(buf), "tensorboard")
    assert got == records[:-1]
    assert [d.slug for d in diags] == ["tensorboard-truncated"]


def test_length_crc_mismatch_stops_the_file():
    buf = bytearray(SUMMARY.read_bytes())
    records, _ = _scan(bytes(buf))
    k = len(records) // 2
    at = records[k][0]
    buf[at + 2] ^= 0x01  # a length byte: its CRC no longer matches
    got, diags = _scan(bytes(buf))
    assert got == records[:k]
    assert [d.slug for d in diags] == ["summary-record-crc"]
    assert diags[0].offset == at and f"{at:,}" in diags[0].message


def test_data_crc_mismatch_skips_one_record_and_continues():
    buf = bytearray(SUMMARY.read_bytes())
    records, _ = _scan(bytes(buf))
    k = len(records) // 2
    at, start, end = records[k]
    buf[(start + end) // 2] ^= 0xFF
    got, diags = _scan(bytes(buf))
    assert got == records[:k] + records[k + 1:]
    assert [d.slug for d in diags] == ["summary-record-crc"]
    assert diags[0].offset == at


def test_garbage_appended():
    buf = SUMMARY.read_bytes()
    records, _ = _scan(buf)
    got, diags = _scan(buf + b"\x07garbage-garbage-garbage")
    assert got == records
    assert [d.slug for d in diags] == ["summary-record-crc"]
    assert diags[0].offset == len(buf)
    got, diags = _scan(buf + b"\x00\x01")  # shorter than a header: a cut record
    assert got == records and [d.slug for d in diags] == ["summary-truncated"]


def test_empty_file():
    got, diags = _scan(b"", "lineage")
    assert got == [] and [d.slug for d in diags] == ["lineage-file-empty"]


@settings(max_examples=200, deadline=None)
@given(cut=st.integers(min_value=0, max_value=4000), flip=st.integers(min_value=0, max_value=4000),
       bit=st.integers(min_value=0, max_value=7))
def test_any_damage_never_raises_and_yields_only_real_records(cut, flip, bit):
    buf = bytearray(SUMMARY.read_bytes())
    records, _ = _scan(bytes(buf))
    buf = buf[:max(0, len(buf) - cut)]
    if flip < len(buf):
        buf[flip] ^= 1 << bit
    got, diags = _scan(bytes(buf))
    assert set(got) <= set(records)
    # A cut exactly between two records, with no bit flipped, leaves a shorter whole file: nothing
    # in it is damaged, so nothing is reported. Any other damage is.
    whole = flip >= len(buf) and got == records[: len(got)] and len(buf) == (got[-1][2] + FOOTER if got else -1)
    assert len(got) == len(records) or diags or whole


@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    got, diags = _scan(data)
    assert got == [] or all(e <= len(data) for _, _, e in got)


def _damaged_copies(buf: bytes):
    """The real file, and the kinds of damage the policy distinguishes."""
    records, _ = _scan(buf)
    mid_offset, mid_start, _ = records[len(records) // 2]
    yield "clean", buf
    yield "truncated", buf[:-7]
    yield "data-crc", buf[:mid_start + 2] + bytes([buf[mid_start + 2] ^ 0x40]) + buf[mid_start + 3:]
    yield "length-crc", buf[:mid_offset + 1] + bytes([buf[mid_offset + 1] ^ 0x01]) + buf[mid_offset + 2:]
    yield "absurd-length", buf[:mid_offset] + struct.pack("<Q", 2**60) + buf[mid_offset + 8:]
    yield "garbage-appended", buf + b"\x00garbage\xff" * 3
    yield "empty", b""


def test_c_and_python_framing_agree_on_real_and_damaged_files():
    for path in (SUMMARY, TFEVENTS):
        for what, buf in _damaged_copies(path.read_bytes()):
            c_diags, py_diags = [], []
            c = framing.spans(buf, "x/file", "summary", c_diags)
            py = framing.reference_spans(buf, "x/file", "summary", py_diags)
            assert c.tolist() == py.tolist(), what
            assert c_diags == py_diags, what


def test_c_crc_matches_the_crc32c_package():
    if framing._framing is None:
        pytest.skip("C framing helper not built")
    from crc32c import crc32c

    from postmortem.readers._framing import crc32c as c_crc32c

    for data in (b"", b"a", b"123456789", bytes(range(256)) * 7, bytes(range(13)), SUMMARY.read_bytes()):
        assert c_crc32c(data) == c_crc32c(data, True) == crc32c(data)  # the CPU's instruction, slicing-by-8
