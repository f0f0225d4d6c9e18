"""``postmortem check CONFIG --baseline RUN|prev``: what the config changes against the run that worked.

msprobe's ``config_check`` compares two environments' variables, libraries and hyperparameters;
here the baseline is a run (a run folder, an archived run, or the experiment's latest archived run)
and the changes come from the report's own diff (``compare.settings_diff``: the one function both
use), grouped as the report's identity groups, each with the families of figures it can move and
those it cannot (``identity.effects``, the rules the verdict uses). Beside the settings: the
versions, the devices and the environment variables the baseline's files hold, against this
machine's (the installed packages' versions read from their metadata: mindspore is not imported).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .analysis.identity import EXPLAINING_ORDER, effects, group, per_run
from .analysis.types import Family, SettingGroup
from .model import Run, Setting
from .text import jsonable

_PACKAGES = {"framework_version": "mindspore", "mindformers_version": "mindformers"}


@dataclass(frozen=True)
class SettingDelta:
    key: str
    group: SettingGroup
    change: str  # "changed", "added" (only in the config), "removed" (only in the baseline's config)
    baseline: Any
    current: Any
    baseline_source: str | None
    current_source: str | None
    can_move: tuple[Family, ...]
    cannot_move: tuple[Family, ...]


@dataclass(frozen=True)
class EnvironmentRow:
    """A version, the devices or an environment variable: the baseline's (where its files hold
    it) against this launch's (where known here)."""

    key: str
    kind: str  # "version", "devices", "env"
    baseline: Any
    current: Any  # None: not known here
    baseline_source: str | None

    @property
    def differs(self) -> bool | None:
        if self.baseline is None or self.current is None:
            return None
        return str(self.baseline) != str(self.current)


@dataclass(frozen=True)
class BaselineDiff:
    baseline_id: str
    changes: tuple[SettingDelta, ...]  # in explaining order (identity.EXPLAINING_ORDER), per group
    environment: tuple[EnvironmentRow, ...]

    def by_group(self) -> list[tuple[SettingGroup, list[SettingDelta]]]:
        out = []
        for g in EXPLAINING_ORDER:
            mine = [c for c in self.changes if c.group == g]
            if mine:
                out.append((g, mine))
        return out


def _installed(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def baseline_diff(config: dict[str, Setting], baseline: Run, baseline_id: str, devices: int | None = None) -> BaselineDiff:
    """The config's settings against the baseline run's: changed and added settings, and the
    settings the baseline's own config set that this one does not (what the baseline's readers
    found elsewhere, lineage or a log, is no setting a config can drop)."""
    from .analysis.compare import settings_diff

    diff = settings_diff(config, baseline.settings)  # the report's diff, the same function
    rows: list[tuple[str, Any]] = [("changed", c) for c in diff.changed] + [("added", c) for c in diff.added]
    rows += [("removed", c) for c in diff.removed if str(baseline.settings[c.key].source).startswith("config")]
    changes = []
    for kind, c in rows:
        if per_run(c.key) or group(c.key) == SettingGroup.FRAMEWORK:
            continue  # outcomes and paths explain nothing; versions and devices are compared below
        moved = effects(c.key)
        b, cur = baseline.settings.get(c.key), config.get(c.key)
        changes.append(SettingDelta(c.key, group(c.key), kind, c.baseline, c.current, b.source if b else None,
                                    cur.source if cur else None, tuple(f for f in Family if f in moved),
                                    tuple(f for f in Family if f not in moved)))
    order = {g: i for i, g in enumerate(EXPLAINING_ORDER)}
    changes.sort(key=lambda d: (order[d.group], d.key))
    return BaselineDiff(baseline_id, tuple(changes), environment(config, baseline, devices))


def environment(config: dict[str, Setting], baseline: Run, devices: int | None) -> tuple[EnvironmentRow, ...]:
    s = baseline.settings
    out = []
    for key, package in _PACKAGES.items():
        b = s.get(key)
        out.append(EnvironmentRow(key, "version", b.value if b else None, _installed(package), b.source if b else None))
    cann = s.get("cann_version")
    if cann is not None:
        out.append(EnvironmentRow("cann_version", "version", cann.value, None, cann.source))
    b_devices = s.get("device_num")
    base_devices = b_devices.value if b_devices else (len(baseline.ranks) if baseline.ranks else None)
    here = devices if devices is not None else (config["device_num"].value if "device_num" in config else None)
    out.append(EnvironmentRow("device_num", "devices", base_devices, here,
                              b_devices.source if b_devices else ("ranks" if baseline.ranks else None)))
    for key in ("device_target", "device"):
        if key in s:
            out.append(EnvironmentRow(key, "devices", s[key].value, config[key].value if key in config else None, s[key].source))
    for key in sorted(k for k in s if k.startswith("env.")):  # environment variables a baseline's files recorded
        out.append(EnvironmentRow(key[len("env."):], "env", s[key].value, os.environ.get(key[len("env."):]), s[key].source))
    return tuple(out)


def resolve(spec: str, archive_root: Path, experiment: str | None, config: dict[str, Setting]) -> tuple[Run, str]:
    """The baseline run: a run folder, an archived run folder, an archived run id, or "prev" (the
    latest archived run of the experiment: --experiment, else the config's model name)."""
    from . import archive
    from .errors import InputError
    from .pipeline import resolve_baseline

    if spec == "prev" and not experiment:
        name = next((str(config[k].value) for k in ("experiment", "network") if k in config and str(config[k].value).strip()), None)
        if name is None:
            raise InputError("baseline-not-found", archive_root, variant="prev", experiment="?")
        experiment = archive.safe_name(name)
    run, baseline_id = resolve_baseline(spec, archive_root, experiment, "")  # type: ignore[arg-type]
    assert run is not None and baseline_id is not None
    return run, baseline_id


def to_json(d: BaselineDiff) -> dict:
    """The diff as data (``check --json``'s ``baseline``)."""
    return {"id": d.baseline_id,
            "changes": [{"key": c.key, "group": str(c.group), "change": c.change, "baseline": jsonable(c.baseline),
                         "current": jsonable(c.current), "baseline_source": c.baseline_source, "current_source": c.current_source,
                         "can_move": [str(f) for f in c.can_move], "cannot_move": [str(f) for f in c.cannot_move]}
                        for c in d.changes],
            "environment": [{"key": e.key, "kind": e.kind, "baseline": jsonable(e.baseline), "current": jsonable(e.current),
                             "baseline_source": e.baseline_source, "differs": e.differs} for e in d.environment]}
