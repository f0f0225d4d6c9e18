"""The callback records reader on a real records file (tests/fixtures/callback, written by the
callback during real MindSpore training) and on damaged copies of it. No MindSpore here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from postmortem import records as R
from postmortem.load import load_run
from postmortem.model import Artifact
from postmortem.readers import callback

RUN = Path(__file__).resolve().parent.parent / "fixtures" / "callback" / "run"
FILE = next((RUN / R.FOLDER / "rank_0").glob("postmortem-records-*.jsonl"))


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    return run, next((run / R.FOLDER / "rank_0").glob("*.jsonl"))


def _read(path: Path, root: Path):
    rel = path.relative_to(root).as_posix()
    return callback.read(Artifact(str(path), rel, path.stat().st_size, path.stat().st_mtime, 0))


def test_claims_its_own_file_names_only():
    def art(rel):
        return Artifact("/x/" + rel, rel, 1, 0.0)

    assert callback.claims(art("postmortem/rank_3/postmortem-records-20261201T120000.000Z-1.jsonl"))
    assert not callback.claims(art("logs/metrics.jsonl")) and not callback.claims(art("postmortem-records.jsonl.tmp"))


def test_reads_every_step_and_the_header_settings():
    lines = [json.loads(x) for x in FILE.read_text().splitlines()]
    steps = [x for x in lines if R.KIND not in x]
    result = _read(FILE, RUN)
    s = result.tables["scalars"]
    timer = s.filter(pl.col("tag") == "step_time").sort("step")
    assert timer["step"].to_list() == [x[R.STEP] for x in steps] == list(range(1, 41))
    assert timer["value"].to_list() == pytest.approx([x[R.IN_STEP] for x in steps])
    assert timer["wall_time"].to_list() == pytest.approx([x[R.END] for x in steps])
    assert s.filter(pl.col("tag") == "data_time").sort("step")["value"].to_list() == pytest.approx([x[R.GAP] for x in steps])
    assert s.filter(pl.col("tag") == "loss")["value"].to_list() == pytest.approx([x[R.LOSS] for x in steps])
    assert set(s["source"].cast(str)) == {"callback"}
    settings = {k: v.value for k, v in result.settings.items()}
    assert settings["framework_version"] == lines[0]["versions"]["mindspore"] == "2.10.0"
    assert settings["recorder"] == f"{R.RECORDER} {R.FORMAT}" and settings["device_target"] == "CPU"
    assert settings["args.api_key"] == R.REDACTED
    assert result.settings["seq_length"].source.startswith("derived:")  # a config's seq_length wins over the batch shape
    assert not result.diagnostics


def test_a_line_cut_short_by_a_crash_keeps_every_whole_line(tmp_path):
    run, path = _copy(tmp_path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    cut = b"\n".join(lines[:21]) + b"\n" + lines[21][: len(lines[21]) // 2]  # header + 20 steps, then half a step
    path.write_bytes(cut)
    result = _read(path, run)
    assert result.tables["scalars"].filter(pl.col("tag") == "step_time")["step"].to_list() == list(range(1, 21))
    assert [d.slug for d in result.diagnostics] == ["callback-line-unreadable", "callback-no-end"]


def test_no_header_still_gives_the_steps_and_says_what_is_missing(tmp_path):
    run, path = _copy(tmp_path)
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    result = _read(path, run)
    assert result.tables["scalars"].filter(pl.col("tag") == "step_time").height == 40
    assert [d.slug for d in result.diagnostics] == ["callback-no-header"] and not result.settings


def test_a_nan_loss_is_kept_as_data(tmp_path):
    run, path = _copy(tmp_path)
    lines = path.read_text().splitlines()
    rec = json.loads(lines[10])
    rec[R.LOSS] = float("nan")
    lines[10] = json.dumps(rec, separators=(",", ":"))  # as the callback writes a non-finite value: NaN
    path.write_text("\n".join(lines) + "\n")
    loss = _read(path, run).tables["scalars"].filter(pl.col("tag") == "loss").sort("step")
    assert loss.height == 40 and loss.filter(pl.col("step") == rec[R.STEP])["value"].is_nan().all()


def test_an_empty_file_is_a_warning(tmp_path):
    run, path = _copy(tmp_path)
    path.write_text("")
    assert [(d.slug, d.variant) for d in _read(path, run).diagnostics] == [("callback-nothing-read", "empty")]


def test_loaded_run_takes_e2e_from_the_callbacks_step_ends():
    run = load_run(RUN)
    steps = run.tables["steps"].sort("step")
    assert set(steps["source"].to_list()[1:]) == {"wall-clock:callback"}
    stalled = steps.filter(pl.col("step") == 25)
    assert stalled["gap_s"][0] > 0.2 and stalled["data_time_s"][0] > 0.2


def test_the_callback_is_the_most_trusted_source_of_a_step(tmp_path):
    """A user's key=value log beside the records, its loss rounded as a log prints it and one
    value wrong: the callback's value is kept at every step, and the disagreement is said."""
    run, path = _copy(tmp_path)
    steps = [json.loads(x) for x in path.read_text().splitlines() if x.startswith('{"s":')]
    lines = [f"step={s[R.STEP]} loss={s[R.LOSS]:.4f} step_ms={s[R.IN_STEP] * 1000:.3f}" for s in steps]
    lines[4] = "step=5 loss=99.0 step_ms=1.0"
    (run / "train.log").write_text("\n".join(lines) + "\n")
    loaded = load_run(run)
    loss = loaded.tables["scalars"].filter(pl.col("tag") == "loss").sort("step")
    assert loss["source"].cast(str).to_list() == ["callback"] * 40
    assert loss["value"].to_list() == pytest.approx([s[R.LOSS] for s in steps])
    assert any(d.slug == "source-conflict" for d in loaded.diagnostics)


