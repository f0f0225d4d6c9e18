"""Settings for a build: postmortem.toml or [tool.postmortem] in pyproject.toml, then CLI flags.

Precedence (later wins): built-in defaults < project file found from the working directory <
--config FILE < command-line flags. The result is one frozen BuildSettings.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import InputError

FORMATS = ("html", "pdf", "json", "md")


@dataclass(frozen=True)
class BuildSettings:
    out: str = "out"
    experiment: str | None = None
    run_id: str | None = None
    baseline: str | None = None
    formats: tuple[str, ...] = FORMATS
    lang: str = "en"
    device: str | None = None
    peak_tflops: float | None = None
    precision: str = "bf16"
    devices: int | None = None
    global_batch_size: int | None = None
    seq_length: int | None = None
    num_layers: int | None = None
    hidden_size: int | None = None
    num_heads: int | None = None
    vocab_size: int | None = None
    target_loss: float | None = None
    fail_on_regression: bool = False
    sources: tuple[str, ...] = field(default=(), compare=False)  # where settings came from, for the report


_KEYS = {f.name for f in fields(BuildSettings)} - {"sources"}


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
        raise InputError("bad-option", f"--lang must be en or zh, got {settings.lang!r}")
    unknown = [f for f in settings.formats if f not in FORMATS]
    if unknown:
        raise InputError("bad-option", f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    if settings.device and settings.peak_tflops:
        raise InputError("bad-option", "give --device or --peak-tflops, not both")
    return settings


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("config-missing", "config file not found", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError("config-unreadable", f"cannot read config: {exc}", path) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError("config-invalid", f"not valid TOML: {exc}", path) from None
    if table:
        for part in table.split("."):
            data = data.get(part, {}) if isinstance(data, dict) else {}
    return data if isinstance(data, dict) else {}


def _apply(settings: BuildSettings, values: dict, source: str) -> BuildSettings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name == "format":
            name = "formats"
        if name not in _KEYS:
            raise InputError("config-unknown-key", f"unknown setting {key!r}", source)
        if name == "formats" and isinstance(value, str):
            value = tuple(v.strip() for v in value.split(",") if v.strip())
        elif name == "formats":
            value = tuple(value)
        changes[name] = _typed(name, value, source)
    return replace(settings, sources=settings.sources + (source,), **changes)


def _typed(name: str, value: Any, source: str) -> Any:
    kind = {f.name: f.type for f in fields(BuildSettings)}[name]
    try:
        if "int" in kind and value is not None and not isinstance(value, bool):
            return int(value)
        if "float" in kind and value is not None:
            return float(value)
        if kind == "bool":
            return bool(value)
    except (TypeError, ValueError):
        raise InputError("config-invalid", f"{name} must be a number, got {value!r}", source) from None
    return value
