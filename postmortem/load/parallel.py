"""Ranks read in this process and in worker processes (workers.py), when there is enough work.

A rank's files are read and joined as one job (rank.load_rank); a worker sends its rank's tables
back as Arrow IPC files (model.packed).
"""

from __future__ import annotations

import contextlib
import tempfile
from concurrent.futures import Future

import numpy as np
import polars as pl

from .. import workers as worker_processes
from ..model import Artifact, packed, unpacked
from ..readers import all_readers
from ..readers.base import Reader
from ..discover import Claimed
from .rank import RankPart, load_rank

# A worker process for each this much input: below it, the worker's start costs more than it saves.
_PARALLEL_MIN_BYTES = 32 * 1024 * 1024


def load_ranks(
    groups: list[list[Claimed]], order: dict[str, int], workers: int | None, pool: worker_processes.Pool | None
) -> list[RankPart]:
    """One part per rank, in rank order. Ranks are shared with worker processes when there is
    enough work: the pool given (the build's helper) when it has workers enough, else new ones."""
    orders = [{c.artifact.rel: order[c.artifact.rel] for c in group} for group in groups]
    here = [([(c.reader, c.artifact) for c in group], o) for group, o in zip(groups, orders)]
    total = sum(c.artifact.size for group in groups for c in group)
    processes = _processes(len(groups), total, workers if workers is not None else worker_processes.cores())
    if processes < 2:
        return [load_rank(*job) for job in here]
    if pool is not None and processes - 1 <= pool.workers:
        return _load_ranks_shared(here, pool)
    # More cores than the pool has workers (a many-core host): new workers; the pool is left to
    # its other work (the PDF).
    with worker_processes.Pool(processes - 1) as own:
        return _load_ranks_shared(here, own)


def _processes(ranks: int, total_bytes: int, cores: int) -> int:
    """Processes worth reading `ranks` ranks of `total_bytes` with, this one included: one per
    core at most, one per rank, and one more per _PARALLEL_MIN_BYTES of input (a worker's start
    costs about what reading that much does)."""
    by_size = 1 + total_bytes // _PARALLEL_MIN_BYTES if _PARALLEL_MIN_BYTES else ranks
    return max(1, min(cores, ranks, by_size))


def _load_ranks_shared(jobs: list[tuple[list[tuple[Reader, Artifact]], dict[str, int]]], pool: worker_processes.Pool) -> list[RankPart]:
    """The ranks shared between this process and the pool's workers: the workers take them from
    the front, this process from the back, until they meet (worker_processes.Claims). Working here
    too saves a process start and half of the parts' trips back (packed, then unpacked here). The
    pool may be busy with other work (a baseline): then this process reads every rank."""
    parts: list[RankPart | None] = [None] * len(jobs)
    batch = pool.claims.start(len(jobs))
    with _parts_folder() as folder:
        futures = [
            pool.submit(_load_rank_if_free, batch, i, ([(reader.name, art) for reader, art in files], order), folder)
            for i, (files, order) in enumerate(jobs)
        ]
        pending = dict(zip(futures, range(len(jobs))))

        def collect(done: list[Future]) -> None:
            for future in done:
                i = pending.pop(future)
                part = None if future.cancelled() else future.result()
                if part is not None:
                    part.tables = unpacked(part.tables)
                    parts[i] = part

        while (i := pool.claims.from_back(batch)) is not None:
            futures[i].cancel()  # not sent to a worker yet, usually: it never needs to be
            parts[i] = load_rank(*jobs[i])
            collect([f for f in pending if f.done()])  # unpacked while the workers go on
        # Only the workers' ranks are waited for: a task of ours that reached a worker returns
        # None whenever that worker gets to it, which may be after other work it was given.
        theirs = pool.claims.workers_part(batch)
        for future in futures[theirs:]:
            future.cancel()
        collect([f for f in futures[:theirs] if f in pending])
    return parts


def warm_up() -> None:
    """In a worker started ahead of its work (workers.Pool.warm_up): the imports and the set-ups
    that reading the first rank would otherwise pay (~0.1 s): the readers, the text-log result
    for no handed-back lines, and polars' first numpy series, row selection and multi-key sort."""
    from ..readers.textlog import _nothing_handed_back

    all_readers()
    _nothing_handed_back()
    table = pl.DataFrame({"a": [2, 1], "b": [0.5, 1.5]})
    table[np.array([1, 0])].sort("a", "b")


@contextlib.contextmanager
def _parts_folder():
    """A new temp folder where workers leave the tables they send back (model.packed), or "" when
    none can be made: then the tables travel through the pipe."""
    try:
        folder = tempfile.TemporaryDirectory(prefix="postmortem-parts-")
    except OSError:
        yield ""
        return
    with folder as path:
        yield path


def _load_rank_if_free(
    batch: int, i: int, job: tuple[list[tuple[str, Artifact]], dict[str, int]], folder: str
) -> RankPart | None:
    """In a worker: rank i, read and joined, unless the parent took it first (readers travel by
    name); its tables go back as files in `folder`."""
    if not worker_processes.claims().from_front(batch, i):
        return None
    part = load_rank(*job)
    part.tables = packed(part.tables, folder)
    return part
