"""``postmortem check CONFIG``: the before-training checks of a MindFormers yaml (or a training
JSON), before an expensive job is launched. Reads the file with the config reader's own key
names (``readers/configfile.py``), runs the rules the report runs (``analysis/configcheck.py``),
and returns them as data; the CLI words them per language.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .analysis.configcheck import CheckContext, check_values
from .analysis.types import CheckStatus, ConfigCheck
from .errors import InputError
from .model import Setting
from .readers import guard
from .readers.configfile import MAX_CONFIG_BYTES, extract_settings


@dataclass(frozen=True)
class PreCheck:
    path: str
    settings: dict[str, Setting]
    checks: tuple[ConfigCheck, ...]
    devices: int | None

    def count(self, status: CheckStatus) -> int:
        return sum(c.status == status for c in self.checks)

    def exit_code(self, strict: bool) -> int:
        """1 when the job cannot run as configured (or, with --strict, on any warning)."""
        if self.count(CheckStatus.FAIL) or (strict and self.count(CheckStatus.WARN)):
            return 1
        return 0


def _read(path: Path) -> dict:
    try:
        size = guard.size(path)  # a FIFO or a device would block the read: refused first
    except FileNotFoundError:
        raise InputError("check-config-missing", path) from None
    except guard.Refused:
        raise InputError("check-config-unreadable", path, variant="not-a-file") from None
    except OSError as exc:
        raise InputError("check-config-unreadable", path, detail=exc.strerror or str(exc)) from None
    if size > MAX_CONFIG_BYTES:
        raise InputError("check-config-unreadable", path, variant="too-large", size=size)
    try:
        with guard.open_file(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("check-config-unparseable", path, variant="utf8", offset=exc.start) from None
    except guard.Refused:
        raise InputError("check-config-unreadable", path, variant="not-a-file") from None
    except OSError as exc:
        raise InputError("check-config-unreadable", path, detail=exc.strerror or str(exc)) from None
    import yaml

    try:
        cfg = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError("check-config-unparseable", path, variant="yaml", line=mark.line + 1 if mark else 0) from None
    except ValueError as exc:
        raise InputError("check-config-unparseable", path, variant="json", line=getattr(exc, "lineno", 0)) from None
    except RecursionError:
        raise InputError("check-config-unparseable", path, variant="deep") from None
    if not isinstance(cfg, dict):
        raise InputError("check-config-not-training", path)
    return cfg


def _free_bytes(output_dir: object) -> int | None:
    """Free disk where the checkpoints go, for an absolute output_dir on this machine (a relative
    one is relative to the launch folder, which a check before launch does not know)."""
    if not isinstance(output_dir, str) or not Path(output_dir).expanduser().is_absolute():
        return None
    path = Path(output_dir).expanduser()
    while not path.exists() and path != path.parent:
        path = path.parent  # output/ is made at launch: its nearest existing parent holds the disk
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def check_config(path: str | Path, *, devices: int | None = None, step_time_s: float | None = None,
                 global_batch_size: int | None = None) -> PreCheck:
    path = Path(path)
    cfg = _read(path)
    settings = extract_settings(cfg, f"config:{path.name}")
    if not any(k in settings for k in ("num_layers", "hidden_size", "data_parallel", "batch_size", "num_heads")):
        raise InputError("check-config-not-training", path)
    if global_batch_size is not None:  # the batch the user means, against what the config gives
        settings["global_batch_size"] = Setting(global_batch_size, "flag:--global-batch-size")
    values = {k: s.value for k, s in settings.items()}
    context = CheckContext(devices=devices, step_time_s=step_time_s, free_bytes=_free_bytes(values.get("output_dir")))
    return PreCheck(str(path), settings, check_values(values, context), devices)
