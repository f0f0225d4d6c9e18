"""Worker processes for CPU-bound steps (reading ranks, loading a baseline, laying out the PDF).

Workers are spawned, not forked: forking a process whose polars thread pool is running can
deadlock. Each worker is meant to keep one core busy, so its polars runs one thread: polars'
default (one thread per core) in every worker oversubscribes the cores, and idle pool threads
spin on them. polars reads POLARS_MAX_THREADS once, when it is imported, so the initializer has
to run before that. It does: a worker unpickles the initializer (this module) before its first
task, whose module is what imports polars. Hence this module must not import polars itself.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor


def pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` spawned processes, each with a single-threaded polars."""
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_one_polars_thread
    )


def _one_polars_thread() -> None:
    os.environ["POLARS_MAX_THREADS"] = "1"
    # polars' jemalloc gives freed pages back to the OS after half a second, and the next rank
    # faults them in again: a third of a worker's CPU time when the machine is busy. A short-lived
    # worker keeps them. Read when polars loads, like the above; polars puts its own defaults
    # (inherited from the parent's environment, too) in front, so the last setting wins.
    inherited = os.environ.get("_RJEM_MALLOC_CONF")
    os.environ["_RJEM_MALLOC_CONF"] = ",".join(filter(None, [inherited, "dirty_decay_ms:-1,muzzy_decay_ms:-1"]))
