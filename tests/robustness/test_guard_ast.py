"""Every open in postmortem/readers/ goes through readers/guard.py (issue 23, item 3).

The walk is over the source's AST, so a new reader that calls ``open`` itself, hands a path to
polars or sqlite3 without ``guard.checked``, or reads a side file with ``Path.read_text`` fails
here before a FIFO under its file name can hang a build.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from postmortem.readers import guard

READERS = Path(__file__).resolve().parents[2] / "postmortem" / "readers"

# Functions of libraries that open a file by the name they are handed: the name must be
# guard.checked(...) (or the library must be given a file the guard opened).
_BY_NAME = {
    ("pl", "read_csv"), ("pl", "scan_csv"), ("pl", "read_json"), ("pl", "read_ndjson"), ("pl", "scan_ndjson"),
    ("pl", "read_parquet"), ("pl", "scan_parquet"), ("pl", "read_ipc"), ("pl", "scan_ipc"), ("pl", "read_excel"),
    ("polars", "read_csv"), ("polars", "scan_csv"),
}
# Ways to open that only the guard may use.
_FORBIDDEN_ATTR = {("os", "open"), ("io", "open"), ("sqlite3", "connect"), ("mmap", "mmap"), ("np", "fromfile"),
                   ("np", "memmap"), ("np", "load"), ("codecs", "open"), ("gzip", "open"), ("bz2", "open"),
                   ("lzma", "open"), ("tarfile", "open"), ("zipfile", "ZipFile")}
_FORBIDDEN_METHODS = {"read_text", "read_bytes", "open"}  # Path's own ways to open


def _is_guarded(arg: ast.expr) -> bool:
    """``guard.checked(path)``, or bytes already read through the guard (``io.BytesIO(data)``)."""
    return (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
            and isinstance(arg.func.value, ast.Name)
            and ((arg.func.attr == "checked" and arg.func.value.id == "guard")
                 or (arg.func.attr == "BytesIO" and arg.func.value.id == "io")))


def bypasses(source: str, name: str = "<src>") -> list[str]:
    """Each call in ``source`` that opens a file without the guard, as "name:line: what"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        where = f"{name}:{node.lineno}"
        if isinstance(f, ast.Name) and f.id == "open":
            found.append(f"{where}: open()")
        elif isinstance(f, ast.Attribute):
            owner = f.value.id if isinstance(f.value, ast.Name) else None
            if owner == "guard":
                continue
            if (owner, f.attr) in _FORBIDDEN_ATTR:
                found.append(f"{where}: {owner}.{f.attr}()")
            elif (owner, f.attr) in _BY_NAME:
                if not node.args or not _is_guarded(node.args[0]):
                    found.append(f"{where}: {owner}.{f.attr}() without guard.checked()")
            elif f.attr in _FORBIDDEN_METHODS:
                found.append(f"{where}: .{f.attr}()")
    return found


def test_no_reader_opens_a_file_past_the_guard():
    sources = sorted(p for p in READERS.rglob("*.py") if p.name != "guard.py")
    assert len(sources) > 20  # the walk sees the package
    found = [hit for p in sources for hit in bypasses(p.read_text(encoding="utf-8"), str(p.relative_to(READERS)))]
    assert found == []


@pytest.mark.parametrize("snippet", [
    "with open(p) as fh: pass",
    "import os\nfd = os.open(p, os.O_RDONLY)",
    "pl.scan_csv(p)",
    "pl.read_csv(artifact.path, infer_schema=False)",
    "sqlite3.connect(p)",
    "Path(p).read_text()",
    "info.read_bytes()",
])
def test_the_walk_catches_each_way_round(snippet):
    assert bypasses(snippet)


def test_the_guarded_forms_pass():
    assert bypasses("pl.scan_csv(guard.checked(p))\nwith guard.open_file(p) as fh: json.load(fh)\n"
                    "guard.connect_sqlite(p)\nfd, n = guard.open_fd(p)") == []


def test_the_guard_refuses_what_would_block(tmp_path):
    fifo = tmp_path / "profiler_info_0.json"
    os.mkfifo(fifo)
    regular = tmp_path / "info.json.0"
    regular.write_text('{"rank_id": 0}')
    assert guard.refusal(fifo) == "not a regular file: a FIFO"
    assert guard.refusal("/dev/zero") == "not a regular file: a character device"
    assert guard.refusal(tmp_path) == "not a regular file: a folder"
    assert guard.refusal(regular) is None and guard.size(regular) == len('{"rank_id": 0}')
    with pytest.raises(OSError, match="FIFO"):
        guard.open_file(fifo)  # returns at once: opened non-blocking, refused by fstat
    with pytest.raises(OSError, match="FIFO"):
        guard.checked(fifo)
    with pytest.raises(ValueError):
        guard.open_file(regular, "w")
    with guard.open_file(regular, "r", encoding="utf-8") as fh:
        assert fh.read() == '{"rank_id": 0}'
    fd, n = guard.open_fd(regular)
    try:
        assert n == 14 and os.get_blocking(fd) and stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def test_sqlite_through_the_guard_writes_nothing_beside_the_database(tmp_path):
    import sqlite3

    db = tmp_path / "msprof_0.db"
    con = sqlite3.connect(db)  # a real database made by sqlite3 itself
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    before = sorted(os.listdir(tmp_path))
    ro = guard.connect_sqlite(db)
    try:
        assert ro.execute("SELECT x FROM t").fetchall() == [(1,)]
        with pytest.raises(sqlite3.OperationalError):
            ro.execute("INSERT INTO t VALUES (2)")
    finally:
        ro.close()
    assert sorted(os.listdir(tmp_path)) == before
    os.mkfifo(tmp_path / "fifo.db")
    with pytest.raises(OSError, match="FIFO"):
        guard.connect_sqlite(tmp_path / "fifo.db")


def test_a_fifo_given_as_config_is_one_line_and_exit_2(tmp_path):
    """The settings file goes through the guard too, and reading it imports no polars (the CLI
    reads it before it makes its session, which sets polars up)."""
    import subprocess
    import sys

    fifo = tmp_path / "postmortem.toml"
    os.mkfifo(fifo)
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("epoch: 1 step: 1, loss is 2.5\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "postmortem", "build", str(run), "--config", str(fifo), "--format", "json",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error[config-unreadable]: ") and "FIFO" in lines[0]
    probe = subprocess.run([sys.executable, "-c", "import sys, postmortem.config; print('polars' in sys.modules)"],
                           capture_output=True, text=True, env=env, check=True)
    assert probe.stdout.strip() == "False"
