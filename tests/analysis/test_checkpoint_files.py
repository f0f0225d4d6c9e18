"""Every checkpoint file read is listed (issue 23, item 4): metrics.json ``checkpoints`` holds the
saves (step known, in the checkpoint tax) and the other checkpoints (test and golden files made
by MindSpore's save_checkpoint, with no step), each with its size and parameter count; the report
says which are saves.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import jsonschema

from postmortem.analysis import AnalysisOptions, analyze
from postmortem.load import load_run
from postmortem.report.metrics_json import load_schema, to_metrics
from postmortem.report.viewmodel import build_view

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "tests" / "fixtures" / "checkpoints" / "plain"  # real MindSpore save_checkpoint files (make_fixtures.py)


def test_checkpoints_without_a_step_are_listed_beside_the_saves(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(ROOT / "samples" / "gpt-tiny-base", run_dir)
    (run_dir / "golden").mkdir()
    shutil.copy(PLAIN / "net.ckpt", run_dir / "golden" / "net.ckpt")
    run = load_run(run_dir)
    a = analyze(run, None, AnalysisOptions(run_id="r", experiment="e"))
    m = to_metrics(a)
    schema = load_schema()
    assert m["schema_version"] == schema["properties"]["schema_version"]["const"]
    assert tuple(map(int, m["schema_version"].split("."))) >= (1, 3)  # (the version that lists every checkpoint)
    jsonschema.Draft202012Validator(schema["properties"]["checkpoints"]).validate(m["checkpoints"])
    by_path = {c["path"]: c for c in m["checkpoints"]}
    inspected = run.tables["checkpoints"]
    assert set(by_path) == set(inspected["path"].to_list())  # every file read, no more, no less
    golden = by_path["golden/net.ckpt"]
    assert golden["step"] is None and golden["save"] is False and golden["save_s"] is None
    assert golden["bytes"] == (PLAIN / "net.ckpt").stat().st_size
    assert golden["params"] == inspected.filter(inspected["path"] == "golden/net.ckpt")["model_params"].item() > 0
    saves = [c for c in m["checkpoints"] if c["save"]]
    assert [c["step"] for c in saves] == [s.step for s in a.phases.checkpoint_saves]
    assert all(c["save_s"] is not None for c in saves) and m["checkpoint_tax"] is not None
    assert m["checkpoints"][-1]["path"] == "golden/net.ckpt"  # unknown steps last
    view = build_view(a, generated_at=datetime(2026, 1, 1, tzinfo=timezone.utc), version="test")
    section = next(s for s in view.sections if s.id == "checkpoints")
    tables = [b for b in section.blocks if getattr(b, "id", None) == "checkpoint-files"]
    assert len(tables) == 1 and any("golden/net.ckpt" in c.text for row in tables[0].rows for c in row)
