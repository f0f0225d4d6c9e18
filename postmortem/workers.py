"""Worker processes for CPU-bound steps (reading ranks, reading a baseline, laying out the PDF).

Workers are spawned, not forked: forking a process whose polars thread pool is running can
deadlock. Each worker is meant to keep one core busy, so its polars runs one thread: polars'
default (one thread per core) in every worker oversubscribes the cores, and idle pool threads
spin on them. polars reads its settings once, when it is imported, so the initializer has to run
before that. It does: a worker unpickles the initializer (this module) before its first task,
whose module is what imports polars. Hence this module must not import polars itself. (A main
script that imports polars at its top defeats this: spawn imports the script in each worker
first. The results are the same, only slower.)
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from . import KEEP_FREED_PAGES


_shared: object = None


def pool(workers: int, *, shared: object = None) -> ProcessPoolExecutor:
    """A pool of `workers` spawned processes, each with a single-threaded polars that keeps its
    freed pages (see postmortem/__init__.py: a worker runs many like tasks, one per rank).

    shared: a multiprocessing object (an Array with its lock, ...) the workers' tasks see as
    ``shared()``; such objects reach a process only when it starts.
    """
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start,
        initargs=(shared,),
    )


def shared() -> object:
    """In a worker: the `shared` object its pool was made with."""
    return _shared


def _start(shared: object) -> None:
    global _shared
    _shared = shared
    os.environ["POLARS_MAX_THREADS"] = "1"
    # polars puts its defaults in front of an inherited setting when it is imported; the last wins.
    inherited = os.environ.get("_RJEM_MALLOC_CONF")
    os.environ["_RJEM_MALLOC_CONF"] = ",".join(filter(None, [inherited, KEEP_FREED_PAGES]))
