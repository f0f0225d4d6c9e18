"""What a profiler DB export holds beyond steps, operators and communication times: the
communication groups (``META_DATA`` ``parallel_group_info``), the AI Core frequency
(``AICORE_FREQ``), each communication op's part no compute covers, and the device's longest idle
gaps with what the host was doing meanwhile.

The idle-gap reasons follow msprof-analyze 26.2's ``free_analysis`` recipe (its rules, not its
code): a gap is the time between two merged busy intervals (compute tasks ∪ communication ops);
the device tasks that ran inside it (memory copies, ...) are named; otherwise the task before and
the task after it are traced back through ``CANN_API`` (same connectionId) to ``PYTORCH_API``
(``CONNECTION_IDS``): when the host's wait from dispatch to launch grew by less than 50 µs across
the gap, the framework dispatched nothing (``host-idle``); else the launch layer held it: the gap
between the two launches (``launch-gap``) or one long launch (``slow-launch``).
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from ...model import PROFILE_FREE, PROFILE_FREQ, Artifact, ReadResult, frame
from .common import NS
from .groups import put_groups

FREE_KEPT = 10  # gaps kept per rank, longest first (free_analysis' default top_num)
HOST_WAIT_GROWTH_NS = 50_000  # free_analysis DIFF_WAIT_THRESHOLD_NS


def read_groups(con: sqlite3.Connection, schema: dict[str, set[str]], rank: int | None, artifact: Artifact,
                result: ReadResult) -> bool:
    if not {"name", "value"} <= schema.get("META_DATA", set()):
        return False
    row = con.execute("SELECT value FROM META_DATA WHERE name = 'parallel_group_info'").fetchone()
    if not row:
        return False
    try:
        info = json.loads(row[0])
    except (TypeError, ValueError):
        return False
    return put_groups(info, rank, "profiler_db_meta", artifact, result)


def read_frequency(con: sqlite3.Connection, schema: dict[str, set[str]], rank: int | None, base: int,
                   artifact: Artifact, result: ReadResult) -> int:
    if not {"timestampNs", "freq"} <= schema.get("AICORE_FREQ", set()):
        return 0
    rows = con.execute("SELECT timestampNs - ?, freq FROM AICORE_FREQ WHERE typeof(freq) IN ('integer', 'real') "
                       "AND typeof(timestampNs) IN ('integer', 'real') ORDER BY timestampNs", (base,)).fetchall()
    if rows:
        t, f = zip(*rows)
        result.tables["profile_freq"] = frame({"rank": rank, "time_s": [float(x) * NS for x in t],
                                               "freq_mhz": [float(x) for x in f], "source": "profiler_db",
                                               "file": artifact.rel}, PROFILE_FREQ)
    return len(rows)


def covered_each(s: np.ndarray, e: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each [lo, hi], the length of the disjoint sorted intervals (s, e) inside it."""
    if s.size == 0:
        return np.zeros(lo.size)
    cum = np.concatenate([[0.0], np.cumsum(e - s)])

    def upto(x: np.ndarray) -> np.ndarray:  # covered length in (-inf, x]
        i = np.searchsorted(s, x, side="right")  # intervals starting at or before x
        full = cum[np.clip(i - 1, 0, None)]
        last = np.where(i > 0, np.clip(x - s[np.clip(i - 1, 0, None)], 0, None), 0.0)
        last = np.minimum(last, np.where(i > 0, (e - s)[np.clip(i - 1, 0, None)], 0.0))
        return np.where(i > 0, full + last, 0.0)

    return np.clip(upto(hi) - upto(lo), 0, None)


