"""postmortem.mindformers registers the callback with MindFormerRegister, so a yaml's
``callbacks:`` entry builds it (MindFormers' build_callback), and it writes into MindFormers'
output folder.

MindFormers pulls its own MindSpore (mindformers 1.9.0 requires mindspore 2.9.0 and a hundred
packages), so it lives in its own environment: MINDFORMERS_PYTHON names that interpreter (e.g.
a `python -m venv --system-site-packages` with `pip install mindformers`); else this Python is used
when it has MindFormers; else the test skips (CI does not install MindFormers).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

from postmortem import records as R
from postmortem.load import load_run

HERE = Path(__file__).resolve().parent


def _python() -> str:
    given = os.environ.get("MINDFORMERS_PYTHON")
    if given:
        return given
    if importlib.util.find_spec("mindformers") is not None:
        import sys

        return sys.executable
    pytest.skip("MindFormers is not installed here (set MINDFORMERS_PYTHON to an interpreter that has it)")


def test_a_yaml_callbacks_entry_builds_the_callback_into_mindformers_output_folder(tmp_path):
    python = _python()
    out = tmp_path / "mf-run"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent.parent), GLOG_v="3")
    done = subprocess.run([python, str(HERE / "train_with_callback.py"), f"{out}:steps=6,yaml={HERE / 'mindformers_callbacks.yaml'}"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)  # MindFormers logs to ./output/log
    assert done.returncode == 0, done.stderr[-3000:]
    files = list((out / R.FOLDER / "rank_0").glob("postmortem-records-*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    header, steps = lines[0], [x for x in lines if R.KIND not in x]
    assert header["read_every"] == 2 and header["versions"]["mindformers"]
    assert [s[R.STEP] for s in steps] == list(range(1, 7))
    assert [s[R.STEP] for s in steps if R.LOSS in s] == [1, 2, 4, 6]  # the first record, then every read_every steps
    assert load_run(out).setting("mindformers_version") == header["versions"]["mindformers"]
