"""load_run on the real sample runs: launches stitched, one value per step, checkpoint steps."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import polars as pl
import pytest

from postmortem import load
from postmortem.load import load_run
from postmortem.load.launches import segments_of_steps

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
EVENTS = json.loads((SAMPLES / "injected_events.json").read_text())


@pytest.fixture(scope="module")
def lr2x():
    return load_run(SAMPLES / "gpt-tiny-lr2x")


@pytest.fixture(scope="module")
def base():
    return load_run(SAMPLES / "gpt-tiny-base")


def _json_lines(path: Path) -> dict[int, dict]:
    """The resumed launch's own JSON lines, read independently of the text-log reader."""
    rows = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"step"' in line:
            obj = json.loads(line)
            rows[obj["step"]] = obj
    return rows


def test_every_file_of_the_samples_is_claimed(base, lr2x):
    for run in (base, lr2x):
        unclaimed = [e.rel for e in run.inventory if e.reader is None]
        assert unclaimed == []


def test_resumed_run_has_two_launches_with_the_replaced_span(lr2x):
    resume = EVENTS["lr2x"]["resume"]
    first, second = lr2x.segments
    assert (first.first_step, first.last_step) == (1, EVENTS["lr2x"]["crash"]["after_step"])
    assert (second.first_step, second.last_step) == (resume["first_step"], 300)
    assert second.discarded == tuple(resume["repeated_steps"])
    restarts = lr2x.tables["events"].filter(pl.col("kind") == "restart")
    assert restarts["step"].to_list() == [resume["first_step"]]


def test_summary_of_resumed_launch_is_moved_onto_global_steps(lr2x):
    # MindSpore counts the resumed launch's summary steps from 1; aligned by wall time they are 201..
    notes = [d for d in lr2x.diagnostics if d.slug == "step-counter-restarted"]
    assert len(notes) == 1 and "shifted by 200" in notes[0].message
    loss = lr2x.series("loss")
    assert loss["step"].to_list() == list(range(1, 301))


def test_later_launch_wins_on_repeated_steps(lr2x):
    # Steps 201-260 ran twice; the values must be the resumed launch's (its JSON lines).
    launch2 = _json_lines(SAMPLES / "gpt-tiny-lr2x" / "train.log")
    loss = dict(zip(*lr2x.series("loss").select("step", "value").to_dict(as_series=False).values()))
    for step in (201, 230, 260, 300):
        assert math.isclose(loss[step], launch2[step]["loss"], rel_tol=1e-5)


def test_one_value_per_tag_and_step(lr2x):
    dupes = lr2x.tables["scalars"].group_by("tag", "rank", "step").len().filter(pl.col("len") > 1)
    assert dupes.is_empty()
    # the summary is preferred for loss; the sources agree elsewhere, so no conflict is reported
    assert set(lr2x.tables["scalars"].filter(pl.col("tag") == "loss")["source"].unique()) == {"summary"}
    assert not [d for d in lr2x.diagnostics if d.slug == "source-conflict"]


def test_step_times_are_end_to_end_per_step(lr2x):
    steps = lr2x.tables["steps"]
    assert steps["step"].to_list() == list(range(1, 301))
    stall = EVENTS["lr2x"]["data_stall"]
    row = steps.filter(pl.col("step") == stall["step"]).row(0, named=True)
    assert math.isclose(row["step_time_s"], stall["observed_step_ms"] / 1000, rel_tol=1e-3)
    assert math.isclose(row["data_time_s"], stall["observed_data_ms"] / 1000, rel_tol=1e-3)
    assert steps.filter(pl.col("step") >= 201)["segment"].unique().to_list() == [1]


def test_checkpoint_steps_are_global_even_when_append_info_counts_from_the_resume(lr2x):
    expected = {c["file"]: c["global_step"] for c in EVENTS["lr2x"]["checkpoints"]}
    got = dict(lr2x.tables["checkpoints"].select("path", "step").iter_rows())
    assert got == expected
    # A save lengthens the step it ran in (the saved step or the next, by the callbacks' order):
    # the event is at that step, its detail names the checkpoint's own.
    saves = lr2x.tables["events"].filter(pl.col("kind") == "checkpoint_save")
    for file, step, detail in saves.select("file", "step", "detail").iter_rows():
        assert step in (expected[file], expected[file] + 1) and f": step {expected[file]};" in detail


