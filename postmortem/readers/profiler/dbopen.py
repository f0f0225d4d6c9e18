"""The one way the profiler readers open an SQLite database (db.py's exports, cluster.py's
cluster_analysis.db): a regular file, read-only and immutable.

``file:<path>?mode=ro&immutable=1``: ``mode=ro`` refuses writes; ``immutable=1`` tells sqlite the
file cannot change, so it takes no locks and never creates a ``-journal``, ``-wal`` or ``-shm`` file
beside the database (nothing is ever written in a run folder). A FIFO under a database's name would
block sqlite's open: a regular file is required first. When ``readers/guard.py`` is present its
``connect_sqlite`` is used (the same promise, through the one door every reader's open passes).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse

try:
    from ..guard import connect_sqlite as _guarded
except ImportError:  # the guard arrives with another branch; until then the same checks here
    _guarded = None


def connect(path: str) -> sqlite3.Connection:
    if _guarded is not None:
        return _guarded(path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(f"not a regular file: {path}")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def columns(con: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table (and view) with its column names: schemas drift, so nothing is assumed."""
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    return {t: {r[1] for r in con.execute(f'PRAGMA table_info("{t}")')} for t in tables}
