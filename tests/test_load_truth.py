"""Loading against what the training measured: the truth runs (tests/fixtures/truth/).

Each run was made by real MindSpore 2.10 CPU training (make_truth_runs.py); its
``<run>.expected.json`` holds what the training itself measured: every step's begin and end on
the wall clock (taken by the first callback, before any logger or save), every checkpoint save's
start, end and file mtime, every evaluation's start and end. The truth here is that, never what
postmortem printed before.

Tolerances come from the truth itself. A source stamps a step's end in one of the step's end
callbacks, after the truth callback and before the next step begins, so its stamp of step k is
late by 0 to w(k) = begin(k + 1) - end(k) (the callbacks' and the next batch's time, as the
training measured it). A gap between two stamps is therefore off by -w(k - 1) to w(k), plus the
resolution of the stamps (1 ms for log lines: LOG_RESOLUTION_S).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from postmortem.load import load_run

TRUTH = Path(__file__).resolve().parent / "fixtures" / "truth"
LOG_RESOLUTION_S = 0.002  # two stamps of 1 ms each


def expected(name: str) -> dict:
    return json.loads((TRUTH / f"{name}.expected.json").read_text())




def with_save_times(name: str, tmp_path: Path) -> Path:
    """A copy of the run whose checkpoints have the mtimes they had when saved (git keeps none)."""
    facts = expected(name)
    run = tmp_path / name
    shutil.copytree(TRUTH / name, run)
    ranks = {launch["rank"] for launch in facts["launches"]}
    for launch in facts["launches"]:
        root = run / f"rank_{launch['rank']}" if len(ranks) > 1 else run
        for save in launch["checkpoints"]:
            for path in root.rglob(save["file"]):
                os.utime(path, (save["mtime"], save["mtime"]))
    return run


def truth_gaps(launch: dict) -> dict[int, float]:
    """Step -> wall-clock gap between its end and the previous step's end, as the training measured."""
    ends = {s["step"]: s["end"] for s in launch["steps"]}
    return {step: ends[step] - ends[step - 1] for step in ends if step - 1 in ends}


def windows(launch: dict) -> dict[int, float]:
    """Step -> how late a source's stamp of its end can be: until the next step began (the
    launch's end for its last step)."""
    steps = sorted(launch["steps"], key=lambda s: s["step"])
    out = {a["step"]: b["begin"] - a["end"] for a, b in zip(steps, steps[1:])}
    out[steps[-1]["step"]] = launch["end"] - steps[-1]["end"]
    return out


def assert_e2e_is_the_wall_clock(steps: pl.DataFrame, launch: dict, only: set[int] | None = None) -> None:
    gaps, late = truth_gaps(launch), windows(launch)
    got = {s: t for s, t, src in steps.select("step", "step_time_s", "source").iter_rows() if src and src.startswith("wall-clock:")}
    common = sorted(s for s in gaps if s in got and (only is None or s in only))
    assert len(common) >= 0.95 * len(only or gaps)
    for s in common:
        assert -late[s - 1] - LOG_RESOLUTION_S <= got[s] - gaps[s] <= late[s] + LOG_RESOLUTION_S, s
    # most stamps are much closer than their window: the median error is a few ms
    assert np.median([abs(got[s] - gaps[s]) for s in common]) <= 0.005


def rank_steps(run, rank: int = 0) -> pl.DataFrame:
    return run.tables["steps"].filter(pl.col("rank") == rank).sort("step")


def slugs(run) -> dict[str, list]:
    out: dict[str, list] = {}
    for d in run.diagnostics:
        out.setdefault(d.slug, []).append(d)
    return out


# --------------------------------------------------------------------------- MindFormers, TensorBoard in int ms


@pytest.fixture(scope="module")
def mf(tmp_path_factory):
    return load_run(with_save_times("mf-tb-ms", tmp_path_factory.mktemp("mf")))


def test_mf_step_times_are_end_to_end_from_the_wall_clock(mf):
    launch = expected("mf-tb-ms")["launches"][0]
    steps = rank_steps(mf)
    assert steps["step"].to_list() == list(range(1, 301))
    assert_e2e_is_the_wall_clock(steps, launch)
    # TensorBoard's events are stamped in the training process, the summary's by its writer process
    # when it dequeues them (up to a pause late): TensorBoard times the steps.
    assert set(steps["source"][1:]) == {"wall-clock:tensorboard"}


