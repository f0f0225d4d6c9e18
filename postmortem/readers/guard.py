"""The one door every reader opens a file through: a regular file of known size, never a FIFO.

A run folder is hostile input. Discovery lists only regular files, but readers also open files
discovery never handed them (``profiler_info_*.json`` beside a trace, ``info.json.N``, ``*.done``,
a ``kernel_details.csv`` beside ``op_statistic.csv``), and a FIFO, a device or a socket under
any of those names would block ``open`` (or read forever from ``/dev/zero``). So every path a
reader hands to anything that opens it — its own ``open``, polars, sqlite3, ``json`` — passes
this module first; ``tests/robustness/test_guard_ast.py`` walks ``postmortem/readers/`` and
fails on an open that bypasses it.

The API (each raises :class:`Refused`, an ``OSError``, so loading's existing handling reports
it as ``file-unreadable`` with the reason; a side file's caller catches it and warns or skips):

- ``open_file(path, mode="rb", **open_kwargs)`` — the opened file object. The file is opened
  with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor, so a FIFO put in place
  after any earlier check still cannot block; text modes take ``encoding`` / ``errors`` /
  ``newline`` as ``open`` does.
- ``open_fd(path)`` — the same, as a raw read-only descriptor (``os.pread`` readers), with its size.
- ``checked(path) -> str`` — the path itself once ``stat`` says it is a regular file: for
  libraries that open by name (``pl.scan_csv(checked(p))``, ``pl.read_csv``). A FIFO swapped in
  between the check and the library's open is the one race left; discovery's listing and this
  check both saw a regular file.
- ``size(path) -> int`` — the size of a regular file (``Refused`` otherwise).
- ``refusal(path) -> str | None`` — why a path would be refused (``None``: it would not): for a
  probe that wants no exception (``if refusal(p) is None: ...``).
- ``connect_sqlite(path)`` — a read-only, immutable sqlite3 connection
  (``file:…?mode=ro&immutable=1``): no journal or WAL file is ever written beside the database.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import urllib.parse
from typing import IO, Any

__all__ = ["Refused", "checked", "connect_sqlite", "open_fd", "open_file", "refusal", "size"]

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class Refused(OSError):
    """Not a regular file: ``strerror`` says what it is instead (``"not a regular file: a FIFO"``)."""

    def __init__(self, path: str | os.PathLike[str], what: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file: {what}", os.fspath(path))


def _what(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def size(path: str | os.PathLike[str]) -> int:
    st = os.stat(path)  # follows a symlink: what it points at is what would be opened
    what = _what(st.st_mode)
    if what is not None:
        raise Refused(path, what)
    return st.st_size


def checked(path: str | os.PathLike[str]) -> str:
    size(path)
    return os.fspath(path)


def refusal(path: str | os.PathLike[str]) -> str | None:
    try:
        size(path)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def open_fd(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(descriptor, size)`` of a regular file opened read-only; the caller closes the descriptor."""
    nonblock = getattr(os, "O_NONBLOCK", 0)  # POSIX; elsewhere a FIFO cannot be opened by name anyway
    fd = os.open(path, os.O_RDONLY | nonblock | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        what = _what(st.st_mode)
        if what is not None:
            raise Refused(path, what)
        if nonblock:
            os.set_blocking(fd, True)  # a regular file never blocks; later readers expect a plain fd
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def open_file(path: str | os.PathLike[str], mode: str = "rb", **kwargs: Any) -> IO[Any]:
    if any(c in mode for c in "wax+"):
        raise ValueError("the guard opens for reading only")
    fd, _ = open_fd(path)
    try:
        return open(fd, mode, closefd=True, **kwargs)  # noqa: SIM115 - the caller's ``with`` closes it
    except BaseException:
        os.close(fd)
        raise


def connect_sqlite(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside the file (no -journal, no -wal)."""
    target = os.path.abspath(checked(path))
    uri = "file:" + urllib.parse.quote(target) + "?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)
