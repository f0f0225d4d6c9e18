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

import contextlib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


class Claims:
    """Who does which task of a batch that the parent and the workers may each do: workers claim
    tasks from the front, in the order they were sent, the parent from the back, until the two
    meet. One batch at a time per pool; a task of an older batch is never claimed."""

    def __init__(self, context) -> None:
        # batch id; front: one past the highest task a worker claimed; back: the lowest task the
        # parent claimed (the batch's size before it claimed any)
        self._state = context.Array("q", 3)

    def start(self, count: int) -> int:
        """In the parent: a new batch of `count` tasks, none claimed; its id."""
        with self._state.get_lock():
            self._state[0] += 1
            self._state[1], self._state[2] = 0, count
            return self._state[0]

    def from_front(self, batch: int, task: int) -> bool:
        """In a worker: whether it does `task` of `batch` (the parent did not take it yet)."""
        with self._state.get_lock():
            if self._state[0] != batch or task >= self._state[2]:
                return False
            self._state[1] = max(self._state[1], task + 1)
            return True

    def from_back(self, batch: int) -> int | None:
        """In the parent: the next task it does, from the back; None once the workers have claimed
        every task before it. Tasks below that are the workers' (claimed, or about to be)."""
        with self._state.get_lock():
            if self._state[0] != batch or self._state[2] <= self._state[1]:
                return None
            self._state[2] -= 1
            return self._state[2]

    def workers_part(self, batch: int) -> int:
        """In the parent, once from_back gave None: the tasks below this are the workers'."""
        with self._state.get_lock():
            return self._state[2] if self._state[0] == batch else 0


class Pool(ProcessPoolExecutor):
    """`workers` spawned processes, each with a single-threaded polars that keeps its freed pages
    (see postmortem/__init__.py: a worker runs many like tasks, one per rank), and the claims they
    share with the parent (see Claims; shared objects reach a process only when it starts)."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.workers = workers
        self.claims = Claims(context)
        super().__init__(max_workers=workers, mp_context=context, initializer=_start, initargs=(self.claims,))

    def warm_up(self) -> None:
        """Start the workers now and have them import and set up what reading a run needs
        (load.warm_up), so that they are ready when there is work: their start then overlaps the
        parent's own imports."""
        for _ in range(self.workers):
            self.submit(_warm_up)


def leave_cores_to(pool: Pool) -> None:
    """In the parent, before polars is imported (it reads this once): its thread pool gets the
    cores the pool's workers do not keep busy. For a build whose helper works from start to end
    (a PDF to lay out): on two cores, polars' second thread here only competes with the helper
    (64 ranks, HTML+PDF+JSON: 11.2 -> 10.6 s; the 250k build 9.1 -> 8.6 s). A setting the user
    made is left alone."""
    if "polars" not in sys.modules and "POLARS_MAX_THREADS" not in os.environ:
        os.environ["POLARS_MAX_THREADS"] = str(max(1, cores() - pool.workers))


def cores() -> int:
    """The cores this process can keep busy: those it may run on (taskset, a cpuset), capped by
    the CPU quota of its cgroup (a container's --cpus), as polars counts them for its own threads.
    os.cpu_count() counts the host's: in a 2-CPU container on a 96-core host, 95 workers."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota()
    return min(allowed, quota) if quota is not None else allowed


def cpu_quota(cgroups: str = "/proc/self/cgroup", mount: str = "/sys/fs/cgroup") -> int | None:
    """Whole CPUs (at least one) of the tightest CFS quota on this process's cgroup and its
    ancestors, cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us); None when there is none."""
    try:
        lines = Path(cgroups).read_text().splitlines()
    except OSError:  # not Linux
        return None
    quotas = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]  # id:controllers:path
        if not path:
            continue
        if controllers == "":  # v2: one hierarchy, mounted at `mount`
            hierarchy, read = Path(mount), _quota_v2
        elif "cpu" in controllers.split(","):  # v1: mounted as its controllers, e.g. cpu,cpuacct
            hierarchy, read = Path(mount, controllers), _quota_v1
        else:
            continue
        folder = hierarchy / path.lstrip("/")
        if not folder.is_dir():  # a container sees its own cgroup as the hierarchy's root
            folder = hierarchy
        while True:
            with contextlib.suppress(OSError, ValueError):
                quotas.append(read(folder))
            if folder == hierarchy or hierarchy not in folder.parents:
                break
            folder = folder.parent
    quotas = [q for q in quotas if q is not None]
    return min(quotas) if quotas else None


def _quota_v2(folder: Path) -> int | None:
    quota, period = (folder / "cpu.max").read_text().split()  # "max 100000" or "150000 100000"
    return None if quota == "max" else max(1, int(quota) // int(period))


def _quota_v1(folder: Path) -> int | None:
    quota = int((folder / "cpu.cfs_quota_us").read_text())  # -1: none
    return None if quota <= 0 else max(1, quota // int((folder / "cpu.cfs_period_us").read_text()))


def helper(wanted: bool = True) -> Pool | contextlib.nullcontext:
    """One worker for the work that need not wait for this process (the machine's second core):
    reading ranks or a baseline, laying out the PDF. None (in a `with`) on one core or when not
    wanted. Its process starts with the first task (or warm_up)."""
    return Pool(1) if wanted and cores() > 1 else contextlib.nullcontext()


def claims() -> Claims:
    """In a worker: the claims its pool shares with the parent."""
    return _claims


_claims: Claims = None  # type: ignore[assignment]


def _start(shared_claims: Claims) -> None:
    global _claims
    _claims = shared_claims
    os.environ["POLARS_MAX_THREADS"] = "1"
    # Keeping freed pages is set by postmortem/__init__.py, which a worker imports (to unpickle
    # this function) before polars, as the parent did: a user's own setting is left alone here too.


def _warm_up() -> None:
    from . import load

    load.warm_up()