def test_mf_iteration_time_is_int_milliseconds_of_the_steps_own_timer(mf):
    launch = expected("mf-tb-ms")["launches"][0]
    in_step = {s["step"]: s["end"] - s["begin"] for s in launch["steps"]}
    steps = rank_steps(mf)
    got = dict(steps.select("step", "in_step_s").iter_rows())
    # The monitor's timer starts a begin callback after the truth's (no work between: allow 5 ms)
    # and stops in the end callbacks, by w(k) after it; int(ms) truncates up to 1 ms.
    late = windows(launch)
    for s in range(2, 301):
        assert -0.006 <= got[s] - in_step[s] <= late[s] + 0.001, s
    assert "unit-by-evidence" not in slugs(mf)  # the default (ms) agreed with the wall clock
    tb = mf.tables["scalars"].filter((pl.col("source") == "tensorboard") & (pl.col("tag") == "step_time"))
    assert tb.height == 300 and (tb["value"] * 1000 == (tb["value"] * 1000).round()).all()  # whole ms


def test_mf_data_stalls_longer_than_the_queue_show_in_the_gap_not_in_the_timer(mf):
    facts = expected("mf-tb-ms")
    launch, injected = facts["launches"][0], facts["injected"]
    gaps = truth_gaps(launch)
    in_step = {s["step"]: s["end"] - s["begin"] for s in launch["steps"]}
    steps = {row["step"]: row for row in rank_steps(mf).iter_rows(named=True)}
    median = float(np.median(list(gaps.values())))
    # 2 s sleeps in the data source: the prefetch queue hides some of each, by how far it had read
    # ahead; what is left is plain on the wall clock, never in the step's own timer
    visible = [step for step in injected["long_stalls"] if gaps[step] > 5 * median]
    assert len(visible) >= 2
    for step in visible:
        row = steps[step]
        assert row["step_time_s"] == pytest.approx(gaps[step], rel=0.1)
        assert in_step[step] < gaps[step] / 4 and row["in_step_s"] < gaps[step] / 4
        assert row["gap_s"] == pytest.approx(row["step_time_s"] - row["in_step_s"]) and row["gap_s"] > gaps[step] / 2
    for step in injected["short_stalls"]:  # 0.02 s: absorbed by the queue
        assert gaps[step] < 3 * median and steps[step]["step_time_s"] < 3 * median


def test_mf_keeps_the_two_checkpoints_left_with_their_save_times(mf):
    facts = expected("mf-tb-ms")
    saves = {s["file"]: s for s in facts["launches"][0]["checkpoints"]}
    ends = {s["step"]: s["end"] for s in facts["launches"][0]["steps"]}
    assert sorted(Path(p).name for p in mf.tables["checkpoints"]["path"]) == facts["checkpoints_left"]
    assert dict(zip((Path(p).name for p in mf.tables["checkpoints"]["path"]), mf.tables["checkpoints"]["step"])) == {
        name: saves[name]["step"] for name in facts["checkpoints_left"]}
    events = mf.tables["events"].filter(pl.col("kind") == "checkpoint_save")
    assert sorted(Path(f).name for f in events["file"]) == facts["checkpoints_left"]
    for file, step, duration, detail in events.select("file", "step", "duration_s", "detail").iter_rows():
        save = saves[Path(file).name]
        # The save began after its step ended and finished at the mtime: the estimate from the mtime
        # and the last record of the step before it lies between the two.
        assert save["mtime"] - save["start"] - 0.001 <= duration <= save["mtime"] - ends[save["step"]] + 0.001
        assert "from the file's mtime" in detail and f"step {save['step']};" in detail
        assert step in (save["step"], save["step"] + 1)


