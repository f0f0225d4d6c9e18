"""Memory of MindSpore 2.x / torch_npu profiles -> MEMORY (one time series per component).

- ``memory_record.csv``: allocator totals over time per Component. torch_npu: APP (the process's
  reserved device memory), PTA (its caching allocator), GE, PTA+GE (their sum at each record),
  WORKSPACE; MindSpore: MindSpore, GE, MindSpore+GE (sum), APP. The "+GE" components are sums of
  two others, kept as written (their peak is the peak of the sum).
- ``npu_module_mem.csv``: reserved memory per CANN module (SLOG, HCCL, RUNTIME, ...), as
  components "module:<name>" (names like APP and GE also occur in memory_record.csv).
- ``operator_memory.csv``: one row per allocation the profile saw (size, allocation and release
  time). Read as component "operators": the sum of the allocations alive at each allocation or
  release, i.e. memory taken inside the profiled window (activations, workspaces); weights and
  optimizer state allocated before the window are not in it.
- ``FRAMEWORK/cpu_ms_memory_record_<r>.txt`` (MindSpore): ``Timestamp(ns),Total Allocated(Byte),...``.

Units differ by writer: torch_npu's MB is 2^20 bytes and KB 1024 (its B_TO_MB / KB_TO_MB; the
real files agree: an allocation's Size(KB) / 1024 is the step of Total Allocated(MB)); MindSpore
2.x writes memory_record's MB as KB / 1000 with KB = 1024 bytes (ascend_memory_viewer's
KB_TO_MB = 1000), i.e. 1,024,000 bytes. Timestamps are µs of the host clock (unix time).
"""

from __future__ import annotations

import polars as pl

from ... import diagnostics as dg
from ...model import MEMORY, Artifact, ReadResult, conform, frame
from .ascend_csv import header_of, num, row_by_row, scan
from .common import NS, US, csv_rows, number

MIB, KIB = float(1 << 20), 1024.0
MS_MB = 1024.0 * 1000  # MindSpore 2.x memory_record.csv "MB"


def _read(artifact: Artifact, columns: list[str], result: ReadResult) -> pl.DataFrame:
    try:
        return scan(artifact.path, columns).collect()
    except pl.exceptions.PolarsError as exc:
        return row_by_row(artifact, columns, result, exc)


def _mb(artifact: Artifact, header: list[str], components: set[str], result: ReadResult) -> float:
    """Bytes per MB in this file's columns (module docstring), from its writer."""
    if any(h.endswith("(KB)") for h in header):
        return KIB
    if "_ascend_ms" in artifact.rel or components & {"MindSpore", "MindSpore+GE"}:
        return MS_MB
    if not ("_ascend_pt" in artifact.rel or components & {"PTA", "PTA+GE", "WORKSPACE"}):
        result.diagnostics.append(dg.info("profiler-units", path=artifact.rel))
    return MIB


def read_memory_record(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header = header_of(artifact.path)
    unit = "KB" if "Total Allocated(KB)" in header or "Total Reserved(KB)" in header else "MB"
    cols = {k: f"Total {k.title()}({unit})" for k in ("allocated", "reserved", "active")}
    if "Timestamp(us)" not in header or cols["reserved"] not in header:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    df = _read(artifact, [c for c in ("Component", "Timestamp(us)", *cols.values()) if c in header], result)
    components = set(df["Component"].unique().drop_nulls().to_list()) if "Component" in df.columns else set()
    scale = _mb(artifact, header, components, result)
    mem = df.select(
        (num("Timestamp(us)") * US).alias("time_s"),
        *((num(c) * scale if c in df.columns else pl.lit(None, pl.Float64)).alias(f"{k}_bytes")
          for k, c in cols.items()),
        (pl.col("Component") if "Component" in df.columns else pl.lit(None, pl.Utf8)).alias("component"),
    )
    _finish(mem, rank, artifact, result, "memory_record.csv")


def read_module_memory(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header = header_of(artifact.path)
    col = next((c for c in ("Total Reserved(MB)", "Total Reserved(KB)") if c in header), None)
    if col is None or "Timestamp(us)" not in header or "Component" not in header:
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    df = _read(artifact, ["Component", "Timestamp(us)", col], result)
    mem = df.select(
        (num("Timestamp(us)") * US).alias("time_s"),
        (num(col) * (MIB if col.endswith("(MB)") else KIB)).alias("reserved_bytes"),
        ("module:" + pl.col("Component")).alias("component"),
    )
    _finish(mem, rank, artifact, result, "npu_module_mem.csv")


def read_operator_memory(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header = header_of(artifact.path)
    need = ("Size(KB)", "Allocation Time(us)", "Release Time(us)")
    if any(c not in header for c in need):
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    df = _read(artifact, list(need), result)
    allocs = df.select((num("Size(KB)") * KIB).alias("size"), (num("Allocation Time(us)") * US).alias("alloc"),
                       (num("Release Time(us)") * US).alias("release"))
    bad = allocs.filter(pl.col("size").is_null() | pl.col("alloc").is_null()).height
    if bad:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="allocations", n=bad))
    allocs = allocs.drop_nulls(["size", "alloc"])
    # +size at allocation, -size at release (none: alive until the profile's end); releases first at a tie
    events = pl.concat([
        allocs.select(pl.col("alloc").alias("time_s"), pl.col("size").alias("delta"), pl.lit(1).alias("order")),
        allocs.drop_nulls("release").select(pl.col("release").alias("time_s"), (-pl.col("size")).alias("delta"),
                                            pl.lit(0).alias("order")),
    ]).sort(["time_s", "order"], maintain_order=True)
    mem = events.select("time_s", pl.col("delta").cum_sum().alias("allocated_bytes"),
                        pl.lit("operators").alias("component"))
    _finish(mem, rank, artifact, result, "operator_memory.csv")


def _finish(mem: pl.DataFrame, rank: int | None, artifact: Artifact, result: ReadResult, name: str) -> None:
    bad = mem.filter(pl.col("time_s").is_null()).height
    if bad:
        result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, variant="no-timestamp", n=bad))
    mem = mem.filter(pl.col("time_s").is_not_null())
    if mem.is_empty():
        result.diagnostics.append(dg.warning("profiler-empty", path=artifact.rel, variant="memory"))
        return
    result.tables["memory"] = conform(
        mem.with_columns(pl.lit(rank, pl.Int32).alias("rank"), pl.lit(artifact.rel).alias("file")), MEMORY)


def read_cpu_memory(artifact: Artifact, rank: int | None, result: ReadResult) -> None:
    header, rows = csv_rows(artifact.path, result, artifact.rel)
    if not header or header[0] != "Timestamp(ns)":
        result.diagnostics.append(dg.warning("profiler-columns", path=artifact.rel, offset=1, header=header[:4]))
        return
    out: dict[str, list] = {k: [] for k in ("time_s", "allocated_bytes", "reserved_bytes", "active_bytes")}
    for line_no, row in enumerate(rows, start=2):
        vals = [number(x) for x in row[:4]]
        if len(vals) < 4 or vals[0] is None:
            result.diagnostics.append(dg.warning("profiler-row", path=artifact.rel, offset=line_no, variant="memory"))
            continue
        # integer ns timestamps exceed float precision only below 1 us: fine for memory curves
        out["time_s"].append(int(row[0]) * NS if row[0].strip().isdigit() else vals[0] * NS)
        out["allocated_bytes"].append(vals[1])
        out["reserved_bytes"].append(vals[2])
        out["active_bytes"].append(vals[3])
    result.tables["memory"] = frame({**out, "component": "MindSpore", "rank": rank, "file": artifact.rel}, MEMORY)
