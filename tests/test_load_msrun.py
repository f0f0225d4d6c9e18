"""MindFormers' msrun layout, logs only: output/msrun_log/worker_N.log (the worker's stdout) and
output/log/rank_N/info.log (its logger's file) hold the same step lines. One launch, no restart,
no resume note.

The worker logs are real (tests/fixtures/conformance: MindSpore docs' logs); each info.log is made
from its worker log as MindFormers' file handler writes it: the logger's lines only (a traceback's
exception line, printed to stderr, is in worker_N.log alone).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from postmortem.load import load_run

CONF = Path(__file__).resolve().parent / "fixtures" / "conformance"
_LOGGER_LINE = re.compile(r"(?:^|\s)- (?:INFO|WARNING|ERROR|DEBUG) - ")  # the logger's format; the docs excerpt has no time


def _layout(tmp_path: Path, worker: Path, ranks: int = 1) -> Path:
    run = tmp_path / "run"
    for rank in range(ranks):
        text = worker.read_text(encoding="utf-8")
        w = run / "output" / "msrun_log" / f"worker_{rank}.log"
        w.parent.mkdir(parents=True, exist_ok=True)
        w.write_text(text, encoding="utf-8")
        info = run / "output" / "log" / f"rank_{rank}" / "info.log"
        info.parent.mkdir(parents=True, exist_ok=True)
        info.write_text("".join(line for line in text.splitlines(keepends=True) if _LOGGER_LINE.search(line)), encoding="utf-8")
    return run


@pytest.mark.parametrize("worker", [CONF / "mf-docs-llama2-13b-log" / "msrun_log" / "worker_0.log",
                                    CONF / "mf-docs-skipdata-log" / "worker_0.log"], ids=lambda p: p.parent.name)
def test_worker_log_and_info_log_are_one_launch(tmp_path: Path, worker: Path):
    run = load_run(_layout(tmp_path, worker, ranks=2))
    slugs = [d.slug for d in run.diagnostics]
    assert len(run.segments) == 1 and not run.segments[0].discarded
    assert "run-resumed" not in slugs and "step-counter-restarted" not in slugs
    assert not (run.tables["events"]["kind"] == "restart").any()
    # the worker's steps, once per rank, and the copy said
    loss = run.tables["scalars"].filter(pl.col("tag") == "loss")
    assert loss.group_by("rank").len()["len"].to_list() == [loss.filter(pl.col("rank") == 0).height] * 2
    assert loss.filter(pl.col("rank") == 0)["step"].is_unique().all()
    dup = [d for d in run.diagnostics if d.slug == "log-duplicate-source"]
    assert len(dup) == 2 and all({d.path, d.params["other"]} == {f"output/msrun_log/worker_{r}.log", f"output/log/rank_{r}/info.log"}
                                 for r, d in enumerate(sorted(dup, key=lambda d: d.path[-5:])))


def test_two_launches_in_two_files_stay_two(tmp_path: Path):
    """Two files whose step lines differ (a real resume writes new times) are not one source."""
    text = (CONF / "mf-docs-llama2-13b-log" / "msrun_log" / "worker_0.log").read_text(encoding="utf-8")
    run_dir = tmp_path / "run"
    (run_dir / "a").mkdir(parents=True)
    (run_dir / "a" / "train_1.log").write_text(text, encoding="utf-8")
    later = text.replace("2025-04-07 15:3", "2025-04-08 09:3")  # the same steps, a day later
    (run_dir / "a" / "train_2.log").write_text(later, encoding="utf-8")
    run = load_run(run_dir)
    assert not any(d.slug == "log-duplicate-source" for d in run.diagnostics)
    assert len(run.segments) == 2
