"""Slow links: per-link bandwidth against its peers, from transfers big enough to measure it.

msprof-analyze names slow links two ways: its cluster communication matrix (per ``src-dst`` link:
transport, bytes, transfer time, bandwidth; "links of one type should be about as fast, one
clearly below its kind is a slow link") and its advisor's slow-link analysis (per rank, the SDMA
and RDMA bandwidth of its transfers). Here the unit is the link where the records name one
(communication_matrix.json, msprof-analyze's cluster matrix, analysis.db's CommAnalyzerMatrix,
msprof's per-link HCCL tasks), else the rank's transfers over one transport (per-op records).

Only transfers big enough to measure bandwidth count: msprof-analyze's packet rule calls an
SDMA-side transfer (HCCS, PCIE, SIO) under 16 MB, an RDMA one under 1 MB, a small packet
(thresholds.LINK_MIN_BYTES*): its time is latency, not bandwidth. A record that sums several ops
(a per-type "-total" matrix row, a statistics row with ``calls``) is sized per call where the
call count is given, else by its total, and is compared only with its peers, which sum the same
ops. A link's peers are the links of the same transport (and group, where named); it is slow
below thresholds.SLOW_LINK_RATIO of their median (itself included), with at least
thresholds.SLOW_LINK_PEERS peers. LOCAL (on-chip copies) and src == dst records are not links.
A record's transfer time is bytes / its own bandwidth where it gives one (communication.json's
per-op Bandwidth Info is the transport's; its Communication Time Info transit time is the whole
op's and 0 for HCCS ops in torch_npu 2023), else its transit time. Nominal link bandwidths are not used: they differ by device generation and topology, and the
peers of the same run are the fair reference.
"""

from __future__ import annotations

import polars as pl

from ..text import Text
from . import thresholds as th
from .operators import LINK_SOURCES, preferred, source_label, with_transfer_time
from .types import LinkBandwidth, LinkGap, LinkUnit, SlowLinks

# Per-link layouts, best first (a rank's rows come from one of them).
LINK_LAYOUTS = ("cluster_communication_matrix", "analysis_db_matrix", "communication_matrix.json", "msprof_hccl_link")
# Per-op layouts with bytes and transfer time per transport, best first.
OP_LAYOUTS = tuple(s for s in LINK_SOURCES if s not in LINK_LAYOUTS)
NOT_LINKS = ("LOCAL",)
MB = 1e6  # the writers' and msprof-analyze's MB (readers/profiler/ascend_comm.py)


def _rule() -> Text:
    return Text("rule.slow-links", sdma=th.LINK_MIN_BYTES / MB, rdma=th.LINK_MIN_BYTES_RDMA / MB, ratio=th.SLOW_LINK_RATIO,
                peers=th.SLOW_LINK_PEERS)


def link_params(x: LinkBandwidth) -> dict:
    """A slow link as the verdict's numbers (diagnosis params, metrics.json)."""
    return {"unit": str(x.unit), "src": x.src_rank, "dst": x.dst_rank, "group": x.group, "transport": x.transport,
            "bw": x.bandwidth_gbps, "ref": x.reference_gbps, "ratio": x.ratio, "peers": x.peers, "bytes": x.bytes,
            "transit_s": x.transit_s, "transfers": x.transfers}


def slow_links(comm: pl.DataFrame) -> SlowLinks | None:
    """PROFILE_COMM rows -> the judged links and the slow ones; None without communication records."""
    if comm.is_empty():
        return None
    comm = with_transfer_time(comm)
    moved = comm.filter((pl.col("bytes") > 0) & (pl.col("transit_s") > 0) & pl.col("bytes").is_finite()
                        & pl.col("transit_s").is_finite() & pl.col("transport").is_not_null()
                        & ~pl.col("transport").is_in(NOT_LINKS) & (pl.col("src_rank") != pl.col("dst_rank")).fill_null(True))
    if moved.is_empty():  # operator times only (step_trace_raw, kernels), or on-chip copies only
        return SlowLinks(None, source_label(comm), (), (), 0, 0, LinkGap.NO_RECORDS, _rule(), Text("links.no-records"))
    per_link = moved.filter(pl.col("src_rank").is_not_null() & pl.col("dst_rank").is_not_null())
    if not per_link.is_empty():
        unit, rows = LinkUnit.LINK, preferred(per_link, LINK_LAYOUTS)
        key, peers = ["group", "src_rank", "dst_rank", "transport"], ["group", "transport"]
    else:
        rows = preferred(moved.filter(pl.col("src_rank").is_null()), OP_LAYOUTS)
        unit = LinkUnit.RANK
        rows = rows.with_columns(pl.col("rank").alias("src_rank"), pl.lit(None, pl.Int32).alias("dst_rank"),
                                 pl.lit(None, pl.Utf8).alias("group"))
        key, peers = ["src_rank", "transport"], ["transport"]
    if rows.is_empty():
        return None
    calls = pl.col("calls").fill_null(1).clip(1)
    least = pl.when(pl.col("transport") == "RDMA").then(th.LINK_MIN_BYTES_RDMA).otherwise(th.LINK_MIN_BYTES)
    rows = rows.with_columns((pl.col("bytes") / calls).alias("_size"), least.alias("_least"), calls.alias("_calls"))
    big = rows.filter(pl.col("_size") >= pl.col("_least"))
    source = source_label(rows)
    small = rows.height - big.height

    def empty(gap: LinkGap, reason: Text) -> SlowLinks:
        return SlowLinks(unit, source, (), (), big.height, small, gap, _rule(), reason)

    if big.is_empty():
        top = rows.sort(pl.col("_size") / pl.col("_least"), descending=True).row(0, named=True)
        return empty(LinkGap.LATENCY_BOUND, Text("links.latency-bound", n=rows.height, largest=top["_size"],
                                                 transport=top["transport"], least=top["_least"] / MB))
    g = (big.group_by(key).agg(pl.col("bytes").sum(), pl.col("transit_s").sum(), pl.col("_calls").sum().alias("transfers"))
         .with_columns((pl.col("bytes") / pl.col("transit_s") / 1e9).alias("bw")))
    g = g.with_columns(pl.col("bw").median().over(peers, mapping_strategy="group_to_rows").alias("ref"),
                       pl.len().over(peers).alias("peers"))
    judged = g.filter(pl.col("peers") >= th.SLOW_LINK_PEERS).with_columns((pl.col("bw") / pl.col("ref")).alias("ratio"))
    if judged.is_empty():
        return empty(LinkGap.TOO_FEW, Text("links.too-few", n=g.height, most=int(g["peers"].max()), peers=th.SLOW_LINK_PEERS))
    judged = judged.sort([c for c in ("ratio", "src_rank", "dst_rank") if c in judged.columns])
    out = tuple(
        LinkBandwidth(unit=unit, src_rank=int(r["src_rank"]), dst_rank=None if r.get("dst_rank") is None else int(r["dst_rank"]),
                      group=r.get("group"), transport=r["transport"], bytes=float(r["bytes"]), transit_s=float(r["transit_s"]),
                      transfers=int(r["transfers"]), bandwidth_gbps=float(r["bw"]), reference_gbps=float(r["ref"]),
                      peers=int(r["peers"]), ratio=float(r["ratio"]), slow=r["ratio"] < th.SLOW_LINK_RATIO)
        for r in judged.iter_rows(named=True))
    return SlowLinks(unit, source, out, tuple(x for x in out if x.slow), big.height, small, None, _rule())
