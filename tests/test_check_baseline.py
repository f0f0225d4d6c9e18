"""`postmortem check CONFIG --baseline RUN|prev`: the config's settings against a real run's, grouped
as the report's identity groups, with what each change can and cannot move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postmortem.analysis.compare import settings_diff
from postmortem.cli import main
from postmortem.load import load_run
from postmortem.precheck import check_config

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "samples" / "gpt-tiny-base"


@pytest.fixture
def changed_yaml(tmp_path) -> Path:
    """The baseline sample's own config with the learning rate, the batch and data parallelism changed."""
    text = (BASE / "config.yaml").read_text(encoding="utf-8")
    for old, new in (("learning_rate: 0.003", "learning_rate: 0.006"), ("batch_size: 8", "batch_size: 16"),
                     ("data_parallel: 1", "data_parallel: 2")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "changed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _json(capsys, args) -> tuple[int, dict]:
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


def test_the_diff_groups_each_change_with_what_it_can_move(changed_yaml, capsys):
    code, doc = _json(capsys, ["check", str(changed_yaml), "--baseline", str(BASE), "--devices", "2", "--json"])
    assert code == doc["exit_code"] == 0
    changes = {c["key"]: c for c in doc["baseline"]["changes"]}
    lr = changes["learning_rate"]
    assert (lr["group"], lr["baseline"], lr["current"]) == ("optimizer", 0.003, 0.006)
    assert lr["can_move"] == ["convergence", "stability"] and lr["cannot_move"] == ["throughput", "efficiency"]
    assert changes["data_parallel"]["group"] == "parallel" and changes["data_parallel"]["cannot_move"] == ["convergence", "stability"]
    assert changes["batch_size"]["cannot_move"] == []
    groups = [c["group"] for c in doc["baseline"]["changes"]]
    assert groups == sorted(groups, key=["optimizer", "parallel", "batch", "precision", "model", "data", "framework", "other",
                                         "run"].index)  # what most often explains a change first
    env = {e["key"]: e for e in doc["baseline"]["environment"]}
    assert env["device_num"]["baseline"] == 1 and env["device_num"]["current"] == 2 and env["device_num"]["differs"] is True
    assert env["device"]["differs"] is False  # CPU in both


def test_the_changes_are_the_reports_own_diff(changed_yaml, capsys):
    _, doc = _json(capsys, ["check", str(changed_yaml), "--baseline", str(BASE), "--json"])
    report = settings_diff(check_config(changed_yaml).settings, load_run(str(BASE)).settings)
    keys = {c.key for c in (*report.changed, *report.added)}
    assert {c["key"] for c in doc["baseline"]["changes"] if c["change"] != "removed"} <= keys
    assert {"learning_rate", "batch_size", "data_parallel"} <= {c["key"] for c in doc["baseline"]["changes"]}


def test_prev_is_the_experiments_latest_archived_run(changed_yaml, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", str(BASE), "--out", str(out), "--experiment", "tiny", "--run-id", "good", "--format", "json"]) == 0
    capsys.readouterr()
    code, doc = _json(capsys, ["check", str(changed_yaml), "--baseline", "prev", "--archive", str(out), "--experiment", "tiny",
                               "--json"])
    assert code == 0 and doc["baseline"]["id"] == "good"
    _, by_id = _json(capsys, ["check", str(changed_yaml), "--baseline", "good", "--archive", str(out), "--json"])
    assert by_id["baseline"]["changes"] == doc["baseline"]["changes"]  # an archived run reads as its folder did
    assert main(["check", str(changed_yaml), "--baseline", "prev", "--archive", str(out), "--experiment", "other"]) == 2


def test_the_terminal_names_groups_and_moves_in_both_languages(changed_yaml, capsys):
    assert main(["check", str(changed_yaml), "--baseline", str(BASE)]) == 0
    text = capsys.readouterr().out
    assert "Against the baseline gpt-tiny-base" in text and "Optimizer and learning-rate schedule" in text
    assert "0.003 → 0.006" in text and "cannot move: Throughput, Efficiency" in text
    assert main(["check", str(changed_yaml), "--baseline", str(BASE), "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "与基线 gpt-tiny-base 相比" in zh and "优化器与学习率策略" in zh and "不会影响：吞吐、算力利用" in zh
