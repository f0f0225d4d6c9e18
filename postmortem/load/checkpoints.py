"""The global step of each checkpoint.

1. What the file states: append_info's ``step_num`` (MindSpore's cur_step_num) or the optimizer's
   ``global_step``; where the name's (epoch, step in epoch) with the steps per epoch gives a later
   step, the name (append_info counts from 1 again in a resumed launch that kept its epochs).
2. Which launch saved it: the launch whose wall-clock span holds the file's mtime (when the save
   finished). A launch that counted its steps from 1 again (a restarted counter) saved local
   steps: the step becomes ``local + first global step of the launch - 1`` where the stated step
   lies outside the launch's global steps and the shifted one inside.
   Mtimes only count where the files kept them: a copied folder has every mtime after the run.
   Then the file's prefix tells: ModelCheckpoint saves under ``{prefix}_{n}`` when files of
   ``{prefix}`` are already in its folder, so the n-th variant of a prefix is the (n+1)-th launch
   that saved there. Where neither tells, the stated steps stand and a note says so.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import polars as pl

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..model import TABLES, Setting, conform
from .settings import positive_int

# An mtime counts as the run's own when it lies between the first step end (minus this: a save
# cannot come before its launch's first step, but clocks of a shared filesystem may differ a little)
# and the last step end plus this (the final save of a big model can take minutes).
_BEFORE_S = 60.0
_AFTER_S = 1800.0


def resolve_checkpoints(
    checkpoints: pl.DataFrame, events: pl.DataFrame, settings: dict[str, Setting], steps: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, list[Diagnostic]]:
    """Checkpoints with global steps (and launches); their save events get the same step and,
    where the mtime is not the run's own, no wall time."""
    if checkpoints.is_empty():
        return checkpoints, events, []
    checkpoints = _from_names(checkpoints, settings)
    checkpoints, notes = _by_launch(checkpoints, steps)
    by_file = checkpoints.select(pl.col("path").alias("file"), pl.col("step").alias("_ckpt_step"),
                                 pl.col("_mtime_ok"))
    saves = pl.col("kind").is_in(["checkpoint_save", "checkpoint_interrupted"])
    events = (
        events.join(by_file, on="file", how="left")
        .with_columns(
            pl.when(saves).then(pl.coalesce("_ckpt_step", "step")).otherwise(pl.col("step")).alias("step"),
            pl.when(saves & (pl.col("_mtime_ok") == False)).then(None).otherwise(pl.col("wall_time")).alias("wall_time"),  # noqa: E712
        )
    )
    checkpoints = checkpoints.drop("_mtime_ok").sort("rank", "step", "path", nulls_last=True)
    return checkpoints, conform(events, TABLES["events"]), notes


def steps_per_epoch(checkpoints: pl.DataFrame, settings: dict[str, Setting]) -> int | None:
    """Steps per epoch: a setting, else dataset size / batch, else what checkpoint names imply."""
    for key in ("steps_per_epoch", "sink_size"):
        s = settings.get(key)
        if s is not None and positive_int(s.value):
            return int(s.value)
    size, batch = settings.get("train_dataset_size"), settings.get("batch_size")
    if size is not None and batch is not None and positive_int(size.value) and positive_int(batch.value):
        return int(size.value) // int(batch.value)
    # A checkpoint whose global step is known and whose name gives (epoch, step in epoch).
    known = checkpoints.filter(
        pl.col("step").is_not_null() & (pl.col("epoch") > 1) & pl.col("step_in_epoch").is_not_null()
    ).select(((pl.col("step") - pl.col("step_in_epoch")) / (pl.col("epoch") - 1)).alias("spe"))
    known = known.filter((pl.col("spe") > 0) & (pl.col("spe") == pl.col("spe").round()))
    if known.is_empty():
        return None
    return int(known["spe"].mode().sort()[-1])


def _from_names(checkpoints: pl.DataFrame, settings: dict[str, Setting]) -> pl.DataFrame:
    per_epoch = steps_per_epoch(checkpoints, settings)
    if not per_epoch:
        return checkpoints
    from_name = (pl.col("epoch") - 1) * per_epoch + pl.col("step_in_epoch")
    use_name = from_name.is_not_null() & (pl.col("step").is_null() | (from_name > pl.col("step")))
    return checkpoints.with_columns(
        pl.when(use_name).then(from_name).otherwise(pl.col("step")).alias("step"),
        pl.when(use_name).then(pl.lit(f"name ({per_epoch} steps per epoch)")).otherwise(pl.col("step_source")).alias("step_source"),
    )