def test_mf_loss_spike_near_the_end(mf):
    launch = expected("mf-tb-ms")["launches"][0]
    spike = expected("mf-tb-ms")["injected"]["spike"]
    loss = dict(mf.series("loss").select("step", "value").iter_rows())
    truth = {s["step"]: s["loss"] for s in launch["steps"]}
    assert max(range(250, 301), key=loss.get) == spike
    assert loss[spike] == pytest.approx(truth[spike], rel=1e-5)


def test_mf_log_times_are_local_time_aligned_to_utc(mf):
    notes = slugs(mf)["log-clock-aligned"]
    assert len(notes) == 1 and notes[0].path == "output/log/rank_0/info.log" and "UTC+08:00" in notes[0].message
    assert mf.clock == "utc"
    launch = expected("mf-tb-ms")["launches"][0]
    assert launch["utc_offset_s"] == 8 * 3600
    # the log's own stamps now sit at the steps' true ends
    logged = mf.tables["scalars"].filter((pl.col("source") == "log:mindformers") & (pl.col("tag") == "loss"))
    ends = {s["step"]: s["end"] for s in launch["steps"]}
    late = windows(launch)
    for s, w in logged.select("step", "wall_time").iter_rows():
        assert -0.001 <= w - ends[s] <= late[s] + 0.001, s


# --------------------------------------------------------------------------- Megatron-style TensorBoard in seconds


@pytest.fixture(scope="module")
def megatron():
    return load_run(TRUTH / "megatron-tb-s")


def test_megatron_iteration_time_is_read_as_seconds_by_the_wall_clock(megatron):
    notes = slugs(megatron)["unit-by-evidence"]
    assert len(notes) == 1 and notes[0].path.startswith("tensorboard/")
    assert "its values are in s, not ms" in notes[0].message and "reads" in notes[0].message  # both readings
    launch = expected("megatron-tb-s")["launches"][0]
    gaps = truth_gaps(launch)
    tb = megatron.tables["scalars"].filter((pl.col("source") == "tensorboard") & (pl.col("tag") == "step_time"))
    late = windows(launch)
    # Megatron's interval timer runs from one of its step-end callbacks to the next
    pairs = [(s, v) for s, v in tb.select("step", "value").iter_rows() if s in gaps]
    assert len(pairs) == 299
    for s, v in pairs:
        assert -late[s - 1] - 0.001 <= v - gaps[s] <= late[s] + 0.001, s
    # no 1000x "conflict" kept the wrong side: what disagreement is left is at the two pauses only
    for note in slugs(megatron).get("source-conflict", []):
        assert "step_time" in note.message and "at 2 steps" in note.message


def test_megatron_e2e_and_the_mindformers_timer_side_by_side(megatron):
    launch = expected("megatron-tb-s")["launches"][0]
    steps = rank_steps(megatron)
    assert_e2e_is_the_wall_clock(steps, launch)
    in_step = {s["step"]: s["end"] - s["begin"] for s in launch["steps"]}
    rows = steps.filter(pl.col("step") > 1)
    # the narrowest timer is MindFormers' per_step_time (int ms from step begin), not the interval timer
    assert set(rows["in_step_source"]) == {"log:mindformers"}
    late = windows(launch)
    for s, t in rows.select("step", "in_step_s").iter_rows():
        assert -0.006 <= t - in_step[s] <= late[s] + 0.001, s
    assert (rows["gap_s"] - (rows["step_time_s"] - rows["in_step_s"])).abs().max() < 1e-12


def test_megatron_evaluations_are_pauses_at_the_step_after(megatron):
    facts = expected("megatron-tb-s")
    evals = megatron.tables["events"].filter(pl.col("kind") == "eval").sort("step")
    truth = facts["launches"][0]["evals"]
    assert [e["after_step"] for e in truth] == facts["injected"]["evals_after"] == [100, 200]
    assert evals["step"].to_list() == [101, 201]
    for duration, e in zip(evals["duration_s"], truth):
        # the step after also restarts the data pipeline: a little more than the evaluation itself
        assert e["end"] - e["start"] - 0.05 <= duration <= 1.1 * (e["end"] - e["start"]) + 0.05


# --------------------------------------------------------------------------- two ranks of different speed


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return load_run(with_save_times("two-ranks", tmp_path_factory.mktemp("two")))


