"""The job's layout from its strategy files, as settings (``strategy_*``, source ``strategy:<path>``).

Every rank of a parallel job may save one file; a merged file holds every stage. The layout is
the lowest rank's file's (a merged file's first), the stages are every file's together; files
that disagree on a degree get a note naming both. The keys are the strategy's own, never the
config's: ``analysis/configcheck.py`` sets them against the config's layout.
"""

from __future__ import annotations

import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..model import Setting

# strategy table column -> setting key
DEGREES = {
    "devices_per_stage": "strategy_devices_per_stage",
    "model_parallel": "strategy_model_parallel",
    "data_parallel": "strategy_data_parallel",
    "expert_parallel": "strategy_expert_parallel",
    "optimizer_shard": "strategy_optimizer_shard",
    "pipeline_stages": "strategy_pipeline_stages",
}


def strategy_settings(strategy: pl.DataFrame) -> tuple[list[tuple[str, Setting]], list[Diagnostic]]:
    if strategy.is_empty():
        return [], []
    files = strategy.sort(["merged", "rank", "path"], descending=[True, False, False], nulls_last=True)
    first = files.row(0, named=True)
    source = f"strategy:{first['path']}"
    stages = sorted({s for row in files["stages"].to_list() for s in (row or [])})
    out: list[tuple[str, Setting]] = [
        ("strategy_files", Setting(files.height, source)),
        ("strategy_stages", Setting(stages, source)),
    ]
    notes: list[Diagnostic] = []
    for column, key in DEGREES.items():
        value = first[column]
        if value is not None:
            out.append((key, Setting(int(value), source)))
        if column == "pipeline_stages":
            continue  # only a merged file states it
        others = files.filter(pl.col(column).is_not_null() & (pl.col(column) != value)) if value is not None else files.head(0)
        if others.height:
            other = others.row(0, named=True)
            notes.append(diag.warning("strategy-files-disagree", path=other["path"], key=column, value=value,
                                      other_value=other[column], other_source=first["path"], n=others.height))
    return out, notes