def _launch_spans(steps: pl.DataFrame) -> pl.DataFrame:
    """(segment, first/last step, first/last step-end wall time) of the lowest rank's launches."""
    timed = steps.filter(pl.col("wall_time").is_not_null())
    if timed.is_empty():
        return pl.DataFrame()
    timed = timed.filter(pl.col("rank") == timed["rank"].min())
    return timed.group_by("segment").agg(
        pl.col("step").min().alias("first_step"), pl.col("step").max().alias("last_step"),
        pl.col("wall_time").min().alias("first_wall"), pl.col("wall_time").max().alias("last_wall"),
    ).sort("segment")


def _by_launch(checkpoints: pl.DataFrame, steps: pl.DataFrame) -> tuple[pl.DataFrame, list[Diagnostic]]:
    spans = _launch_spans(steps)
    if spans.is_empty():
        return checkpoints.with_columns(pl.lit(None, pl.Boolean).alias("_mtime_ok")), []
    lo, hi = spans["first_wall"].min() - _BEFORE_S, spans["last_wall"].max() + _AFTER_S
    rows = []
    notes: list[Diagnostic] = []
    outside, ambiguous = [], []
    variants = _prefix_variants(checkpoints["path"].to_list())
    for row in checkpoints.iter_rows(named=True):
        mtime, step = row["mtime"], row["step"]
        ok = mtime is not None and lo <= mtime <= hi
        launch, how = None, ""
        if ok and step is not None and spans.height > 1:
            launch = spans.filter(pl.col("first_wall") <= mtime).tail(1)
            launch, how = (launch if launch.height else spans.head(1)), "its mtime"
        elif not ok and step is not None and spans.height > 1 and row["kind"] == "train":
            n, prefix = variants.get(row["path"], (-1, ""))
            if 0 <= n < spans.height:
                launch, how = spans.slice(n, 1), (f"its prefix {prefix}: ModelCheckpoint's new prefix number {n}" if n
                                                  else f"its prefix {prefix}, which later launches renamed")
        if not ok:
            outside.append(row["path"])
        if launch is not None:
            first, last, index = launch["first_step"][0], launch["last_step"][0], launch["segment"][0]
            shifted = step + first - 1
            if not first <= step <= last and first <= shifted <= last:
                row["step"] = shifted
                row["step_source"] = (f"{row['step_source']} + {first - 1}: saved by launch {index + 1} "
                                      f"({how}), which counted its steps from 1 again")
        elif not ok and row["kind"] == "train" and step is not None and _could_be_local(step, spans):
            ambiguous.append(row["path"])
        row["_mtime_ok"] = ok
        rows.append(row)
    if outside:
        counts = {"outside": len(outside), "files": checkpoints.height}
        if ambiguous:
            notes.append(diag.warning("checkpoint-launch-unknown", path=ambiguous[0], ambiguous=len(ambiguous), **counts))
        else:
            notes.append(diag.info("checkpoint-mtime-outside", path=outside[0], **counts))
    schema = {**checkpoints.schema, "_mtime_ok": pl.Boolean}
    return pl.DataFrame(rows, schema=schema), notes


def _could_be_local(step: int, spans: pl.DataFrame) -> bool:
    """Whether a later launch counting from 1 again would have saved this stated step as another
    global step of its own."""
    return any(first > 1 and step < first and step + first - 1 <= last
               for first, last in spans.select("first_step", "last_step").iter_rows())


_NAME = re.compile(r"^(?P<prefix>.+?)(?:_(?P<n>\d+))?-\d+_\d+\.(?:ckpt|safetensors)$")


def _prefix_variants(paths: list[str]) -> dict[str, tuple[int, str]]:
    """path -> (n, prefix) for the files of a prefix that has variants in its folder: ``{prefix}``
    (n = 0) and ``{prefix}_{n}`` (without the bare prefix beside it, an ``_n`` is just part of the
    user's own prefix)."""
    parsed = {}
    for path in paths:
        p = PurePosixPath(path)
        m = _NAME.match(p.name)
        if m:
            parsed[path] = (str(p.parent), m["prefix"], int(m["n"]) if m["n"] else 0)
    bare = {(folder, prefix) for folder, prefix, n in parsed.values() if n == 0}
    varied = {(folder, prefix) for folder, prefix, n in parsed.values() if n and (folder, prefix) in bare}
    return {path: (n, f"{prefix}_{n}" if n else prefix) for path, (folder, prefix, n) in parsed.items()
            if (folder, prefix) in varied}


