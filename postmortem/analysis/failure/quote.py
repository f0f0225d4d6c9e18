"""The line a careful engineer quotes, verbatim, of the root's lines."""

from __future__ import annotations

import re

from ...readers.failure import codes
from ...readers.failure.scan import EXCEPTION as EXCEPTION_LINE
from ...readers.failure.scan import _unprefixed

_MESSAGE_BLOCK = re.compile(r"^-\s*Framework Error Message:?\s*$")  # (the Ascend block: its code lines, _quoted)
_HEARTBEAT_LINE = re.compile(r"Heartbeat Lost")
SAME_MOMENT_S = 60.0  # a rank's lines this close to its root are one failure told several times


_ABORT_HEADER = re.compile(r"terminate called after throwing")


def framework_sentence(rows: list[dict]) -> str | None:
    """The first line of an exception's "Framework Error Message" block:
    MindSpore's sentence of the cause (lines as written, a launcher's prefix kept)."""
    for r in rows:
        lines = (r["context"] or "").splitlines()
        for i, line in enumerate(lines):
            if _MESSAGE_BLOCK.match(_unprefixed(line).strip()):
                for x in lines[i + 1:]:
                    bare = _unprefixed(x).strip()
                    if bare and not set(bare) <= {"-"}:
                        return x.strip()
    return None


def _quoted(root: dict, code: str | None, rows: list[dict], rank_basis: str | None, rank: int | None) -> str:
    """The line a careful engineer quotes, verbatim. Of the root's own lines (its file, from the
    root on, at the same moment): the first line of an exception's "Framework Error Message"
    block (MindSpore's sentence of the cause), else the first header that carries the root's
    code, else the line below an announcing header that starts with the code (CANN's error
    manager prints the cause there). A rank named lost by HCCL's heartbeat with no log of its
    own: the heartbeat line that names it. Else the root's header."""
    if rank_basis == "heartbeat_lost" and root["rank"] != rank:
        line = next((x for x in f"{root['text']}\n{root['context']}".splitlines() if _HEARTBEAT_LINE.search(x)), None)
        if line:
            return line.strip()
    t0 = root["wall_time"]
    same = [r for r in rows if r["file"] == root["file"] and (r["line"] or 0) >= (root["line"] or 0)
            and (t0 is None or r["wall_time"] is None or abs(r["wall_time"] - t0) <= SAME_MOMENT_S)]
    same.sort(key=lambda r: r["line"] or 0)
    sentence = framework_sentence(same)
    if sentence:
        return sentence
    for r in same:  # a C++ exception's own words ("terminate called after throwing ...", then "what(): ...")
        what = next((x.strip() for x in (r["context"] or "").splitlines() if x.strip().startswith("what():")), None)
        if what and _ABORT_HEADER.search(r["text"]):
            return what
    if code is not None and codes.internal(code):
        # an internal code's first line only says "Inner Error!"; the next line of the code says what failed
        for r in same:
            for line in (r["text"], *(r["context"] or "").splitlines()):
                bare = _unprefixed(line).strip()
                if bare.startswith(code) and not _INNER.search(bare):
                    return line.strip()
    elif code is not None:
        for r in same:
            if code in r["text"]:
                return r["text"]
        for r in same:
            for line in (r["context"] or "").splitlines():
                stripped = line.strip()
                if code in stripped and (stripped.startswith(code) or EXCEPTION_LINE.match(stripped)):
                    return stripped
    inner = _innermost_exception(root)
    return inner if inner is not None else root["text"]


_INNER = re.compile(r"^E[0-9A-Z]\d{4}:?\s*(?:\[PID: \d+\]\s*)?(?:[\d:.-]+\s*)?Inner Error!?\s*$")


def _innermost_exception(root: dict) -> str | None:
    """The user's own exception under MindSpore's wrapper ("Exception thrown from user defined
    Python function in dataset", then its "Python Call Stack" ending in "ValueError: ..."): the
    last exception line of the incident's lines."""
    if root["exception"] is None:
        return None
    found = None
    for line in (root["context"] or "").splitlines():
        bare = _unprefixed(line)
        if bare[:1].strip() and EXCEPTION_LINE.match(bare.strip()) and not bare.strip().endswith(_TRACEBACK_TAIL):
            found = line.strip()
    return found


_TRACEBACK_TAIL = "(most recent call last):"
