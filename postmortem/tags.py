"""Every tag's names and units, in one module.

* ``CANONICAL_TAGS``: the raw names that mean one quantity (loss in the summary, ``lm loss`` in
  Megatron's TensorBoard, ``loss`` in a log) map to one canonical tag.
* ``UNIT_CHOICES``: a tag whose writer does not state its unit (a TensorBoard or summary scalar,
  a user's ``step_time=`` key) has candidate units. The reader reads it in the default unit (the
  one its best-known writer uses); loading (``load/units.py``) then checks each file's values
  against the wall clock and the other sources and rescales the file where the evidence says
  another candidate is its unit. Tags with a stated unit (``per_step_time: 812ms``, ``step_ms=``)
  are converted by the reader and never second-guessed.
* ``CONFLICT_TOLERANCE``: how far two sources of one tag may differ before it is a conflict.

Canonical units: durations in seconds, rates in the unit the canonical tag names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Same quantity, different sources: one canonical tag.
CANONICAL_TAGS: dict[str, str] = {
    # MindSpore summary / ScalarSummary
    "loss/auto": "loss",
    "loss": "loss",
    "lr": "lr",
    "learning_rate": "lr",
    "learning-rate": "lr",
    "learning rate": "lr",
    "grad_norm": "grad_norm",
    "grad-norm": "grad_norm",
    "global_norm": "grad_norm",
    "gradnorm": "grad_norm",
    "step_time": "step_time",
    "iteration-time": "step_time",
    "iteration_time": "step_time",
    "per_step_time": "step_time",
    "step_ms": "step_time",  # converted ms -> s by the reader
    "data_time": "data_time",
    "data_ms": "data_time",
    "throughput": "throughput",
    "samples_per_s": "samples_per_s",
    "tokens_per_s": "tokens_per_s",
    "model-flops-throughput-per-npu": "tflops_per_device",
    "train_throughput_per_npu": "tflops_per_device",
    "loss_scale": "loss_scale",
    "loss-scale": "loss_scale",
    "overflow": "overflow",
    "overflow cond": "overflow",
    "mfu": "mfu",
    "hfu": "hfu",
    "lm_loss": "lm_loss",
    "lm-loss": "lm_loss",  # MindFormers' TensorBoard spellings
    "mtp-loss": "mtp_loss",
    "aux-loss": "load_balancing_loss",
    "load_balancing_loss": "load_balancing_loss",
    "mtp_loss": "mtp_loss",
    "eval_loss": "eval_loss",
    "lm loss validation": "eval_loss",  # Megatron-LM, written after each evaluation; as TensorBoard
    "lm_loss_validation": "eval_loss",  # writers clean tags ("lm loss validation" -> "lm_loss_validation")
    "val_loss": "eval_loss",
    "validation_loss": "eval_loss",
    "smooth_loss": "smooth_loss",
}

# Canonical tags whose rows are evaluation results: each is also an evaluation event at its step.
EVAL_TAGS = ("eval_loss",)

# Tags of durations (seconds) and the per-step timer tag.
DURATION_TAGS = ("step_time", "data_time")
STEP_TIMER = "step_time"
DATA_TIME = "data_time"


def canonical_tag(raw: str) -> str:
    """The canonical name of a tag; unknown tags keep their own (trimmed) name."""
    key = raw.strip()
    hit = CANONICAL_TAGS.get(key) or CANONICAL_TAGS.get(key.lower())
    if hit:
        return hit
    # tensorboard-style prefixes: "train/loss", "Loss/train"
    for part in reversed(key.replace("\\", "/").split("/")):
        hit = CANONICAL_TAGS.get(part.lower())
        if hit:
            return hit
    return key


# --------------------------------------------------------------------------- units

# How many of each unit make one canonical unit (a second; a TFLOPS): values are divided by it.
PER_CANONICAL: dict[str, float] = {"s": 1.0, "ms": 1000.0, "us": 1_000_000.0,
                                   "TFLOPS": 1.0, "GFLOPS": 1000.0, "PFLOPS": 0.001}
CANONICAL_UNIT = {"s": "s", "ms": "s", "us": "s", "TFLOPS": "TFLOPS", "GFLOPS": "TFLOPS", "PFLOPS": "TFLOPS"}


@dataclass(frozen=True)
class UnitChoice:
    """The candidate units of a tag written without one, and the one to assume."""

    default: str  # what the reader reads it as
    candidates: tuple[str, ...]
    why: str  # whose convention the default is: a code the report names (catalogue unit-why.<code>)


_DURATION = ("s", "ms", "us")
_TIMER_MS = UnitChoice("ms", _DURATION, "mindformers-ms")  # MFLossMonitor writes int(milliseconds); Megatron-LM seconds
_USER_S = UnitChoice("s", _DURATION, "user-seconds")  # a user's own tag: seconds assumed
_TFLOPS = UnitChoice("TFLOPS", ("TFLOPS", "GFLOPS", "PFLOPS"), "mindformers-tflops")  # full_model_flops / per_step_ms / 1e9

# (source, raw tag) -> choice. Sources are the ones whose rows carry no unit: binary scalars and
# users' key=value / JSON keys without a unit suffix.
UNIT_CHOICES: dict[tuple[str, str], UnitChoice] = {
    ("tensorboard", "iteration-time"): _TIMER_MS,
    ("tensorboard", "model-flops-throughput-per-npu"): _TFLOPS,
    **{(source, raw): _USER_S
       for source in ("summary", "tensorboard", "log:kv", "log:json")
       for raw in ("step_time", "iteration_time", "step-time", "per_step_time", "data_time")},
}


def unit_choice(source: str, raw_tag: str) -> UnitChoice | None:
    return UNIT_CHOICES.get((source, raw_tag))


def default_divisor(source: str, raw_tag: str) -> float:
    """What the value as written is divided by to be in the canonical unit, under the default unit."""
    choice = unit_choice(source, raw_tag)
    return PER_CANONICAL[choice.default] if choice else 1.0


# MindFormers' TensorBoard `throughput`: global_batch_size / device_num / per_step_seconds, samples/s
# per device (its step's own timer). A writer that leaves out the division gives devices x that.
PER_DEVICE_THROUGHPUT = ("tensorboard", "throughput")

# A timer's value over the wall-clock gap of its step: a step's own timer leaves out the wait for
# data and the callbacks (down to a few percent of the gap in a data-bound run), an interval timer
# equals it; a little over 1 is timing noise. A unit is plausible when its reading falls inside.
TIMER_OVER_GAP = (0.02, 1.5)
# One quantity from two sources, where one states its unit: equal up to what each leaves out.
SOURCE_OVER_SOURCE = (0.2, 5.0)

# --------------------------------------------------------------------------- conflicts

# Relative difference two sources of a tag may show before it is reported. Timers differ by
# what each includes (a step's own timer leaves out the data wait an interval timer holds):
# only a gross disagreement (a factor of 10 below, 2 above) counts.
CONFLICT_TOLERANCE: dict[str, float] = {"step_time": 0.9, "data_time": 0.9}
DEFAULT_TOLERANCE = 5e-3

# --------------------------------------------------------------------------- MindFormers' health tags
# Cited from mindformers @ fd4deebc, mindformers/core/callback/callback.py (docs/formats/health.md).

# TrainingStateMonitor writes each monitored parameter's local (per-rank gradient) norm as
# ``local_norm/{param_name}`` (line 945, to TensorBoard where local_norm_format holds
# 'tensorboard'). The embedding's is the one CheckpointMonitor judges a save by (lines 1318-1339).
LOCAL_NORM_PREFIX = "local_norm/"
EMBEDDING_PARAM = re.compile(r"(?:embedding|embed_tokens|tok_embeddings|word_embeddings?|\bwte\b)", re.I)
# The log line ``embedding_local_norm: <value>`` (line 734; read by the text-log reader) as a tag.
EMBEDDING_NORM = "embedding_local_norm"
# CheckpointMonitor(embedding_local_norm_threshold=1.0) (line 1190): a save is unhealthy where a
# first-stage rank's embedding local norm is >= it (line 1332).
EMBEDDING_NORM_THRESHOLD = 1.0

# TopkBiasBalanceCallback: ``add_scalars("expert_load/{layer}", {"ep_{i}": load_i})`` (lines
# 2291-2297). A value is the expert's share of its layer's training load ("the training load ratio
# of every expert", MindFormers' monitor.md: no unit); each expert's series gets the tag
# ``expert_load/{layer}/ep_{i}`` (``add_scalars_series``).
EXPERT_LOAD = re.compile(r"^expert_load/(\d+)/ep_(\d+)$")

# MoEDropRateCallback's ``layer: %d, drop_rate: %.5f`` (line 2372): the share of tokens over the
# experts' capacity, sum(max(f_i - capacity_factor / expert_num, 0)); a text-log reader gives it
# as ``drop_rate/{layer}``. Above 0, tokens were dropped.
DROP_RATE_PREFIX = "drop_rate/"
# MoE auxiliary (load-balancing) loss: ``aux-loss`` in CANONICAL_TAGS.
AUX_LOSS = "load_balancing_loss"


def embedding_norm_tag(raw_tag: str) -> bool:
    """Whether a tag is the embedding's local norm (the TensorBoard tag or the log line's)."""
    if raw_tag == EMBEDDING_NORM:
        return True
    return raw_tag.startswith(LOCAL_NORM_PREFIX) and bool(EMBEDDING_PARAM.search(raw_tag[len(LOCAL_NORM_PREFIX):]))


def add_scalars_series(raw_tag: str, rel: str) -> str | None:
    """The tag of one series of a TensorBoard ``add_scalars(main_tag, {sub: value})``: each sub-series
    is an event file of its own, written under ``main_tag``, and only its folder names the series:
    ``{logdir}/{main_tag}/{sub}/`` (tensorboardX 2.x: ``os.path.join(logdir, main_tag, tag)``) or
    ``{logdir}/{main_tag with / as _}_{sub}/`` (torch.utils.tensorboard). None for other files."""
    parts = rel.split("/")[:-1]
    if not parts or not raw_tag:
        return None
    sub = parts[-1]
    depth = raw_tag.count("/") + 1
    if len(parts) > depth and "/".join(parts[-depth - 1:-1]) == raw_tag:
        return f"{raw_tag}/{sub}"
    prefix = raw_tag.replace("/", "_") + "_"
    if sub.startswith(prefix) and len(sub) > len(prefix):
        return f"{raw_tag}/{sub[len(prefix):]}"
    return None


def expert_load_of(tag: str) -> tuple[int, int] | None:
    """(layer, expert) of an expert-load series' tag."""
    m = EXPERT_LOAD.match(tag)
    return (int(m.group(1)), int(m.group(2))) if m else None
