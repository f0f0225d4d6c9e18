"""The processes a command works with: this one and its helpers, behind one seam (Session).

A Session owns everything about concurrency:

* the helper processes: spawned, not forked (forking a process whose polars thread pool is running
  can deadlock); on one core there are none and everything runs here, in order;
* each process's set-up (``_set_up``): polars keeps the memory it frees for reuse, and its thread
  pool fits the cores the process has to itself (one in a helper: each keeps one core busy);
* the claims (``Claims``): how this process and the helpers split a batch of like jobs
  (``Session.share``: the ranks of a run);
* the transport: the tables a helper sends back travel as Arrow IPC files in the session's folder,
  mapped where they lie, not copied through the pipe (``PackedTable``).

polars reads its settings (threads, allocator) once, when it is imported. So this module imports
polars only inside the functions that need it, a helper sets itself up (``_start_helper``) before
it runs any task, and the CLI makes its session before it imports the rest of postmortem. A
session made where polars is already imported leaves this process's polars as it is; its helpers
are set up all the same. Importing postmortem changes nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
J = TypeVar("J")

# A helper for each this much input: below it, a helper's start costs more than it saves.
HELPER_WORTH_BYTES = 32 * 1024 * 1024

# jemalloc (polars' allocator) gives freed pages back to the OS half a second after a free and the
# next table faults them in again; a postmortem command is short-lived, so it keeps them for reuse
# (figures in bench/README.md). A setting the user made is left alone.
KEEP_FREED_PAGES = "dirty_decay_ms:-1,muzzy_decay_ms:-1"

PARENT_POLL_S = 0.2  # how often a helper checks that the session's process is still there


# --------------------------------------------------------------------------- the session


class Session:
    """This process and `workers` helper processes (default: one, the second core's; none on one
    core; never more than the cores but this one's). A batch of jobs big enough for more (many
    ranks on a many-core host, share) gets more helpers of its own for as long as it lasts.

    helpers_busy: the helpers will have work until the command ends (a PDF to lay out), so this
    process's polars leaves their cores to them rather than competing for them.
    warm_up: "module:function" each helper runs when it starts, so that the imports and set-ups
    its first job needs overlap this process's own (e.g. "postmortem.load:warm_up").
    """

    def __init__(self, workers: int | None = None, *, helpers_busy: bool = False, warm_up: str | None = None) -> None:
        total = cores()
        self.workers = max(0, min(total - 1, 1 if workers is None else workers))
        _set_up(threads=max(1, total - self.workers) if helpers_busy and self.workers else None)
        self._pool: ProcessPoolExecutor | None = None
        self._folder: tempfile.TemporaryDirectory | None = None
        if not self.workers:
            return
        context = multiprocessing.get_context("spawn")
        self._claims = Claims(context)
        with contextlib.suppress(OSError):  # no temp folder: tables travel through the pipe
            self._folder = tempfile.TemporaryDirectory(prefix="postmortem-parts-")
        folder = self._folder.name if self._folder else ""
        try:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_helper,
                                             initargs=(self._claims, folder, os.getpid()))
            for _ in range(self.workers):  # each submit starts one process now: their start overlaps what follows
                self._pool.submit(_call_named, warm_up) if warm_up else self._pool.submit(int)
        except BaseException:  # a helper that cannot start (no memory, interrupted): nothing is left behind
            self.close()
            raise

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """fn(*args) in a helper (after the work it was given before); without helpers, here,
        when its result is first asked for (work done only to get ahead is then never done)."""
        if self._pool is not None:
            return self._pool.submit(fn, *args)
        return _Later(fn, args)

    def share(self, fn: Callable[[J], T], jobs: Sequence[J], sizes: Sequence[int] | None = None) -> list[T]:
        """fn(job) for every job, in job order, by this process and the helpers: the helpers take
        jobs from the front, this process from the back, until they meet (Claims). Working here
        too saves half of the results' trips back. A helper busy with other work (a baseline)
        takes none and is not waited for: then this process does them all. fn and the jobs must
        pickle (module-level functions, plain data).

        sizes: each job's input in bytes: the jobs get a helper per HELPER_WORTH_BYTES, up to one
        per core and per job; more than the session has are started for them (without: the
        session's helpers)."""
        wanted = self.workers if sizes is None else helpers_worth(len(jobs), sum(sizes))
        if wanted == 0 or self._pool is None or len(jobs) < 2:
            return [fn(job) for job in jobs]
        if wanted > self.workers:  # a many-core host: the session's helpers are left to their other work
            with Session(workers=wanted) as more:
                return more.share(fn, jobs)
        batch = self._claims.start(len(jobs))
        futures = [self._pool.submit(_if_claimed, batch, i, fn, job) for i, job in enumerate(jobs)]
        results: list[Any] = [None] * len(jobs)
        while (i := self._claims.from_back(batch)) is not None:
            futures[i].cancel()  # not sent to a helper yet, usually: it never needs to be
            results[i] = fn(jobs[i])
        # Only the helpers' jobs are waited for: a job of ours that reached a helper returns
        # unclaimed whenever that helper gets to it, which may be after other work it was given.
        theirs = self._claims.workers_part(batch)
        for future in futures[theirs:]:
            future.cancel()
        for i in range(theirs):
            results[i] = futures[i].result()
        return results

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Later(Future):
    """fn(*args), run in this process when its result or exception is first asked for."""

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        super().__init__()
        self._call: tuple[Callable[..., Any], tuple] | None = (fn, args)

    def _run(self) -> None:
        if self._call is not None and self.set_running_or_notify_cancel():
            fn, args = self._call
            try:
                self.set_result(fn(*args))
            except BaseException as exc:  # raised where it is asked for, as from a helper
                self.set_exception(exc)
        self._call = None

    def result(self, timeout: float | None = None) -> Any:
        self._run()
        return super().result(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self._run()
        return super().exception(timeout)


def helpers_worth(jobs: int, total_bytes: int) -> int:
    """Helper processes worth doing `jobs` jobs of `total_bytes` of input with: one per
    HELPER_WORTH_BYTES, one per job but this process's, one per core but this one's."""
    by_size = total_bytes // HELPER_WORTH_BYTES if HELPER_WORTH_BYTES else jobs
    return max(0, min(cores() - 1, jobs - 1, by_size))


def _set_up(threads: int | None) -> None:
    """This process, before polars is imported: keep freed pages; `threads` polars threads (None:
    polars' default, a thread per core). Settings the user made are left alone."""
    if "polars" in sys.modules:
        return
    os.environ.setdefault("_RJEM_MALLOC_CONF", KEEP_FREED_PAGES)
    if threads is not None:
        os.environ.setdefault("POLARS_MAX_THREADS", str(threads))


# Set in a helper when it starts (it belongs to one session): the claims and the folder it shares.
_helper: tuple[Claims, str] | None = None


def _start_helper(claims: Claims, folder: str, parent: int) -> None:
    """In a helper, before its first task: one polars thread, freed pages kept, and the tables it
    sends back written to `folder` (shared objects reach a process only when it starts); it ends
    with `parent`, the session's process."""
    global _helper
    _end_with(parent)
    _helper = (claims, folder)
    # A helper is postmortem's own short-lived process whose jobs are many and alike: whatever
    # this process's settings (inherited), one thread and freed pages kept (jemalloc takes the
    # last value of a key; polars puts its defaults first).
    os.environ["POLARS_MAX_THREADS"] = "1"
    inherited = os.environ.get("_RJEM_MALLOC_CONF")
    os.environ["_RJEM_MALLOC_CONF"] = f"{inherited},{KEEP_FREED_PAGES}" if inherited else KEEP_FREED_PAGES
    import polars as pl
    from multiprocessing.reduction import ForkingPickler  # what the pool pickles results with

    ForkingPickler.register(pl.DataFrame, _send_frame)


def _end_with(parent: int) -> None:
    """End this helper as soon as `parent` is gone. A session's process that is killed (SIGKILL,
    an OOM kill) never shuts its pool down, and a spawned helper holds both ends of its own task
    queue, so it would wait on it forever, an idle process (and its resource tracker) per helper."""
    if os.getppid() != parent:
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="postmortem-parent-watch", daemon=True).start()


def _call_named(name: str) -> None:
    module, function = name.split(":")
    getattr(importlib.import_module(module), function)()


class _Unclaimed:
    """A job a helper did not do: this process had taken it."""


def _if_claimed(batch: int, i: int, fn: Callable[[J], T], job: J) -> T | type[_Unclaimed]:
    assert _helper is not None
    return fn(job) if _helper[0].from_front(batch, i) else _Unclaimed


class Claims:
    """Who does which job of a batch that this process and the helpers may each do: helpers claim
    jobs from the front, in the order they were sent, this process from the back, until the two
    meet. One batch at a time per session; a job of an older batch is never claimed."""

    def __init__(self, context) -> None:
        # batch id; front: one past the highest job a helper claimed; back: the lowest job this
        # process claimed (the batch's size before it claimed any)
        self._state = context.Array("q", 3)

    def start(self, count: int) -> int:
        """Here: a new batch of `count` jobs, none claimed; its id."""
        with self._state.get_lock():
            self._state[0] += 1
            self._state[1], self._state[2] = 0, count
            return self._state[0]

    def from_front(self, batch: int, job: int) -> bool:
        """In a helper: whether it does `job` of `batch` (this process did not take it yet)."""
        with self._state.get_lock():
            if self._state[0] != batch or job >= self._state[2]:
                return False
            self._state[1] = max(self._state[1], job + 1)
            return True

    def from_back(self, batch: int) -> int | None:
        """Here: the next job this process does, from the back; None once the helpers have claimed
        every job before it. Jobs below that are the helpers' (claimed, or about to be)."""
        with self._state.get_lock():
            if self._state[0] != batch or self._state[2] <= self._state[1]:
                return None
            self._state[2] -= 1
            return self._state[2]

    def workers_part(self, batch: int) -> int:
        """Here, once from_back gave None: the jobs below this are the helpers'."""
        with self._state.get_lock():
            return self._state[2] if self._state[0] == batch else 0


# --------------------------------------------------------------------------- cores


def cores() -> int:
    """The cores this process can keep busy: those it may run on (taskset, a cpuset), capped by
    the CPU quota of its cgroup (a container's --cpus), as polars counts them for its own threads.
    os.cpu_count() counts the host's: in a 2-CPU container on a 96-core host, 95 helpers."""
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


# --------------------------------------------------------------------------- the transport


@dataclass
class PackedTable:
    """A table on its way back from a helper: written as Arrow IPC files into the session's folder,
    so only the files' names travel through the pipe. A pipe carries a few MB per table no faster
    than the receiving process reads it, and that process is busy. Where a file cannot be written
    (a full disk), the table itself travels.

    The receiver maps the file of the plain columns rather than reading it: they are used where
    they lie, in the page cache, instead of being copied into new memory. Categorical columns
    travel in a file of their own as the sender's category ids plus its labels (`labels`), because
    ids are per process: the receiver turns them into its own categories and deletes that file
    (mapped, it would stay as long as the plain columns). Arrow dictionaries instead cost the
    sender more than the rest of the table."""

    schema: dict[str, Any]
    path: str | None = None  # the plain columns' file; none for an empty table (most tables of a rank are)
    ids_path: str | None = None  # the categorical columns' ids, if the table has such columns
    labels: dict[str, list[str | None]] = field(default_factory=dict)  # categorical column -> label of each id
    table: _InlineFrame | None = None  # the table itself, when no file could be written


def _send_frame(table) -> tuple:
    """How a helper pickles a DataFrame it sends back (registered with the pool's pickler)."""
    assert _helper is not None
    return _received_frame, (pack(table, _helper[1]),)


def _received_frame(packed: PackedTable):
    return unpack(packed)


def pack(table, folder: str) -> PackedTable:
    """`folder`: where to write the files; "" for none (the table then travels itself)."""
    import polars as pl

    schema = dict(table.schema)
    if table.is_empty():
        return PackedTable(schema)
    categorical = [column for column, dtype in schema.items() if isinstance(dtype, pl.Categorical)]
    paths = [_ipc_file(table.drop(categorical), folder)]
    if categorical:
        paths.append(_ipc_file(table.select(pl.col(categorical).to_physical()), folder))
    if not all(paths):
        _delete([p for p in paths if p])
        return PackedTable(schema, table=_InlineFrame(table))
    labels = {column: _labels(table[column]) for column in categorical}
    return PackedTable(schema, paths[0], paths[1] if categorical else None, labels)


def unpack(packed: PackedTable):
    """The table back, its files deleted (a mapped file's pages stay while they are used)."""
    import polars as pl

    from .model import empty

    if packed.table is not None:
        return packed.table.table
    if packed.path is None:
        return empty(packed.schema)
    import pyarrow as pa  # only where helpers send tables: its import takes ~0.1 s
    import pyarrow.ipc

    try:
        table = pl.from_arrow(pyarrow.ipc.open_file(pa.memory_map(packed.path)).read_all())
        if packed.ids_path:
            ids = pl.read_ipc(packed.ids_path)
            # Each id becomes the label it stands for in the sender, as a category of this process.
            table = table.with_columns(
                pl.Series(labels, dtype=packed.schema[column]).gather(ids[column]).alias(column)
                for column, labels in packed.labels.items()
            )
        return table.select(list(packed.schema))
    finally:
        _delete([p for p in (packed.path, packed.ids_path) if p])


class _InlineFrame:
    """A DataFrame that travels through the pipe, pickled by polars' own means (a DataFrame itself
    would be pickled by _send_frame again)."""

    def __init__(self, table) -> None:
        self.table = table

    def __reduce__(self):
        return _inline_frame, (self.table.__getstate__(),)


def _inline_frame(state):
    import polars as pl

    table = pl.DataFrame.__new__(pl.DataFrame)
    table.__setstate__(state)
    return _InlineFrame(table)


def _labels(column) -> list[str | None]:
    """The label of each category id up to the highest one `column` uses (from its dtype's
    categories, which may hold many more)."""
    highest = column.to_physical().max()
    if highest is None:
        return []
    return column.dtype.categories.to_series().head(int(highest) + 1).to_list()


def _ipc_file(table, folder: str) -> str | None:
    """The path of a new Arrow IPC file in `folder` holding `table`; None when none can be written."""
    if not folder:
        return None
    path = None
    try:
        fd, path = tempfile.mkstemp(suffix=".arrow", dir=folder)
        with os.fdopen(fd, "wb") as f:
            table.write_ipc(f, compression="uncompressed")
        return path
    except OSError:
        if path is not None:
            _delete([path])
        return None


def _delete(paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)
