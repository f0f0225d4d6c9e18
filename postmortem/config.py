"""Settings for a build: postmortem.toml or [tool.postmortem] in pyproject.toml, then CLI flags.

Precedence (later wins): built-in defaults < project file found from the working directory <
--config FILE < command-line flags. The result is one frozen BuildSettings, whose `analysis` is
the AnalysisOptions the analysis gets. A key (or flag) is the name of a field of either, with
`-` or `_`: the keys are the dataclasses' fields, nothing is listed twice.

This module imports no polars: the CLI reads the settings before it sets up its processes
(parallel.Session), which must happen before polars is imported.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import InputError
from .readers import guard

FORMATS = ("html", "pdf", "json", "md")


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """Knobs of the analysis. None means "take it from the run's settings, else unknown"."""

    run_id: str | None = None  # the build's (not a setting of its own: see _NOT_KEYS)
    experiment: str | None = None
    device: str | None = None  # e.g. "910B2", "H100 SXM": selects the peak from peaks.py
    peak_tflops: float | None = None  # dense peak per device in TFLOPS; overrides the table
    precision: str = "bf16"  # "bf16" | "fp16" | "fp32" | "tf32" | "fp8" | "int8"
    global_batch_size: int | None = None  # samples per optimizer step
    seq_length: int | None = None
    devices: int | None = None
    num_layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    vocab_size: int | None = None
    target_loss: float | None = None
    smoothing_window: int = 50  # trailing mean of the loss over this many steps (not logged values)
    convergence_tolerance: float = 0.02  # relative band around the final loss level
    spike_z: float = 6.0  # robust z (scaled MAD) above which a value is a spike
    spike_window: int = 100  # previous finite values the spike rule looks at (causal)
    bootstrap_resamples: int = 1000
    seed: int = 0  # all resampling is seeded: the output is deterministic
    history_runs: int = 10  # the last archived runs of the experiment what is normal rests on (analysis/history.py)


@dataclass(frozen=True)
class BuildSettings:
    out: str = "out"
    experiment: str | None = None
    run_id: str | None = None
    baseline: str | None = None
    formats: tuple[str, ...] = FORMATS
    lang: str = "en"
    fail_on_regression: bool = False
    against: str = "baseline"  # what --fail-on-regression judges against: "baseline" or "history"
    analysis: AnalysisOptions = AnalysisOptions()
    sources: tuple[str, ...] = field(default=(), compare=False)  # where settings came from, for the report


_NOT_KEYS = {"analysis", "sources"}  # BuildSettings' fields that are not settings
_BUILD_FIELDS = {f.name: f for f in fields(BuildSettings) if f.name not in _NOT_KEYS}
# The analysis' run id and experiment are the build's (BuildSettings.run_id / experiment).
_ANALYSIS_FIELDS = {f.name: f for f in fields(AnalysisOptions) if f.name not in _BUILD_FIELDS}
_ALIASES = {"format": "formats"}  # the --format flag's name


def flag_values(parameters: dict[str, Any]) -> dict[str, Any]:
    """The settings among a command's parameters (the CLI passes its locals()): a flag not given
    is None, or False for a switch."""
    named = {{"out_dir": "out"}.get(k, k): v for k, v in parameters.items()}  # --out is out_dir in the CLI
    return {k: v for k, v in named.items() if (k in _BUILD_FIELDS or k in _ANALYSIS_FIELDS) and v is not None and v is not False}


def load_settings(config_file: str | None = None, flags: dict[str, Any] | None = None, cwd: Path | None = None) -> BuildSettings:
    settings = BuildSettings()
    cwd = cwd or Path.cwd()
    project = _project_file(cwd)
    if project is not None:
        settings = _apply(settings, project[1], str(project[0]))
    if config_file:
        path = Path(config_file)
        settings = _apply(settings, _read_toml(path, table=None), str(path))
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if given:
        settings = _apply(settings, given, "flags")
    if settings.lang not in ("en", "zh"):
        raise InputError("bad-option", variant="lang", given=settings.lang)
    unknown = [f for f in settings.formats if f not in FORMATS]
    if unknown:
        raise InputError("bad-option", variant="format", given=unknown, choices=list(FORMATS))
    if settings.against not in ("baseline", "history"):
        raise InputError("bad-option", variant="against", given=settings.against, choices=["baseline", "history"])
    if settings.analysis.history_runs < 1:
        raise InputError("bad-option", variant="history-runs", given=settings.analysis.history_runs)
    if settings.analysis.device and settings.analysis.peak_tflops:
        raise InputError("bad-option", variant="device-and-peak")
    return settings


def error_language(argv: list[str], cwd: Path | None = None) -> str:
    """The language to word an error in, when the settings may be what failed: ``--lang`` as
    given, else the project file's, else English. Never raises."""
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--lang=") else argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None
        if value in ("en", "zh"):
            return value
    try:
        project = _project_file(cwd or Path.cwd())
    except InputError:
        return "en"
    lang = project[1].get("lang") if project else None
    return lang if lang in ("en", "zh") else "en"


def _project_file(cwd: Path) -> tuple[Path, dict] | None:
    own = cwd / "postmortem.toml"
    if own.is_file():
        return own, _read_toml(own, table=None)
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject, table="tool.postmortem")
        if table:
            return pyproject, table
    return None


def _read_toml(path: Path, table: str | None) -> dict:
    try:
        with guard.open_file(path, "rb") as fh:  # a FIFO given as --config never blocks
            data = tomllib.loads(fh.read().decode("utf-8"))
    except FileNotFoundError:
        raise InputError("config-missing", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError("config-unreadable", path, detail=str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError("config-invalid", path, variant="toml", detail=str(exc)) from None
    if table:
        for part in table.split("."):
            data = data.get(part, {}) if isinstance(data, dict) else {}
    return data if isinstance(data, dict) else {}


def _apply(settings: BuildSettings, values: dict, source: str) -> BuildSettings:
    build: dict[str, Any] = {}
    analysis: dict[str, Any] = {}
    for key, value in values.items():
        name = _ALIASES.get(key.replace("-", "_"), key.replace("-", "_"))
        if name == "formats" and isinstance(value, str):
            value = tuple(v.strip() for v in value.split(",") if v.strip())
        elif name == "formats":
            value = tuple(value)
        if name in _BUILD_FIELDS:
            build[name] = _typed(name, _BUILD_FIELDS[name].type, value, source)
        elif name in _ANALYSIS_FIELDS:
            analysis[name] = _typed(name, _ANALYSIS_FIELDS[name].type, value, source)
        else:
            raise InputError("config-unknown-key", source, key=key)
    return replace(settings, sources=settings.sources + (source,), analysis=replace(settings.analysis, **analysis), **build)


def _typed(name: str, kind: str, value: Any, source: str) -> Any:
    try:
        if "int" in kind and value is not None and not isinstance(value, bool):
            return int(value)
        if "float" in kind and value is not None:
            return float(value)
        if kind == "bool":
            return bool(value)
    except (TypeError, ValueError):
        raise InputError("config-invalid", source, variant="number", key=name, given=repr(value)) from None
    return value
