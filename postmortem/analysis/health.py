"""MindFormers' own judgement of a run: which saves are healthy (``health_ckpts.json``), the one
to resume from, the embedding's local norm against the threshold the writer applies, and the MoE
figures (expert load per layer, token drop rate, aux loss).

The rules are the writer's (mindformers @ fd4deebc; docs/formats/health.md):
* a save is healthy where its ``is_health`` is 0 (``tools/resume_ckpt.py`` line 144); the save to
  resume from is the last healthy one (``health_resume_point``). MindFormers' own resume filters
  nothing (line 152 tests ``if not not_health_ckpts``: the list is filtered only when it holds no
  unhealthy save) and starts from the latest of the complete saves (line 115), so a run whose latest
  save is unhealthy resumes from it unless told otherwise: the finding says which file to give.
* the embedding's local norm makes a save unhealthy at ``>= embedding_local_norm_threshold``
  (``core/callback/callback.py`` line 1332; default 1.0, line 1190), and only under pipeline
  parallel (line 1327): without it every save is recorded healthy whatever the norm.
* a drop rate above 0 is tokens over the experts' capacity (lines 2370-2371: the sum of the shares over
  ``capacity_factor / expert_num``). Expert load has no rule of MindFormers' own (the top-k bias
  moves towards the mean by its sign, lines 2307-2312): it is shown, with the busiest expert's
  share of its layer, never judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

import polars as pl

from .. import tags
from ..load.checkpoints import steps_per_epoch
from ..model import Run
from .types import Finding, FindingKind, FindingSeverity


@dataclass(frozen=True, slots=True)
class HealthSave:
    """One entry of health_ckpts.json."""

    position: int  # in save order
    ckpt_name: str | None
    is_health: int | None  # as written
    step: int | None  # global step: the checkpoint file's, else (epoch - 1) x steps per epoch + step in epoch
    epoch: int | None
    step_in_epoch: int | None
    on_disk: bool  # rank 0's file of that name is in the run folder

    @property
    def healthy(self) -> bool:
        return self.is_health == 0


@dataclass(frozen=True, slots=True)
class NormRule:
    """A series against the threshold its writer applies."""

    tag: str  # the raw tag the series came from
    threshold: float
    threshold_source: str  # "default" (CheckpointMonitor's), or the setting's source
    first_over: int | None  # first step at or over the threshold
    over: int  # steps at or over it
    steps: int
    peak: float | None
    peak_step: int | None
    judged: bool  # the health monitor would judge saves by it: pipeline parallel (stages > 1)


@dataclass(frozen=True, slots=True)
class LayerLoad:
    layer: int
    experts: int
    step: int  # the last step with a load
    busiest: int  # expert
    busiest_share: float  # of the layer's tokens at that step
    max_over_mean: float  # at that step; 1.0 is balanced


@dataclass(frozen=True, slots=True)
class LayerDrops:
    layer: int
    first_step: int | None  # first step with a drop rate above 0
    peak: float
    peak_step: int
    steps_dropping: int
    steps: int


@dataclass(frozen=True)
class Health:
    record: str | None  # the health_ckpts.json read
    saves: tuple[HealthSave, ...]
    resume: HealthSave | None  # the last healthy save
    embedding: NormRule | None
    expert_load: tuple[LayerLoad, ...]
    drops: tuple[LayerDrops, ...]
    series: dict[str, pl.DataFrame] = field(default_factory=dict)  # chart data: embedding_norm, expert_load, drop_rate, aux_loss

    @property
    def unhealthy(self) -> tuple[HealthSave, ...]:
        return tuple(s for s in self.saves if not s.healthy)

    @property
    def empty(self) -> bool:
        return not self.saves and self.embedding is None and not self.expert_load and not self.drops and \
            "aux_loss" not in self.series


# --------------------------------------------------------------------------- health_ckpts.json


def _saves(run: Run) -> tuple[str | None, tuple[HealthSave, ...]]:
    """The saves of the run's health record, in save order: MindFormers' health_ckpts.json (the
    shallowest, where several were copied in), else every Checkpoint 2.0 common.json by step."""
    table = run.tables.get("health_ckpts")
    if table is None or table.is_empty():
        return None, ()
    lists = [p for p in table["path"].unique().to_list() if p.rsplit("/", 1)[-1] == "health_ckpts.json"]
    if lists:
        record = sorted(lists, key=lambda p: (p.count("/"), p))[0]
        table = table.filter(pl.col("path") == record).sort("position")
    else:
        table = table.sort("step", "path", nulls_last=True)
        folders = {p.rsplit("/", 2)[0] for p in table["path"].to_list()}
        record = f"{sorted(folders)[0]}/*/common.json" if len(folders) == 1 else "common.json"
    ckpts = run.tables["checkpoints"]
    by_name = {PurePosixPath(p).name: s for p, s in ckpts.select("path", "step").iter_rows()}
    per_epoch = steps_per_epoch(ckpts, run.settings)
    out = []
    for i, row in enumerate(table.iter_rows(named=True)):
        name, epoch, in_epoch = row["ckpt_name"], row["epoch"], row["step_in_epoch"]
        step = row["step"] if row["step"] is not None else (by_name.get(name) if name else None)
        if step is None and in_epoch is not None and epoch is not None:
            step = (epoch - 1) * per_epoch + in_epoch if per_epoch else (in_epoch if epoch == 1 else None)
        on_disk = name in by_name or (row["step"] is not None)  # a common.json sits in its save's folder
        out.append(HealthSave(i, name, row["is_health"], step, epoch, in_epoch, on_disk))
    return record, tuple(out)


def health_resume_point(run: Run) -> HealthSave | None:
    """The save to resume from by MindFormers' health record: the last entry of health_ckpts.json
    whose ``is_health`` is 0, with its global step and whether its file is in the run folder.

    None where the run left no health_ckpts.json or none of its saves is healthy (MindFormers'
    resume then refuses: "The training has no healthy checkpoints yet")."""
    return _last_healthy(_saves(run)[1])


def _last_healthy(saves: tuple[HealthSave, ...]) -> HealthSave | None:
    return next((s for s in reversed(saves) if s.healthy), None)


# --------------------------------------------------------------------------- tags


def _embedding_rule(run: Run, series: pl.DataFrame) -> NormRule | None:
    if series.is_empty():
        return None
    setting = run.settings.get("embedding_local_norm_threshold")
    try:
        threshold, source = float(setting.value), setting.source
    except (AttributeError, TypeError, ValueError):
        threshold, source = tags.EMBEDDING_NORM_THRESHOLD, "default"
    over = series.filter(pl.col("value") >= threshold)
    finite = series.filter(pl.col("value").is_finite())
    peak = finite.sort("value", descending=True).head(1)
    stages = [run.setting(k) for k in ("pipeline_stage", "strategy_pipeline_stages")]
    judged = any(isinstance(s, (int, float)) and s > 1 for s in stages)
    return NormRule(str(series["raw_tag"][0]), threshold, source, int(over["step"].min()) if over.height else None,
                    over["step"].n_unique(), series["step"].n_unique(),
                    float(peak["value"][0]) if peak.height else None, int(peak["step"][0]) if peak.height else None,
                    judged)


def _expert_loads(loads: pl.DataFrame) -> tuple[LayerLoad, ...]:
    out = []
    for layer in sorted(loads["layer"].unique().to_list()):
        rows = loads.filter(pl.col("layer") == layer)
        last = rows.filter(pl.col("step") == rows["step"].max())
        total = float(last["value"].sum())
        if total <= 0:
            continue
        top = last.sort("value", descending=True).row(0, named=True)
        mean = total / last.height
        out.append(LayerLoad(int(layer), last.height, int(top["step"]), int(top["expert"]), top["value"] / total,
                             top["value"] / mean))
    return tuple(out)


def _drops(drops: pl.DataFrame) -> tuple[LayerDrops, ...]:
    out = []
    for layer in sorted(drops["layer"].unique().to_list()):
        rows = drops.filter(pl.col("layer") == layer).sort("step")
        dropping = rows.filter(pl.col("value") > 0)
        peak = rows.sort("value", descending=True).row(0, named=True)
        out.append(LayerDrops(int(layer), int(dropping["step"].min()) if dropping.height else None, float(peak["value"]),
                              int(peak["step"]), dropping.height, rows.height))
    return tuple(out)


def _lowest_rank(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(pl.col("rank") == df["rank"].min()) if df.height and df["rank"].null_count() < df.height else df


def health(run: Run) -> Health | None:
    """What MindFormers' health records say of the run; None where it left none."""
    record, saves = _saves(run)
    scalars = run.tables["scalars"]
    # the tag rules run on the distinct tags, never per row (a long run has millions of rows)
    raw_tags = scalars["raw_tag"].cast(pl.Utf8).unique().to_list()
    embedding_tags = [t for t in raw_tags if t and tags.embedding_norm_tag(t)]
    # a save is unhealthy where any first-stage rank's norm crosses: the highest rank's value per step
    embedding = (scalars.filter(pl.col("raw_tag").cast(pl.Utf8).is_in(embedding_tags))
                 .group_by("step").agg(pl.col("value").max(), pl.col("raw_tag").cast(pl.Utf8).first()).sort("step"))
    tag = pl.col("tag").cast(pl.Utf8)
    loads = scalars.filter(tag.str.starts_with("expert_load/"))
    if loads.height:
        found = tag.str.extract_groups(tags.EXPERT_LOAD.pattern)
        loads = _lowest_rank(loads.with_columns(found.struct.field("1").cast(pl.Int64).alias("layer"),
                                                found.struct.field("2").cast(pl.Int64).alias("expert"))
                             .filter(pl.col("layer").is_not_null())).select("step", "layer", "expert", "value")
    drops = scalars.filter(tag.str.starts_with(tags.DROP_RATE_PREFIX))
    if drops.height:
        drops = _lowest_rank(drops.with_columns(
            tag.str.slice(len(tags.DROP_RATE_PREFIX)).cast(pl.Int64, strict=False).alias("layer"))
            .filter(pl.col("layer").is_not_null())).select("step", "layer", "value")
    aux = _lowest_rank(scalars.filter(tag == tags.AUX_LOSS)).select("step", "value")
    result = Health(
        record, saves, _last_healthy(saves), _embedding_rule(run, embedding),
        _expert_loads(loads) if loads.height else (), _drops(drops) if drops.height else (),
        {k: v for k, v in (("embedding_norm", embedding.select("step", "value")), ("expert_load", loads),
                           ("drop_rate", drops), ("aux_loss", aux)) if v.height},
    )
    return None if result.empty else result


