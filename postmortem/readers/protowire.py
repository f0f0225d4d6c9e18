"""A minimal protobuf wire-format decoder: enough to read MindSpore's summary and lineage messages
without importing mindspore (whose import makes every protobuf parse in the process ~10x slower).

``parse(buf, start, end)`` returns a ``Message``: field number -> list of raw values in wire order.
Raw values are ``int`` (varint), ``bytes`` of length 8 / 4 (fixed64 / fixed32) or ``memoryview``
(length-delimited: a string, bytes, an embedded message or a packed repeated field). The typed
accessors interpret them; singular fields take the last occurrence, as protobuf does.

Malformed input raises ``WireError``; readers catch it and turn it into a diagnostic.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")
_I64 = struct.Struct("<q")
_U64_LIMIT = 1 << 64
_I64_SIGN = 1 << 63


class WireError(ValueError):
    """The bytes are not a valid protobuf message."""


def varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Decode one varint at ``pos``; returns (value, next position)."""
    if pos >= len(buf):
        raise WireError("varint starts past the end of the buffer")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= len(buf) or shift > 63:
            raise WireError("varint runs past the end of the buffer or is longer than 10 bytes")
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7


def to_int64(value: int) -> int:
    """A varint read as a signed int64 / int32 (negative numbers are sign-extended to 64 bits)."""
    value &= _U64_LIMIT - 1
    return value - _U64_LIMIT if value & _I64_SIGN else value


def iter_fields(buf: bytes | memoryview, start: int = 0, end: int | None = None) -> Iterator[tuple[int, object]]:
    """Yield (field number, raw value) for each field between start and end."""
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    end = len(view) if end is None else end
    pos = start
    while pos < end:
        key, pos = varint(view, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError(f"field number 0 at byte {pos}")
        if wire == 0:
            value, pos = varint(view, pos)
        elif wire == 2:
            length, pos = varint(view, pos)
            if pos + length > end:
                raise WireError(f"length-delimited field {number} runs past the end")
            value = view[pos:pos + length]
            pos += length
        elif wire == 1:
            if pos + 8 > end:
                raise WireError(f"fixed64 field {number} runs past the end")
            value = bytes(view[pos:pos + 8])
            pos += 8
        elif wire == 5:
            if pos + 4 > end:
                raise WireError(f"fixed32 field {number} runs past the end")
            value = bytes(view[pos:pos + 4])
            pos += 4
        else:  # groups (3, 4) are not used by any message we read
            raise WireError(f"unsupported wire type {wire} for field {number}")
        yield number, value
    if pos != end:
        raise WireError("last field runs past the end of the message")


class Message:
    """Decoded fields of one message, with typed accessors (proto2 defaults when absent)."""

    __slots__ = ("fields",)

    def __init__(self, fields: dict[int, list[object]]):
        self.fields = fields

    def has(self, number: int) -> bool:
        return number in self.fields

    def _last(self, number: int) -> object | None:
        values = self.fields.get(number)
        return values[-1] if values else None

    def int64(self, number: int, default: int = 0) -> int:
        value = self._last(number)
        if isinstance(value, int):
            return to_int64(value)
        if isinstance(value, bytes) and len(value) == 8:
            return _I64.unpack(value)[0]
        return default

    def f64(self, number: int, default: float = 0.0) -> float:
        value = self._last(number)
        return _F64.unpack(value)[0] if isinstance(value, bytes) and len(value) == 8 else default

    def f32(self, number: int, default: float = 0.0) -> float:
        value = self._last(number)
        return _F32.unpack(value)[0] if isinstance(value, bytes) and len(value) == 4 else default

    def string(self, number: int, default: str = "") -> str:
        value = self._last(number)
        if isinstance(value, memoryview):
            return bytes(value).decode("utf-8", errors="replace")
        return default

    def raw(self, number: int) -> bytes:
        value = self._last(number)
        return bytes(value) if isinstance(value, memoryview) else b""

    def message(self, number: int) -> Message | None:
        value = self._last(number)
        return parse(value) if isinstance(value, memoryview) else None

    def messages(self, number: int) -> list[Message]:
        return [parse(v) for v in self.fields.get(number, ()) if isinstance(v, memoryview)]

    def repeated_varint(self, number: int) -> list[int]:
        """A repeated integer field, packed or not (proto2 writes them unpacked by default)."""
        out: list[int] = []
        for value in self.fields.get(number, ()):
            if isinstance(value, int):
                out.append(to_int64(value))
            elif isinstance(value, memoryview):
                pos = 0
                while pos < len(value):
                    v, pos = varint(value, pos)
                    out.append(to_int64(v))
        return out

    def repeated_fixed(self, number: int, fmt: str) -> list:
        """A repeated fixed-width field ('f' float32, 'd' double, 'Q'/'q' 64-bit), packed or not."""
        item = struct.Struct("<" + fmt)
        out: list = []
        for value in self.fields.get(number, ()):
            if isinstance(value, bytes) and len(value) == item.size:
                out.append(item.unpack(value)[0])
            elif isinstance(value, memoryview):
                if len(value) % item.size:
                    raise WireError(f"packed field {number} is not a multiple of {item.size} bytes")
                out.extend(v[0] for v in item.iter_unpack(value))
        return out


def parse(buf: bytes | memoryview, start: int = 0, end: int | None = None) -> Message:
    fields: dict[int, list[object]] = {}
    for number, value in iter_fields(buf, start, end):
        values = fields.get(number)
        if values is None:
            fields[number] = [value]
        else:
            values.append(value)
    return Message(fields)
