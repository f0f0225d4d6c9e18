"""One communication operator's figures as CANN msprof's communication analysis writes them.

The same per-operator record appears in ``PROF_*/analyze/communication.json`` (msprof
``--analyze``), in the ``communication.json`` MindSpore and torch_npu copy from it, and per rank in
msprof-analyze's ``cluster_communication.json``::

    {"Communication Time Info": {"Start Timestamp(us)", "Elapse Time(ms)", "Transit Time(ms)",
                                 "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)", ...},
     "Communication Bandwidth Info": {"RDMA"|"HCCS"|"PCIE"|"SIO"|"SDMA":
                                 {"Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", ...}}}

Units from the writer (msprof ``analysis/msparser/cluster/communication_parser.py`` and
``number_constant.py``): times in ms (ns / 1e6); sizes in MB of 1000**2 bytes
(``COMMUNICATION_B_to_MB = 1000**2``); bandwidth GB/s = (MB / 1000) / (ms / 1000), i.e. 1e9 bytes/s.
SDMA is not a link of its own: msprof adds HCCS, PCIE and SIO into it (``combine_sdma_info``), so
bytes are SDMA + RDMA (intra-node + inter-node), never the sum of every key.
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import MS

MB = 1000**2  # msprof's communication MB (COMMUNICATION_B_to_MB)
_LINKS = ("HCCS", "PCIE", "SIO")  # the parts of SDMA


@dataclass(frozen=True)
class OpFigures:
    elapse_s: float | None
    wait_s: float | None
    transit_s: float | None
    synchronization_s: float | None
    bytes: float | None
    bandwidth_gbps: float | None  # bytes / transit time of the links that carried them
    transport: str | None  # the links that carried bytes, e.g. "HCCS", "HCCS+RDMA"


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _ms(v: object) -> float | None:
    x = _num(v)
    return x * MS if x is not None else None


def op_figures(info: dict) -> OpFigures:
    t = info.get("Communication Time Info")
    t = t if isinstance(t, dict) else {}
    bw = info.get("Communication Bandwidth Info")
    bw = bw if isinstance(bw, dict) else {}

    def field(transport: str, key: str) -> float:
        entry = bw.get(transport)
        return (_num(entry.get(key)) or 0.0) if isinstance(entry, dict) else 0.0

    parts_mb = sum(field(k, "Transit Size(MB)") for k in _LINKS)
    parts_ms = sum(field(k, "Transit Time(ms)") for k in _LINKS)
    # SDMA already holds HCCS + PCIE + SIO; older files may lack it, so take the larger.
    sdma_mb, sdma_ms = max((field("SDMA", "Transit Size(MB)"), field("SDMA", "Transit Time(ms)")), (parts_mb, parts_ms))
    size_mb = sdma_mb + field("RDMA", "Transit Size(MB)")
    time_ms = sdma_ms + field("RDMA", "Transit Time(ms)")
    carried = [k for k in (*_LINKS, "RDMA") if field(k, "Transit Size(MB)") > 0]
    if not carried and sdma_mb > 0:
        carried = ["SDMA"]
    return OpFigures(
        elapse_s=_ms(t.get("Elapse Time(ms)")),
        wait_s=_ms(t.get("Wait Time(ms)")),
        transit_s=_ms(t.get("Transit Time(ms)")),
        synchronization_s=_ms(t.get("Synchronization Time(ms)")),
        bytes=size_mb * MB if bw else None,
        bandwidth_gbps=(size_mb / 1000) / (time_ms / 1000) if time_ms > 0 else None,
        transport="+".join(carried) or None,
    )


def kind_of(op: str) -> str:
    """p2p for send / receive / batchsendrecv operators (msprof-analyze's P2P_HCOM), else collective."""
    low = op.lower()
    return "p2p" if low.startswith(("hcom_send", "hcom_receive", "hcom_batchsendrecv")) else "collective"


def group_of(op: str) -> str | None:
    return op.rsplit("@", 1)[1] if "@" in op else None


def is_total(op: str) -> bool:
    """The writers' own sums: msprof's "total" entry, msprof-analyze's "Total Op Info@<group>"."""
    low = op.lower()
    return low.startswith("total")
