"""The run's identity: the settings that define it, grouped, and what each can explain.

The article (§1.2): bind the hyperparameters, dataset version and framework version to the
results, or the next experiment starts from scratch. Every report shows the settings, baseline
or not; with a baseline, the diff is ordered by what can explain a change — hyperparameters and
the parallel layout first, paths and per-run values (the last loss, the checkpoint written, FLOPs
derived from the other settings) last, apart.

Which families of figures (throughput, efficiency, convergence, stability) a change of each
setting can move is the ``EFFECTS`` table: a learning-rate change can destabilise the loss and
the grad norm, it cannot slow a step; a micro batch, the parallel layout or the dataset workers
can.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .types import Family, Identity, SettingGroup, SettingRow

if TYPE_CHECKING:
    from ..model import Setting


# The order a reader of one run meets them (the identity section)...
READING_ORDER = (SettingGroup.FRAMEWORK, SettingGroup.MODEL, SettingGroup.DATA, SettingGroup.PRECISION,
                 SettingGroup.OPTIMIZER, SettingGroup.PARALLEL, SettingGroup.BATCH, SettingGroup.OTHER, SettingGroup.RUN)
# ... and the order a diff is read in: what most often explains a change first.
EXPLAINING_ORDER = (SettingGroup.OPTIMIZER, SettingGroup.PARALLEL, SettingGroup.BATCH, SettingGroup.PRECISION,
                    SettingGroup.MODEL, SettingGroup.DATA, SettingGroup.FRAMEWORK, SettingGroup.OTHER, SettingGroup.RUN)

G = SettingGroup
GROUPS: dict[str, SettingGroup] = {
    **dict.fromkeys(("framework", "framework_version", "mindformers_version", "cann_version", "device", "mode",
                     "jit_level", "device_target"), G.FRAMEWORK),
    **dict.fromkeys(("network", "num_layers", "hidden_size", "num_heads", "ffn_hidden_size", "vocab_size", "seq_length",
                     "num_parameters", "trainable_parameters", "loss_function", "max_position_embeddings", "num_kv_heads",
                     "tie_word_embeddings"), G.MODEL),
    **dict.fromkeys(("dataset", "train_dataset_size", "num_parallel_workers", "prefetch_size", "dataset_sink_mode",
                     "sink_size", "sink_mode", "data_path", "dataset_dir"), G.DATA),
    **dict.fromkeys(("precision", "amp_level", "compute_dtype", "param_init_type", "loss_scale", "loss_scale_value",
                     "scale_sense"), G.PRECISION),
    **dict.fromkeys(("optimizer", "learning_rate", "lr_schedule", "warmup_steps", "warmup_ratio", "weight_decay",
                     "beta1", "beta2", "eps", "max_grad_norm", "min_lr", "max_lr", "peak_lr", "lr_end", "decay_steps"),
                    G.OPTIMIZER),
    **dict.fromkeys(("parallel_mode", "device_num", "data_parallel", "model_parallel", "pipeline_stage", "micro_batch_num",
                     "enable_parallel_optimizer", "recompute", "context_parallel", "expert_parallel", "vocab_emb_dp",
                     "use_parallel", "use_seq_parallel", "select_recompute", "parallel_optimizer_comm_recompute"),
                    G.PARALLEL),
    **dict.fromkeys(("global_batch_size", "micro_batch_size", "batch_size", "gradient_accumulation_steps",
                     "samples_per_step", "tokens_per_step"), G.BATCH),
    "epoch": G.OTHER, "save_checkpoint_steps": G.OTHER, "keep_checkpoint_max": G.OTHER, "output_dir": G.RUN,
    "recorder": G.RUN,  # which writer recorded the run (postmortem's callback): explains nothing
    **dict.fromkeys(("last_loss", "model_path", "model_size_bytes", "last_ckpt_file",
                     "last_step", "last_epoch", "full_model_flops", "shard_model_flops", "full_hardware_flops",
                     "shard_hardware_flops"), G.RUN),
}

T, E, C, S = Family.THROUGHPUT, Family.EFFICIENCY, Family.CONVERGENCE, Family.STABILITY
ALL = frozenset(Family)
NOTHING: frozenset[Family] = frozenset()
_GROUP_EFFECTS: dict[SettingGroup, frozenset[Family]] = {
    G.FRAMEWORK: ALL,  # a framework or CANN version changes kernels, and numerics a little
    G.MODEL: ALL,
    G.DATA: frozenset({C, S}),  # what is in the data; its pipeline settings are below
    G.PRECISION: ALL,
    G.OPTIMIZER: frozenset({C, S}),  # an lr change cannot slow a step
    G.PARALLEL: frozenset({T, E}),  # the same maths, split otherwise (a wrong split shows as a convergence bug)
    G.BATCH: ALL,
    G.RUN: NOTHING,  # outcomes and paths explain nothing
    G.OTHER: NOTHING,
}
_KEY_EFFECTS: dict[str, frozenset[Family]] = {
    "optimizer": ALL,  # another optimizer has another state: memory and step time too
    "num_parallel_workers": frozenset({T, E}), "prefetch_size": frozenset({T, E}), "dataset_sink_mode": frozenset({T, E}),
    "sink_size": frozenset({T, E}), "sink_mode": frozenset({T, E}),
    "mode": frozenset({T, E}), "jit_level": frozenset({T, E}), "device": frozenset({T, E}), "device_target": frozenset({T, E}),
    "recompute": frozenset({T, E}), "select_recompute": frozenset({T, E}),
    "save_checkpoint_steps": frozenset({E}),  # the checkpoint tax, not the steady step
    "epoch": NOTHING,
}


def base_key(key: str) -> str:
    """A user's own copy of a setting (user.peak_lr) is that setting."""
    return key[len("user."):] if key.startswith("user.") else key


