"""What is normal for an experiment: each headline figure's robust range over its last archived runs.

W&B's automations alert on a metric's z-score over a window of runs; the archive holds the same
figures. For each headline figure (HISTORY_FIGURES) the range rests on the experiment's last N
earlier runs (``AnalysisOptions.history_runs``, default 10) that can be compared on that figure:
a run whose settings differ from this one's in a setting that can move the figure's family (the
identity rules, ``identity.effects``: a learning-rate change cannot move the step time, it can
move the loss) is kept apart, named with the settings that set it apart.

Range: median ± max(K × 1.4826 MAD, floor) of those runs' values; at least MIN_RUNS of them, else
``unusual`` is None with the reason. The floor keeps identical runs from making any wiggle
unusual: MIN_REL of the median for rates and times, one for counts, one percentage point for
shares. The trend is the Theil–Sen slope of the values in run order (oldest first); it is "flat"
when the change it fits over those runs stays inside the spread around the fit (3 scaled MADs of
the residuals, at least the floor).

Pure: the past runs come as data (``PastRun``, made by ``postmortem/pastruns.py`` from the
archive's metrics.json, run.json and Parquet tables).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..text import Text
from .identity import base_key, effects, per_run
from .stats import MAD_SCALE
from .types import Better, Family

if TYPE_CHECKING:
    from .types import Analysis

MIN_RUNS = 5
K = 3.0  # half-width in scaled MADs (a robust 3-sigma band)
MIN_REL = 0.01  # the floor of a rate's or a time's half-width, as in compare.MIN_REL
SHARE_FLOOR = 0.01  # one percentage point
COUNT_FLOOR = 1.0

T, E, C, S = Family.THROUGHPUT, Family.EFFICIENCY, Family.CONVERGENCE, Family.STABILITY
# figure -> (family, which way is better, floor kind)
HISTORY_FIGURES: dict[str, tuple[Family, Better, str]] = {
    "step_time_s": (T, Better.LOWER, "rel"),
    "tokens_per_s": (T, Better.HIGHER, "rel"),
    "samples_per_s": (T, Better.HIGHER, "rel"),
    "mfu": (E, Better.HIGHER, "rel"),
    "loss_at_equal_tokens": (C, Better.LOWER, "rel"),
    "loss_spikes": (S, Better.LOWER, "count"),
    "comm_share": (T, Better.LOWER, "share"),
    "data_wait_share": (T, Better.LOWER, "share"),
}


@dataclass(frozen=True)
class PastRun:
    """One archived run as the history reads it: its figures (HISTORY_FIGURES, loss at equal tokens
    left out: it is read from ``loss_curve`` at the tokens all runs reached), its settings (key ->
    value) and its smoothed loss by tokens."""

    run_id: str
    finished: str  # ISO time (when it finished, else when it was built): the run order
    figures: Mapping[str, float | None]
    settings: Mapping[str, Any]
    # (tokens, smoothed loss), tokens rising; or a function that reads it, called only for the runs
    # a loss range rests on (a long run's loss table is the largest part of what the history reads)
    loss_curve: tuple[np.ndarray, np.ndarray] | Callable[[], tuple[np.ndarray, np.ndarray] | None] | None = None

    def curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        if callable(self.loss_curve):
            object.__setattr__(self, "loss_curve", self.loss_curve())
        return self.loss_curve  # type: ignore[return-value]


@dataclass(frozen=True)
class HistoryFigure:
    figure: str
    family: Family
    better: Better
    value: float | None  # this run's
    runs: tuple[str, ...]  # the run ids the range rests on, oldest first
    values: tuple[float, ...]  # their values, in the same order
    median: float | None = None
    mad: float | None = None  # scaled (1.4826 MAD)
    low: float | None = None
    high: float | None = None
    unusual: bool | None = None
    direction: str | None = None  # "above" / "below" the range
    worse: bool | None = None  # outside on the side that is worse
    trend: str | None = None  # "rising" / "falling" / "flat"
    slope: float | None = None  # per run (Theil–Sen)
    aligned_tokens: float | None = None  # loss at equal tokens: the tokens every run reached
    reason: Text | None = None  # why ``unusual`` is None
    apart: tuple[tuple[str, tuple[str, ...]], ...] = ()  # runs kept apart: (run id, the settings that differ)


@dataclass(frozen=True)
class History:
    experiment: str | None
    wanted: int  # N: the last runs a range rests on
    considered: int  # earlier archived runs of the experiment
    figures: tuple[HistoryFigure, ...] = field(default_factory=tuple)
    rule: Text | None = None

    def unusual(self) -> tuple[HistoryFigure, ...]:
        return tuple(f for f in self.figures if f.unusual)


def rule_text(wanted: int) -> Text:
    return Text("history.rule", n=wanted, need=MIN_RUNS, k=K, rel=MIN_REL, share=SHARE_FLOOR)


def current_figures(a: Analysis) -> dict[str, float | None]:
    """This run's headline figures, as the archive keeps them in metrics.json."""
    tp = a.throughput
    prof = a.profile.breakdown if a.profile is not None else None
    return {
        "step_time_s": tp.step_time_s.value,
        "tokens_per_s": tp.tokens_per_s.value if not tp.tokens_per_s.unit.endswith("/device") else None,
        "samples_per_s": tp.samples_per_s.value if not tp.samples_per_s.unit.endswith("/device") else None,
        "mfu": a.mfu.mfu.value if a.flag("mfu") is None else None,
        "loss_spikes": float(len(a.stability.loss.spikes)),
        "comm_share": prof.comm_share if prof is not None else None,
        "data_wait_share": a.phases.data_wait_share,
    }


