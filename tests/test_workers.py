"""Worker pools: how the parent and the workers split a batch (Claims), and the parent's polars
threads next to a build's helper (leave_cores_to)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest

_SCRIPT = """
import os, sys
from postmortem import workers
if sys.argv[1] == "polars-first":
    import polars
with workers.pool(1) as pool:
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
