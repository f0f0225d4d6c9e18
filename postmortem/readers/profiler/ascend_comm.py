"""Communication of MindSpore 2.x / torch_npu profiles: ``communication.json`` (one row per
collective / p2p op and step) and ``communication_matrix.json`` (one row per op and link).

Units, settled on the real files in tests/fixtures/conformance/: times in ms; "Transit Size(MB)"
is 10^6 bytes (all 670 sizes and size-distribution keys of those files are whole numbers of
bytes as 10^6, 4 as 2^20) and "Bandwidth(GB/s)" = Transit Size(MB) / Transit Time(ms), i.e.
10^9 bytes/s. In the Communication Time Info, Elapse = Transit + Wait + Idle and Synchronization
is the part of Wait before the first transfer. SDMA is the sum of the on-chip transports (HCCS,
PCIE, SIO), so the transport of an op is its largest of HCCS / PCIE / SIO / RDMA, never SDMA.
The per-group "Total Op Info" entries are sums the writers add: skipped.
"""

from __future__ import annotations

import re

from ... import diagnostics as dg
from ...model import PROFILE_COMM, Artifact, ReadResult, frame
from .common import MS, Durations, load_json

MB = 1e6  # bytes in the writers' MB (see the module docstring)
_AGGREGATE = re.compile(r"-(?:top1|middle|bottom\d|total)$")  # 2024+ matrix keys: <type>-<rank of op>@<group>
_STEP = re.compile(r"step(\d*)")


def _load(artifact: Artifact, result: ReadResult) -> dict | None:
    try:
        data = load_json(artifact, result)
    except (ValueError, RecursionError) as exc:  # RecursionError: hostile nesting
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, detail=str(exc)[:300]))
        return None
    if not isinstance(data, dict):
        result.diagnostics.append(dg.warning("profiler-json", path=artifact.rel, variant="not-object"))
        return None
    return data


def _ops(data: dict, dropped: list[int]):
    """(step, kind, op key, info) for every op of every step; "Total Op Info" sums skipped.
    Entries of the wrong shape (a step that is not "step<N>" or not an object, a kind or an op
    that is not an object) are counted in ``dropped[0]``."""
    for step_key, kinds in data.items():
        m = _STEP.fullmatch(str(step_key))
        if not m or not isinstance(kinds, dict):
            dropped[0] += 1
            continue
        step = int(m.group(1)) if m.group(1) else None
        for kind, ops in kinds.items():
            if not isinstance(ops, dict):
                dropped[0] += 1
                continue
            for key, info in ops.items():
                if str(key).startswith("Total Op Info"):
                    continue
                if isinstance(info, dict):
                    yield step, kind, str(key), info
                else:
                    dropped[0] += 1


def _warn_dropped(dropped: list[int], kept: int, artifact: Artifact, result: ReadResult) -> None:
    if dropped[0]:
        result.diagnostics.append(dg.warning("profiler-entries-dropped", path=artifact.rel, n=dropped[0], kept=kept))


def _split(key: str) -> tuple[str, str | None]:
    op, at, group = key.rpartition("@")
    return (op, group) if at else (key, None)


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _ms(v: object) -> float | None:
    n = _num(v)
    return n * MS if n is not None else None


def read_communication(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    data = _load(artifact, result)
    if data is None:
        return
    cols = ("step", "op", "group", "kind", "transport", "elapse_s", "wait_s", "transit_s", "synchronization_s",
            "bytes", "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in cols}
    dropped, bad = [0], Durations()
    for step, kind, key, info in _ops(data, dropped):
        t = info.get("Communication Time Info") or {}
        if not isinstance(t, dict) or not isinstance(info.get("Communication Bandwidth Info") or {}, dict):
            dropped[0] += 1
            continue
        times = [_ms(t.get(c)) for c in _TIMES]
        if not all([bad.ok(v, c, 1.0) for v, c in zip(times, _TIMES)]):
            continue
        transport, size_mb, bw = _largest_transport(info.get("Communication Bandwidth Info") or {})
        op, group = _split(key)
        for k, v in zip(cols, (step, op, group, kind, transport, *times,
                               size_mb * MB if size_mb is not None else None, bw)):
            out[k].append(v)
    bad.warn(artifact.rel, result)
    _warn_dropped(dropped, len(out["op"]), artifact, result)
    if not out["op"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="comm-ops"))
        return
    result.tables["profile_comm"] = frame(
        {**out, "rank": rank, "source": "communication.json", "file": artifact.rel}, PROFILE_COMM)


_TIMES = ("Elapse Time(ms)", "Wait Time(ms)", "Transit Time(ms)", "Synchronization Time(ms)")
_TRANSPORTS = ("HCCS", "RDMA", "PCIE", "SIO")  # physical links; SDMA sums HCCS + PCIE + SIO


def _largest_transport(bw_info: dict) -> tuple[str | None, float | None, float | None]:
    """(transport, size MB, bandwidth GB/s) of the link that moved the most bytes."""
    best: tuple[str | None, float | None, float | None] = (None, None, None)
    for name in (*_TRANSPORTS, *(k for k in bw_info if k not in _TRANSPORTS and k != "SDMA")):
        t = bw_info.get(name)
        size = _num(t.get("Transit Size(MB)")) if isinstance(t, dict) else None
        if size and (best[1] is None or size > best[1]):
            best = (name, size, _num(t.get("Bandwidth(GB/s)")))
    return best


def read_matrix(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    data = _load(artifact, result)
    if data is None:
        return
    dropped = [0]
    ops = list(_ops(data, dropped))
    # 2024+ writers (MindSpore 2.x, torch_npu) group ops per type and link: top1 / middle /
    # bottom* are single ops, "total" sums them all; older torch_npu writes every op.
    aggregated = any(_AGGREGATE.search(_split(key)[0]) for _, _, key, _ in ops)
    cols = ("step", "op", "group", "kind", "transport", "src_rank", "dst_rank", "transit_s", "bytes", "bandwidth_gbps")
    out: dict[str, list] = {k: [] for k in cols}
    bad_links = 0
    for step, kind, key, links in ops:
        op, group = _split(key)
        if aggregated and not op.endswith("-total"):
            continue
        for link, info in links.items():
            src, _, dst = str(link).partition("-")
            if not (src.isdigit() and dst.isdigit() and isinstance(info, dict)):
                bad_links += 1
                continue
            size = _num(info.get("Transit Size(MB)"))
            for k, v in zip(cols, (step, op, group, kind, info.get("Transport Type"), int(src), int(dst),
                                   _ms(info.get("Transit Time(ms)")), size * MB if size is not None else None,
                                   _num(info.get("Bandwidth(GB/s)")))):
                out[k].append(v)
    if bad_links:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="links", n=bad_links))
    _warn_dropped(dropped, len(out["op"]), artifact, result)
    if not out["op"]:
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="links"))
        return
    result.tables["profile_comm"] = frame(
        {**out, "rank": rank, "source": "communication_matrix.json", "file": artifact.rel}, PROFILE_COMM)