def current_curve(a: Analysis) -> tuple[np.ndarray, np.ndarray] | None:
    import polars as pl

    s = a.steps.filter(pl.col("tokens").is_not_null() & pl.col("loss_smoothed").is_not_null())
    if s.height < 2:
        return None
    return s["tokens"].to_numpy().astype(float), s["loss_smoothed"].to_numpy().astype(float)


def differing(current: Mapping[str, Any], past: Mapping[str, Any], family: Family) -> tuple[str, ...]:
    """The settings that differ between two runs and can move this family of figures (per-run
    values and a user's copy of a setting left out)."""
    keys = {base_key(k) for k in (*current, *past) if not per_run(k)}
    cur = {base_key(k): _same(v) for k, v in current.items()}
    old = {base_key(k): _same(v) for k, v in past.items()}
    return tuple(sorted(k for k in keys if cur.get(k) != old.get(k) and family in effects(k)))


def _same(value: Any) -> str:
    """A setting's value as compared: a list read from metrics.json equals the tuple a reader gave."""
    import json

    return json.dumps(value, sort_keys=True, default=str)


def loss_at(curve: tuple[np.ndarray, np.ndarray] | None, tokens: float) -> float | None:
    if curve is None:
        return None
    x, y = curve
    if not x.size or tokens < x[0] or tokens > x[-1]:
        return None
    return float(np.interp(tokens, x, y))


def _theil_sen(values: Sequence[float]) -> float | None:
    y = np.asarray(values, dtype=float)
    if y.size < 3:
        return None
    i, j = np.triu_indices(y.size, 1)
    return float(np.median((y[j] - y[i]) / (j - i)))


def _trend(x: np.ndarray, slope: float, floor: float) -> str:
    """Rising or falling when the fitted change over the runs is more than the spread around the
    fit (3 scaled MADs of the residuals, at least the floor); else flat."""
    residuals = x - slope * np.arange(x.size)
    spread = max(K * MAD_SCALE * float(np.median(np.abs(residuals - np.median(residuals)))), floor)
    if abs(slope) * (x.size - 1) <= spread:
        return "flat"
    return "rising" if slope > 0 else "falling"


def _floor(kind: str, median: float) -> float:
    if kind == "count":
        return COUNT_FLOOR
    if kind == "share":
        return SHARE_FLOOR
    return MIN_REL * abs(median)


