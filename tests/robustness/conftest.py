"""Shared helpers of the robustness suite: real files copied, damaged, and read back.

Every input here is a copy of a file written by a real writer (MindSpore, tensorboardX, the
sample training runs), damaged in a known way. Nothing is a hand-written binary.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from postmortem.model import Artifact, ReadResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "samples"

# Modest and deterministic: the whole suite must stay well under two minutes on 2 shared cores.
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz(n: int):
    return settings(FUZZ, max_examples=n)


def artifact(path: Path | str, rel: str | None = None, rank: int | None = None) -> Artifact:
    path = Path(path)
    st = path.stat()
    return Artifact(path=str(path), rel=rel or path.name, size=st.st_size, mtime=st.st_mtime, rank=rank)


def read_bytes(reader, data: bytes, folder: Path, name: str, rel: str | None = None) -> ReadResult:
    """Write ``data`` under ``folder/name`` and read it with ``reader`` (which must not raise)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    result = reader.read(artifact(path, rel or name))
    assert isinstance(result, ReadResult)
    return result


def _cell(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    if isinstance(v, list):
        return tuple(_cell(x) for x in v)
    return v


def table_rows(result: ReadResult, name: str, drop: tuple[str, ...] = ("file", "mtime")) -> list[tuple]:
    """A table's rows as comparable tuples (NaN == NaN), without path-dependent columns."""
    df = result.tables.get(name)
    if df is None or df.is_empty():
        return []
    df = df.drop([c for c in drop if c in df.columns])
    return [tuple(_cell(v) for v in row) for row in df.iter_rows()]


def slugs(result: ReadResult) -> set[str]:
    return {d.slug for d in result.diagnostics}


def copy_run(src: Path, dst: Path) -> Path:
    """A writable copy of a sample run (samples are chmod 0400 like real closed summary files)."""
    shutil.copytree(src, dst, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(dst):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, 0o644)
    return dst


def tree_state(root: Path) -> dict[str, tuple]:
    """Every entry under root with its type, mode, size, mtime_ns and content hash."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = None
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(Path(p).read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(p)
            state[os.path.relpath(p, root)] = (stat.S_IFMT(st.st_mode), st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return state


@pytest.fixture(scope="session")
def sample_base() -> Path:
    return SAMPLES / "gpt-tiny-base"


@pytest.fixture(scope="session")
def sample_lr2x() -> Path:
    return SAMPLES / "gpt-tiny-lr2x"
