"""One file's incidents: the CRITICAL / ERROR / exception lines and what follows each, found fast.

A training log of 160 KB holds a few incident lines or none, and a run may have 8,192 of them, so
the file is never split into lines: ``bytes.find`` runs over the whole file for each of a few
anchors (memchr speed, a few GB/s), and only the lines around the hits are decoded and read.
Every incident line holds one of the anchors: a level (``[ERROR]``, ``- ERROR -``, ``CRITICAL``),
an exception's name (``RuntimeError``, ``MemoryError``: "rror"), MindSpore's ``[EXCEPTION]`` level and
msrun's "exit with exception", a Python traceback, or what a
shell prints for a process killed by a signal (``Killed``, ``Segmentation fault``).

An incident is its header line (the line a careful engineer quotes) and the lines that follow it
up to the next record of the log (a line that starts with a level or a time): the traceback's
frames before an exception line, CANN's "Ascend Error Message" block after it, where the error
codes and the names of other ranks are written.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

ANCHORS = (b"RROR", b"rror", b"CRITICAL", b"XCEPTION", b"xception", b"Traceback", b"Killed", b"egmentation")
MAX_INCIDENTS = 200  # a crash loop can print millions of ERROR lines; the first ones say it
MAX_CONTEXT_LINES = 40
MAX_CONTEXT_BYTES = 6000
MAX_TEXT = 4000  # a header is quoted verbatim: only a runaway line is cut
TAIL_LINES = 50  # the last lines a file's last time is looked for in

# 2024-05-08 10:36:53,123 · 2024-05-08T10:36:53.123 · MindSpore / CANN: 2024-05-08-10:36:53.123.456
TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T-](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?")
TIME_B = re.compile(TIME.pattern.encode())
_LEVEL = re.compile(
    r"^\s*(?:\[(?P<b>ERROR|CRITICAL|FATAL|EXCEPTION|WARNING|WARN|INFO|DEBUG|EVENT|TRACE)\]"  # [ERROR] ME(..):..., plog
    r"|.{0,80}?\s-\s(?P<d>ERROR|CRITICAL|FATAL|WARNING|INFO|DEBUG)\s-\s"  # python logging: 2024-.. - name - ERROR - msg
    r"|(?:\S+\s){0,3}?(?P<w>ERROR|CRITICAL|FATAL)[:\s])"  # ERROR: msg, 2024-.. ERROR msg
)
# A line that starts the log's next record ends an incident's lines. A warning does not: MindSpore
# writes what failed there ("GetNext error may be caused by slow data processing").
_RECORD = re.compile(r"^\s*(?:\[rank\d+\]:\s*)?(?:\[(?:ERROR|CRITICAL|FATAL|EXCEPTION|INFO|DEBUG|EVENT|TRACE)\]|\d{4}-\d\d-\d\d[ T-]\d\d:"
                     r"|\[\d{4}-\d\d-\d\d|Traceback \(most recent call last\))")
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Fault))(?::\s*(?P<msg>.*))?$")
_KILLED = re.compile(r"\bKilled\b|Segmentation fault|\bSIGSEGV\b|\bSIGKILL\b|core dumped")
_TRACEBACK = "Traceback (most recent call last)"
# CANN's error manager prints a code at the start of its own line ("EI0002: [PID: 7277] ...",
# "EE9999: Inner Error!") under a line that only announces it ("Error. Message is", torch_npu's
# "Warning: NPU warning, error code is 507048[Error]:"); that code line is the header.
_CODE_LINE = re.compile(r"^\s*(?:\[rank\d+\]:\s*)?E[0-9A-Z]\d{4}[:\s]")
# Prefixes launchers put before every line of a worker: torchrun's "[rank1]: ", pytest's "E    ";
# the line is read without it (and torchrun's names the rank).
PREFIX = re.compile(r"^(?:\[rank(?P<rank>\d+)\]:\s?|E {3,})")
# CANN's code lines need no anchor of their own: the tail of the file (where a dying job writes)
# is searched for them once.
_CODE_LINES_B = re.compile(rb"(?m)^[ \t]*(?:\[rank\d+\]:[ \t]*)?E[0-9A-Z]\d{4}:")
CODE_TAIL_BYTES = 32768
_ABORT = re.compile(r"terminate called after throwing|Fatal Python error|\bAborted\b")
PEEK_LINES = 3


@dataclass(frozen=True, slots=True)
class Incident:
    line: int  # 1-based line number of the header
    level: str  # "critical", "error", "exception", "killed"
    text: str  # the header line as written (cut at MAX_TEXT)
    context: str  # the lines after it (a traceback: the frames before and the lines after)
    wall_time: float | None  # the header's time, else the nearest time above it
    exception: str | None  # a Python exception's name, where the incident is one


def unix_time(m: re.Match) -> float | None:
    """A zone-less log time read as if UTC (the text-log reader does the same; loading settles the offset)."""
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        t = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    except (ValueError, OverflowError):
        return None
    return t + (int(frac) / 10 ** len(frac) if frac else 0.0)


def last_time(data: bytes) -> float | None:
    """The last time written at the start of one of the file's last lines: how long the files
    went on after progress stopped."""
    end = len(data)
    for _ in range(TAIL_LINES):
        start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
        m = TIME_B.search(data, start, min(end, start + 200))  # MindSpore's time follows its level and module
        if m:
            return unix_time(re.match(TIME.pattern, m.group().decode()))
        if start == 0:
            break
        end = start
    return None


def _hit_lines(data: bytes) -> list[int]:
    """Start offsets of the lines holding an anchor, sorted, each once."""
    starts: set[int] = set()
    for anchor in ANCHORS:
        i = data.find(anchor)
        while i >= 0:
            start = data.rfind(b"\n", 0, i) + 1
            starts.add(start)
            end = data.find(b"\n", i)
            if end < 0 or len(starts) > MAX_INCIDENTS * 8:
                break
            i = data.find(anchor, end)
    tail = max(0, len(data) - CODE_TAIL_BYTES)
    starts.update(m.start() for m in _CODE_LINES_B.finditer(data, tail))
    return sorted(starts)


def _line_at(data: bytes, start: int) -> tuple[str, int]:
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    return data[start:end].decode("utf-8", errors="replace").rstrip("\r"), end + 1


def _unprefixed(line: str) -> str:
    m = PREFIX.match(line)
    return line[m.end():] if m else line


def _level(line: str) -> str | None:
    """What makes a line an incident's header, or None."""
    line = _unprefixed(line)
    m = _LEVEL.match(line)
    if m:
        level = m["b"] or m["d"] or m["w"]
        if level in ("ERROR", "EXCEPTION"):
            return "error"
        if level in ("CRITICAL", "FATAL"):
            return "critical"
        if level is not None:
            return None  # a warning or info line that mentions an error is not one
    stripped = line.strip()
    if stripped.startswith(_TRACEBACK):
        return "traceback"
    if EXCEPTION.match(stripped) and not line[:1].isspace():
        return "exception"
    if (_KILLED.search(line) or _ABORT.search(line)) and not m:
        return "killed"
    return None


