"""How far each source is trusted: for the value of a step, and for the time a step ended."""

from __future__ import annotations

import polars as pl

# Lower index wins when two sources give the same tag at the same step.
SOURCE_PRIORITY = (
    "callback",  # postmortem's own training callback: measured in the training process (readers/callback.py)
    "summary",
    "tensorboard",
    "log:kv",
    "log:json",
    "log:mindformers",
    "log:pynative",
    "log:modelzoo",
    "log:mindyolo",
    "log:flops",
    "log:lossmonitor",
    "log:timemonitor",
    "log:eval",
    "log:fields",  # a line read by its fields (readers/textlog/fields.py): below every writer's own shape
)
# Per-epoch averages: usable when nothing per-step exists, never compared against per-step values.
AVERAGED_SOURCES = ("log:timemonitor",)

# Sources that open a new file per launch. When a resumed launch restarts its step counter
# (MindSpore's Model.train counts cur_step_num from 1 again, and so does the summary it writes),
# its file's steps are local to the launch.
FILE_PER_LAUNCH = ("callback", "summary", "tensorboard")


def labels(column: pl.Series) -> list[str]:
    """Every label a categorical column's categories hold (possibly more than it uses): a cheap
    superset to pick names from, where scanning the column's values would cost a pass."""
    return [label for label in column.dtype.categories.to_series().to_list() if label is not None]


def source_rank(source: str | None) -> int:
    if source is None:
        return len(SOURCE_PRIORITY) + 1
    try:
        return SOURCE_PRIORITY.index(source)
    except ValueError:
        return len(SOURCE_PRIORITY)


def clock_rank(source: str) -> int:
    """How closely a source's wall times follow the step's end (lower is closer).

    tensorboardX stamps an event with time.time() in the training process when the scalar is
    added, and a log line gets its time when it is printed. A summary event is stamped by
    MindSpore's writer process when it takes the record off its queue (`_writer_pool.py`:
    ``apply_async(_pack_data, (data, time.time()))``): in the mf-tb-ms truth run 11 ms late in the
    median, up to 0.24 s after an evaluation, when the training process was busy."""
    if source == "callback":  # time.time() at the step's end, taken by the step-end hook itself
        return -1
    if source == "tensorboard":
        return 0
    if source.startswith("log:"):
        return 1
    if source == "summary":
        return 3
    return 2
