"""End to end through ``postmortem.cli.main``: bad input gives a report whose data-quality section
says what was wrong, or one ``error[slug]: ...`` line with exit code 2. Never a traceback, never a
write into the run folder, never a partial report (render failure, disk full, SIGKILL).
"""

from __future__ import annotations

import errno
import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from postmortem import archive
from postmortem.cli import main

from .conftest import ROOT, SAMPLES, copy_run, tree_state

EXPERIMENT = "exp"


def cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text
    return code, text


def _error_line(text: str, slug: str) -> None:
    lines = [ln for ln in text.splitlines() if ln.startswith("error[")]
    assert len(lines) == 1 and lines[0].startswith(f"error[{slug}]: "), text


def _data_quality(html: str) -> str:
    start = html.index('id="data-quality"')
    end = html.find("<section", start + 1)
    return html[start : end if end > 0 else len(html)]


def _staging_left(out: Path) -> list[str]:
    return [str(p.relative_to(out)) for p in out.rglob(".staging-*")] + [str(p.relative_to(out)) for p in out.rglob(".old-*")]


# --------------------------------------------------------------------------- exit 2 on unusable input


def test_unusable_run_folders_exit_2(capsys, tmp_path: Path):
    out = tmp_path / "out"
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file.log").write_bytes((SAMPLES / "gpt-tiny-base/train.log").read_bytes())
    for target, slug in ((tmp_path / "empty", "run-dir-empty"), (tmp_path / "missing", "run-dir-missing"),
                         (tmp_path / "a-file.log", "run-dir-not-a-directory")):
        for command in (["build", str(target), "--out", str(out)], ["inspect", str(target)]):
            code, text = cli(capsys, *command)
            assert code == 2
            _error_line(text, slug)
    assert not out.exists()


def test_out_inside_run_folder_is_refused(capsys, tmp_path: Path):
    run = copy_run(SAMPLES / "gpt-tiny-base", tmp_path / "run")
    before = tree_state(run)
    code, text = cli(capsys, "build", str(run), "--out", str(run / "reports"), "--format", "md")
    assert code == 2
    _error_line(text, "out-inside-run")
    assert tree_state(run) == before


# --------------------------------------------------------------------------- a damaged, read-only run


