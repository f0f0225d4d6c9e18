"""The test suite's own processes, found so that none outlives the test that made it.

Every process the suite starts inherits ``MARK`` in its environment (set by conftest.py when the
session starts): the CLI in a subprocess, its helpers, their resource trackers, and the
helpers of a CLI that a test SIGKILLed, whose parent is gone (they are nobody's children then,
so only the mark finds them). Linux only (/proc); elsewhere nothing is found.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

MARK = "POSTMORTEM_TEST_SUITE"
GRACE_S = 5.0  # a helper told to stop may take a moment to exit; a leak never does


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _is_own_tracker(pid: int) -> bool:
    """This process's multiprocessing resource tracker: it lives as long as this process, by design."""
    return "multiprocessing.resource_tracker" in _cmdline(pid)


def children() -> list[int]:
    """This process's live multiprocessing children (a Session's helpers; its resource tracker is
    no multiprocessing child). Cheap enough for every test: no /proc scan."""
    return sorted(p.pid for p in multiprocessing.active_children())


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone


def marked(token: str) -> list[int]:
    """Every live process carrying ``MARK=token``, but this one and its own resource tracker."""
    needle = f"{MARK}={token}".encode() + b"\0"
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in env and not _is_zombie(int(entry)):
            found.append(int(entry))
    if found:  # rare: only then look for this process's own tracker among them
        own = set(_own_trackers())
        found = [p for p in found if p not in own]
    return sorted(found)


def _own_trackers() -> list[int]:
    """This process's resource tracker(s): processes whose parent is this one, running the tracker."""
    me, out = str(os.getpid()), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1] == me and _is_own_tracker(int(entry)):
                out.append(int(entry))
        except (OSError, IndexError):
            continue
    return out


def wait_gone(find, grace_s: float = GRACE_S) -> list[int]:
    """``find()`` polled until it is empty or ``grace_s`` passed; what is left."""
    deadline = time.monotonic() + grace_s
    left = find()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = find()
    return left


def describe(pids: list[int]) -> str:
    return "; ".join(f"{p}: {_cmdline(p)[:160]}" for p in pids)


def end(pids: list[int]) -> None:
    """SIGKILL the suite's own leftover processes (found by its token), once they are reported."""
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