# --------------------------------------------------------------------------- findings


def health_findings(h: Health | None) -> list[Finding]:
    """An unhealthy save (with the save to resume from), the embedding norm over its threshold,
    tokens dropped; each with the step it starts at."""
    if h is None:
        return []
    out: list[Finding] = []
    W, C, I = FindingSeverity.WARNING, FindingSeverity.CRITICAL, FindingSeverity.INFO
    bad = h.unhealthy
    if bad:
        latest = h.saves[-1]
        params = {"count": len(bad), "saves": len(h.saves), "first_step": bad[0].step, "first_name": bad[0].ckpt_name,
                  "file": h.record}
        if h.resume is None:
            out.append(Finding(FindingKind.UNHEALTHY_CHECKPOINT, C, params, "none"))
        else:
            params.update(resume_step=h.resume.step, resume_name=h.resume.ckpt_name, on_disk=h.resume.on_disk,
                          latest_step=latest.step, latest_name=latest.ckpt_name)
            out.append(Finding(FindingKind.UNHEALTHY_CHECKPOINT, W if not latest.healthy else I, params,
                               "latest" if not latest.healthy else "earlier"))
    e = h.embedding
    if e is not None and e.first_over is not None:
        out.append(Finding(FindingKind.EMBEDDING_NORM, W, {
            "tag": e.tag, "threshold": e.threshold, "first_step": e.first_over, "over": e.over, "steps": e.steps,
            "peak": e.peak, "peak_step": e.peak_step}, "" if e.judged else "unjudged"))
    dropping = [d for d in h.drops if d.first_step is not None]
    if dropping:
        worst = max(dropping, key=lambda d: d.peak)
        out.append(Finding(FindingKind.TOKEN_DROPS, W, {
            "layers": len(dropping), "of": len(h.drops), "layer": worst.layer, "peak": worst.peak,
            "peak_step": worst.peak_step, "first_step": min(d.first_step for d in dropping)}))
    return out