def test_two_ranks_each_timed_by_its_own_wall_clock(two):
    facts = expected("two-ranks")
    assert two.ranks == (0, 1)
    medians = {}
    for launch in facts["launches"]:
        steps = rank_steps(two, launch["rank"])
        assert steps["step"].to_list() == list(range(1, 201))
        assert_e2e_is_the_wall_clock(steps, launch)
        medians[launch["rank"]] = (float(steps["step_time_s"].drop_nulls().median()),
                                   float(np.median(list(truth_gaps(launch).values()))))
    for got, truth in medians.values():
        assert got == pytest.approx(truth, rel=0.05)
    assert medians[1][1] > 1.3 * medians[0][1] and medians[1][0] > 1.3 * medians[0][0]  # batch 16 vs 8


def test_two_ranks_checkpoints_stay_with_their_rank(two):
    facts = expected("two-ranks")
    got = sorted(two.tables["checkpoints"].select("rank", "step", "path").iter_rows())
    want = sorted((r, step, f"rank_{r}/checkpoint/{name}") for r in (0, 1)
                  for name, step in zip(facts["checkpoints_left"][f"rank_{r}"], (100, 200)))
    assert got == want


# --------------------------------------------------------------------------- crash and resume with a restarted counter


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    return load_run(with_save_times("resume", tmp_path_factory.mktemp("resume")))


def test_resume_launches_and_the_later_launch_wins(resumed):
    facts = expected("resume")
    first, second = facts["launches"]
    assert [(s.first_step, s.last_step, s.discarded) for s in resumed.segments] == [(1, 230, None), (201, 400, (201, 230))]
    assert rank_steps(resumed)["step"].to_list() == list(range(1, 401))
    loss = dict(resumed.series("loss").select("step", "value").iter_rows())
    for s in second["steps"]:  # steps 201-400 as the resumed launch trained them
        assert loss[s["step"]] == pytest.approx(s["loss"], rel=1e-5)
    assert loss[200] == pytest.approx(next(s["loss"] for s in first["steps"] if s["step"] == 200), rel=1e-5)
    assert_e2e_is_the_wall_clock(rank_steps(resumed), second, only=set(range(202, 401)))
    assert_e2e_is_the_wall_clock(rank_steps(resumed), first, only=set(range(2, 201)))
    assert max(range(350, 401), key=loss.get) == facts["injected"]["spike"]
    assert resumed.tables["events"].filter(pl.col("kind") == "restart")["step"].to_list() == [201]


def test_resume_restarted_counters_are_moved_onto_global_steps(resumed):
    notes = slugs(resumed)["step-counter-restarted"]
    assert {n.path for n in notes} == {"train.log", next(n.path for n in notes if n.path.endswith("_MS"))}
    assert all("shifted by 200" in n.message for n in notes)
    assert "source-conflict" not in slugs(resumed)  # LossMonitor's launch-2 lines are at 201-400 now
    assert "UTC+08:00" in slugs(resumed)["log-clock-aligned"][0].message


def test_resume_checkpoints_of_the_later_launch_take_its_offset(resumed):
    facts = expected("resume")
    saves = {s["file"]: s for launch in facts["launches"] for s in launch["checkpoints"]}
    got = {Path(p).name: s for p, s in resumed.tables["checkpoints"].select("path", "step").iter_rows()}
    assert got == {name: saves[name]["step"] for name in facts["checkpoints_left"]}
    assert got == {"tiny_lm-1_150.ckpt": 150, "tiny_lm-1_200.ckpt": 200, "tiny_lm_1-1_150.ckpt": 350, "tiny_lm_1-1_200.ckpt": 400}
    assert {saves[n]["local_step"] for n in ("tiny_lm_1-1_150.ckpt", "tiny_lm_1-1_200.ckpt")} == {150, 200}


