"""Versions bound to results (the article, §1.2): the versions the callback recorded show in the
settings, in the archive index beside each run, and a version change is a setting that can move
throughput in the baseline diff. Built from the real records of tests/fixtures/callback (no
MindSpore here); the changed run is a copy whose header names other versions."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from postmortem import records as R
from postmortem.analysis.identity import effects
from postmortem.analysis.types import Family
from postmortem.cli import main

RUN = Path(__file__).resolve().parent.parent / "fixtures" / "callback" / "run"


def _with_versions(src: Path, dst: Path, **versions: str) -> Path:
    shutil.copytree(src, dst)
    path = next((dst / R.FOLDER / "rank_0").glob("*.jsonl"))
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["versions"].update(versions)
    path.write_text("\n".join([json.dumps(header, separators=(",", ":")), *lines[1:]]) + "\n")
    return dst


def test_a_version_change_is_a_setting_that_can_move_throughput():
    for key in ("framework_version", "mindformers_version", "cann_version"):
        assert Family.THROUGHPUT in effects(key)


def test_versions_show_in_the_settings_the_diff_and_the_index(tmp_path):
    base = _with_versions(RUN, tmp_path / "runs" / "base")
    new = _with_versions(RUN, tmp_path / "runs" / "new", mindspore="2.9.0", cann="8.0.RC2", mindformers="1.9.0")
    out = tmp_path / "out"
    assert main(["build", str(base), "--out", str(out), "--experiment", "v", "--format", "json"]) == 0
    assert main(["build", str(new), "--out", str(out), "--experiment", "v", "--baseline", "prev", "--format", "html,json"]) == 0
    m = json.loads((out / "v" / "new" / "metrics.json").read_text())
    assert m["identity"]["versions"] == {"framework_version": "2.9.0", "mindformers_version": "1.9.0", "cann_version": "8.0.RC2"}
    changed = {s["key"]: s for s in m["baseline"]["settings"]}
    assert changed["framework_version"]["baseline"] == "2.10.0" and changed["framework_version"]["current"] == "2.9.0"
    assert changed["cann_version"]["change"] == "added" and changed["framework_version"]["group"] == "framework"
    report = html.unescape((out / "v" / "new" / "report.html").read_text())
    row = re.search(r"<tr><td[^>]*>framework_version</td>.*?</tr>", report[report.index('id="tbl-settings-diff"'):], re.S)
    assert row and "throughput" in row.group(0).lower()  # the diff's "can explain" column
    index = html.unescape((out / "index.html").read_text())
    assert "MindSpore 2.10.0" in index and "MindSpore 2.9.0 · MindFormers 1.9.0 · CANN 8.0.RC2" in index
    assert "Dataset: GeneratorDataset" in index  # the dataset's identity, as the callback saw it