def test_a_resumed_launch_is_its_own_file_and_wins_the_steps_it_repeats(tmp_path):
    """A second launch resumed from step 20 (a copy of the real records: its steps 21-40, 100 s
    later, under its own launch id): two launches, the later one's times for the repeated steps."""
    run, first = _copy(tmp_path)
    lines = first.read_text().splitlines()
    header = json.loads(lines[0])
    later = "20261201T120500.000Z-2"
    out = [json.dumps({**header, R.LAUNCH: later, "time": header["time"] + 100}, separators=(",", ":"))]
    for line in lines[1:]:
        rec = json.loads(line)
        if rec.get(R.STEP, 0) > 20 or R.KIND in rec:
            rec[R.LAUNCH] = later
            rec[R.END] = rec[R.END] + 100
            out.append(json.dumps(rec, separators=(",", ":")))
    (first.parent / R.file_name(later)).write_text("\n".join(out) + "\n")
    loaded = load_run(run)
    assert len(loaded.segments) == 2 and loaded.segments[1].first_step == 21
    steps = loaded.tables["steps"].sort("step")
    assert steps["step"].to_list() == list(range(1, 41))
    walls = {s[R.STEP]: s[R.END] for s in map(json.loads, lines[1:]) if R.KIND not in s}
    assert steps.filter(pl.col("step") == 30)["wall_time"][0] == pytest.approx(walls[30] + 100)
    assert any(d.slug == "run-resumed" for d in loaded.diagnostics)


def test_only_the_callback_modules_import_mindspore():
    """The reading path never imports MindSpore: only the training-side modules do."""
    import re
    import subprocess
    import sys

    package = Path(callback.__file__).resolve().parents[1]
    importing = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py")
                       if re.search(r"^\s*(import|from)\s+(mindspore|mindformers)\b", p.read_text(), re.M))
    assert importing == ["callback.py", "mindformers.py"]
    code = "import sys, postmortem.cli, postmortem.load, postmortem.readers.callback; print('mindspore' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(package.parent)})
    assert done.stdout.strip() == "False", done.stderr[-2000:]
