"""One value per setting: the most trusted source wins, disagreements become notes."""

from __future__ import annotations

from .. import diagnostics as diag
from ..diagnostics import Diagnostic
from ..model import Setting

# What postmortem's callback saw in the training process (versions, devices, the parallel context)
# beats a config file; a config file beats the model's shape read from checkpoint tensors, then
# lineage, which beats what logs print.
SETTING_PRIORITY = ("flag", "callback", "config", "derived", "checkpoint", "lineage", "meta.json", "log")


def _setting_rank(source: str) -> int:
    for i, prefix in enumerate(SETTING_PRIORITY):
        if source.startswith(prefix):
            return i
    return len(SETTING_PRIORITY)


def merge_settings(found: list[tuple[str, Setting]]) -> tuple[dict[str, Setting], list[Diagnostic]]:
    chosen: dict[str, Setting] = {}
    notes = []
    for key, setting in sorted(found, key=lambda kv: (kv[0], _setting_rank(kv[1].source), kv[1].source)):
        if key not in chosen:
            chosen[key] = setting
        elif _differs(chosen[key].value, setting.value):
            notes.append(
                diag.info("setting-conflict", key=key, source=chosen[key].source, value=chosen[key].value,
                          other_source=setting.source, other_value=setting.value)
            )
    return dict(sorted(chosen.items())), notes


def _differs(a, b) -> bool:
    try:
        return abs(float(a) - float(b)) > 1e-9 * max(1.0, abs(float(a)))
    except (TypeError, ValueError):
        return str(a) != str(b)


def positive_int(value) -> bool:
    try:
        return int(value) > 0
    except (TypeError, ValueError):
        return False
