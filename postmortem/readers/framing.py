"""TFRecord record framing shared by MindSpore summary, lineage and TensorBoard event files.

Each record is ``u64le len | u32le masked_crc32c(len bytes) | data | u32le masked_crc32c(data)``
with the mask ``((crc >> 15) | (crc << 17)) + 0xA282EAD8`` (mod 2^32) over CRC-32C (Castagnoli,
computed in C by the ``crc32c`` package). Every CRC is checked.

The file is read with one ``read()``: event files are written by one process, are at most a few
hundred MB per rank, and one contiguous buffer lets the CRC and the decoders work on slices
without per-record system calls.

Bad input policy. ``scan`` never raises; it yields the good records and appends diagnostics whose
slugs are ``{prefix}-{kind}`` with the reader's prefix ("summary", "lineage", "tensorboard"):

* ``{prefix}-truncated`` (warning): the last record is cut short (a killed run). Everything
  before it is kept. A length that points past the end of the file is treated the same way and is
  never allocated.
* ``{prefix}-record-crc`` (error): the CRC of the 8 length bytes does not match. Reading of the
  file STOPS there. We do not try to resynchronise: with an untrusted length there is no record
  boundary to continue from, and scanning byte by byte for the next plausible header would
  invent records out of payload bytes (a float that happens to look like a header), which is
  worse than losing the tail of a corrupted file. The offset tells the user where to look.
* ``{prefix}-record-crc`` (error): the length CRC is good but the data CRC is not. The length is
  trusted, so that one record is skipped and reading continues with the next one.
* ``{prefix}-file-empty`` (warning): the file has no bytes at all.

Offsets in diagnostics are byte offsets of the record header in the file.

Speed: the loop lives in C (``_framing.c``, built at install; it checks the same CRCs and reports
the same problems). The Python loop below (``reference_spans``) is the reference and the fallback
where no compiler was available (native.py); tests run both on the same files.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from ..diagnostics import Diagnostic, error, warning
from . import guard
from .native import extension

_framing = extension("_framing")
_c_scan = _framing.scan if _framing else None

HEADER = 12  # u64 length + u32 masked CRC of the length
FOOTER = 4  # u32 masked CRC of the data
_MASK_DELTA = 0xA282EAD8
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<QI")


def masked_crc(data: bytes | memoryview) -> int:
    """The masked CRC-32C TFRecord stores after a length and after the data."""
    from crc32c import crc32c  # see reference_spans

    return _masked(crc32c(data))


def frame_record(data: bytes) -> bytes:
    """One framed record (used by tests and by measurement scripts to write real framing)."""
    length = _U64.pack(len(data))
    return length + _U32.pack(masked_crc(length)) + data + _U32.pack(masked_crc(data))


def read_file(path: str) -> bytes:
    with guard.open_file(path, "rb") as f:
        return f.read()


def spans(buf: bytes, rel: str, prefix: str, diagnostics: list[Diagnostic]) -> np.ndarray:
    """``(record_offset, data_start, data_end)`` rows (int64) of every record whose CRCs check out.

    Problems are appended to ``diagnostics`` as described in the module docstring.
    """
    if not buf:
        diagnostics.append(warning(f"{prefix}-file-empty", path=rel, offset=0))
        return np.zeros((0, 3), dtype=np.int64)
    if _c_scan is None:
        return reference_spans(buf, rel, prefix, diagnostics)
    packed, status, at, bad = _c_scan(buf)
    for pos in bad:
        _bad_data(diagnostics, prefix, rel, pos, _U64.unpack_from(buf, pos)[0])
    if status == 1:
        _truncated(diagnostics, prefix, rel, at, len(buf) - at)
    elif status == 2:
        _bad_length(diagnostics, prefix, rel, at, len(buf) - at)
    return np.frombuffer(packed, dtype=np.int64).reshape(-1, 3)


def scan(buf: bytes, rel: str, prefix: str, diagnostics: list[Diagnostic]) -> Iterator[tuple[int, int, int]]:
    """``spans`` one record at a time, as tuples (for readers of a few records: lineage)."""
    yield from map(tuple, spans(buf, rel, prefix, diagnostics).tolist())


def reference_spans(buf: bytes, rel: str, prefix: str, diagnostics: list[Diagnostic]) -> np.ndarray:
    """``spans`` by a plain Python loop: the reference the C scanner is tested against."""
    if not buf:
        diagnostics.append(warning(f"{prefix}-file-empty", path=rel, offset=0))
        return np.zeros((0, 3), dtype=np.int64)
    # Imported only on this path: the C scanner checks CRCs itself, and the import (~30 ms, for
    # importlib.metadata) would be paid by every helper process.
    from crc32c import crc32c

    rows: list[tuple[int, int, int]] = []
    size = len(buf)
    view = memoryview(buf)
    pos = 0
    while pos < size:
        if pos + HEADER > size:
            _truncated(diagnostics, prefix, rel, pos, size - pos)
            break
        length, length_crc = _HEADER.unpack_from(buf, pos)
        if _masked(crc32c(view[pos:pos + 8])) != length_crc:
            _bad_length(diagnostics, prefix, rel, pos, size - pos)
            break
        start = pos + HEADER
        end = start + length
        if end + FOOTER > size:  # also catches absurd lengths: nothing is allocated for them
            _truncated(diagnostics, prefix, rel, pos, size - pos)
            break
        if _masked(crc32c(view[start:end])) != _U32.unpack_from(buf, end)[0]:
            _bad_data(diagnostics, prefix, rel, pos, length)
        else:
            rows.append((pos, start, end))
        pos = end + FOOTER
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _bad_length(diagnostics: list[Diagnostic], prefix: str, rel: str, pos: int, left: int) -> None:
    diagnostics.append(error(f"{prefix}-record-crc", path=rel, offset=pos, variant="length", at=pos, left=left))


def _bad_data(diagnostics: list[Diagnostic], prefix: str, rel: str, pos: int, length: int) -> None:
    diagnostics.append(error(f"{prefix}-record-crc", path=rel, offset=pos, variant="data", at=pos, length=length))


def _truncated(diagnostics: list[Diagnostic], prefix: str, rel: str, pos: int, left: int) -> None:
    diagnostics.append(warning(f"{prefix}-truncated", path=rel, offset=pos, at=pos, left=left))
