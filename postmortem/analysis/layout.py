"""The layout the strategy files hold, for the report: each file's degrees, and the distinct ways
its model parameters are split (a job's thousands of parameters share a handful), with how many
parameters and which ones each way holds."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..model import Run


@dataclass(frozen=True, slots=True)
class StrategyFileRow:
    path: str
    rank: int | None
    format: str
    stages: tuple[int, ...]
    devices_per_stage: int | None
    model_parallel: int | None
    data_parallel: int | None
    expert_parallel: int | None
    optimizer_shard: int | None
    operators: int
    parameters: int


@dataclass(frozen=True, slots=True)
class SplitGroup:
    stage: int
    dev_matrix: tuple[int, ...]
    split: tuple[int, ...]  # parts per tensor dimension
    opt_shard: int
    count: int  # model parameters split this way
    examples: tuple[str, ...]  # the first few, in file order


@dataclass(frozen=True)
class StrategyLayoutView:
    files: tuple[StrategyFileRow, ...]
    groups: tuple[SplitGroup, ...]  # of the first file (the one the settings come from)


EXAMPLES = 3


def strategy_layout(run: Run) -> StrategyLayoutView | None:
    files = run.tables.get("strategy")
    if files is None or files.is_empty():
        return None
    files = files.sort(["merged", "rank", "path"], descending=[True, False, False], nulls_last=True)
    rows = tuple(StrategyFileRow(r["path"], r["rank"], r["format"], tuple(r["stages"] or ()), r["devices_per_stage"],
                                 r["model_parallel"], r["data_parallel"], r["expert_parallel"], r["optimizer_shard"],
                                 r["operators"], r["parameters"]) for r in files.iter_rows(named=True))
    splits = run.tables["strategy_splits"].filter(
        (pl.col("path") == rows[0].path) & (pl.col("kind") == "parameter") & (pl.col("role") == "model")
        & pl.col("split").is_not_null())
    groups = []
    if splits.height:
        keyed = splits.with_columns(pl.col("split").list.first().alias("dims"), pl.int_range(pl.len()).alias("order"))
        agg = (keyed.group_by("stage", "dev_matrix", "dims", "opt_shard")
               .agg(pl.len().alias("count"), pl.col("name").sort_by("order").head(EXAMPLES).alias("examples"),
                    pl.col("order").min().alias("first"))
               .sort("stage", "first"))
        groups = [SplitGroup(r["stage"], tuple(r["dev_matrix"] or ()), tuple(r["dims"] or ()), r["opt_shard"] or 0,
                             r["count"], tuple(r["examples"])) for r in agg.iter_rows(named=True)]
    return StrategyLayoutView(rows, tuple(groups))
