"""Model FLOPs utilisation (PaLM appendix B, as nanoGPT implements it).

flops_per_token = 6 N + 12 L H Q T, with N the model parameters without position embeddings,
L layers, H heads, Q head dim (H Q = hidden size), T sequence length. The attention term counts
the full T x T score matrix; Megatron counts causal attention as half (6 L H Q T), given beside it
as ``mfu_causal``. MFU = flops_per_token x tokens/s / (dense peak FLOP/s per device x devices).
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from ..model import Run
from ..text import Text
from .peaks import peak_flops
from .throughput import GIVEN, OPTIONS, logged_medians, setting_figure
from .types import AnalysisOptions, Figure, ModelSize, Mfu, SteadyWindow, Throughput, missing

_POSITION = re.compile(r"(position|pos_emb|wpe\b|\.wpe\.|positional)", re.I)
_EMBEDDING = re.compile(r"(embed|wte\b|\.wte\.|tok_embeddings|word_embeddings|embedding_table)", re.I)


def _arch(run: Run, options: AnalysisOptions, key: str) -> Figure:
    given = getattr(options, key, None)
    if given is not None:
        return Figure(float(given), method=GIVEN, source=OPTIONS)
    f = setting_figure(run, key)
    return f if f is not None else missing(Text("reason.no-setting", key=key))


def latest_train_checkpoint(run: Run) -> str | None:
    """Path of the latest train checkpoint whose parameters were read (lowest rank on ties)."""
    params = run.tables["checkpoint_params"]
    if params.is_empty():
        return None
    with_params = params.filter(pl.col("role") == "model")["path"].unique()
    ckpts = run.tables["checkpoints"].filter(
        (pl.col("kind") == "train") & pl.col("path").is_in(with_params.implode())
    )
    if not ckpts.is_empty():
        return ckpts.sort(["step", "rank", "path"], descending=[True, False, False], nulls_last=True)["path"][0]
    return with_params.sort()[-1] if with_params.len() else None


def decoder_parameters(layers: float, hidden: float, *, heads: float | None = None, kv_heads: float | None = None,
                       ffn: float | None = None) -> float:
    """A decoder's parameters without embeddings, from its shape: attention (grouped-query where
    the kv heads are given) and a gated MLP where the FFN width is given (MindFormers' llama
    family), else the 4h two-matrix MLP: 12 L h² for a GPT. Norms and biases are left out (under
    0.1%)."""
    kv_dim = hidden * kv_heads / heads if heads and kv_heads else hidden
    attention = 2 * hidden * hidden + 2 * hidden * kv_dim
    mlp = 3 * hidden * ffn if ffn else 8 * hidden * hidden
    return layers * (attention + mlp)


def model_size(run: Run, options: AnalysisOptions) -> ModelSize:
    path = latest_train_checkpoint(run)
    if path is not None:
        p = run.tables["checkpoint_params"].filter((pl.col("path") == path) & (pl.col("role") == "model"))
        names = p["name"]
        pos = p.filter(names.str.contains(_POSITION.pattern))["elements"].sum()
        emb = p.filter(names.str.contains(_EMBEDDING.pattern) & ~names.str.contains(_POSITION.pattern))["elements"].sum()
        total = p["elements"].sum()
        src = Text("source.checkpoint", path=path)
        return ModelSize(
            params=Figure(float(total - pos), method=Text("method.params-palm"), source=src),
            params_total=Figure(float(total), method=Text("method.params-total"), source=src),
            params_non_embedding=Figure(float(total - pos - emb), method=Text("method.params-non-embedding"), source=src),
            embedding_params=Figure(float(emb), method=Text("method.params-embedding"), source=src),
            position_embedding_params=Figure(float(pos), method=Text("method.params-position"), source=src),
            checkpoint=path,
        )
    recorded = _recorded_parameters(run)
    if recorded is not None:  # the run's own count (the callback's header, a config): better than a shape's estimate
        none = missing(Text("reason.params-recorded-whole", origin=run.settings["num_parameters"].source))
        return ModelSize(params=recorded, params_total=recorded, params_non_embedding=none, embedding_params=none,
                         position_embedding_params=none)
    layers, hidden, vocab = (_arch(run, options, k) for k in ("num_layers", "hidden_size", "vocab_size"))
    if layers.value is None or hidden.value is None:
        reason = Text("reason.no-params")
        return ModelSize(*(missing(reason) for _ in range(5)))
    body = decoder_parameters(layers.value, hidden.value)
    emb = vocab.value * hidden.value if vocab.value is not None else None
    method = Text("method.params-estimate" if emb is not None else "method.params-estimate-no-vocab")
    arch = Text("source.architecture")
    return ModelSize(
        params=Figure(body + (emb or 0.0), method=method, source=arch),
        params_total=Figure(body + (emb or 0.0), method=method, source=arch),
        params_non_embedding=Figure(body, method=Text("method.params-estimate-body"), source=arch),
        embedding_params=Figure(emb, method=Text("method.params-estimate-embedding"), source=arch) if emb is not None
        else missing(Text("reason.no-setting", key="vocab_size")),
        position_embedding_params=missing(Text("reason.estimate-no-position")),
    )


def _recorded_parameters(run: Run) -> Figure | None:
    """The parameter count the run wrote itself (postmortem's callback counts the network's
    parameters at the first step; a config may give num_parameters), said where it was read. It
    counts every table, position embeddings too: the PaLM count leaves those out where a
    checkpoint's names show them."""
    s = run.settings.get("num_parameters")
    if s is None or isinstance(s.value, bool):
        return None
    try:
        value = float(s.value)
    except (TypeError, ValueError):
        return None
    if not value > 0:
        return None
    return Figure(value, method=Text("method.params-recorded"), source=Text("source.setting", key="num_parameters", origin=s.source))