def _time_above(data: bytes, start: int) -> float | None:
    """The nearest time written at or above a line (a traceback's lines carry none)."""
    lo = max(0, start - 4096)
    found = None
    for found in TIME_B.finditer(data, lo, start):
        pass
    return unix_time(re.match(TIME.pattern, found.group().decode())) if found else None


def _in_section(line: str, context: list[str]) -> bool:
    """A traceback that MindSpore prints as a section of its exception ("- Python Call Stack:",
    then a dashed line): part of the same incident, not the next record."""
    if not _unprefixed(line).startswith(_TRACEBACK):
        return False
    last = next((x.strip() for x in reversed(context) if x.strip()), "")
    return len(last) > 3 and set(_unprefixed(last).strip()) <= {"-"}


def _code_below(data: bytes, pos: int) -> tuple[int, str | None, int]:
    """A code line just below an announcing line: (its start, its text, the next line's start)."""
    for _ in range(PEEK_LINES):
        if pos >= len(data):
            break
        line, nxt = _line_at(data, pos)
        if _CODE_LINE.match(line):
            return pos, line, nxt
        pos = nxt
    return pos, None, pos


def scan(data: bytes) -> list[Incident]:
    """The incidents of one file, in file order."""
    out: list[Incident] = []
    hits = _hit_lines(data)
    line_no, counted_to = 1, 0
    skip_to = -1
    for start in hits:
        if start < skip_to:
            continue  # inside the previous incident's lines
        text, after = _line_at(data, start)
        level = _level(text)
        if level is None and _CODE_LINE.match(text):  # a code line of CANN's error manager, on its own
            level = "error"
        if level is None:
            start, text, after = _code_below(data, after)
            if text is None:
                continue
            level = "error"
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        header_line, header, header_start = line_no, text, start
        frames: list[str] = []
        pos = after
        exception = None
        if level == "traceback":  # the frames, then the exception line: the header a careful engineer quotes
            while pos < len(data) and len(frames) < 200:
                line, nxt = _line_at(data, pos)
                if line[:1].isspace() or not line.strip():
                    frames.append(line)
                    pos = nxt
                    continue
                m = EXCEPTION.match(line.strip())
                if m and (m["msg"] or "").startswith(_TRACEBACK):  # a chained traceback (TVM's): its frames go on
                    frames.append(line)
                    pos = nxt
                    continue
                if line.strip():
                    header_line = line_no + len(frames) + 1
                    header, header_start, pos = line, pos, nxt
                    level = "exception"
                break
        m = EXCEPTION.match(_unprefixed(header).strip())
        if m:
            exception = m["name"]
        context, n, size = [], 0, 0
        while pos < len(data) and n < MAX_CONTEXT_LINES and size < MAX_CONTEXT_BYTES:
            line, nxt = _line_at(data, pos)
            if _RECORD.match(line) and not _in_section(line, context):
                break
            bare = _unprefixed(line)
            if exception is None and not bare[:1].isspace():  # a traceback told inside the record ("except_msg: ...")
                inner = EXCEPTION.match(bare.strip())
                if inner and not (inner["msg"] or "").startswith(_TRACEBACK):
                    exception = inner["name"]
            context.append(line)
            n, size, pos = n + 1, size + len(line), nxt
        skip_to = pos
        stamp = TIME.search(header[:120])
        when = unix_time(stamp) if stamp else _time_above(data, header_start)
        body = "\n".join([*frames[-6:], *context]) if frames else "\n".join(context)
        out.append(Incident(header_line, level, header.strip()[:MAX_TEXT], body[:MAX_CONTEXT_BYTES], when, exception))
        if len(out) >= MAX_INCIDENTS:
            break
    return out
