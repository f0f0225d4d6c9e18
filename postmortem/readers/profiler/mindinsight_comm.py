"""``hccl_raw_<r>.csv`` (MindSpore ``hccl_parser``) -> PROFILE_COMM, one row per (step, op).

Columns: ``step_num, communication_cost, wait_cost, link_info, communication_operator_cost``; the
last two are JSON. Per op: ``[step, cost_ms, wait_ms, {"<src>-<dst>": {"SDMA"|"RDMA":
[time_ms, size_KB, bandwidth_KB_per_s(, wait_ms)]}}]`` where size is bytes / 1000. The step row's
own figures are the sums over its ops (its link bandwidths are sums too, so not bandwidths); they
are not kept. The last row (step ``-``) is the average. Meanings: docs/formats/profiler-mindinsight.md.
"""

from __future__ import annotations

import csv
import json
import re
import sys

from ... import diagnostics as dg
from ...model import PROFILE_COMM, Artifact, ReadResult, frame
from .common import MS
from .mindinsight_files import csv_open
from .mindinsight_steps import P2P

KB = 1000  # the parser divides bytes by 1e3


def _field_limit() -> None:
    # A step's op column holds every op of the step as JSON: far beyond csv's 128 KB default.
    csv.field_size_limit(max(csv.field_size_limit(), min(sys.maxsize, (1 << 31) - 1)))


def read_hccl_raw(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    _field_limit()
    opened = csv_open(artifact, result)
    if opened is None:
        return
    lines, header = opened
    need = ("step_num", "communication_cost", "wait_cost", "link_info")
    if any(n not in header for n in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:5]))
        return
    i_step, i_cost, i_wait, i_link = (header.index(n) for n in need)
    i_ops = header.index("communication_operator_cost") if "communication_operator_cost" in header else None
    columns = ("step", "op", "kind", "transport", "transit_s", "wait_s", "bytes", "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in columns}
    kinds: dict[str, str] = {}  # the same ops repeat every step
    for line_no, row in lines:
        try:
            if row[i_step] == "-":
                continue  # the average row
            step = int(row[i_step])
            if i_ops is not None and i_ops < len(row):
                entries = [(name, v[1], v[2], v[3]) for name, v in json.loads(row[i_ops]).items()]
            else:  # older files: the step's sums only
                entries = [("(all)", float(row[i_cost]), float(row[i_wait]), json.loads(row[i_link]))]
            parsed = []  # the whole row or nothing, so the columns stay aligned
            for name, cost, wait, links in entries:
                transport, size_kb, time_ms = _main_link(links)
                kind = kinds.get(name)
                if kind is None:
                    kind = kinds[name] = _kind(name)
                parsed.append((step, name, kind, transport, float(cost) * MS, float(wait) * MS,
                               size_kb * KB if size_kb is not None else None,
                               size_kb * KB / (time_ms * MS) / 1e9 if size_kb and time_ms else None))
        except (ValueError, TypeError, IndexError, KeyError, AttributeError, RecursionError) as exc:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="error",
                                                 detail=type(exc).__name__))
            continue
        for k, values in zip(columns, zip(*parsed)):
            out[k].extend(values)
    if not out["step"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="steps"))
        return
    result.tables["profile_comm"] = frame(
        {**out, "rank": rank, "source": "hccl_raw", "file": artifact.rel}, PROFILE_COMM)


_OP_TYPE = re.compile(r"([A-Za-z]+)-op\d+$")


def _kind(op: str) -> str:
    m = _OP_TYPE.search(op)
    return "p2p" if m and m.group(1).lower() in P2P else "collective"


def _main_link(links: dict) -> tuple[str | None, float | None, float | None]:
    """(transport, size KB, time ms) of the transport that moved the most data between two
    different ranks; copies within a rank ("0-0") only where there is nothing else."""
    totals: dict[tuple[bool, str], list[float]] = {}
    for pair, transports in links.items():
        src, _, dst = pair.partition("-")
        between = src != dst
        for transport, figures in transports.items():
            t = totals.get((between, transport))
            if t is None:
                totals[(between, transport)] = [float(figures[1]), float(figures[0])]
            else:
                t[0] += float(figures[1])
                t[1] += float(figures[0])
    if not totals:
        return None, None, None
    best = max(totals, key=lambda k: (k[0], totals[k][0])) if len(totals) > 1 else next(iter(totals))
    size, time = totals[best]
    return best[1], size, time
