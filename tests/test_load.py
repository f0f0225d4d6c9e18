"""load_run on the real sample runs: launches stitched, one value per step, checkpoint steps."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

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
    restarts = lr2x.events.filter(pl.col("kind") == "restart")
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
    dupes = lr2x.scalars.group_by("tag", "rank", "step").len().filter(pl.col("len") > 1)
    assert dupes.is_empty()
    # the summary is preferred for loss; the sources agree elsewhere, so no conflict is reported
    assert set(lr2x.scalars.filter(pl.col("tag") == "loss")["source"].unique()) == {"summary"}
    assert not [d for d in lr2x.diagnostics if d.slug == "source-conflict"]


def test_step_times_are_end_to_end_per_step(lr2x):
    steps = lr2x.steps
    assert steps["step"].to_list() == list(range(1, 301))
    stall = EVENTS["lr2x"]["data_stall"]
    row = steps.filter(pl.col("step") == stall["step"]).row(0, named=True)
    assert math.isclose(row["step_time_s"], stall["observed_step_ms"] / 1000, rel_tol=1e-3)
    assert math.isclose(row["data_time_s"], stall["observed_data_ms"] / 1000, rel_tol=1e-3)
    assert steps.filter(pl.col("step") >= 201)["segment"].unique().to_list() == [1]


def test_checkpoint_steps_are_global_even_when_append_info_counts_from_the_resume(lr2x):
    expected = {c["file"]: c["global_step"] for c in EVENTS["lr2x"]["checkpoints"]}
    got = dict(lr2x.checkpoints.select("path", "step").iter_rows())
    assert got == expected
    # A save lengthens the step it ran in (the saved step or the next, by the callbacks' order):
    # the event is at that step, its detail names the checkpoint's own.
    saves = lr2x.events.filter(pl.col("kind") == "checkpoint_save")
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


def test_packed_keys_group_and_sort_like_their_columns():
    from postmortem.load.one_value import _packed

    df = pl.DataFrame({"a": [2, 1, 1, 0, 1], "b": [0, 5, 3, 9, 5]})
    for size in (10, 2**40):  # an Int64 key, and the struct a key needs past 63 bits
        key = _packed([(pl.col("a"), size), (pl.col("b"), size)]).alias("k")
        out = df.with_columns(key).sort("k", maintain_order=True)
        assert out.select("a", "b").rows() == [(0, 9), (1, 3), (1, 5), (1, 5), (2, 0)]
        assert df.with_columns(key)["k"].is_first_distinct().to_list() == [True, True, True, True, False]


def test_ranks_in_worker_processes_give_the_same_run(tmp_path, monkeypatch):
    """Ranks are read and joined in worker processes when there is enough work; same result."""
    import shutil
    import tempfile
    import time

    import postmortem.load.parallel as load

    run = tmp_path / "run"
    for rank in range(5):  # this process reads some ranks (from the back), the worker the others
        shutil.copytree(SAMPLES / "gpt-tiny-lr2x", run / f"rank_{rank}")
    monkeypatch.setattr(load, "_PARALLEL_MIN_BYTES", 0)  # decided in this process, so it applies
    shared = tmp_path / "tmp"  # where the workers leave their tables
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    serial = load_run(run, workers=1)
    # This process reads slowly, so the worker surely starts in time to take ranks too.
    monkeypatch.setattr(load, "load_rank", lambda *job, read=load.load_rank: time.sleep(1) or read(*job))
    from_worker = []
    monkeypatch.setattr(load, "unpacked", lambda tables, unpack=load.unpacked: from_worker.append(1) or unpack(tables))
    parallel = load_run(run, workers=2)
    assert from_worker and not list(shared.iterdir())
    assert serial.ranks == parallel.ranks == (0, 1, 2, 3, 4)
    for name, table in serial.tables.items():
        # equals() ignores dtypes: categoricals must come back as categoricals
        assert table.schema == parallel.tables[name].schema, name
        assert table.equals(parallel.tables[name]), name
    assert serial.segments == parallel.segments and len(serial.segments) == 2
    assert serial.diagnostics == parallel.diagnostics
    assert serial.inventory == parallel.inventory


def _worker_polars_threads(_: int) -> int:
    import polars

    return polars.thread_pool_size()


def test_worker_processes_run_single_threaded_polars():
    """Each worker keeps one core busy: polars must not start a thread per core in every worker."""
    from postmortem import workers

    with workers.Pool(2) as pool:
        assert set(pool.map(_worker_polars_threads, range(4))) == {1}


def test_tables_survive_the_trip_between_processes(tmp_path):
    """Rank parts travel as Arrow IPC files and come back equal, dtypes too; the files are gone after."""
    import pickle

    from postmortem.model import packed, unpacked

    tables = {
        "mixed": pl.DataFrame({
            "s": ["b", "b", None, "a", "b"], "n": [1, 2, None, 4, 5], "f": [1.0, None, float("nan"), float("inf"), 2.0],
            "l": [[1], [], None, [2, 3], [4]], "r": pl.Series([0, 1, 2, 3, 4], dtype=pl.Int32),
            "c": pl.Series(["x", None, "y", "x", "x"], dtype=pl.Categorical()),
            "b": [True, None, False, True, True], "u": pl.Series([1, 2, 3, 4, 2**32 - 1], dtype=pl.UInt32),
            "z": [0.0, -0.0, 1e-320, -1e308, 5.0], "t": ["\u65e5\u5fd7", "", "a\x00b", "x" * 100, "<&>"],
        }),
        "chunked": pl.concat([pl.DataFrame({"v": [1.5, 2.5], "k": ["a", "b"]}),
                              pl.DataFrame({"v": [None, 4.5], "k": ["b", None]})], rechunk=False),
        "empty": pl.DataFrame(schema={"s": pl.String, "n": pl.Int64}),
        "all_null": pl.DataFrame({"s": [None, None], "c": [None, None]}, schema={"s": pl.String, "c": pl.Categorical()}),
        "only_categorical": pl.DataFrame({"c": pl.Series(["a", None, "b"], dtype=pl.Categorical())}),
    }
    back = unpacked(packed(tables, str(tmp_path)))
    for name, table in tables.items():
        assert back[name].schema == table.schema and back[name].equals(table), name
    assert str(back["mixed"]["z"][1]) == "-0.0"  # equals() does not tell -0.0 from 0.0
    assert not list(tmp_path.iterdir())
    # A folder that cannot be written (full, gone): the tables travel themselves.
    inline = packed(tables, str(tmp_path / "missing"))
    assert inline["mixed"].path is None and inline["mixed"].table is not None
    back = unpacked(pickle.loads(pickle.dumps(inline)))
    assert unpacked(packed(tables, ""))["mixed"].equals(tables["mixed"])  # no folder at all
    for name, table in tables.items():
        assert back[name].schema == table.schema and back[name].equals(table), name


def _packed_elsewhere(folder: str):
    """In a worker: a table packed by a process whose category ids differ from the parent's."""
    from postmortem.model import packed

    pl.Series([f"only-here-{i}" for i in range(50)] + ["zeta", "alpha"], dtype=pl.Categorical())  # ids the parent lacks
    table = pl.DataFrame({
        "tag": pl.Series(["alpha", "zeta", None, "alpha"], dtype=pl.Categorical()),
        "v": [1.0, 2.0, 3.0, None],
    })
    return packed({"t": table}, folder)


