"""The one place where numbers, units and dates become text (the labels are in ``words.catalog``).

Every function takes ``None`` (value unknown) and returns ``MISSING``; the caller keeps the reason
and shows it as a tooltip or footnote. NaN / Inf are data and print as such.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

MISSING = "—"

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _special(x: float | None) -> str | None:
    if x is None:
        return MISSING
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return None


def number(x: float | None, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits, no exponent for everyday magnitudes."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    if x == 0:
        return "0"
    mag = abs(x)
    if mag >= 1e7 or mag < 1e-4:
        return f"{x:.{digits - 1}e}"
    # round to significant digits first: 0.9996 becomes 1.00, not 1.000
    rounded = float(f"{x:.{digits - 1}e}")
    if abs(rounded) >= 10 ** (digits - 1):
        return f"{round(x):,}"  # never hide integer digits: 123,457 not 123,000
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    return f"{rounded:,.{decimals}f}"


def _round_sig(x: float, digits: int) -> float:
    return float(f"{x:.{digits - 1}e}") if x else x


def integer(x: int | float | None) -> str:
    """Counts and steps with thousands separators: 12,345."""
    if (s := _special(None if x is None else float(x))) is not None:
        return s
    assert x is not None
    return f"{round(x):,}"


def step(x: int | None) -> str:
    return integer(x)


def duration(seconds: float | None, digits: int = 3) -> str:
    """Seconds with an automatic unit: µs, ms, s, min, h."""
    if (s := _special(seconds)) is not None:
        return s
    assert seconds is not None
    seconds = _round_sig(seconds, digits)  # so 0.9996 s picks "s", not "1,000 ms"
    mag = abs(seconds)
    if mag == 0:
        return "0 s"
    if mag < 1e-3:
        return f"{number(seconds * 1e6, digits)} µs"
    if mag < 1:
        return f"{number(seconds * 1e3, digits)} ms"
    if mag < 120:
        return f"{number(seconds, digits)} s"
    if mag < 7200:
        return f"{number(seconds / 60, digits)} min"
    return f"{number(seconds / 3600, digits)} h"


def si(x: float | None, unit: str, digits: int = 3) -> str:
    """A value with an SI prefix: 12.3k tokens/s, 1.20M."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    x = _round_sig(x, digits)  # so 999,960 picks "M", not "1,000k"
    for factor, prefix in _SI:
        if abs(x) >= factor:
            return f"{number(x / factor, digits)}{prefix} {unit}".rstrip()
    return f"{number(x, digits)} {unit}".rstrip()


def tokens_per_s(x: float | None) -> str:
    return si(x, "tokens/s")


def samples_per_s(x: float | None) -> str:
    return si(x, "samples/s")


def tokens(x: float | None) -> str:
    return si(x, "tokens")


def flops(x: float | None) -> str:
    """FLOP/s with T/P prefixes: 312 TFLOPS."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    for factor, prefix in _SI[:3]:
        if abs(x) >= factor:
            return f"{number(x / factor)} {prefix}FLOPS"
    return f"{number(x)} FLOPS"


def bytes_(x: float | None) -> str:
    """Binary sizes: 512 B, 1.50 KiB, 3.20 GiB."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(x) >= 1024**power:
            return f"{number(x / 1024**power)} {unit}"
    return f"{integer(x)} B"


def percent(fraction: float | None, decimals: int = 1) -> str:
    """A fraction 0-1 as a percentage that never rounds to a misleading 0% or 100%.

    As coverage.py does: 0.99996 shows as 99.9%, 0.00004 as 0.1%; only exact 0 and 1 show 0% / 100%.
    """
    if (s := _special(fraction)) is not None:
        return s
    assert fraction is not None
    pc = fraction * 100
    step_ = 10.0**-decimals
    if 0 < pc < step_:
        pc = step_
    elif 100 - step_ < pc < 100:
        pc = 100 - step_
    else:
        pc = round(pc, decimals)
    # truncate rather than round near 100 so 99.96 -> 99.9, handled above; elsewhere round
    return f"{pc:.{decimals}f}%"


def signed(text: str, x: float) -> str:
    """Prefix a formatted magnitude with its sign: +1.2 s, -3.4 ms, ±0."""
    if x > 0:
        return "+" + text
    if x < 0:
        return "-" + text
    return "±" + text


def delta(x: float | None, fmt=number) -> str:
    """A difference with its sign, formatted by ``fmt`` (e.g. ``duration``)."""
    if (s := _special(x)) is not None:
        return s
    assert x is not None
    return signed(fmt(abs(x)), x)


def rel_delta(fraction: float | None, decimals: int = 1) -> str:
    """A relative change with sign: +3.2%; a small non-zero change shows as +<0.1%, never 0.0%."""
    if (s := _special(fraction)) is not None:
        return s
    assert fraction is not None
    pc = abs(fraction) * 100
    smallest = 10.0**-decimals
    if 0 < pc < smallest / 2:
        return signed(f"<{smallest:.{decimals}f}%", fraction)
    return signed(f"{pc:.{decimals}f}%", fraction if round(pc, decimals) else 0.0)


def loss(x: float | None) -> str:
    return number(x, 4)


def datetime_(when: datetime | None, now: datetime | None = None, lang: str = "en") -> str:
    """An absolute UTC time, plus how long ago relative to the injected ``now``."""
    if when is None:
        return MISSING
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    text = when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if now is None:
        return text
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    return f"{text} ({ago((now - when).total_seconds(), lang)})"


def ago(seconds: float, lang: str = "en") -> str:
    units = ((86400, "day", "天"), (3600, "hour", "小时"), (60, "minute", "分钟"))
    if seconds < 60:
        return "刚刚" if lang == "zh" else "just now"
    for size, en, zh in units:
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {zh}前" if lang == "zh" else f"{n} {en}{'s' if n != 1 else ''} ago"
    return ""  # unreachable


def si_count(x: float | None) -> str:
    """A count with an SI prefix and no unit: 124M."""
    return si(x, "")