def judge(figure: str, value: float | None, runs: list[tuple[str, float]], apart: tuple = (),
          aligned_tokens: float | None = None) -> HistoryFigure:
    """One figure against the values of the runs its range rests on (oldest first)."""
    family, better, kind = HISTORY_FIGURES[figure]
    ids, vals = tuple(r for r, _ in runs), tuple(v for _, v in runs)
    base = dict(figure=figure, family=family, better=better, value=value, runs=ids, values=vals, apart=apart,
                aligned_tokens=aligned_tokens)
    if len(vals) < MIN_RUNS:
        return HistoryFigure(**base, reason=Text("history.reason.too-few", n=len(vals), need=MIN_RUNS))
    x = np.asarray(vals, dtype=float)
    med = float(np.median(x))
    mad = MAD_SCALE * float(np.median(np.abs(x - med)))
    half = max(K * mad, _floor(kind, med))
    low, high = med - half, med + half
    if kind in ("count", "share"):
        low = max(low, 0.0)
    slope = _theil_sen(vals)
    trend = None if slope is None else _trend(x, slope, _floor(kind, med))
    out = dict(median=med, mad=mad, low=low, high=high, slope=slope, trend=trend)
    if value is None or not math.isfinite(value):
        return HistoryFigure(**base, **out, reason=Text("history.reason.no-value"))
    above, below = value > high, value < low
    direction = "above" if above else "below" if below else None
    worse = None if direction is None else (above == (better == Better.LOWER))
    return HistoryFigure(**base, **out, unusual=bool(above or below), direction=direction, worse=worse)


def history(a: Analysis, past: Sequence[PastRun], settings: Mapping[str, Any], wanted: int) -> History:
    """This run's figures against the experiment's earlier runs (newest first in ``past``)."""
    values = current_figures(a)
    curve = current_curve(a)
    figures = []
    for figure, (family, _, _) in HISTORY_FIGURES.items():
        comparable: list[PastRun] = []
        apart: list[tuple[str, tuple[str, ...]]] = []
        for p in past:
            moved = differing(settings, p.settings, family)
            if moved:
                apart.append((p.run_id, moved))
            else:
                comparable.append(p)
        aligned = None
        if figure == "loss_at_equal_tokens":
            with_curve = []
            for p in comparable if curve is not None else ():
                if len(with_curve) == wanted:
                    break
                if p.curve() is not None:
                    with_curve.append(p)
            if curve is not None and with_curve:
                aligned = float(min([curve[0][-1], *(p.curve()[0][-1] for p in with_curve)]))  # type: ignore[index]
            got = [(p.run_id, loss_at(p.curve(), aligned)) for p in with_curve] if aligned is not None else []
            value = loss_at(curve, aligned) if aligned is not None else None
        else:
            got = [(p.run_id, p.figures.get(figure)) for p in comparable]
            value = values.get(figure)
        kept = [(r, float(v)) for r, v in got if v is not None and math.isfinite(v)][:wanted]
        kept_apart_loss = figure == "loss_at_equal_tokens" and curve is not None and bool(apart)
        if value is None and not kept and not kept_apart_loss:
            continue  # a figure neither this run nor its comparable runs have: nothing to say
        figures.append(judge(figure, value, kept[::-1], tuple(apart), aligned))
    return History(a.experiment, wanted, len(past), tuple(figures), rule_text(wanted))


RATES = ("tokens_per_s", "samples_per_s")  # a step's size over its time
VALUE_KINDS = {"step_time_s": "dur", "tokens_per_s": "tps", "samples_per_s": "sps", "mfu": "pct",
               "loss_at_equal_tokens": "loss", "loss_spikes": "int", "comm_share": "pct", "data_wait_share": "pct"}


def value_text(figure: str, value: float | None) -> Text:
    """A figure's value worded in its unit (the catalogue's ``history.v.<kind>``)."""
    return Text(f"history.v.{VALUE_KINDS[figure]}", v=value)


def unusual_findings(h: History) -> list:
    """One finding per figure outside its range: a warning on the worse side, else information."""
    from .types import Finding, FindingKind, FindingSeverity

    out = []
    unusual = h.unusual()
    step_time = any(f.figure == "step_time_s" for f in unusual)
    for f in unusual:
        if step_time and f.figure in RATES:
            continue  # the rates follow the step time: one finding says it (the section lists them all)
        out.append(Finding(FindingKind.UNUSUAL, FindingSeverity.WARNING if f.worse else FindingSeverity.INFO, {
            "figure": f.figure, "value": value_text(f.figure, f.value), "low": value_text(f.figure, f.low),
            "high": value_text(f.figure, f.high), "median": value_text(f.figure, f.median), "n": len(f.runs),
            "first": f.runs[0], "last": f.runs[-1], "runs": list(f.runs), "trend": f.trend or "unknown",
            "experiment": h.experiment, "worse": f.worse}, f.direction or ""))
    return out