def test_categories_survive_the_trip_from_another_process(tmp_path):
    """Category ids are per process: a worker's ids come back as this process's categories."""
    from postmortem import workers
    from postmortem.model import unpacked

    pl.Series(["zeta", "beta", "alpha"], dtype=pl.Categorical())  # this process: other ids for the same labels
    with workers.Pool(1) as pool:
        sent = pool.submit(_packed_elsewhere, str(tmp_path)).result()
    assert sent["t"].path is not None  # it came as a file, not as the table itself
    back = unpacked(sent)["t"]
    assert back.schema == {"tag": pl.Categorical(), "v": pl.Float64}
    assert back["tag"].to_list() == ["alpha", "zeta", None, "alpha"]
    assert back["v"].to_list() == [1.0, 2.0, 3.0, None]
    assert not list(tmp_path.iterdir())


def test_ranks_in_worker_processes_without_a_temp_folder(tmp_path, monkeypatch):
    """No temp folder to be had (TMPDIR gone): the rank tables come back through the pipe, same run."""
    import shutil
    import tempfile
    import time

    import postmortem.load.parallel as load

    run = tmp_path / "run"
    for rank in range(4):
        shutil.copytree(SAMPLES / "gpt-tiny-base", run / f"rank_{rank}")
    monkeypatch.setattr(load, "_PARALLEL_MIN_BYTES", 0)
    serial = load_run(run, workers=1)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    # This process reads slowly, so the worker surely takes a rank too.
    monkeypatch.setattr(load, "load_rank", lambda *job, read=load.load_rank: time.sleep(1) or read(*job))
    from_worker = []
    monkeypatch.setattr(load, "unpacked", lambda tables, unpack=load.unpacked: from_worker.append(1) or unpack(tables))
    parallel = load_run(run, workers=2)
    assert from_worker
    for name, table in serial.tables.items():
        assert table.schema == parallel.tables[name].schema and table.equals(parallel.tables[name]), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def _wait_for(path: str) -> str | None:
    """In a worker: busy until `path` exists (or a minute passed, so that a wrong wait fails, not hangs)."""
    import time

    for _ in range(3000):
        if Path(path).exists():
            return path
        time.sleep(0.02)
    return None