def group(key: str) -> SettingGroup:
    k = base_key(key)
    if k in GROUPS:
        return GROUPS[k]
    if key.startswith("lineage.") or k.endswith("_flops"):
        return G.RUN
    if key.startswith("strategy_"):  # the layout the strategy files hold (load/strategy.py)
        return G.PARALLEL
    if "lr" in k.split("_") or "learning_rate" in k or k.startswith("warmup"):
        return G.OPTIMIZER
    return G.OTHER


def effects(key: str) -> frozenset[Family]:
    """The families of figures a change of this setting can move."""
    k = base_key(key)
    return _KEY_EFFECTS.get(k, _GROUP_EFFECTS[group(key)])


def per_run(key: str) -> bool:
    """Values of the run itself (outcomes, paths, derived counts): listed apart, never a cause."""
    return group(key) == G.RUN


def duplicate(key: str, keys: set[str]) -> bool:
    """user.<name> repeats a setting the run also has under its own name."""
    return key.startswith("user.") and key[len("user."):] in keys


VERSIONS = ("framework_version", "mindformers_version", "cann_version")


def identity(settings: Mapping[str, Setting]) -> Identity:
    keys = set(settings)
    rows = [SettingRow(k, s.value, s.source, group(k)) for k, s in settings.items() if not duplicate(k, keys)]
    order = {g: i for i, g in enumerate(READING_ORDER)}
    rows.sort(key=lambda r: (order[r.group], r.key))
    versions = {k: (str(settings[k].value) if k in settings else None) for k in VERSIONS}
    return Identity(tuple(rows), versions)


def explaining_order(key: str) -> tuple[int, str]:
    """Sort key of a settings diff: what can explain a change first, per-run values last."""
    order = {g: i for i, g in enumerate(EXPLAINING_ORDER)}
    return order[group(key)], key


# The model's size against the baseline's: its parameters where both runs give them (a
# checkpoint's tensors, a config), else the transformer body 12 L H^2 from the layers and hidden size.
def model_growth(changes) -> dict:
    """``params_ratio`` (current / baseline) and the two sizes when the model's size changed; the
    FLOPs of a token grow about as much (6N per token), so a step computes that much more."""
    by_key = {base_key(c.key): c for c in changes}

    def num(v) -> float | None:
        try:
            x = float(v)
        except (TypeError, ValueError):
            return None
        return x if x > 0 else None

    c = by_key.get("num_parameters")
    if c is not None and num(c.baseline) and num(c.current):
        return {"params_ratio": num(c.current) / num(c.baseline), "params_baseline": num(c.baseline),
                "params_current": num(c.current), "params_basis": "parameters"}
    sizes = {}
    for key in ("num_layers", "hidden_size"):
        ch = by_key.get(key)
        if ch is not None and (num(ch.baseline) is None or num(ch.current) is None):
            return {}
        sizes[key] = (num(ch.baseline), num(ch.current)) if ch is not None else None
    if not any(sizes.values()):
        return {}
    lr = sizes["num_layers"][1] / sizes["num_layers"][0] if sizes["num_layers"] else 1.0
    hr = sizes["hidden_size"][1] / sizes["hidden_size"][0] if sizes["hidden_size"] else 1.0
    return {"params_ratio": lr * hr * hr, "params_basis": "body"}


# Where no config gives the batch, the logged rates do: samples/s or tokens/s x the step time.
IMPLIED_SOURCE = "derived:logged throughput × step time"
_BATCH_KEYS = ("global_batch_size", "batch_size", "micro_batch_size")


def implied_settings(implied: Mapping, settings: Mapping[str, Setting]) -> dict[str, Setting]:
    """Samples and tokens per step implied by the logged rates (``Throughput.implied``), as
    settings where no setting gives the batch: they enter the settings section and the diff
    (3 significant digits: a step time's noise is no change of batch)."""
    from ..model import Setting

    if any(k in settings for k in _BATCH_KEYS):
        return {}
    out = {}
    for key in ("samples_per_step", "tokens_per_step"):
        f = implied.get(key)
        if f is not None and f.value is not None and f.value > 0:
            v = float(f"{f.value:.3g}")
            out[key] = Setting(int(v) if v.is_integer() else v, IMPLIED_SOURCE)
    return out