# --------------------------------------------------------------------------- the model's shape

# Parameter names that show the model's shape (MindSpore cells, MindFormers, GPT-2 / Llama ports).
_LAYER = re.compile(r"(?:^|\.)(?:layers|layer|blocks|block|h|decoder\.layers|encoder\.layers)\.(\d+)\.")
_POSITION = re.compile(r"(?:position|pos_emb|wpe\b|positional)", re.I)
_WORD_EMBEDDING = re.compile(r"(?:embedding_table|embed_tokens|tok_embeddings|word_embeddings?|wte\b|embedding_weight)", re.I)
_FFN_IN = re.compile(r"(?:\.fc1|\.w1|dense_h_to_4h|\.c_fc|up_proj|\.mapping)\.weight$", re.I)
# A split layout makes every rank's tensors shards of the model: their shapes are not its own.
_SPLIT = ("model_parallel", "pipeline_stage", "expert_parallel", "context_parallel",
          "strategy_model_parallel", "strategy_pipeline_stages", "strategy_expert_parallel")


def shape_settings(params: pl.DataFrame, checkpoints: pl.DataFrame,
                   settings: dict[str, Setting]) -> tuple[list[tuple[str, Setting]], list[Diagnostic]]:
    """The model's shape from the tensors of one train checkpoint (the lowest rank's latest): its
    parameter count, and where the names show them the layers, the hidden size, the vocabulary and
    the feed-forward size. Source ``checkpoint:<path>``: a config file still wins (settings.py).
    Under a split layout (model or pipeline parallel > 1) a rank's tensors are shards: nothing is
    taken and a note says why."""
    model = params.filter(pl.col("role") == "model")
    if model.is_empty():
        return [], []
    split = [k for k in _SPLIT if k in settings and positive_int(settings[k].value) and int(settings[k].value) > 1]
    if split:
        return [], [diag.info("checkpoint-shape-sharded", key=split[0], value=settings[split[0]].value)]
    train = checkpoints.filter(pl.col("kind") == "train").sort(["rank", "step", "path"], descending=[False, True, True],
                                                                 nulls_last=True)
    with_params = set(model["path"].unique().to_list())
    latest = train.filter(pl.col("path").is_in(list(with_params))).unique("rank", keep="first", maintain_order=True)
    if latest.height > 1:  # ranks whose tensors differ hold shards (a pipeline stage's layers, a split matrix)
        shapes = {p: frozenset((n, tuple(sh or ())) for n, sh in model.filter(pl.col("path") == p).select("name", "shape").iter_rows())
                  for p in latest["path"]}
        if len(set(shapes.values())) > 1:
            return [], [diag.info("checkpoint-shape-sharded", variant="ranks-differ", n=latest.height)]
    paths = [p for p in train["path"].to_list() if p in with_params]
    path = paths[0] if paths else sorted(with_params)[-1]
    p = model.filter(pl.col("path") == path)
    source = f"checkpoint:{path}"
    out: list[tuple[str, Setting]] = [("num_parameters", Setting(int(p["elements"].sum()), source))]
    names = p["name"].to_list()
    shapes = p["shape"].to_list()
    layers = {int(m.group(1)) for n in names if (m := _LAYER.search(n))}
    if layers:
        out.append(("num_layers", Setting(max(layers) + 1, source)))
    words = [s for n, s in zip(names, shapes) if _WORD_EMBEDDING.search(n) and not _POSITION.search(n) and s and len(s) == 2]
    if words:
        vocab, hidden = int(words[0][0]), int(words[0][1])
        out += [("vocab_size", Setting(vocab, source)), ("hidden_size", Setting(hidden, source))]
        ffn = [s for n, s in zip(names, shapes) if _FFN_IN.search(n) and s and len(s) == 2 and hidden in s]
        if ffn:  # (ffn, hidden) in MindSpore's Dense, (hidden, ffn) in a transposed port
            a, b = int(ffn[0][0]), int(ffn[0][1])
            out.append(("ffn_hidden_size", Setting(a if b == hidden else b, source)))
    return out, []
