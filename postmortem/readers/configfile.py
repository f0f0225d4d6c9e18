"""Run configuration files: MindFormers YAML and JSON training configs -> settings.

Every setting has source ``config:<rel path>``; the global batch size, computed here, has source
``derived:config:<rel path>``. YAML is read with ``yaml.safe_load`` only.

JSON is claimed only when it looks like a training config (a known top-level section such as
``model``/``runner_config``/``parallel_config``/``optimizer`` and not one of the names other readers
own: ``meta.json``, ``train_metadata.json``, ``communication*.json``, profiler output).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import diagnostics as dg
from ..model import Artifact, ReadResult, Setting
from . import guard
from .base import Reader

_SECTIONS = ("model", "runner_config", "parallel_config", "optimizer", "lr_schedule", "trainer", "context")
_NOT_CONFIG = re.compile(
    r"(?:^|/)(?:meta\.json|train_metadata\.json|communication[^/]*\.json|profiler_info_\d+\.json"
    r"|trace_view\.json|[^/]*lineage[^/]*)$"
)
_PROFILER_DIR = re.compile(r"(?:^|/)(?:[^/]*_ascend_ms|profiler|PROF_[^/]*)/", re.IGNORECASE)
JSON_SNIFF_BYTES = 4096
MAX_CONFIG_BYTES = 8 << 20  # a bigger file is data, not a config


def _claims(artifact: Artifact) -> bool:
    rel = artifact.rel
    low = rel.lower()
    if low.endswith((".yaml", ".yml")):
        return not _PROFILER_DIR.search(rel) and artifact.size <= MAX_CONFIG_BYTES
    if not low.endswith(".json") or _NOT_CONFIG.search(rel) or _PROFILER_DIR.search(rel):
        return False
    if artifact.size > MAX_CONFIG_BYTES:
        return False
    try:
        with guard.open_file(artifact.path, "rb") as fh:
            head = fh.read(JSON_SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return bool(re.search(r'"(?:%s)"\s*:\s*\{' % "|".join(_SECTIONS), head))


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _first(d: Any, section: tuple[str, ...], names: tuple[str, ...]) -> Any:
    base = _get(d, *section)
    if not isinstance(base, dict):
        return None
    for n in names:
        if base.get(n) is not None:
            return base[n]
    return None


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _num(v: Any) -> float | int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def extract_settings(cfg: dict, source: str) -> dict[str, Setting]:
    """Settings from a parsed MindFormers-style config (also used for JSON configs)."""
    out: dict[str, Setting] = {}

    def put(key: str, value: Any) -> None:
        if value is not None:
            out[key] = Setting(value, source)

    mc = ("model", "model_config")
    put("num_layers", _int(_first(cfg, mc, ("num_layers", "num_hidden_layers", "n_layer"))))
    put("hidden_size", _int(_first(cfg, mc, ("hidden_size", "n_embd", "dim"))))
    put("num_heads", _int(_first(cfg, mc, ("num_heads", "num_attention_heads", "n_head"))))
    put("seq_length", _int(_first(cfg, mc, ("seq_length", "max_position_embeddings", "seq_len"))))
    put("vocab_size", _int(_first(cfg, mc, ("vocab_size", "padded_vocab_size"))))
    put("max_position_embeddings", _int(_first(cfg, mc, ("max_position_embeddings", "max_position_embedding"))))
    put("num_kv_heads", _int(_first(cfg, mc, ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num"))))
    tie = _first(cfg, mc, ("tie_word_embeddings",))
    put("tie_word_embeddings", tie if isinstance(tie, bool) else None)
    init = _first(cfg, mc, ("param_init_type", "params_dtype"))
    put("param_init_type", str(init) if init is not None else None)
    put("ffn_hidden_size", _int(_first(cfg, mc, ("ffn_hidden_size", "intermediate_size"))))
    multiple_of = _int(_first(cfg, mc, ("multiple_of",)))
    hidden = out["hidden_size"].value if "hidden_size" in out else None
    if "ffn_hidden_size" not in out and multiple_of and hidden:
        # LlamaConfig without intermediate_size (models/llama/llama_layer.py FeedForward): 4h, times
        # ffn_dim_multiplier where given, 2/3 of it, rounded up to multiple_of
        ffn = 4 * hidden
        mult = _num(_first(cfg, mc, ("ffn_dim_multiplier",)))
        if mult is not None:
            ffn = int((mult + 0.01) * ffn)
        ffn = int(2 * ffn / 3)
        out["ffn_hidden_size"] = Setting(multiple_of * -(-ffn // multiple_of), f"derived:{source}")
    dtype = _first(cfg, mc, ("compute_dtype",))
    put("precision", str(dtype) if dtype is not None else None)

    rc = ("runner_config",)
    batch = _int(_first(cfg, rc, ("batch_size",)))
    put("batch_size", batch)
    put("micro_batch_size", batch)
    put("epoch", _int(_first(cfg, rc, ("epochs",))))
    put("sink_size", _int(_first(cfg, rc, ("sink_size",))))
    accum = _int(_first(cfg, rc, ("gradient_accumulation_steps",)))
    put("gradient_accumulation_steps", accum)

    pc = ("parallel_config",)
    dp = _int(_first(cfg, pc, ("data_parallel",)))
    pp = _int(_first(cfg, pc, ("pipeline_stage",)))
    mbn = _int(_first(cfg, pc, ("micro_batch_num",)))
    put("data_parallel", dp)
    put("model_parallel", _int(_first(cfg, pc, ("model_parallel",))))
    put("pipeline_stage", pp)
    put("micro_batch_num", mbn)
    put("context_parallel", _int(_first(cfg, pc, ("context_parallel",))))
    for key in ("vocab_emb_dp", "use_seq_parallel"):
        v = _first(cfg, pc, (key,))
        put(key, v if isinstance(v, bool) else None)
    par = _get(cfg, "parallel")
    if isinstance(par, dict):
        mode = par.get("parallel_mode")
        put("parallel_mode", mode if isinstance(mode, (int, str)) and not isinstance(mode, bool) else None)
        po = par.get("enable_parallel_optimizer")
        put("enable_parallel_optimizer", po if isinstance(po, bool) else None)
        put("device_num", _int(par.get("device_num")))
    use_parallel = cfg.get("use_parallel")
    put("use_parallel", use_parallel if isinstance(use_parallel, bool) else None)
    rec = _get(cfg, "recompute_config")
    if isinstance(rec, dict):
        for key in ("recompute", "select_recompute", "parallel_optimizer_comm_recompute"):
            v = rec.get(key)
            put(key, v if isinstance(v, bool) else None)  # lists of layers select too: not a switch

    opt = _first(cfg, (), ("optimizer",))
    put("optimizer", _get(opt, "type") if isinstance(opt, dict) else None)
    lr = _get(cfg, "lr_schedule")
    if isinstance(lr, dict):
        put("lr_schedule", lr.get("type"))
        put("learning_rate", _num(lr.get("learning_rate")))
        put("warmup_steps", _int(lr.get("warmup_steps")))
        put("warmup_ratio", _num(lr.get("warmup_ratio")))
        put("total_steps", _int(lr.get("total_steps")))
    callbacks = cfg.get("callbacks")
    if isinstance(callbacks, list):
        for cb in callbacks:
            # "CheckpointMointor" is MindFormers' own historical spelling
            if isinstance(cb, dict) and cb.get("type") in ("CheckpointMonitor", "CheckpointMointor"):
                put("save_checkpoint_steps", _int(cb.get("save_checkpoint_steps")))
                put("keep_checkpoint_max", _int(cb.get("keep_checkpoint_max")))
                put("embedding_local_norm_threshold", _num(cb.get("embedding_local_norm_threshold")))
    elif isinstance(callbacks, dict):  # a flat mapping, as hand-written configs often have
        put("save_checkpoint_steps", _int(callbacks.get("save_checkpoint_steps")))
        put("keep_checkpoint_max", _int(callbacks.get("keep_checkpoint_max")))
    # the checkpoint health monitor (analysis/health.py): Checkpoint 2.0 configs keep the threshold here
    put("embedding_local_norm_threshold", _num(_get(cfg, "monitor_config", "health_checkpoint", "embedding_local_norm_threshold")))
    health = cfg.get("use_checkpoint_health_monitor")
    put("use_checkpoint_health_monitor", health if isinstance(health, bool) else None)
    out_dir = cfg.get("output_dir")
    put("output_dir", out_dir if isinstance(out_dir, str) and out_dir else None)
    ctx = _get(cfg, "context")
    if isinstance(ctx, dict):
        put("device", ctx.get("device_target"))
        mode = ctx.get("mode")
        if isinstance(mode, int) and not isinstance(mode, bool):
            mode = {0: "GRAPH_MODE", 1: "PYNATIVE_MODE"}.get(mode, mode)
        put("mode", mode)
    put("network", _get(cfg, "trainer", "model_name") or _get(cfg, "model", "arch", "type"))

    interleave = _int(cfg.get("micro_batch_interleave_num"))
    put("micro_batch_interleave_num", interleave)
    gbs = global_batch(batch, dp, pp, mbn, accum, interleave)
    if gbs is not None:
        out["global_batch_size"] = Setting(gbs, f"derived:{source}")  # a code: the report words it
    return out


def global_batch(batch: int | float | None, dp: int | float | None, pp: int | float | None, micro: int | float | None,
                 accumulation: int | float | None, interleave: int | float | None = None) -> float | None:
    """Samples per step as MindFormers counts them (``trainer/base_trainer.py``, full batch):
    batch × dp × interleave × (micro_batch_num with pipeline stages, else the accumulation
    steps: MindFormers resets the accumulation to 1 under a pipeline)."""
    if not batch or not dp:
        return None
    per = batch * dp * (interleave or 1)
    return per * (micro or 1) if pp and pp > 1 else per * (accumulation or 1)


def read(artifact: Artifact) -> ReadResult:
    result = ReadResult(reader="config")
    rel = artifact.rel
    with guard.open_file(artifact.path, "rb") as fh:
        raw = fh.read(MAX_CONFIG_BYTES + 1)
    text = raw.decode("utf-8", errors="replace")
    import yaml  # here, not at the top: most runs have no YAML config, and every worker would pay 15 ms

    try:
        if rel.lower().endswith(".json"):
            cfg = json.loads(text)
        else:
            cfg = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        result.diagnostics.append(dg.warning("config-unparseable", path=rel, offset=line, variant="yaml", detail=_short(exc)))
        return result
    except RecursionError:  # hostile nesting ([[[[... thousands deep): not a config
        result.diagnostics.append(dg.warning("config-unparseable", path=rel, variant="deep"))
        return result
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        result.diagnostics.append(dg.warning("config-unparseable", path=rel, offset=line, variant="json", detail=_short(exc)))
        return result
    if not isinstance(cfg, dict):
        result.diagnostics.append(dg.info("config-not-mapping", path=rel))
        return result
    result.settings.update(extract_settings(cfg, f"config:{rel}"))
    return result


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


READER = Reader(name="config", claims=_claims, read=read)
