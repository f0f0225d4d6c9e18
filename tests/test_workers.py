"""Worker pools: how the parent and the workers split a batch (Claims), the parent's polars
threads next to a build's helper (leave_cores_to), and how many cores there are to use (cores)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = """
import os, sys
from postmortem import workers
if sys.argv[1] == "polars-first":
    import polars
with workers.Pool(1) as pool:
    workers.leave_cores_to(pool)
    import polars
    print(os.environ.get("POLARS_MAX_THREADS"), polars.thread_pool_size())
"""


def _threads(case: str, **env: str) -> list[str]:
    environ = {k: v for k, v in os.environ.items() if k != "POLARS_MAX_THREADS"} | env
    out = subprocess.run([sys.executable, "-c", _SCRIPT, case], env=environ, capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_this_process_leaves_the_helpers_core_to_it():
    cores = len(os.sched_getaffinity(0))
    assert _threads("plain") == [str(cores - 1), str(cores - 1)]


def test_a_setting_made_before_is_left_alone():
    assert _threads("plain", POLARS_MAX_THREADS="3") == ["3", "3"]  # the user's
    setting, threads = _threads("polars-first")  # too late: polars read its setting on import
    assert setting == "None" and int(threads) == len(os.sched_getaffinity(0))


def test_claims_split_a_batch_between_the_workers_front_and_the_parents_back():
    from postmortem.workers import Claims

    claims = Claims(multiprocessing.get_context("spawn"))
    old = claims.start(3)
    batch = claims.start(5)
    assert not claims.from_front(old, 0)  # a task of an earlier batch is never done
    assert claims.from_front(batch, 0) and claims.from_front(batch, 1)
    assert [claims.from_back(batch), claims.from_back(batch), claims.from_back(batch)] == [4, 3, 2]
    assert claims.from_back(batch) is None and claims.workers_part(batch) == 2
    assert not claims.from_front(batch, 2)  # the parent has it
    batch = claims.start(2)
    assert claims.from_back(batch) == 1 and claims.from_front(batch, 0)
    assert claims.from_back(batch) is None and not claims.from_front(batch, 1)


_CORES = "from postmortem import workers; import polars; print(workers.cores(), polars.thread_pool_size())"


def _cores_and_polars_threads(before=None) -> list[int]:
    """workers.cores() and polars' own count of the cores (its thread pool with no setting), in a
    new process that runs `before` first."""
    environ = {k: v for k, v in os.environ.items() if k != "POLARS_MAX_THREADS"}
    out = subprocess.run([sys.executable, "-c", _CORES], env=environ, preexec_fn=before, capture_output=True, text=True, check=True)
    return [int(n) for n in out.stdout.split()]


def test_cores_counts_what_polars_counts():
    cores, polars_threads = _cores_and_polars_threads()
    assert cores == polars_threads >= 1


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_cores_are_the_ones_this_process_may_run_on():
    """Under taskset (or a cpuset), not the machine's."""
    one = min(os.sched_getaffinity(0))
    assert _cores_and_polars_threads(lambda: os.sched_setaffinity(0, {one})) == [1, 1]


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
    """A container's --cpus: 1.5 CPUs of quota is one core's worth of workers, as polars counts it."""
    join = cgroup_with_one_cpu / "cgroup.procs"
    assert _cores_and_polars_threads(lambda: join.write_text(str(os.getpid()))) == [1, 1]


def test_cpu_quota_reads_the_tightest_quota_up_the_hierarchy(tmp_path):
    from postmortem.workers import cpu_quota

    def hierarchy(cgroups: str, files: dict[str, str]) -> int | None:
        for rel, text in files.items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
        (tmp_path / "cgroup").write_text(cgroups)
        return cpu_quota(str(tmp_path / "cgroup"), str(tmp_path / "fs"))

    # v2: the parent's 2.5 CPUs bind a child with none (whole CPUs, rounded down)
    assert hierarchy("0::/jobs/build\n", {"fs/jobs/cpu.max": "250000 100000\n", "fs/jobs/build/cpu.max": "max 100000\n"}) == 2
    assert hierarchy("0::/jobs/build\n", {"fs/jobs/build/cpu.max": "50000 100000\n"}) == 1  # half a CPU: still one
    # v1, as a container sees it: its own cgroup is the root of cpu,cpuacct, the path is the host's
    assert hierarchy("12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
                     {"fs/cpu,cpuacct/cpu.cfs_quota_us": "400000\n", "fs/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}) == 4
    assert hierarchy("4:cpu,cpuacct:/\n", {"fs/cpu,cpuacct/cpu.cfs_quota_us": "-1\n"}) is None  # no quota
    assert cpu_quota(str(tmp_path / "missing"), str(tmp_path)) is None  # no /proc/self/cgroup: not Linux
