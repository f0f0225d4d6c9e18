"""parallel.py, the one seam for concurrency: each process's set-up (polars threads, freed pages),
how this process and the helpers split a batch (Claims, Session.share), the tables' trip back
(pack / unpack), a session without helpers, and how many cores there are to use (cores)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from postmortem import parallel

TWO_CORES = pytest.mark.skipif(parallel.cores() < 2, reason="a helper needs a second core")


def _in_new_process(script: str, *args: str, preexec=None, **env: str) -> list[str]:
    """The words `script` prints, run in a new interpreter without this process's polars settings."""
    environ = {k: v for k, v in os.environ.items() if k not in ("POLARS_MAX_THREADS", "_RJEM_MALLOC_CONF")} | env
    out = subprocess.run([sys.executable, "-c", script, *args], env=environ, preexec_fn=preexec, capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


# --------------------------------------------------------------------------- set-up

_SESSION = """
import os, sys
from postmortem import parallel
if sys.argv[1] == "polars-first":
    import polars
with parallel.Session(helpers_busy=sys.argv[1] != "not-busy") as session:
    import polars
    # polars puts its own allocator settings before the one it finds: the last of each wins
    print(os.environ.get("POLARS_MAX_THREADS"), polars.thread_pool_size(),
          os.environ.get("_RJEM_MALLOC_CONF", "").endswith(parallel.KEEP_FREED_PAGES))
"""


def test_importing_postmortem_changes_nothing():
    """No setting of its own: the environment as polars alone leaves it (polars sets its allocator's default)."""
    script = "import os, {}; print(os.environ.get('POLARS_MAX_THREADS'), os.environ.get('_RJEM_MALLOC_CONF'))"
    alone = _in_new_process(script.format("polars"))
    assert _in_new_process(script.format("postmortem, postmortem.cli, postmortem.load, postmortem.pipeline")) == alone
    assert alone[1] != parallel.KEEP_FREED_PAGES


@TWO_CORES
def test_this_process_leaves_the_busy_helpers_core_to_it():
    cores = parallel.cores()
    assert _in_new_process(_SESSION, "busy") == [str(cores - 1), str(cores - 1), "True"]
    assert _in_new_process(_SESSION, "not-busy") == ["None", str(cores), "True"]


def test_settings_made_before_are_left_alone():
    assert _in_new_process(_SESSION, "busy", POLARS_MAX_THREADS="3", _RJEM_MALLOC_CONF="narenas:1") == ["3", "3", "False"]
    # too late: polars read its settings on import
    assert _in_new_process(_SESSION, "polars-first") == ["None", str(parallel.cores()), "False"]


def _helper_settings(_: object = None) -> tuple[int, bool, bool]:
    import polars

    pages = os.environ.get("_RJEM_MALLOC_CONF", "").endswith(parallel.KEEP_FREED_PAGES)
    return polars.thread_pool_size(), pages, multiprocessing.parent_process() is not None


@TWO_CORES
def test_helpers_run_single_threaded_polars_that_keeps_freed_pages():
    """Each helper keeps one core busy: polars must not start a thread per core in every helper."""
    with parallel.Session() as session:
        assert session.submit(_helper_settings).result() == (1, True, True)


# --------------------------------------------------------------------------- sharing a batch


def test_claims_split_a_batch_between_the_helpers_front_and_this_processs_back():
    claims = parallel.Claims(multiprocessing.get_context("spawn"))
    old = claims.start(3)
    batch = claims.start(5)
    assert not claims.from_front(old, 0)  # a job of an earlier batch is never done
    assert claims.from_front(batch, 0) and claims.from_front(batch, 1)
    assert [claims.from_back(batch), claims.from_back(batch), claims.from_back(batch)] == [4, 3, 2]
    assert claims.from_back(batch) is None and claims.workers_part(batch) == 2
    assert not claims.from_front(batch, 2)  # this process has it
    batch = claims.start(2)
    assert claims.from_back(batch) == 1 and claims.from_front(batch, 0)
    assert claims.from_back(batch) is None and not claims.from_front(batch, 1)


_MARK = "POSTMORTEM_TEST_HELPER_MARK"
_waited: list[bool] = []


def _square_once_a_helper_has(n: int) -> tuple[int, bool]:
    """n², and whether a helper made it. A helper leaves a mark; this process waits for it before
    its own first job (a hang guard of a minute, once), so that helpers take jobs however slowly
    the loaded machine starts them: the test says which process may do what, never how fast."""
    helper = multiprocessing.parent_process() is not None
    mark = Path(os.environ[_MARK])
    if helper:
        mark.touch()
    elif not _waited:
        _waited.append(True)
        for _ in range(3000):
            if mark.exists():
                break
            time.sleep(0.02)
    return n * n, helper


def _square_slowly_here(n: int) -> tuple[int, bool]:
    """n², and whether a helper made it; slow in this process, so that a helper takes jobs too."""
    helper = multiprocessing.parent_process() is not None
    if not helper:
        time.sleep(0.3)
    return n * n, helper


@TWO_CORES
def test_share_gives_every_result_in_job_order_from_both_processes(tmp_path, monkeypatch):
    monkeypatch.setenv(_MARK, str(tmp_path / "mark"))
    _waited.clear()
    with parallel.Session(warm_up="postmortem.load:warm_up") as session:
        results = session.share(_square_once_a_helper_has, list(range(8)))
    assert [r for r, _ in results] == [n * n for n in range(8)]
    by_helper = [helper for _, helper in results]
    assert any(by_helper) and not all(by_helper)
    assert by_helper == sorted(by_helper, reverse=True)  # helpers from the front, this process from the back


def _wait_for(path: str) -> str | None:
    """In a helper: busy until `path` exists (or a minute passed, so that a wrong wait fails, not hangs)."""
    for _ in range(3000):
        if Path(path).exists():
            return path
        time.sleep(0.02)
    return None


@TWO_CORES
def test_a_busy_helper_takes_no_job_and_is_not_waited_for(tmp_path):
    """A helper busy with other work (a build's baseline): this process does every job and
    returns without waiting for the helper's queue."""
    release = tmp_path / "release"
    with parallel.Session() as session:
        busy = session.submit(_wait_for, str(release))
        results = session.share(_square_slowly_here, list(range(3)))
        assert not busy.done()
        release.touch()
        assert busy.result() == str(release)
    assert results == [(0, False), (1, False), (4, False)]


@TWO_CORES
def test_jobs_worth_more_helpers_than_the_session_has_get_their_own(tmp_path, monkeypatch):
    """A many-core host: a big batch gets helpers started for it, the session's helper is left to
    its other work (here: busy)."""
    monkeypatch.setattr(parallel, "cores", lambda: 4)
    monkeypatch.setenv(_MARK, str(tmp_path / "mark"))
    _waited.clear()
    release = tmp_path / "release"
    with parallel.Session() as session:
        busy = session.submit(_wait_for, str(release))
        results = session.share(_square_once_a_helper_has, list(range(6)), sizes=[parallel.HELPER_WORTH_BYTES] * 6)
        assert not busy.done() and any(helper for _, helper in results)
        release.touch()
    assert [r for r, _ in results] == [n * n for n in range(6)]


def test_helpers_worth_grow_with_the_input_up_to_the_cores(monkeypatch):
    step = parallel.HELPER_WORTH_BYTES
    monkeypatch.setattr(parallel, "cores", lambda: 8)
    assert parallel.helpers_worth(jobs=64, total_bytes=step - 1) == 0  # too little to pay for a helper's start
    assert parallel.helpers_worth(jobs=64, total_bytes=3 * step) == 3
    assert parallel.helpers_worth(jobs=64, total_bytes=100 * step) == 7
    assert parallel.helpers_worth(jobs=3, total_bytes=100 * step) == 2  # a job per process at most
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert parallel.helpers_worth(jobs=64, total_bytes=100 * step) == 0


def _fails() -> None:
    raise ValueError("from the job")


def test_a_session_without_helpers_does_the_work_here_when_asked_for(monkeypatch):
    """One core: nothing is started; work is done in this process, when its result is asked for
    (work submitted only to get ahead is never done), and a job's exception comes with its result."""
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    done: list[int] = []
    with parallel.Session() as session:
        assert session.workers == 0
        later = session.submit(done.append, 1)
        session.submit(done.append, 2)  # never asked for
        assert done == [] and later.result() is None and done == [1]
        assert session.share(_square_slowly_here, [2, 3]) == [(4, False), (9, False)]
        failing = session.submit(_fails)
        with pytest.raises(ValueError, match="from the job"):
            failing.result()
    assert done == [1]


# --------------------------------------------------------------------------- the tables' trip back


def _tables() -> dict[str, pl.DataFrame]:
    return {
        "mixed": pl.DataFrame({
            "s": ["b", "b", None, "a", "b"], "n": [1, 2, None, 4, 5], "f": [1.0, None, float("nan"), float("inf"), 2.0],
            "l": [[1], [], None, [2, 3], [4]], "r": pl.Series([0, 1, 2, 3, 4], dtype=pl.Int32),
            "c": pl.Series(["x", None, "y", "x", "x"], dtype=pl.Categorical()),
            "b": [True, None, False, True, True], "u": pl.Series([1, 2, 3, 4, 2**32 - 1], dtype=pl.UInt32),
            "z": [0.0, -0.0, 1e-320, -1e308, 5.0], "t": ["\u65e5\u5fd7", "", "a\x00b", "x" * 100, "<&>"],
        }),
        "chunked": pl.concat([pl.DataFrame({"v": [1.5, 2.5], "k": ["a", "b"]}),
                              pl.DataFrame({"v": [None, 4.5], "k": ["b", None]})], rechunk=False),
        "empty": pl.DataFrame(schema={"s": pl.String, "n": pl.Int64}),
        "all_null": pl.DataFrame({"s": [None, None], "c": [None, None]}, schema={"s": pl.String, "c": pl.Categorical()}),
        "only_categorical": pl.DataFrame({"c": pl.Series(["a", None, "b"], dtype=pl.Categorical())}),
    }


def test_tables_survive_the_trip(tmp_path):
    """Tables travel as Arrow IPC files and come back equal, dtypes too; the files are gone after.
    Where no file can be written (a full disk, no folder), the table travels itself."""
    for name, table in _tables().items():
        back = parallel.unpack(parallel.pack(table, str(tmp_path)))
        assert back.schema == table.schema and back.equals(table), name
        if name == "mixed":
            assert str(back["z"][1]) == "-0.0"  # equals() does not tell -0.0 from 0.0
        for folder in (str(tmp_path / "missing"), ""):
            inline = parallel.pack(table, folder)
            assert inline.path is None
            back = parallel.unpack(pickle.loads(pickle.dumps(inline)))
            assert back.schema == table.schema and back.equals(table), name
    assert not list(tmp_path.iterdir())


def _tables_made_in_a_helper() -> dict[str, pl.DataFrame]:
    """In a helper: the tables, made by a process whose category ids differ from the parent's."""
    pl.Series([f"only-here-{i}" for i in range(50)] + ["zeta", "alpha"], dtype=pl.Categorical())  # ids the parent lacks
    return {**_tables(), "tag": pl.DataFrame({
        "tag": pl.Series(["alpha", "zeta", None, "alpha"], dtype=pl.Categorical()), "v": [1.0, 2.0, 3.0, None],
    })}


@TWO_CORES
def test_tables_a_helper_sends_back_come_as_files_with_this_processs_categories(tmp_path, monkeypatch):
    """Whatever a helper returns, its tables travel through the session's folder (not the pipe),
    and category ids, which are per process, come back as this process's categories."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    received = []
    monkeypatch.setattr(parallel, "unpack", lambda packed, unpack=parallel.unpack: received.append(packed) or unpack(packed))
    pl.Series(["zeta", "beta", "alpha"], dtype=pl.Categorical())  # this process: other ids for the same labels
    with parallel.Session() as session:
        back = session.submit(_tables_made_in_a_helper).result()
        assert [p.path is not None for p in received] == [t.height > 0 for t in back.values()]
        folders = list(tmp_path.glob("postmortem-parts-*"))
        assert len(folders) == 1 and not list(folders[0].iterdir())  # each file deleted once read
    for name, table in _tables_made_in_a_helper().items():
        assert back[name].schema == table.schema and back[name].equals(table), name
    assert back["tag"]["tag"].to_list() == ["alpha", "zeta", None, "alpha"]
    assert not list(tmp_path.glob("postmortem-parts-*"))  # the session's folder is gone


# --------------------------------------------------------------------------- cores

_CORES = "from postmortem import parallel; import polars; print(parallel.cores(), polars.thread_pool_size())"


def test_cores_counts_what_polars_counts():
    cores, polars_threads = map(int, _in_new_process(_CORES))
    assert cores == polars_threads >= 1


@TWO_CORES
def test_cores_are_the_ones_this_process_may_run_on():
    """Under taskset (or a cpuset), not the machine's."""
    one = min(os.sched_getaffinity(0))
    assert _in_new_process(_CORES, preexec=lambda: os.sched_setaffinity(0, {one})) == ["1", "1"]


@pytest.fixture
def cgroup_with_one_cpu():
    """A real cgroup whose CFS quota is 1.5 CPUs (v1 cpu controller or v2 cpu.max); skipped where
    this process may not make one (not root, cgroupfs read-only)."""
    name = f"postmortem-test-{os.getpid()}"
    for folder, settings in (
        (Path("/sys/fs/cgroup/cpu") / name, {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "150000"}),
        (Path("/sys/fs/cgroup") / name, {"cpu.max": "150000 100000"}),
    ):
        try:
            folder.mkdir()
        except OSError:
            continue
        try:
            for file, value in settings.items():
                (folder / file).write_text(value)
        except OSError:
            folder.rmdir()
            continue
        yield folder
        folder.rmdir()
        return
    pytest.skip("no cgroup with a CPU quota can be made here")


def test_cores_are_capped_by_the_cgroup_cpu_quota(cgroup_with_one_cpu):
    """A container's --cpus: 1.5 CPUs of quota is one core's worth of helpers, as polars counts it."""
    join = cgroup_with_one_cpu / "cgroup.procs"
    assert _in_new_process(_CORES, preexec=lambda: join.write_text(str(os.getpid()))) == ["1", "1"]


def test_cpu_quota_reads_the_tightest_quota_up_the_hierarchy(tmp_path):
    def hierarchy(cgroups: str, files: dict[str, str]) -> int | None:
        for rel, text in files.items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
        (tmp_path / "cgroup").write_text(cgroups)
        return parallel.cpu_quota(str(tmp_path / "cgroup"), str(tmp_path / "fs"))

    # v2: the parent's 2.5 CPUs bind a child with none (whole CPUs, rounded down)
    assert hierarchy("0::/jobs/build\n", {"fs/jobs/cpu.max": "250000 100000\n", "fs/jobs/build/cpu.max": "max 100000\n"}) == 2
    assert hierarchy("0::/jobs/build\n", {"fs/jobs/build/cpu.max": "50000 100000\n"}) == 1  # half a CPU: still one
    # v1, as a container sees it: its own cgroup is the root of cpu,cpuacct, the path is the host's
    assert hierarchy("12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
                     {"fs/cpu,cpuacct/cpu.cfs_quota_us": "400000\n", "fs/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}) == 4
    assert hierarchy("4:cpu,cpuacct:/\n", {"fs/cpu,cpuacct/cpu.cfs_quota_us": "-1\n"}) is None  # no quota
    assert parallel.cpu_quota(str(tmp_path / "missing"), str(tmp_path)) is None  # no /proc/self/cgroup: not Linux


# --------------------------------------------------------------------------- no helper outlives its session

_KILLED = """
import sys, time
from postmortem import parallel
session = parallel.Session()
session.submit(int).result()  # the helper is up
print(" ".join(str(p) for p in session._pool._processes), flush=True)
time.sleep(600)  # SIGKILLed here: the pool is never shut down
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@TWO_CORES
def test_a_helper_ends_when_its_session_process_is_killed():
    """A CLI killed by SIGKILL (or the OOM killer) never closes its session; its helper, which
    holds both ends of its own task queue, would wait forever. It ends with its parent."""
    from suite_processes import wait_gone

    proc = subprocess.Popen([sys.executable, "-c", _KILLED], stdout=subprocess.PIPE, text=True)
    try:
        helpers = [int(p) for p in proc.stdout.readline().split()]
        assert helpers and all(_alive(p) for p in helpers)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert wait_gone(lambda: [p for p in helpers if _alive(p)]) == []


def _sleep_a_minute() -> None:
    time.sleep(60)


def test_the_suite_finds_a_process_that_outlives_its_test():
    """The leak checks of conftest.py can fail: a helper left running and a marked process that is
    nobody's child are both found (and then ended here, so this test leaves none)."""
    from suite_processes import MARK, children, marked

    helper = multiprocessing.get_context("spawn").Process(target=_sleep_a_minute)
    helper.start()
    try:
        assert helper.pid in children()
    finally:
        helper.terminate()
        helper.join()
    assert helper.pid not in children()
    stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # inherits the mark
    try:
        assert stray.pid in marked(os.environ[MARK])
    finally:
        stray.kill()
        stray.wait()
    assert stray.pid not in marked(os.environ[MARK])