def test_ranks_are_not_left_waiting_for_a_busy_pool(tmp_path, monkeypatch):
    """A pool busy with other work (the build's helper reading a baseline) takes no rank: this
    process reads them all and returns without waiting for the pool."""
    import shutil

    import postmortem.load.parallel as load
    from postmortem import workers

    run = tmp_path / "run"
    for rank in range(3):
        shutil.copytree(SAMPLES / "gpt-tiny-base", run / f"rank_{rank}")
    monkeypatch.setattr(load, "_PARALLEL_MIN_BYTES", 0)
    release = tmp_path / "release"
    with workers.Pool(1) as pool:
        busy = pool.submit(_wait_for, str(release))
        run_here = load_run(run, pool=pool)
        assert not busy.done()  # load_run did not wait for the pool's queue
        release.touch()
        assert busy.result() == str(release)
    alone = load_run(run, workers=1)
    assert run_here.ranks == alone.ranks == (0, 1, 2)
    for name, table in alone.tables.items():
        assert table.equals(run_here.tables[name]), name


def test_more_cores_than_the_pool_has_workers_start_new_workers(tmp_path, monkeypatch):
    """On a host with more cores than the build's helper uses, the ranks go to new workers, one
    per core, and the helper is left to its own work (here: busy with another)."""
    import shutil
    import time

    import postmortem.load.parallel as load
    from postmortem import workers

    run = tmp_path / "run"
    for rank in range(4):
        shutil.copytree(SAMPLES / "gpt-tiny-base", run / f"rank_{rank}")
    monkeypatch.setattr(load, "_PARALLEL_MIN_BYTES", 0)
    alone = load_run(run, workers=1)
    monkeypatch.setattr(load, "load_rank", lambda *job, read=load.load_rank: time.sleep(1) or read(*job))
    from_workers = []
    monkeypatch.setattr(load, "unpacked", lambda tables, unpack=load.unpacked: from_workers.append(1) or unpack(tables))
    release = tmp_path / "release"
    with workers.Pool(1) as pool:
        busy = pool.submit(_wait_for, str(release))
        shared = load_run(run, workers=3, pool=pool)
        assert not busy.done() and from_workers  # the new workers read ranks, the busy helper none
        release.touch()
    for name, table in alone.tables.items():
        assert table.equals(shared.tables[name]), name


def _read_with_workers_of_its_own(run: str) -> tuple[dict[str, pl.DataFrame], int]:
    """In a worker: the run read with one more worker process, started from here; its tables, and
    how many ranks came back from that worker."""
    import postmortem.load.parallel as load

    load._PARALLEL_MIN_BYTES = 0
    came_back, unpack = [], load.unpacked
    load.unpacked = lambda tables: came_back.append(1) or unpack(tables)
    load.load_rank = lambda *job, read=load.load_rank: __import__("time").sleep(1) or read(*job)
    return load_run(run, workers=2).tables, len(came_back)


def test_a_worker_reads_a_run_with_workers_of_its_own(tmp_path):
    """The build's helper reads a baseline with workers of its own on a many-core host."""
    import shutil

    from postmortem import workers

    run = tmp_path / "run"
    for rank in range(3):
        shutil.copytree(SAMPLES / "gpt-tiny-base", run / f"rank_{rank}")
    with workers.Pool(1) as pool:
        tables, from_its_worker = pool.submit(_read_with_workers_of_its_own, str(run)).result()
    assert from_its_worker
    for name, table in load_run(run, workers=1).tables.items():
        assert tables[name].schema == table.schema and tables[name].equals(table), name


def test_processes_per_run_grow_with_its_size_up_to_the_cores():
    from postmortem.load.parallel import _PARALLEL_MIN_BYTES as step
    from postmortem.load.parallel import _processes

    assert _processes(ranks=64, total_bytes=step - 1, cores=8) == 1  # too little to pay for a worker's start
    assert _processes(ranks=64, total_bytes=3 * step, cores=8) == 4
    assert _processes(ranks=64, total_bytes=100 * step, cores=8) == 8
    assert _processes(ranks=3, total_bytes=100 * step, cores=8) == 3  # a rank per process at most
    assert _processes(ranks=1, total_bytes=100 * step, cores=1) == 1


def test_inventory_lists_rank_2_before_rank_10(tmp_path):
    """Files in natural order: runs of digits compare as numbers (rank_2 before rank_10)."""
    import shutil

    for rank in (10, 2):
        shutil.copytree(SAMPLES / "gpt-tiny-base", tmp_path / "run" / f"rank_{rank}")
    run = load_run(tmp_path / "run", workers=1)
    folders = [e.rel.split("/")[0] for e in run.inventory]
    assert folders == sorted(folders, key=lambda f: int(f.split("_")[1])) and folders[0] == "rank_2"
    assert run.ranks == (2, 10)