def free_gaps(con: sqlite3.Connection, schema: dict[str, set[str]], busy: tuple[np.ndarray, np.ndarray], base: int,
              rank: int | None, step_of, artifact: Artifact, result: ReadResult) -> int:
    """The FREE_KEPT longest gaps between busy intervals, each with its reason."""
    s, e = busy
    if s.size < 2:
        return 0
    gap_lo, gap_hi = e[:-1], s[1:]
    order = np.argsort(-(gap_hi - gap_lo), kind="stable")[:FREE_KEPT]
    order = order[(gap_hi - gap_lo)[order] > 0]
    if order.size == 0:
        return 0
    out: dict[str, list] = {k: [] for k in ("start_s", "duration_s", "reason", "host_idle_s", "launch_s")}
    for i in order:
        lo, hi = float(gap_lo[i]), float(gap_hi[i])
        reason, host, launch = _reason(con, schema, int(lo) + base, int(hi) + base)
        out["start_s"].append(lo * NS)
        out["duration_s"].append((hi - lo) * NS)
        out["reason"].append(reason)
        out["host_idle_s"].append(None if host is None else host * NS)
        out["launch_s"].append(None if launch is None else launch * NS)
    steps = step_of(gap_lo[order]).to_list()
    result.tables["profile_free"] = frame({**out, "rank": rank, "step": steps, "source": "profiler_db",
                                           "file": artifact.rel}, PROFILE_FREE)
    return int(order.size)


NEIGHBOURS = 64  # tasks started before a gap searched for the one that ended last before it


def _neighbours(con: sqlite3.Connection, lo: int, hi: int) -> tuple[bool, int | None, int | None]:
    """(a task ran inside the gap, connectionId of the task that ended last before it, of the first
    after it). Each a query on TASK's own index (startNs): a gap needs a few rows, never the table."""
    inside = con.execute("SELECT 1 FROM TASK WHERE startNs > ? AND startNs < ? AND endNs < ? LIMIT 1",
                         (lo, hi, hi)).fetchone() is not None
    before = con.execute("SELECT IFNULL(connectionId, -1), endNs FROM TASK WHERE startNs <= ? AND endNs <= ? "
                         "ORDER BY startNs DESC LIMIT ?", (lo, lo, NEIGHBOURS)).fetchall()
    after = con.execute("SELECT IFNULL(connectionId, -1) FROM TASK WHERE startNs >= ? AND endNs IS NOT NULL "
                        "ORDER BY startNs LIMIT 1", (hi,)).fetchone()
    prev = max(before, key=lambda r: r[1])[0] if before else None
    return inside, prev, after[0] if after else None


def _dispatch(con: sqlite3.Connection, schema: dict[str, set[str]], conn: int) -> tuple | None:
    """(cann start, cann end, framework end) of the launch that made a task, None where unrecorded."""
    if conn < 0 or not {"startNs", "endNs", "connectionId"} <= schema.get("CANN_API", set()):
        return None
    cann = con.execute("SELECT startNs, endNs FROM CANN_API WHERE connectionId = ?", (conn,)).fetchone()
    if not cann or {"id", "connectionId"} - schema.get("CONNECTION_IDS", set()) or \
            {"endNs", "connectionId"} - schema.get("PYTORCH_API", set()):
        return None
    fw = con.execute("SELECT CAST(p.endNs AS INTEGER) FROM CONNECTION_IDS c JOIN PYTORCH_API p ON p.connectionId = c.id "
                     "WHERE c.connectionId = ? LIMIT 1", (conn,)).fetchone()
    ok = fw and all(isinstance(v, int) for v in (*cann, fw[0]))
    return (cann[0], cann[1], fw[0]) if ok else None  # ns since the epoch: kept integers, exact differences


def _reason(con: sqlite3.Connection, schema: dict[str, set[str]], lo: int, hi: int) -> tuple[str, int | None, int | None]:
    if not {"startNs", "endNs", "connectionId"} <= schema.get("TASK", set()):
        return "no-dispatch-record", None, None
    inside, before, after = _neighbours(con, lo, hi)
    if inside:
        return "device-task", None, None
    if before is None or after is None:
        return "no-dispatch-record", None, None
    prev, nxt = _dispatch(con, schema, before), _dispatch(con, schema, after)
    if prev is None or nxt is None:
        return "no-dispatch-record", None, None
    host = nxt[2] - prev[2]
    if (nxt[0] - nxt[2]) - (prev[0] - prev[2]) < HOST_WAIT_GROWTH_NS:
        return "host-idle", host, None
    gap = nxt[0] - prev[1]
    longest = max(prev[1] - prev[0], nxt[1] - nxt[0])
    return ("launch-gap", host, gap) if gap >= longest else ("slow-launch", host, longest)