def test_resume_without_save_times_takes_the_launch_from_the_prefix(tmp_path):
    """A copy made a day later keeps no save times; the file names still tell: the second launch's
    ModelCheckpoint found tiny_lm-* in its folder and saved as tiny_lm_1-*."""
    facts = expected("resume")
    saves = {s["file"]: s for launch in facts["launches"] for s in launch["checkpoints"]}
    run = tmp_path / "resume"
    shutil.copytree(TRUTH / "resume", run)
    later = facts["launches"][-1]["end"] + 86400
    for path in run.rglob("*.ckpt"):
        os.utime(path, (later, later))
    loaded = load_run(run)
    got = {Path(p).name: s for p, s in loaded.tables["checkpoints"].select("path", "step").iter_rows()}
    assert got == {name: saves[name]["step"] for name in facts["checkpoints_left"]}
    assert "checkpoint-launch-unknown" not in slugs(loaded)
    assert "checkpoint-mtime-outside" in slugs(loaded)
    # their saves are still put at a step, timed by the step times
    events = loaded.tables["events"].filter(pl.col("kind") == "checkpoint_save")
    assert events.height == 4 and events["wall_time"].null_count() == 4
    assert all("from the step time" in d for d in events["detail"])


def test_resume_without_save_times_or_prefixes_says_the_launch_is_unknown(tmp_path):
    """Renamed files (no prefix family) and no save times: nothing tells which launch saved a
    file, so the stated steps stay, and a warning names the files a restarted counter may have saved."""
    run = tmp_path / "resume"
    shutil.copytree(TRUTH / "resume", run)
    later = expected("resume")["launches"][-1]["end"] + 86400
    for path in list(run.rglob("*.ckpt")):
        renamed = path.with_name(path.name.replace("tiny_lm_1-", "second-"))
        path.rename(renamed)
        os.utime(renamed, (later, later))
    loaded = load_run(run)
    assert sorted(loaded.tables["checkpoints"]["step"].to_list()) == [150, 150, 200, 200]
    notes = slugs(loaded)["checkpoint-launch-unknown"]
    assert len(notes) == 1 and notes[0].severity == "warning" and "4 of them" in notes[0].message


# --------------------------------------------------------------------------- clocks without a zone


def test_a_run_with_only_local_times_stays_local(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(TRUTH / "resume" / "train.log", run / "train.log")
    loaded = load_run(run)
    assert loaded.clock == "local"
    notes = slugs(loaded)["log-clock-local"]
    assert len(notes) == 1 and "kept as local time" in notes[0].message
    # gaps stay right: steps 2-200 of the first launch are timed by the log's own stamps
    first = expected("resume")["launches"][0]
    steps = rank_steps(loaded)
    gaps = truth_gaps(first)
    assert_e2e_is_the_wall_clock(steps, first, only=set(range(2, 201)))


# --------------------------------------------------------------------------- throughput per device or for all devices


@pytest.mark.parametrize("batch, divided", [(8, False), (4, True)])
def test_tensorboard_throughput_is_checked_against_the_global_batch(tmp_path, batch, divided):
    """MindFormers writes samples/s per device (global batch / devices / step time). Two ranks
    with the mf-tb-ms TensorBoard file (8 samples per step and device): with a global batch of
    2 x 8 that is per device; with 2 x 4 the file holds all devices' samples/s and is divided."""
    run = tmp_path / "run"
    tb = next((TRUTH / "mf-tb-ms" / "tensorboard" / "rank_0").iterdir())
    for rank in (0, 1):
        (run / f"rank_{rank}").mkdir(parents=True)
        shutil.copy(tb, run / f"rank_{rank}" / tb.name)
    (run / "config.yaml").write_text(f"runner_config:\n  batch_size: {batch}\nparallel_config:\n  data_parallel: 2\n")
    loaded = load_run(run)
    assert loaded.setting("global_batch_size") == 2 * batch
    written = load_run(TRUTH / "mf-tb-ms").tables["scalars"].filter(pl.col("tag") == "throughput").sort("step")["value"]
    got = loaded.tables["scalars"].filter((pl.col("tag") == "throughput") & (pl.col("rank") == 0)).sort("step")["value"]
    notes = [d for d in loaded.diagnostics if d.slug == "unit-by-evidence" and "devices" in d.message]
    if divided:
        assert (got * 2 - written).abs().max() < 1e-9 and len(notes) == 2  # one per file
        assert "the global batch 8 (per device it would be 4.00)" in notes[0].message
    else:
        assert (got - written).abs().max() == 0 and not notes
