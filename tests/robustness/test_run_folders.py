"""Run folders that are empty, unreadable, full of links and special files, resumed, out of order.

Each case goes through ``load_run`` (and ``analyze`` where there is data) and must give a Run with
the right diagnostics and segments, or an InputError with a stable slug. Nothing may hang or raise.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.types import AnalysisOptions
from postmortem.errors import InputError
from postmortem.load import load_run

from .conftest import SAMPLES, copy_run
from postmortem.words import name

TRAIN_LOG = SAMPLES / "gpt-tiny-base/train.log"


def _slugs(run) -> set[str]:
    return {d.slug for d in run.diagnostics}


def _analyze(run):
    return analyze(run, None, AnalysisOptions(run_id="r", experiment="e"))


def _kv_lines() -> list[bytes]:
    return [ln for ln in TRAIN_LOG.read_bytes().split(b"\n") if b" step=" in ln]


# --------------------------------------------------------------------------- empty / missing


def test_empty_folder(tmp_path: Path):
    with pytest.raises(InputError) as exc:
        load_run(tmp_path)
    assert exc.value.slug == "run-dir-empty"


def test_folder_of_empty_folders(tmp_path: Path):
    (tmp_path / "summary" / "rank_0").mkdir(parents=True)
    (tmp_path / "checkpoint").mkdir()
    with pytest.raises(InputError) as exc:
        load_run(tmp_path)
    assert exc.value.slug == "run-dir-empty"


def test_missing_and_file_instead_of_folder(tmp_path: Path):
    with pytest.raises(InputError) as exc:
        load_run(tmp_path / "nope")
    assert exc.value.slug == "run-dir-missing"
    (tmp_path / "train.log").write_bytes(TRAIN_LOG.read_bytes())
    with pytest.raises(InputError) as exc:
        load_run(tmp_path / "train.log")
    assert exc.value.slug == "run-dir-not-a-directory"


def test_only_zero_length_files(tmp_path: Path):
    for rel in ("train.log", "summary/events.out.events.summary.1796035773.0.vm_MS", "checkpoint/net-1_1.ckpt", "config.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    run = load_run(tmp_path)
    assert {"summary-file-empty", "ckpt-unreadable"} <= _slugs(run)
    _analyze(run)


# --------------------------------------------------------------------------- unreadable files


@contextmanager
def _as_user(uid: int = 65534):
    """Drop the effective uid (root in CI ignores chmod 000); restored on exit."""
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.fixture
def public_tmp():
    """A temp folder other users can enter (pytest's tmp_path is 0700 under root)."""
    path = Path(tempfile.mkdtemp(prefix="pm-robust-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _unreadable_run(root: Path) -> Path:
    run = copy_run(SAMPLES / "gpt-tiny-base", root / "run")
    os.chmod(run / "train.log", 0)
    os.chmod(run / "summary", 0)  # a folder that cannot be listed
    return run


@pytest.mark.skipif(os.geteuid() == 0, reason="as root chmod 000 does not stop reads; test_unreadable_files_as_another_user covers it")
def test_unreadable_files(tmp_path: Path):
    run = load_run(_unreadable_run(tmp_path))
    assert {"file-unreadable", "dir-unreadable"} <= _slugs(run)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to another user")
def test_unreadable_files_as_another_user(public_tmp: Path):
    """As root, really drop privileges (seteuid nobody) so open() fails with EACCES."""
    root = _unreadable_run(public_tmp)
    with _as_user():
        with pytest.raises(PermissionError):
            open(root / "train.log", "rb")  # the premise: this user cannot read it
        run = load_run(root)
    notes = {(d.slug, d.path) for d in run.diagnostics}
    assert ("file-unreadable", "train.log") in notes
    assert ("dir-unreadable", "summary") in notes
    # the rest of the run is still read: checkpoints and the config
    assert run.tables["checkpoints"].height == 3
    assert run.setting("seq_length") is not None or run.settings
    _analyze(run)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to another user")
def test_unreadable_run_folder_as_another_user(public_tmp: Path):
    root = copy_run(SAMPLES / "gpt-tiny-base", public_tmp / "run")
    os.chmod(root, 0o700)
    with _as_user():
        with pytest.raises(InputError) as exc:
            load_run(root)
    assert exc.value.slug == "run-dir-unreadable"


def test_file_vanishing_between_listing_and_reading(tmp_path: Path):
    """Another real way to get an OSError on open: the file is deleted after discovery listed it."""
    from postmortem.readers import all_readers
    from postmortem.readers.base import Reader

    root = copy_run(SAMPLES / "gpt-tiny-base", tmp_path / "run")
    real = {r.name: r for r in all_readers()}["textlog"]

    def read_after_rotation(artifact):
        os.unlink(artifact.path)  # log rotation / cleanup racing the build
        return real.read(artifact)

    readers = [Reader(r.name, r.claims, read_after_rotation) if r.name == "textlog" else r for r in all_readers()]
    run = load_run(root, readers=readers)
    assert ("file-unreadable", "train.log") in {(d.slug, d.path) for d in run.diagnostics}
    assert run.tables["scalars"].height > 0  # the summary still gives the loss
    _analyze(run)


# --------------------------------------------------------------------------- links and special files


def test_symlink_loops_and_links_outside(tmp_path: Path):
    root = copy_run(SAMPLES / "gpt-tiny-base", tmp_path / "run")
    os.symlink("loop_b.log", root / "loop_a.log")
    os.symlink("loop_a.log", root / "loop_b.log")
    os.symlink(root, root / "self")  # a directory loop
    outside = tmp_path / "secret.log"
    outside.write_bytes(b"\n".join(_kv_lines()[:5]) + b"\n")
    os.symlink(outside, root / "outside.log")
    os.symlink("/etc", root / "etc")
    os.symlink("train.log", root / "inside.log")
    run = load_run(root)
    notes = {(d.slug, d.path) for d in run.diagnostics}
    assert ("symlink-outside", "outside.log") in notes
    assert ("symlink-outside", "etc") in notes
    skipped = {e.rel: e.note for e in run.inventory if e.reader is None}
    for rel in ("loop_a.log", "loop_b.log", "self", "outside.log", "etc", "inside.log"):
        assert "not followed" in name("inventory.", skipped[rel], "en"), rel
    # nothing was read through a link: only train.log contributes log rows
    files = set(run.tables["scalars"]["file"].unique().to_list()) if "file" in run.tables["scalars"].columns else set()
    assert not files & {"outside.log", "inside.log", "loop_a.log"}
    _analyze(run)


@contextmanager
def _fifo_watchdog(paths: list[Path], seconds: float = 60.0):
    """If the code under test blocks opening a FIFO, unblock it (and fail) instead of hanging CI."""
    fired = []
    done = threading.Event()

    def guard():
        if not done.wait(seconds):
            fired.append(True)
            for p in paths:
                try:
                    os.close(os.open(p, os.O_RDWR | os.O_NONBLOCK))
                except OSError:
                    pass

    t = threading.Thread(target=guard, daemon=True)
    t.start()
    try:
        yield fired
    finally:
        done.set()
        t.join()


def test_fifos_and_devices_are_never_opened(tmp_path: Path):
    root = copy_run(SAMPLES / "gpt-tiny-base", tmp_path / "run")
    fifos = [root / "stdout.log", root / "summary" / "events.out.events.summary.1796039999.0.vm_MS"]
    for p in fifos:
        os.mkfifo(p)
    devices = []
    try:  # /dev/zero named like a log: reading it would never end
        os.mknod(root / "zero.log", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        devices.append("zero.log")
    except (PermissionError, OSError):
        pass
    with _fifo_watchdog(fifos) as fired:
        run = load_run(root)
    assert not fired, "a FIFO was opened for reading"
    skipped = {e.rel: e.note for e in run.inventory if e.reader is None}
    for rel in ["stdout.log", "summary/events.out.events.summary.1796039999.0.vm_MS", *devices]:
        assert "special file" in name("inventory.", skipped[rel], "en")
    assert {d.path for d in run.diagnostics if d.slug == "special-file"} >= {"stdout.log", *devices}
    _analyze(run)


# --------------------------------------------------------------------------- resumed, out of order, clocks


def _log_run(tmp_path: Path, lines: list[bytes], name: str = "train.log") -> Path:
    root = tmp_path / "run"
    root.mkdir(exist_ok=True)
    (root / name).write_bytes(b"\n".join(lines) + b"\n")
    return root


def test_resume_before_earlier_checkpoints(tmp_path: Path):
    """Launch 1 ran steps 1-150 (checkpoints at 100 and 150); launch 2 restarted from step 60,
    i.e. before both checkpoints (the newer ones were unusable), and ran to 200."""
    kv = _kv_lines()
    by_step = {int(ln.split(b" step=")[1].split(b" ")[0]): ln for ln in kv}
    launch2 = [by_step[s].replace(b"loss=", b"loss=1") for s in range(60, 201)]  # 4.85 -> 14.85: tell launches apart
    root = _log_run(tmp_path, [by_step[s] for s in range(1, 151)] + launch2)
    ckpt_dir = root / "checkpoint"
    ckpt_dir.mkdir()
    for name in ("tiny_gpt-2_100.ckpt", "tiny_gpt-3_50.ckpt"):
        shutil.copyfile(SAMPLES / "gpt-tiny-base/checkpoint" / name, ckpt_dir / name)
    run = load_run(root)
    segs = [(s.first_step, s.last_step, s.discarded) for s in run.segments]
    assert segs == [(1, 150, None), (60, 200, (60, 150))]
    assert "run-resumed" in _slugs(run)
    loss = run.tables["scalars"].filter(pl.col("tag") == "loss").sort("step")
    assert loss["step"].to_list() == list(range(1, 201))  # one value per step
    # the later launch wins for the replayed steps
    first = float(by_step[100].split(b"loss=")[1].split(b" ")[0])
    assert loss.filter(pl.col("step") == 100)["value"][0] == pytest.approx(10 + first)
    assert loss.filter(pl.col("step") == 59)["value"][0] == pytest.approx(float(by_step[59].split(b"loss=")[1].split(b" ")[0]))
    _analyze(run)


def test_steps_out_of_order(tmp_path: Path):
    kv = _kv_lines()[:120]
    swapped = kv[:]
    swapped[50], swapped[51] = swapped[51], swapped[50]  # two writers racing on one line each
    swapped[80:90] = reversed(swapped[80:90])
    run = load_run(_log_run(tmp_path, swapped))
    loss = run.tables["scalars"].filter(pl.col("tag") == "loss")
    assert sorted(loss["step"].to_list()) == list(range(1, 121))  # nothing lost or duplicated
    assert len(run.segments) >= 2 and "run-resumed" in _slugs(run)  # reported, not hidden
    _analyze(run)


def test_clock_jumps_backwards(tmp_path: Path):
    """Real lines in step order whose timestamps go back (NTP step / host clock reset)."""
    kv = _kv_lines()[:120]
    stamps = [ln[:23] for ln in kv]
    jumped = stamps[:60] + stamps[5:65]  # at step 61 the clock goes back ~55 steps
    lines = [s + ln[23:] for s, ln in zip(jumped, kv)]
    run = load_run(_log_run(tmp_path, lines))
    walls = run.tables["scalars"].filter(pl.col("tag") == "loss").sort("step")["wall_time"]
    assert (walls.diff().drop_nulls() < 0).any()  # the premise: wall times really go back
    assert [(s.first_step, s.last_step) for s in run.segments] == [(1, 120)]  # steps decide launches, not clocks
    steps = run.tables["steps"]
    assert steps.height == 120
    analysis = _analyze(run)
    assert analysis is not None
