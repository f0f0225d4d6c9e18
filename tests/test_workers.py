"""The parent process's polars threads next to a build's helper (workers.leave_cores_to)."""

from __future__ import annotations

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
