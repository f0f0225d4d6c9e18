"""Strategy files and health records: what reading them costs, against the straightforward way.

    python bench/strategy_health.py

1. A strategy file decoded by readers/strategy.py (protowire, no generated classes) against
   protobuf's generated ``ParallelStrategyMap`` (MindSpore's own ``node_strategy_pb2``, loaded from
   its file without importing mindspore) on MindFormers' real 8-NPU file, in the same run.
2. ``analysis.health.health`` on a scalars table of many steps and tags (the tag rules run on the
   distinct tags) against the same rules applied row by row (``map_elements``).
Figures are medians of repeated runs; the machine is shared, so the ratios are what to read.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from postmortem import tags  # noqa: E402
from postmortem.analysis.health import health  # noqa: E402
from postmortem.model import TABLES, Run, empty  # noqa: E402
from postmortem.readers.strategy import layout_of, read_strategy_file  # noqa: E402

STRATEGY = REPO / "tests" / "fixtures" / "strategy" / "strategy_8_npus.ckpt"


def _median(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def strategy() -> None:
    spec = importlib.util.find_spec("mindspore")
    if spec is None or not spec.submodule_search_locations:
        print("strategy: mindspore not installed, no generated class to compare with")
        return
    path = Path(list(spec.submodule_search_locations)[0]) / "train" / "node_strategy_pb2.py"
    mod_spec = importlib.util.spec_from_file_location("node_strategy_pb2", path)
    pb2 = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(pb2)
    data = STRATEGY.read_bytes()

    def ours():
        layout_of(read_strategy_file(STRATEGY))

    def generated():
        m = pb2.ParallelStrategyMap()
        m.ParseFromString(STRATEGY.read_bytes())
        [(list(d.dim) for d in i.parallel_layouts.dev_matrix) for i in m.parallel_layout_item]

    from postmortem.readers import strategy as module

    def first():  # a cold process: no content, layout or strategy decoded yet
        module._DECODED.clear()
        module._layouts.cache_clear()
        module._strategys.cache_clear()
        ours()

    a, c, b = _median(first, 100), _median(ours, 200), _median(generated, 200)
    print(f"strategy file ({len(data):,} B): postmortem {a * 1e3:.2f} ms the first time (decode + layout), "
          f"{c * 1e3:.3f} ms for each byte-identical file after (another rank of the stage); generated "
          f"ParallelStrategyMap {b * 1e3:.2f} ms (parse only): {a / b:.0f}x the first, {c / b:.2f}x after")


def _scalars(steps: int, layers: int, experts: int) -> pl.DataFrame:
    parts = []
    for tag in ("loss", "grad_norm", "local_norm/model.tok_embeddings.embedding_weight",
                "local_norm/model.layers.0.attention.wq.weight"):
        parts.append(pl.DataFrame({"step": range(1, steps + 1), "tag": tag, "raw_tag": tag,
                                   "value": [0.001 * i for i in range(steps)]}))
    for layer in range(layers):
        for e in range(experts):
            parts.append(pl.DataFrame({"step": range(1, steps + 1), "tag": f"expert_load/{layer}/ep_{e}",
                                       "raw_tag": f"expert_load/{layer}", "value": 1.0 / experts}))
    df = pl.concat(parts).with_columns(pl.lit(0, pl.Int32).alias("rank"), pl.lit(None, pl.Float64).alias("wall_time"),
                                       pl.lit("tensorboard").alias("source"), pl.lit("f").alias("file"))
    return df.select([pl.col(c).cast(t) for c, t in TABLES["scalars"].items()])


def health_rules() -> None:
    steps, layers, experts = 20_000, 4, 8
    scalars = _scalars(steps, layers, experts)
    tables = {name: empty(schema) for name, schema in TABLES.items()}
    tables["scalars"] = scalars
    run = Run(root=".", name="bench", tables=tables, settings={}, inventory=(), segments=(), ranks=(0,), diagnostics=())

    def per_row():
        raw = scalars["raw_tag"].cast(pl.Utf8)
        raw.map_elements(tags.embedding_norm_tag, return_dtype=pl.Boolean)
        scalars["tag"].cast(pl.Utf8).map_elements(lambda t: list(tags.expert_load_of(t) or (None, None)),
                                                 return_dtype=pl.List(pl.Int64))

    a, b = _median(lambda: health(run), 5), _median(per_row, 3)
    print(f"health on {scalars.height:,} scalar rows ({steps:,} steps, {layers} x {experts} experts): "
          f"{a * 1e3:.0f} ms, against {b * 1e3:.0f} ms for the two tag rules alone row by row: {b / a:.1f}x faster")


if __name__ == "__main__":
    strategy()
    health_rules()