@pytest.fixture(scope="module")
def damaged_build(tmp_path_factory):
    """One build of a real run damaged every way at once, from a read-only folder."""
    base = tmp_path_factory.mktemp("damaged")
    run = copy_run(SAMPLES / "gpt-tiny-base", base / "run")
    ms = next((run / "summary").glob("*_MS"))
    ms.write_bytes(ms.read_bytes()[:-37])  # killed writer: last record cut
    ck = run / "checkpoint" / "tiny_gpt-3_100.ckpt"
    ck.write_bytes(ck.read_bytes()[: ck.stat().st_size // 2])
    (run / "config.yaml").write_bytes((run / "config.yaml").read_bytes() + b"\nmodel: [unclosed\n")
    log = run / "train.log"
    log.write_bytes(log.read_bytes() + b"\xff\xfe garbage \x80\n")
    os.symlink("/etc/passwd", run / "passwd.log")
    os.mkfifo(run / "pipe.log")
    for dirpath, dirnames, filenames in os.walk(run):  # chmod -R a-w
        for name in filenames + dirnames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, stat.S_IMODE(os.lstat(p).st_mode) & ~0o222)
    os.chmod(run, 0o555)
    before = tree_state(run)
    out = base / "out"
    code = main(["build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "damaged", "--format", "html,json,md"])
    yield run, out, code, before
    os.chmod(run, 0o755)


def test_damaged_run_reports_every_problem(damaged_build, capsys):
    run, out, code, before = damaged_build
    assert code == 0
    html = (out / EXPERIMENT / "damaged" / "report.html").read_text(encoding="utf-8")
    quality = _data_quality(html)
    for slug in ("summary-truncated", "ckpt-truncated", "config-unparseable", "log-encoding", "symlink-outside", "special-file"):
        assert slug in quality, slug
    metrics = json.loads((out / EXPERIMENT / "damaged" / "metrics.json").read_text())
    assert metrics["run"]["steps"]["last"] == 300  # the data before the damage is all there


def test_nothing_written_into_the_run_folder(damaged_build):
    run, out, code, before = damaged_build
    assert tree_state(run) == before  # names, modes, sizes, mtimes and hashes unchanged


# --------------------------------------------------------------------------- failures leave no partial report


@pytest.fixture
def previous(tmp_path: Path, capsys):
    """A run with a complete earlier report in the archive."""
    run = copy_run(SAMPLES / "gpt-tiny-base", tmp_path / "run")
    out = tmp_path / "out"
    code, _ = cli(capsys, "build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "r1", "--format", "md,json")
    assert code == 0
    return run, out, tree_state(out / EXPERIMENT / "r1")


def test_disk_full_while_writing_keeps_the_previous_report(previous, capsys, monkeypatch):
    run, out, old = previous
    real = pathlib.Path.write_bytes
    calls = []

    def full_disk(self, data):
        calls.append(self.name)
        if len(calls) == 2:  # the first file is in staging, the second hits a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data)

    monkeypatch.setattr(pathlib.Path, "write_bytes", full_disk)
    code, text = cli(capsys, "build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "r1", "--format", "md,json")
    assert code == 2 and len(calls) == 2
    _error_line(text, "out-write-failed")
    assert "No space left" in text
    assert tree_state(out / EXPERIMENT / "r1") == old
    assert _staging_left(out) == []


def test_render_failure_writes_nothing(previous, capsys, monkeypatch):
    run, out, old = previous
    import postmortem.report.markdown as md

    def broken(view):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real = md.render_markdown
    monkeypatch.setattr(md, "render_markdown", broken)
    code, text = cli(capsys, "build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "r1", "--format", "md,json")
    assert code == 2
    _error_line(text, "render-failed")
    assert tree_state(out / EXPERIMENT / "r1") == old
    monkeypatch.setattr(md, "render_markdown", real)
    code, text = cli(capsys, "build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "r2", "--format", "md,json")
    assert code == 0  # (sanity: the same build works once the renderer does)
    monkeypatch.setattr(md, "render_markdown", broken)
    code, text = cli(capsys, "build", str(run), "--out", str(out), "--experiment", EXPERIMENT, "--run-id", "r3", "--format", "md,json")
    assert code == 2 and not (out / EXPERIMENT / "r3").exists()
    assert _staging_left(out) == []


# Kill points: the subprocess pauses at one of them (a flag file says it is there) and is SIGKILLed.
_KILL_SCRIPT = r"""
import os, sys, time
from pathlib import Path
import postmortem.pipeline as pipeline, postmortem.archive as archive
point, flag = sys.argv[1], sys.argv[2]

def stop_here():
    Path(flag).write_text(str(os.getpid()))
    time.sleep(600)

if point == "reading":
    real_load = pipeline.load_run
    pipeline.load_run = lambda *a, **k: (stop_here(), real_load(*a, **k))[1]
elif point == "staged":
    real_swap = archive._swap_into_place
    def swap(*a, **k):  # everything is staged; the swap has not begun
        stop_here()
        return real_swap(*a, **k)
    archive._swap_into_place = swap
elif point == "swap":
    real_exchange = archive._exchange
    def exchange(a, b):  # the atomic swap happened; the previous report is not yet deleted
        done = real_exchange(a, b)
        stop_here()
        return done
    archive._exchange = exchange
elif point == "indexes":
    pipeline._update_indexes = lambda *a, **k: stop_here()
from postmortem.cli import main
sys.exit(main(sys.argv[3:]))
"""


def test_sigkill_at_every_stage(previous, tmp_path: Path, capsys):
    run, out, old = previous
    points = ("reading", "staged", "swap", "indexes")
    procs = {}
    for point in points:
        arch = tmp_path / f"out-{point}"
        shutil.copytree(out, arch)
        flag = tmp_path / f"flag-{point}"
        procs[point] = (arch, flag, subprocess.Popen(
            [sys.executable, "-c", _KILL_SCRIPT, point, str(flag), "build", str(run), "--out", str(arch),
             "--experiment", EXPERIMENT, "--run-id", "r1", "--format", "md,json"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    leftovers = {}
    for point, (arch, flag, proc) in procs.items():
        while not flag.exists():
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        target = arch / EXPERIMENT / "r1"
        if point in ("reading", "staged"):
            assert tree_state(target) == old  # untouched previous report
        else:  # after the atomic exchange there is never a moment without a complete report
            assert {"summary.md", "metrics.json", "data"} <= {p.name for p in target.iterdir()}  # the new, complete one
            json.loads((target / "metrics.json").read_text())
        # hidden leftovers never show up in the archive listing or the index
        assert [r.run_id for r in archive.list_runs(arch)] == ["r1"]
        # the next build succeeds and gives a complete report
        code, text = cli(capsys, "build", str(run), "--out", str(arch), "--experiment", EXPERIMENT, "--run-id", "r1", "--format", "md,json")
        assert code == 0
        assert {"summary.md", "metrics.json", "data"} <= {p.name for p in (arch / EXPERIMENT / "r1").iterdir()}
        index = json.loads((arch / "index.json").read_text())
        assert all(not str(v).startswith(".") for row in index.get("runs", []) for v in (row.get("run_id"),))
        leftovers[point] = _staging_left(arch)
    # A killed build may leave a hidden staging folder; the next build of that run removes it.
    assert leftovers == {point: [] for point in points}
