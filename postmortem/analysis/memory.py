"""Peak device memory, split into parameters, gradients, optimizer state and the rest — the
article's "显存峰值要区分参数、梯度和中间激活" (§2.1 table).

The peak is from the profiler's memory record: per rank the largest allocation of its total
series (the framework + GE sum where the writer gives one), and the rank with the highest peak is
shown. The static part is sized from a checkpoint header of that rank (else of the lowest rank):
parameters = the model tensors' elements x their dtype size; gradients = the same again (one
gradient per parameter, in its dtype: an upper bound, frozen parameters have none); optimizer
state = the optimizer tensors. What is left of the peak is activations, workspaces and
fragmentation ("activations and other").
"""

from __future__ import annotations

import polars as pl

from ..model import Run
from .peaks import find_peak
from .types import MemoryBreakdown, MemoryGap

# The memory record's series that stands for the whole device use, best first: the sums of the
# framework and GE (torch_npu, MindSpore 2.x), then the framework alone, GE, the process (APP).
TOTAL_COMPONENTS = ("PTA+GE", "MindSpore+GE", "PTA", "MindSpore", "GE", "APP")
DTYPE_BYTES = {
    "float64": 8, "f64": 8, "double": 8, "int64": 8, "i64": 8, "uint64": 8, "u64": 8, "complex64": 8,
    "float32": 4, "f32": 4, "int32": 4, "i32": 4, "uint32": 4, "u32": 4,
    "float16": 2, "f16": 2, "bfloat16": 2, "bf16": 2, "int16": 2, "i16": 2, "uint16": 2, "u16": 2,
    "int8": 1, "i8": 1, "uint8": 1, "u8": 1, "bool": 1, "bool_": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "hifloat8": 1, "f8_e4m3": 1, "f8_e5m2": 1,
}


def _peak(memory: pl.DataFrame) -> tuple[int | None, str | None, float | None, float | None]:
    """(rank, component, peak allocated, peak reserved) of the rank with the highest peak."""
    mem = memory.filter(~pl.col("component").fill_null("").str.starts_with("module:")
                        & (pl.col("component").fill_null("") != "operators"))
    if mem.is_empty():
        return None, None, None, None
    pref = pl.col("component").replace_strict({c: i for i, c in enumerate(TOTAL_COMPONENTS)}, default=len(TOTAL_COMPONENTS),
                                              return_dtype=pl.Int32)
    alloc = mem.filter(pl.col("allocated_bytes").is_finite()).with_columns(pref.alias("_p"))
    alloc = alloc.filter(pl.col("_p") == pl.col("_p").min().over(pl.col("rank").fill_null(-1)))
    reserved = mem.filter(pl.col("reserved_bytes").is_finite()).group_by("rank").agg(pl.col("reserved_bytes").max())
    if alloc.is_empty():
        if reserved.is_empty():
            return None, None, None, None
        r, res = reserved.sort("reserved_bytes", descending=True).row(0)
        return r, None, None, float(res)
    per = alloc.group_by("rank", "component").agg(pl.col("allocated_bytes").max()).sort(
        ["allocated_bytes", "rank"], descending=[True, False], nulls_last=True)
    rank, component, peak = per.row(0)
    res = reserved.filter(pl.col("rank").fill_null(-1) == (rank if rank is not None else -1))["reserved_bytes"]
    return rank, component, float(peak), float(res[0]) if res.len() else None


def _static(run: Run, rank: int | None) -> tuple[str | None, dict[str, float]]:
    """(checkpoint path, bytes by role) of the latest train checkpoint of ``rank`` (else the lowest rank's)."""
    params = run.tables["checkpoint_params"]
    ckpts = run.tables["checkpoints"].filter((pl.col("kind") == "train")
                                             & pl.col("path").is_in(params["path"].unique().implode()))
    if ckpts.is_empty():
        return None, {}
    mine = ckpts.filter(pl.col("rank") == rank) if rank is not None else ckpts.clear()
    pick = (mine if not mine.is_empty() else ckpts).sort(["rank", "step", "path"], descending=[False, True, False],
                                                          nulls_last=True)
    path = pick["path"][0]
    rows = params.filter(pl.col("path") == path).with_columns(
        pl.col("dtype").str.to_lowercase().replace_strict(DTYPE_BYTES, default=None, return_dtype=pl.Int64).alias("size"))
    if rows["size"].null_count() and not rows.filter(pl.col("size").is_null() & (pl.col("role") != "bookkeeping")).is_empty():
        return path, {}  # a dtype we cannot size: no split rather than a wrong one
    by_role = rows.group_by("role").agg((pl.col("elements") * pl.col("size")).sum())
    return path, {role: float(b) for role, b in by_role.iter_rows()}


def memory_breakdown(run: Run, device: str | None) -> MemoryBreakdown | None:
    memory = run.tables["memory"]
    if memory.is_empty():
        return None
    rank, component, peak, reserved = _peak(memory)
    spec = find_peak(device)
    capacity = spec.memory_bytes if spec else None
    share = peak / capacity if peak is not None and capacity else None
    path, by_role = _static(run, rank)
    gap = None
    params = by_role.get("model") if by_role else None
    optim = by_role.get("optimizer", 0.0) if by_role else None
    grads = params
    rest = None
    if peak is None:
        gap = MemoryGap.NO_PEAK
    elif not by_role:
        gap = MemoryGap.NO_CHECKPOINT
    else:
        static = (params or 0.0) + (grads or 0.0) + (optim or 0.0)
        if static > peak:
            gap = MemoryGap.STATIC_OVER_PEAK
        else:
            rest = peak - static
    return MemoryBreakdown(
        rank=int(rank) if rank is not None else None, component=component, peak_bytes=peak, reserved_bytes=reserved,
        capacity_bytes=capacity, peak_share=share, parameters_bytes=params, gradients_bytes=grads,
        optimizer_bytes=optim, activations_bytes=rest, checkpoint=path, gap=gap,
    )