def devices(run: Run, options: AnalysisOptions) -> Figure:
    if options.devices is not None:
        return Figure(float(options.devices), method=GIVEN, source=OPTIONS)
    f = setting_figure(run, "device_num")
    if f is not None:
        return f
    if run.ranks:
        return Figure(float(len(run.ranks)), method=Text("method.devices-from-ranks"), source=Text("source.ranks"))
    return missing(Text("reason.no-devices"))


def mfu(run: Run, options: AnalysisOptions, tp: Throughput, window: SteadyWindow,
        kept_steps: np.ndarray | None = None) -> Mfu:
    size = model_size(run, options)
    arch = {k: _arch(run, options, k) for k in ("num_layers", "hidden_size", "num_heads", "vocab_size")}
    arch["seq_length"] = tp.seq_length
    layers, hidden, seq = arch["num_layers"].value, arch["hidden_size"].value, tp.seq_length.value

    n = size.params.value
    if n is None:
        fpt = fpt_causal = missing(size.params.reason or Text("reason.no-params"), unit="FLOP/token")
    elif layers is None or hidden is None or seq is None:
        fpt = Figure(6.0 * n, method=Text("method.flops-6n"), unit="FLOP/token")
        fpt_causal = fpt
    else:
        attn = 12.0 * layers * hidden * seq
        fpt = Figure(6.0 * n + attn, method=Text("method.flops-palm"), unit="FLOP/token")
        fpt_causal = Figure(6.0 * n + attn / 2, method=Text("method.flops-causal"), unit="FLOP/token")

    device = options.device or run.setting("device")
    if options.peak_tflops is not None:
        peak = Figure(options.peak_tflops * 1e12, method=GIVEN, source=OPTIONS, unit="FLOP/s")
    else:
        precision = options.precision
        value, note = peak_flops(str(device) if device else None, precision)
        peak = (Figure(value, method=Text("method.peak-table"), source=note, unit="FLOP/s") if value is not None
                else missing(Text("reason.no-peak", why=note), unit="FLOP/s"))
    devs = devices(run, options)
    tps = tp.tokens_per_s
    if tps.unit.endswith("/device") and tps.value is not None:  # a printed per-device rate: the run's is devices times it
        tps = Figure(tps.value * devs.value, method=tps.method, source=tps.source) if devs.value is not None else \
            missing(devs.reason or Text("reason.no-devices"))

    def util(f: Figure) -> Figure:
        for part in (f, tps, peak, devs):
            if part.value is None:
                return missing(part.reason or Text("reason.unknown"), method=Text("method.mfu-formula"))
        return Figure(f.value * tps.value / (peak.value * devs.value),
                      method=Text("method.mfu", flops=f.method), unit="fraction")

    if fpt.value is not None and tps.value is not None and devs.value is not None:
        achieved = Figure(fpt.value * tps.value / devs.value / 1e12, method=Text("method.achieved"), unit="TFLOPS")
    else:
        achieved = missing(fpt.reason or tps.reason or devs.reason or Text("reason.unknown"), unit="TFLOPS")

    logged = logged_medians(run.tables["scalars"], window, ("mfu", "hfu", "tflops_per_device"), kept_steps)
    for tag in ("mfu", "hfu"):  # some logs print percent; fractions are 0-1
        f = logged.get(tag)
        if f is not None and f.value is not None and f.value > 1.0:
            logged[tag] = Figure(f.value / 100.0, method=Text("method.percent", inner=f.method), source=f.source,
                                 unit="fraction")
    for key in ("full_model_flops", "shard_model_flops", "full_hardware_flops", "shard_hardware_flops"):
        f = setting_figure(run, key)
        if f is not None:
            logged[key] = f
    return Mfu(
        model=size,
        flops_per_token=fpt,
        flops_per_token_causal=fpt_causal,
        peak_flops=peak,
        devices=devs,
        mfu=util(fpt),
        mfu_causal=util(fpt_causal),
        achieved_tflops_per_device=achieved,
        logged=logged,
        architecture=arch,
    )
