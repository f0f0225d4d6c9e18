"""Configuration checks: the before-training static checks of the article's §1.2, in one place.

The same rules serve two callers: the report checks the settings a finished run left
(``config_checks(run, ...)``), and ``postmortem check CONFIG`` checks a MindFormers yaml before
launch (``check_values(values, context)``). A rule sees plain values by setting key (the names
``readers/configfile.py`` gives the config's keys) and returns a ``ConfigCheck``: pass, warn,
fail (the job cannot run as configured, or the settings contradict each other), or unknown (an
input is missing: it says which); ``None`` when the rule does not apply to this config at all.

Where MindFormers itself enforces a rule at launch, the rule follows its writer's check
(``mindformers/tools/check_rules.py`` ``_check_parallel``: dp × mp × cp × pp = device_num in
semi-auto parallel; ``modules/transformer``: num_heads % mp, micro_batch_num >= pipeline_stage).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from ..model import Run
from ..readers.configfile import global_batch
from ..text import Text
from .mfu import decoder_parameters
from .types import Check, CheckStatus, ConfigCheck

CKPT_MIN_INTERVAL_S = 300.0  # saving more often than every 5 minutes costs a visible share
SAVE_SHARE_LIMIT = 0.05  # a save longer than 5% of its interval is a tax worth a finding
MINDFORMERS_KEEP_MAX = 5  # CheckpointMonitor's default keep_checkpoint_max (mindformers/core/callback)
BYTES = {"float32": 4, "fp32": 4, "float16": 2, "fp16": 2, "bfloat16": 2, "bf16": 2}

Values = Mapping[str, Any]


@dataclass(frozen=True)
class CheckContext:
    """What the rules know besides the settings: the job's device count, the step time of a run
    (the report's, or ``--step-time``), the checkpoint saves seen, and the free disk where the
    checkpoints go (only ``check``, where the output folder exists on this machine)."""

    devices: int | None = None
    step_time_s: float | None = None
    median_save_s: float | None = None
    interval_from_disk: float | None = None
    num_parameters: float | None = None
    free_bytes: int | None = None
    # After the run (the report): the steps it trained and where each setting was read. A run that
    # trained was not refused: a rule that would refuse it says the settings read disagree instead.
    trained_steps: int | None = None
    sources: Mapping[str, str] | None = None

    @property
    def trained(self) -> bool:
        return bool(self.trained_steps)


def _num(v: Values, key: str) -> float | None:
    x = v.get(key)
    if isinstance(x, bool) or x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _flag(v: Values, key: str) -> bool | None:
    x = v.get(key)
    if isinstance(x, bool):
        return x
    if isinstance(x, str) and x.strip().lower() in ("true", "false"):
        return x.strip().lower() == "true"
    return None


def _unknown(name: Check, missing: list[str]) -> ConfigCheck:
    return ConfigCheck(name, CheckStatus.UNKNOWN, Text("check.needs", keys=missing), {"missing": missing})


def _fail(name: Check, detail: Text, ev: dict, fix: str) -> ConfigCheck:
    return ConfigCheck(name, CheckStatus.FAIL, detail, ev, Text(f"check.fix.{fix}"))


def _warn(name: Check, detail: Text, ev: dict, fix: str) -> ConfigCheck:
    return ConfigCheck(name, CheckStatus.WARN, detail, ev, Text(f"check.fix.{fix}"))


# --------------------------------------------------------------------------- the rules


def check_layout(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """dp × mp × cp × pp against the device count (semi-auto parallel: MindFormers raises).

    After the run, a degree the settings do not give is MindSpore's own: data parallel is what the
    devices leave (devices / (mp × cp × pp)), the others 1. A run that trained was not refused: a
    product that still differs says the settings read disagree with the devices, and where each
    was read."""
    name = Check.LAYOUT
    dp, mp, pp = _num(v, "data_parallel"), _num(v, "model_parallel"), _num(v, "pipeline_stage")
    if dp is None and mp is None and pp is None:
        return None
    cp = _num(v, "context_parallel") or 1.0
    devices = ctx.devices if ctx.devices is not None else _num(v, "device_num")
    derived: list[str] = []
    if ctx.trained and dp is None and devices is not None:
        rest = (mp or 1.0) * cp * (pp or 1.0)
        if rest > 0 and (devices / rest).is_integer():
            dp = devices / rest
            derived.append("data_parallel")
    product = (dp or 1.0) * (mp or 1.0) * cp * (pp or 1.0)
    ev: dict[str, Any] = {"data_parallel": dp, "model_parallel": mp, "context_parallel": cp, "pipeline_stage": pp,
                          "product": product, "devices": devices, "derived": derived}
    if _flag(v, "use_parallel") is False:
        if devices is not None and devices > 1:
            return _warn(name, Text("check.layout-not-parallel", devices=devices), ev, "use-parallel")
        return ConfigCheck(name, CheckStatus.PASS, Text("check.layout-single"), ev)
    if devices is None:
        return ConfigCheck(name, CheckStatus.UNKNOWN, Text("check.layout-needs-devices", product=product), ev)
    if v.get("parallel_mode") not in (None, 1, "1", "semi_auto_parallel"):
        # data parallel (0) takes dp from the devices; auto parallel (2) searches the layout
        return ConfigCheck(name, CheckStatus.PASS, Text("check.layout-searched", mode=v.get("parallel_mode")), ev)
    if abs(product - devices) > 1e-9:
        factors = [int(x) if float(x).is_integer() else x for x in (dp or 1, mp or 1, cp, pp or 1)]
        if ctx.trained:
            return _warn(name, Text("check.layout-read-differs", factors=factors, product=product, devices=devices,
                                    read=_read_where(v, ctx, ("data_parallel", "model_parallel", "context_parallel",
                                                              "pipeline_stage", "device_num")),
                                    steps=ctx.trained_steps), ev, "layout-read")
        return _fail(name, Text("check.layout-differs", factors=factors, product=product,
                                devices=devices), ev, "layout")
    if derived:
        return ConfigCheck(name, CheckStatus.PASS, Text("check.layout-derived", dp=dp, devices=devices,
                                                        rest=[int(x) for x in ((mp or 1), cp, (pp or 1))]), ev)
    return ConfigCheck(name, CheckStatus.PASS, Text("check.layout-equal", product=product, devices=devices), ev)


def _read_where(v: Values, ctx: CheckContext, keys: tuple[str, ...]) -> list[Text]:
    """Each setting a rule read, its value and where it was read (the report's own sources), and
    the ones not set at all: what a reader checks when the settings disagree with the run."""
    sources = ctx.sources or {}
    out = []
    for key in keys:
        if key in v and v[key] is not None and sources.get(key):
            out.append(Text("check.read", key=key, value=v[key], source=sources[key]))
        elif key in v and v[key] is not None:
            out.append(Text("check.read-nosource", key=key, value=v[key]))
        else:
            out.append(Text("check.read-unset", key=key))
    return out


def check_global_batch(v: Values, ctx: CheckContext) -> ConfigCheck:
    name = Check.GLOBAL_BATCH
    gbs, micro = _num(v, "global_batch_size"), _num(v, "micro_batch_size") or _num(v, "batch_size")
    dp = _num(v, "data_parallel")
    missing = [k for k, x in (("global_batch_size", gbs), ("micro_batch_size", micro), ("data_parallel", dp)) if x is None]
    if missing:
        return _unknown(name, missing)
    acc = _num(v, "gradient_accumulation_steps") or 1.0
    pp = _num(v, "pipeline_stage") or 1.0
    mbn = _num(v, "micro_batch_num") if pp > 1 else None
    interleave = _num(v, "micro_batch_interleave_num")
    expected = global_batch(micro, dp, pp, mbn, acc, interleave)
    ev: dict[str, Any] = {"global_batch_size": gbs, "micro_batch_size": micro, "data_parallel": dp,
                          "gradient_accumulation_steps": acc, "micro_batch_num": mbn,
                          "micro_batch_interleave_num": interleave, "expected": expected}
    if abs(expected - gbs) > 1e-9:
        if ctx.trained:  # the run trained with a global batch: a factor of it is not in the settings read
            return _warn(name, Text("check.batch-read-differs", batch=gbs, product=expected, steps=ctx.trained_steps,
                                    read=_read_where(v, ctx, ("global_batch_size", "micro_batch_size", "data_parallel",
                                                              "gradient_accumulation_steps", "micro_batch_num"))),
                         ev, "layout-read")
        return _fail(name, Text("check.batch-differs", batch=gbs, product=expected), ev, "global-batch")
    if pp > 1 and acc > 1:  # MindFormers resets it to 1 and warns (trainer/base_trainer.py)
        return _warn(name, Text("check.accumulation-with-pipeline", accumulation=acc), ev, "accumulation-with-pipeline")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.batch-equal", batch=gbs, product=expected), ev)


def check_pipeline(v: Values, ctx: CheckContext) -> ConfigCheck:
    name = Check.PIPELINE
    pp = _num(v, "pipeline_stage")
    if pp is None or pp <= 1:
        mbn = _num(v, "micro_batch_num")
        if pp is not None and mbn is not None and mbn > 1:
            return _warn(name, Text("check.micro-without-pipeline", micro=mbn), {"pipeline_stage": pp, "micro_batch_num": mbn},
                         "micro-without-pipeline")
        return ConfigCheck(name, CheckStatus.PASS if pp is not None else CheckStatus.UNKNOWN,
                           Text("check.no-pipeline") if pp is not None else Text("check.needs", keys=["pipeline_stage"]),
                           {"pipeline_stage": pp})
    layers = _num(v, "num_layers")
    if layers is not None and pp > layers:
        return _fail(name, Text("check.stages-above-layers", stages=pp, layers=layers),
                     {"pipeline_stage": pp, "num_layers": layers}, "stages-above-layers")
    mbn = _num(v, "micro_batch_num")
    if mbn is None:
        return _unknown(name, ["micro_batch_num"])
    ev = {"pipeline_stage": pp, "micro_batch_num": mbn, "bubble_fraction": (pp - 1) / (mbn + pp - 1)}
    if mbn < pp:
        if ctx.trained:  # MindSpore would have refused: the settings read are not the run's
            return _warn(name, Text("check.micro-below-stages-read", micro=mbn, stages=pp, steps=ctx.trained_steps,
                                    read=_read_where(v, ctx, ("micro_batch_num", "pipeline_stage"))), ev, "layout-read")
        return _fail(name, Text("check.micro-below-stages", micro=mbn, stages=pp), ev, "micro-below-stages")
    if mbn < 4 * pp:  # bubble (p-1)/(m+p-1) stays above ~20% below 4x
        return _warn(name, Text("check.micro-bubble", micro=mbn, stages=pp, bubble=ev["bubble_fraction"]), ev, "micro-bubble")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.micro-ok", micro=mbn, stages=pp), ev)


_DIVISIBLE = {Check.NUM_HEADS: "num_heads", Check.HIDDEN_SIZE: "hidden_size", Check.KV_HEADS: "num_kv_heads"}


def check_divisible(v: Values, ctx: CheckContext, name: Check) -> ConfigCheck | None:
    key = _DIVISIBLE[name]
    x, mp = _num(v, key), _num(v, "model_parallel")
    if name == Check.KV_HEADS and x is None:
        return None  # no grouped-query attention
    missing = [k for k, y in ((key, x), ("model_parallel", mp)) if y is None]
    if missing:
        return _unknown(name, missing)
    ev = {key: x, "model_parallel": mp}
    if mp > 0 and x % mp == 0:
        return ConfigCheck(name, CheckStatus.PASS, Text("check.divisible", value=x, by=mp), ev)
    if ctx.trained:  # the split would have failed at launch: the settings read are not the run's
        return _warn(name, Text("check.not-divisible-read", value=x, by=mp, steps=ctx.trained_steps,
                                read=_read_where(v, ctx, (key, "model_parallel"))), ev, "layout-read")
    return _fail(name, Text("check.not-divisible", value=x, by=mp), ev, "divisible")


def check_positions(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """A sequence longer than the positions the model has: a learned table (GPT-2) cannot index
    past it; rotary models extend their table (MindFormers' glm2 does) but were never trained
    there. A warning: some models run."""
    seq, pos = _num(v, "seq_length"), _num(v, "max_position_embeddings")
    if pos is None:
        return None
    if seq is None:
        return _unknown(Check.POSITIONS, ["seq_length"])
    ev = {"seq_length": seq, "max_position_embeddings": pos}
    if seq > pos:
        return _warn(Check.POSITIONS, Text("check.seq-above-positions", seq=seq, positions=pos), ev, "positions")
    return ConfigCheck(Check.POSITIONS, CheckStatus.PASS, Text("check.seq-within-positions", seq=seq, positions=pos), ev)


def check_checkpoint_interval(v: Values, ctx: CheckContext) -> ConfigCheck:
    name = Check.CHECKPOINT_INTERVAL
    every = _num(v, "save_checkpoint_steps") or ctx.interval_from_disk
    step = ctx.step_time_s
    missing = [k for k, x in (("save_checkpoint_steps", every), ("step_time", step)) if x is None]
    if missing:
        return _unknown(name, missing)
    interval = every * step
    ev = {"save_checkpoint_steps": every, "median_step_time_s": step, "interval_s": interval,
          "median_save_s": ctx.median_save_s}
    save = ctx.median_save_s
    if save is not None and interval > 0 and save / interval > SAVE_SHARE_LIMIT:
        # the share is of the interval plus the save itself: never above 1
        share = save / (interval + save)
        return _warn(name, Text("check.save-costly", save=save, share=share, interval=interval), ev, "save-less-often")
    if interval < CKPT_MIN_INTERVAL_S:
        return _warn(name, Text("check.save-often", interval=interval, limit=CKPT_MIN_INTERVAL_S), ev, "save-less-often")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.save-every", interval=interval), ev)


def estimated_parameters(v: Values) -> tuple[float, str] | None:
    """The parameter count from the config's shape (``mfu.decoder_parameters``) with its
    embeddings: one table, two with untied input and output embeddings."""
    L, h, V = _num(v, "num_layers"), _num(v, "hidden_size"), _num(v, "vocab_size")
    if L is None or h is None or V is None:
        return None
    body = decoder_parameters(L, h, heads=_num(v, "num_heads"), kv_heads=_num(v, "num_kv_heads"),
                              ffn=_num(v, "ffn_hidden_size"))
    tables = 1 if _flag(v, "tie_word_embeddings") is not False else 2
    return body + tables * V * h, "shape"


def check_checkpoint_disk(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """keep_checkpoint_max copies of what the ranks save together: the weights in their init
    type and the optimizer's fp32 moments, once per data-parallel replica — or once in all, split
    over the replicas, with the parallel optimizer (it shards both)."""
    name = Check.CHECKPOINT_DISK
    if v.get("save_checkpoint_steps") is None and v.get("keep_checkpoint_max") is None:
        return None
    est = (ctx.num_parameters, "run") if ctx.num_parameters else estimated_parameters(v)
    if est is None:
        return _unknown(name, ["num_layers", "hidden_size", "vocab_size"])
    params, how = est
    keep = _num(v, "keep_checkpoint_max") or MINDFORMERS_KEEP_MAX
    dp = _num(v, "data_parallel") or 1.0
    weight_bytes = BYTES.get(str(v.get("param_init_type") or "float32").lower(), 4)
    optimizer = str(v.get("optimizer") or "").lower()
    moments = 8 if "adam" in optimizer or "lamb" in optimizer or "came" in optimizer else 4
    shard = dp if _flag(v, "enable_parallel_optimizer") else 1.0
    copy_bytes = params * (weight_bytes + moments) * dp / shard
    total = keep * copy_bytes
    ev: dict[str, Any] = {"parameters": params, "parameters_from": how, "keep_checkpoint_max": keep,
                          "keep_default": v.get("keep_checkpoint_max") is None, "bytes_per_save": copy_bytes,
                          "total_bytes": total, "free_bytes": ctx.free_bytes}
    if ctx.free_bytes is not None and total > ctx.free_bytes:
        return _warn(name, Text("check.disk-above-free", total=total, keep=keep, size=copy_bytes, free=ctx.free_bytes),
                     ev, "disk")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.disk-estimate", total=total, keep=keep, size=copy_bytes), ev)


def check_recompute(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """Recompute switches that cancel or shadow each other."""
    name = Check.RECOMPUTE
    full, select = _flag(v, "recompute"), _flag(v, "select_recompute")
    comm = _flag(v, "parallel_optimizer_comm_recompute")
    po = _flag(v, "enable_parallel_optimizer")
    if full is None and select is None and comm is None:
        return None
    ev = {"recompute": full, "select_recompute": select, "parallel_optimizer_comm_recompute": comm,
          "enable_parallel_optimizer": po}
    if full and select:
        return _warn(name, Text("check.recompute-both"), ev, "recompute-both")
    if comm and po is False:
        return _warn(name, Text("check.comm-recompute-without-po"), ev, "comm-recompute")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.recompute-ok", full=bool(full), select=bool(select)), ev)


def check_parallel_features(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """Parallel features that have nothing to split: the parallel optimizer without data
    parallelism, sequence parallelism without model parallelism."""
    name = Check.PARALLEL_FEATURES
    po, sp = _flag(v, "enable_parallel_optimizer"), _flag(v, "use_seq_parallel")
    dp, mp = _num(v, "data_parallel"), _num(v, "model_parallel")
    if po is None and sp is None:
        return None
    ev = {"enable_parallel_optimizer": po, "use_seq_parallel": sp, "data_parallel": dp, "model_parallel": mp}
    if po and dp == 1:
        return _warn(name, Text("check.po-without-dp"), ev, "po-without-dp")
    if sp and mp == 1:
        return _warn(name, Text("check.sp-without-mp"), ev, "sp-without-mp")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.parallel-features-ok"), ev)


Rule = Callable[[Values, CheckContext], ConfigCheck | None]

def check_strategy(v: Values, ctx: CheckContext) -> ConfigCheck | None:
    """The layout the strategy files hold (load/strategy.py) against the config's: each degree both
    state, the stages the files are on against pipeline_stage, and the devices they imply."""
    name = Check.STRATEGY
    if _num(v, "strategy_devices_per_stage") is None and _num(v, "strategy_model_parallel") is None:
        return None
    cp = _num(v, "context_parallel") or 1.0
    dp = _num(v, "data_parallel")
    pairs = [("model_parallel", _num(v, "strategy_model_parallel"), _num(v, "model_parallel")),
             ("data_parallel", _num(v, "strategy_data_parallel"), dp * cp if dp is not None else None),
             ("expert_parallel", _num(v, "strategy_expert_parallel"), _num(v, "expert_parallel")),
             ("pipeline_stage", _num(v, "strategy_pipeline_stages"), _num(v, "pipeline_stage"))]
    stages = v.get("strategy_stages") or []
    pp = _num(v, "pipeline_stage")
    per_stage = _num(v, "strategy_devices_per_stage")
    devices = ctx.devices if ctx.devices is not None else _num(v, "device_num")
    ev: dict[str, Any] = {**{f"strategy_{k}": s for k, s, _ in pairs if s is not None},
                          **{k: c for k, _, c in pairs if c is not None},
                          "strategy_stages": list(stages), "strategy_devices_per_stage": per_stage, "devices": devices}
    differ = [[k, s, c] for k, s, c in pairs if s is not None and c is not None and abs(s - c) > 1e-9]
    if pp is not None and stages and max(stages) + 1 > pp and not any(k == "pipeline_stage" for k, _, _ in differ):
        differ.append(["pipeline_stage", max(stages) + 1, pp])
    stage_count = _num(v, "strategy_pipeline_stages") or pp
    if per_stage is not None and stage_count is not None and devices is not None and abs(per_stage * stage_count - devices) > 1e-9:
        differ.append(["device_num", per_stage * stage_count, devices])
    if all(c is None for _, _, c in pairs) and devices is None:
        return ConfigCheck(name, CheckStatus.UNKNOWN, Text("check.needs", keys=["data_parallel", "model_parallel"]), ev)
    if differ:
        if v.get("parallel_mode") in (2, "2", "auto_parallel"):  # the search chose the layout: the config's is not used
            return _warn(name, Text("check.strategy-searched", differ=[Text("check.strategy-pair", key=k, strategy=s, config=c)
                                                                         for k, s, c in differ]), ev, "strategy-searched")
        return _fail(name, Text("check.strategy-differs", differ=[Text("check.strategy-pair", key=k, strategy=s, config=c)
                                                                  for k, s, c in differ]), ev, "strategy")
    return ConfigCheck(name, CheckStatus.PASS, Text("check.strategy-equal", keys=sorted(k for k, _, c in pairs if c is not None)), ev)



RULES: tuple[Rule, ...] = (
    check_layout,
    check_global_batch,
    check_pipeline,
    lambda v, c: check_divisible(v, c, Check.NUM_HEADS),
    lambda v, c: check_divisible(v, c, Check.KV_HEADS),
    lambda v, c: check_divisible(v, c, Check.HIDDEN_SIZE),
    check_positions,
    check_parallel_features,
    check_recompute,
    check_checkpoint_interval,
    check_checkpoint_disk,
    check_strategy,
)


def check_values(values: Values, context: CheckContext) -> tuple[ConfigCheck, ...]:
    """Every rule that applies to these settings, in the order a launch meets them."""
    return tuple(c for rule in RULES if (c := rule(values, context)) is not None)


def _interval_from_checkpoints(run: Run) -> float | None:
    """Steps between saves as the checkpoints on disk show them (most common gap)."""
    steps = (
        run.tables["checkpoints"].filter(pl.col("kind") == "train")["step"].drop_nulls().unique().sort()
    )
    gaps = steps.diff().drop_nulls()
    gaps = gaps.filter(gaps > 0)
    return float(gaps.mode().min()) if not gaps.is_empty() else None


def config_checks(run: Run, median_step_time_s: float | None, median_save_s: float | None,
                  devices: int | None = None, trained_steps: int | None = None) -> tuple[ConfigCheck, ...]:
    """The report's checks: the same rules on the settings the run left (``trained_steps``: the
    steps it logged; a run that trained was not refused at launch)."""
    values = {k: s.value for k, s in run.settings.items()}
    context = CheckContext(devices=devices, step_time_s=median_step_time_s, median_save_s=median_save_s,
                           interval_from_disk=_interval_from_checkpoints(run),
                           num_parameters=_num(values, "num_parameters"), trained_steps=trained_steps,
                           sources={k: s.source for k, s in run.settings.items()})
    return check_values(values, context)
