"""Find every file under a run folder and hand each to the one reader that claims it.

Discovery never opens a file for reading: it only lists and stats. Symlinks are not followed
(a link can point outside the run or form a loop) and special files (FIFOs, devices, sockets)
are skipped, both listed with a note so nothing disappears silently.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import diagnostics as diag
from .diagnostics import Diagnostic
from .errors import InputError
from .model import Artifact
from .readers.base import Reader, rank_from_path

# Folders that never hold run data and can be huge (a checked-out repo next to the logs).
_SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints"}


@dataclass(frozen=True)
class Claimed:
    artifact: Artifact
    reader: Reader
    # Readers that read the file beside the one that claimed it, for something else in it (the
    # failure reader takes a log's incidents, the text-log reader its training records).
    witnesses: tuple[Reader, ...] = ()


@dataclass(frozen=True)
class Skipped:
    rel: str
    size: int
    note: str  # why: symlink-inside, symlink-outside, symlink-unresolved, special-file


@dataclass(frozen=True)
class Discovery:
    root: str
    claimed: tuple[Claimed, ...]
    unclaimed: tuple[Artifact, ...]
    skipped: tuple[Skipped, ...]
    diagnostics: tuple[Diagnostic, ...]


def check_run_dir(path: str | Path) -> Path:
    root = Path(path)
    if not root.exists():
        raise InputError("run-dir-missing", root)
    if not root.is_dir():
        raise InputError("run-dir-not-a-directory", root)
    # effective ids: a build run under a dropped/setuid identity is checked as the user it runs as
    if not os.access(root, os.R_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        raise InputError("run-dir-unreadable", root)
    return root


def discover(path: str | Path, readers: Sequence[Reader], witnesses: Sequence[Reader] = ()) -> Discovery:
    """Each file to the first reader that claims it; a witness that also claims it reads it
    beside that reader, and takes a file no reader claims as its own."""
    root = check_run_dir(path)
    claimed: list[Claimed] = []
    unclaimed: list[Artifact] = []
    skipped: list[Skipped] = []
    notes: list[Diagnostic] = []

    for rel, st in _walk(root, skipped, notes):
        artifact = Artifact(
            path=str(root / rel), rel=rel, size=st.st_size, mtime=st.st_mtime, rank=rank_from_path(rel)
        )
        reader = next((r for r in readers if r.claims(artifact)), None)
        seen_by = tuple(w for w in witnesses if w.claims(artifact))
        if reader is None and seen_by:
            reader, seen_by = seen_by[0], seen_by[1:]
        if reader is None:
            unclaimed.append(artifact)
        else:
            claimed.append(Claimed(artifact, reader, seen_by))

    if not claimed and not unclaimed and not skipped:
        raise InputError("run-dir-empty", root)
    return Discovery(str(root), tuple(claimed), tuple(unclaimed), tuple(skipped), tuple(notes))


def _walk(root: Path, skipped: list[Skipped], notes: list[Diagnostic]):
    """Yield (relative posix path, stat) of regular files, depth-first in sorted order."""
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            notes.append(diag.warning("dir-unreadable", path=rel_dir or ".", detail=exc.strerror or str(exc)))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                notes.append(diag.warning("file-unreadable", path=rel, detail=exc.strerror or str(exc)))
                continue
            if stat.S_ISLNK(st.st_mode):
                note = _symlink_note(root, root / rel)
                skipped.append(Skipped(rel, 0, note))
                if note == "symlink-outside":
                    notes.append(diag.warning("symlink-outside", path=rel))
            elif stat.S_ISDIR(st.st_mode):
                if entry.name not in _SKIP_DIRS:
                    subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                yield rel, st
            else:
                skipped.append(Skipped(rel, 0, "special-file"))
                notes.append(diag.info("special-file", path=rel))
        stack.extend(reversed(subdirs))


def _symlink_note(root: Path, link: Path) -> str:
    try:
        target = link.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: symlink loop on older Pythons
        return "symlink-unresolved"
    inside = target == root.resolve() or root.resolve() in target.parents
    return "symlink-inside" if inside else "symlink-outside"
