"""The one way the profiler readers open an SQLite database (db.py's exports, cluster.py's
cluster_analysis.db): through the guard (``readers/guard.py`` ``connect_sqlite``), read-only
and immutable.

``file:<path>?mode=ro&immutable=1``: ``mode=ro`` refuses writes; ``immutable=1`` tells sqlite the
file cannot change, so it takes no locks and never creates a ``-journal``, ``-wal`` or ``-shm`` file
beside the database (nothing is ever written in a run folder). A FIFO under a database's name would
block sqlite's open: the guard requires a regular file first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ... import diagnostics as dg
from ...model import Artifact, ReadResult
from ..guard import connect_sqlite as connect

__all__ = ["columns", "connect", "with_database"]


def with_database(artifact: Artifact, result: ReadResult, read: Callable[[sqlite3.Connection], None]) -> None:
    """Run ``read`` on the database, always closed after; a file the guard refuses, that is not a
    database or is damaged part way is one ``profiler-unreadable`` warning, never a raise."""
    try:
        con = connect(artifact.path)
    except (OSError, sqlite3.Error) as exc:
        result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=str(exc)))
        return
    try:
        read(con)
    except sqlite3.Error as exc:
        result.diagnostics.append(dg.warning("profiler-unreadable", path=artifact.rel, detail=str(exc)))
    finally:
        con.close()


def columns(con: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table (and view) with its column names: schemas drift, so nothing is assumed."""
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    return {t: {r[1] for r in con.execute(f'PRAGMA table_info("{t}")')} for t in tables}