def test_baseline_is_one_clean_launch(base):
    assert len(base.segments) == 1
    assert not [d for d in base.diagnostics if d.severity != "info"]
    assert base.setting("seq_length") == 32 and base.setting("num_layers") == 2


def test_nothing_is_written_into_the_run_folder(tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(SAMPLES / "gpt-tiny-base", run)
    before = sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*"))
    load_run(run)
    after = sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*"))
    assert before == after


@pytest.mark.parametrize(
    "steps, expected",
    [
        ([1, 2, 3], [(1, 3, None)]),
        ([1, 2, 2, 3], [(1, 3, None)]),  # a step written twice is not a restart
        ([1, 2, 3, 4, 5, 3, 4, 5, 6], [(1, 5, None), (3, 6, (3, 5))]),
        ([1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5], [(1, 3, None), (1, 4, (1, 3)), (2, 5, (2, 4))]),
        ([10, 11, 12, 13, 20, 21], [(10, 21, None)]),  # a gap is not a restart
    ],
)
def test_segments(steps, expected):
    assert [(s.first_step, s.last_step, s.discarded) for s in segments_of_steps(steps)] == expected


def test_conflicting_sources_are_a_diagnostic(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "a.log").write_text("".join(f"step={i} loss={5 - i * 0.1:.4f}\n" for i in range(1, 11)))
    (run / "b.jsonl").write_text("".join(json.dumps({"step": i, "loss": 5 - i * 0.1 + (1 if i == 7 else 0)}) + "\n" for i in range(1, 11)))
    r = load_run(run)
    conflicts = [d for d in r.diagnostics if d.slug == "source-conflict"]
    assert len(conflicts) == 1 and "at 1 step," in conflicts[0].message and "step 7" in conflicts[0].message


def test_conflict_note_names_the_first_disagreeing_file_in_launch_order(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "a.log").write_text("".join(f"step={i} loss={5 - i * 0.1:.4f}\n" for i in range(1, 11)))
    for name in ("b.jsonl", "c.jsonl"):  # the same wrong value at step 7 in two later files
        (run / name).write_text("".join(json.dumps({"step": i, "loss": 5 - i * 0.1 + (1 if i == 7 else 0)}) + "\n" for i in range(1, 11)))
    conflicts = [d for d in load_run(run).diagnostics if d.slug == "source-conflict"]
    assert len(conflicts) == 1 and "first at step 7" in conflicts[0].message and conflicts[0].path == "b.jsonl"


def test_one_value_per_step_when_steps_are_far_apart(tmp_path):
    """Steps too far apart for offset codes (ranked instead) keep their order and the best source."""
    run = tmp_path / "run"
    run.mkdir()
    steps = [1, 2, 2**40, 2**40 + 1, 2**50]
    (run / "a.log").write_text("".join(f"step={s} loss={i}.5\n" for i, s in enumerate(steps)))
    (run / "b.jsonl").write_text("".join(json.dumps({"step": s, "loss": i + 0.5}) + "\n" for i, s in enumerate(steps)))
    loss = load_run(run).tables["scalars"].filter(pl.col("tag") == "loss")
    assert loss["step"].to_list() == steps and set(loss["source"]) == {"log:kv"}


_RUNS = REPO / "tests" / "fixtures"


@pytest.mark.parametrize("folder", [
    SAMPLES / "gpt-tiny-base", SAMPLES / "gpt-tiny-lr2x", SAMPLES / "profiler-cpu",  # summary + log: loss twice
    *sorted(p for p in (_RUNS / "truth").iterdir() if p.is_dir()),  # a resume, TensorBoard + summary, two ranks
    _RUNS / "runs" / "nan", _RUNS / "summary" / "train", _RUNS / "tensorboard", _RUNS / "logs",
    *sorted(p for p in (_RUNS / "conformance").iterdir() if p.name.endswith("-log")),
], ids=lambda p: p.name)
def test_one_pass_keeps_what_the_rules_keep(folder, monkeypatch):
    """The series that hold each step once are kept as they are, in one pass; the rules run on the
    others: the same rows in the same order, the same latest rows and notes as the rules run on
    every series (one_value_per_step's reference)."""
    import postmortem.load.rank as rank

    compared = []

    def both(scalars):
        fast = rank_one_value(scalars)
        keep, latest, notes = rank_one_value(scalars, rules_everywhere=True)
        assert fast[0].to_list() == keep.to_list()
        assert set((fast[1] if fast[1] is not None else pl.Series(range(scalars.height))).to_list()) == set(latest.to_list())
        assert fast[2] == notes
        compared.append(fast[1] is None)
        return fast

    rank_one_value = rank.one_value_per_step
    monkeypatch.setattr(rank, "one_value_per_step", both)
    load_run(folder)
    assert compared


def test_one_pass_and_the_rules_on_series_of_both_kinds():
    """A series written once (plain) next to one that two sources and a resumed launch repeat."""
    from postmortem.load.one_value import one_value_per_step

    rows = [  # (tag, step, source, value, file order): lr once per step; loss from the summary and a log, step 2 twice
        ("lr", 1, "summary", 0.1, 0), ("loss", 1, "summary", 2.0, 0), ("lr", 2, "summary", 0.2, 0), ("loss", 2, "summary", 1.9, 0),
        ("loss", 2, "summary", 1.8, 1), ("loss", 1, "log:kv", 2.0, 2), ("loss", 2, "log:kv", 1.5, 2), ("lr", 3, "summary", 0.3, 1),
    ]
    scalars = pl.DataFrame({
        "tag": pl.Series([r[0] for r in rows], dtype=pl.Categorical()), "rank": pl.Series([0] * len(rows), dtype=pl.Int32),
        "step": [r[1] for r in rows], "source": pl.Series([r[2] for r in rows], dtype=pl.Categorical()),
        "value": [r[3] for r in rows], "_file_order": [r[4] for r in rows], "_row": list(range(len(rows))),
        "file": pl.Series([f"f{r[4]}" for r in rows], dtype=pl.Categorical()),
    })
    keep, latest, notes = one_value_per_step(scalars)
    # (tag, step) order: loss 1 (summary), loss 2 (the later summary file's 1.8), lr 1, 2, 3
    assert keep.to_list() == [1, 4, 0, 2, 7]
    assert sorted(latest.to_list()) == [0, 1, 2, 4, 5, 6, 7]  # the first summary file's step 2 was replaced
    assert [n.slug for n in notes] == ["source-conflict"]  # the log's 1.5 against the summary's 1.8
    reference = one_value_per_step(scalars, rules_everywhere=True)
    assert reference[0].to_list() == keep.to_list() and sorted(reference[1].to_list()) == sorted(latest.to_list())


def test_packed_keys_group_and_sort_like_their_columns():
    from postmortem.load.one_value import _packed

    df = pl.DataFrame({"a": [2, 1, 1, 0, 1], "b": [0, 5, 3, 9, 5]})
    for size in (10, 2**40):  # an Int64 key, and the struct a key needs past 63 bits
        key = _packed([(pl.col("a"), size), (pl.col("b"), size)]).alias("k")
        out = df.with_columns(key).sort("k", maintain_order=True)
        assert out.select("a", "b").rows() == [(0, 9), (1, 3), (1, 5), (1, 5), (2, 0)]
        assert df.with_columns(key)["k"].is_first_distinct().to_list() == [True, True, True, True, False]


_READ_HERE: list[int] = []  # logs this process read in the test below


def _slow_read_here(artifact):
    """The text-log reader, slow in this process (so that a helper surely starts in time to take ranks)."""
    import multiprocessing
    import time

    from postmortem.readers import textlog

    if multiprocessing.parent_process() is None:
        _READ_HERE.append(1)
        time.sleep(1)
    return textlog.READER.read(artifact)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a helper needs a second core")
def test_ranks_read_with_a_helper_give_the_same_run(tmp_path, monkeypatch):
    """Ranks are read and joined by this process and a helper process (parallel.Session) when
    there is enough work: the same run as read here alone, dtypes and all. Readers travel to the
    helper themselves: one that is not among all_readers() is shared too. (The helper's own tests
    are in test_parallel.py.)"""
    import dataclasses
    import shutil

    from postmortem import parallel
    from postmortem.readers import all_readers

    slow = tuple(dataclasses.replace(r, read=_slow_read_here) if r.name == "textlog" else r for r in all_readers())
    run = tmp_path / "run"
    for rank in range(5):  # this process reads some ranks (from the back), the helper the others
        shutil.copytree(SAMPLES / "gpt-tiny-lr2x", run / f"rank_{rank}")
    serial = load_run(run)
    monkeypatch.setattr(parallel, "HELPER_WORTH_BYTES", 0)
    monkeypatch.setattr(load, "BATCH_RANKS", 1)  # a batch per rank: five jobs to share
    _READ_HERE.clear()
    with parallel.Session(workers=1) as session:
        shared = load_run(run, session=session, readers=slow)
    logs = len(list(run.glob("rank_0/**/*.log")))
    assert 0 < len(_READ_HERE) < 5 * logs  # both read ranks
    assert serial.ranks == shared.ranks == (0, 1, 2, 3, 4)
    for name, table in serial.tables.items():
        # equals() ignores dtypes: categoricals must come back as categoricals
        assert table.schema == shared.tables[name].schema, name
        assert table.equals(shared.tables[name]), name
    assert serial.segments == shared.segments and len(serial.segments) == 2
    assert serial.diagnostics == shared.diagnostics
    assert serial.inventory == shared.inventory


def test_inventory_lists_rank_2_before_rank_10(tmp_path):
    """Files in natural order: runs of digits compare as numbers (rank_2 before rank_10)."""
    import shutil

    for rank in (10, 2):
        shutil.copytree(SAMPLES / "gpt-tiny-base", tmp_path / "run" / f"rank_{rank}")
    run = load_run(tmp_path / "run")
    folders = [e.rel.split("/")[0] for e in run.inventory]
    assert folders == sorted(folders, key=lambda f: int(f.split("_")[1])) and folders[0] == "rank_2"
    assert run.ranks == (2, 10)


def _mixed_ranks(tmp_path):
    """Ranks that take every unusual path of the joins, side by side in one run: a resumed
    launch, local log clocks aligned with TensorBoard and summary times, units settled by evidence,
    two timer sources."""
    import shutil

    run = tmp_path / "mixed"
    for rank, source in enumerate([_RUNS / "truth" / "resume", _RUNS / "truth" / "mf-tb-ms", SAMPLES / "gpt-tiny-lr2x",
                                   _RUNS / "truth" / "megatron-tb-s"]):
        shutil.copytree(source, run / f"rank_{rank}")
    return run


@pytest.mark.parametrize("folder", ["mixed", _RUNS / "truth" / "two-ranks", _RUNS / "truth" / "resume",
                                    _RUNS / "truth" / "mf-tb-ms"], ids=lambda p: getattr(p, "name", p))
def test_ranks_joined_in_one_batch_give_what_each_rank_alone_gives(folder, tmp_path, monkeypatch):
    """The join rules run over a batch of ranks grouped by rank: the run is the same whether all
    its ranks are one batch or each rank is its own (how ranks were read before), rows in the same
    order, notes in the same order."""
    folder = _mixed_ranks(tmp_path) if folder == "mixed" else folder
    together = load_run(folder)
    monkeypatch.setattr(load, "BATCH_RANKS", 1)
    alone = load_run(folder)
    assert len(together.ranks) >= (3 if together.name == "mixed" else 1)
    for name, table in together.tables.items():
        assert table.schema == alone.tables[name].schema, name
        assert table.equals(alone.tables[name]), name
    assert together.segments == alone.segments
    assert together.diagnostics == alone.diagnostics
    assert together.inventory == alone.inventory
    assert together.settings == alone.settings
