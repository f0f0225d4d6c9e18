"""The archive: out/<experiment>/<run_id>/ holds a run's reports and its tidy tables.

Layout of one archived run::

    out/<experiment>/<run_id>/
        report.html  report.pdf  metrics.json  summary.md
        data/run.json            settings, inventory, segments, ranks, diagnostics (schema_version)
        data/<table>.parquet     every table of the run model

The data folder makes a later build able to use the run as a baseline, and ``rebuild`` able to
re-render the report, after the raw run folder is gone. This module is the only writer of files:
a run folder is staged under a hidden name and swapped into place, and the indexes are rewritten
under a lock with a temporary file and ``os.replace``, so a failed or concurrent build never
leaves a half-written report or a corrupt index.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from .diagnostics import Diagnostic, Severity
from .errors import InputError, OutputError
from .text import from_jsonable, jsonable
from .words import english
from .model import TABLES, InventoryEntry, Run, Segment, Setting, conform

ARCHIVE_SCHEMA_VERSION = 1
# Archives this code can read. Version 1 is the first; bump when run.json changes shape.
READABLE_ARCHIVE_VERSIONS = (1,)
DATA_DIR = "data"

_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")


def validate_name(name: str, what: str) -> str:
    """Experiment names and run ids become folder names: nothing that can escape the archive."""
    if (
        not name
        or len(name) > 128
        or name in (".", "..")
        or name.startswith((".", "-"))
        or _BAD_NAME.search(name)
        or name != name.strip()
    ):
        raise InputError(f"bad-{what.replace(' ', '-')}", name=name)
    return name


def safe_name(text: str) -> str:
    """Turn a free-form default (a folder or network name) into a valid name."""
    cleaned = _BAD_NAME.sub("-", text.strip()).lstrip(".-") or "run"
    return cleaned[:128]


# --------------------------------------------------------------------------- writing


def write_run(archive: Path, experiment: str, run_id: str, files: Mapping[str, bytes | str]) -> Path:
    """Write a run's files (the report's and run_data's) into archive/experiment/run_id/,
    replacing an earlier build of it.

    The caller holds ``locked(archive)``: leftovers of killed builds of this run are removed first.
    """
    validate_name(experiment, "experiment name")
    validate_name(run_id, "run id")
    exp_dir = archive / experiment
    target = exp_dir / run_id
    try:
        exp_dir.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(exp_dir, run_id)
        staging = Path(tempfile.mkdtemp(prefix=f".staging-{run_id}-", dir=exp_dir))
    except OSError as exc:
        raise OutputError("out-unwritable", exp_dir, detail=str(exc.strerror or exc)) from None
    try:
        for name, content in files.items():
            path = staging / name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        os.chmod(staging, 0o755)
        _swap_into_place(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError("out-write-failed", target, detail=str(exc.strerror or exc)) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _swap_into_place(staging: Path, target: Path) -> None:
    """Put the staged folder at target. With Linux's renameat2(RENAME_EXCHANGE) there is no moment
    without a complete report; elsewhere the old folder is moved aside first (a short window)."""
    if target.exists() and _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)  # staging now holds the previous report
        return
    old = None
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _remove_leftovers(exp_dir: Path, run_id: str) -> None:
    """Folders a killed build left behind (the caller holds the archive lock, so none is live)."""
    for pattern in (f".staging-{run_id}-*", f".old-{run_id}-*"):
        for leftover in exp_dir.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)


def run_data(run: Run, meta: dict) -> dict[str, bytes]:
    """The archive's copy of a run, as files under DATA_DIR: its tables (parquet) and the rest
    (run.json). Made apart from write_run so that a build can make them while its helper lays out
    the PDF (the tables of a 64-rank run take about a second)."""
    files = {}
    for name, table in run.tables.items():
        buffer = io.BytesIO()
        table.write_parquet(buffer, statistics=False)
        files[f"{DATA_DIR}/{name}.parquet"] = buffer.getvalue()
    doc = {
        "archive_schema_version": ARCHIVE_SCHEMA_VERSION,
        "name": run.name,
        "root": run.root,
        "settings": {k: v.to_dict() for k, v in run.settings.items()},
        "inventory": [asdict(e) for e in run.inventory],
        "segments": [asdict(s) for s in run.segments],
        "ranks": list(run.ranks),
        "diagnostics": [diagnostic_dict(d) for d in run.diagnostics],
        **meta,
    }
    files[f"{DATA_DIR}/run.json"] = json.dumps(doc, indent=1, ensure_ascii=False, default=str).encode("utf-8")
    return files


# --------------------------------------------------------------------------- reading


def is_archived_run(path: Path) -> bool:
    return (path / DATA_DIR / "run.json").is_file()


def load_archived_run(path: Path) -> tuple[Run, dict]:
    """The Run saved with a report, and the build metadata (run id, experiment, build time)."""
    run_json = path / DATA_DIR / "run.json"
    try:
        doc = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError("archive-unreadable", run_json, detail=str(exc)) from None
    version = doc.get("archive_schema_version")
    if version not in READABLE_ARCHIVE_VERSIONS:
        raise InputError("archive-version", run_json, version=version, readable=list(READABLE_ARCHIVE_VERSIONS))
    tables = {}
    for name, schema in TABLES.items():
        file = path / DATA_DIR / f"{name}.parquet"
        tables[name] = conform(pl.read_parquet(file) if file.is_file() else None, schema)
    run = Run(
        root=doc.get("root", str(path)),
        name=doc.get("name", path.name),
        tables=tables,
        settings={k: Setting(v["value"], v["source"]) for k, v in doc.get("settings", {}).items()},
        inventory=tuple(InventoryEntry(**e) for e in doc.get("inventory", [])),
        segments=tuple(Segment(s["index"], s["first_step"], s["last_step"], tuple(s["discarded"]) if s["discarded"] else None)
                       for s in doc.get("segments", [])),
        ranks=tuple(doc.get("ranks", [])),
        diagnostics=tuple(_diagnostic(d) for d in doc.get("diagnostics", [])),
    )
    meta = {k: v for k, v in doc.items() if k in ("run_id", "experiment", "built_at", "finished_at", "baseline_id")}
    return run, meta


def diagnostic_dict(d: Diagnostic) -> dict:
    """A diagnostic as archived (and as metrics.json and the inventory show it): its data, and its
    sentence in English for a reader without the catalogue; ``_diagnostic`` reads it back."""
    return {
        "severity": str(d.severity),
        "slug": d.slug,
        "variant": d.variant or None,
        "message": english(d.text),
        "params": jsonable(d.params),
        "path": d.path,
        "offset": d.offset,
    }


def _diagnostic(d: dict) -> Diagnostic:
    """A diagnostic as archived; one archived before diagnostics had parameters keeps its English
    message as the parameter its text falls back to."""
    params = d.get("params")
    params = from_jsonable(params) if isinstance(params, dict) else {"message": d.get("message", "")}
    return Diagnostic(Severity(d["severity"]), d["slug"], d.get("path"), d.get("offset"), params, d.get("variant") or "")


def archived_settings(path: Path) -> dict[str, object] | None:
    """An archived run's settings (key -> value), for the dashboard's "what changed"; None when
    data/run.json is missing or unreadable."""
    try:
        doc = json.loads((path / DATA_DIR / "run.json").read_text(encoding="utf-8"))
        settings = doc["settings"]
        return {str(k): v["value"] for k, v in settings.items() if isinstance(v, dict) and "value" in v}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass(frozen=True)
class ArchivedRun:
    experiment: str
    run_id: str
    path: Path
    metrics: dict

    @property
    def finished_at(self) -> str:
        return (self.metrics.get("run") or {}).get("finished_at") or ""

    @property
    def built_at(self) -> str:
        return self.metrics.get("generated_at") or ""

    @property
    def finished(self) -> datetime | None:
        """When the run finished (else when it was built), UTC; None if neither parses."""
        try:
            when = datetime.fromisoformat(self.finished_at or self.built_at)
        except ValueError:
            return None
        return when if when.tzinfo else when.replace(tzinfo=UTC)


def list_runs(archive: Path, experiment: str | None = None) -> list[ArchivedRun]:
    """Archived runs, newest first (by when the run finished, then when it was built)."""
    runs = []
    if not archive.is_dir():
        return runs
    experiments = [archive / experiment] if experiment else sorted(p for p in archive.iterdir() if p.is_dir() and not p.name.startswith("."))
    for exp_dir in experiments:
        if not exp_dir.is_dir():
            continue
        for run_dir in sorted(exp_dir.iterdir()):
            metrics_file = run_dir / "metrics.json"
            if run_dir.name.startswith(".") or not metrics_file.is_file():
                continue
            try:
                metrics = json.loads(metrics_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            runs.append(ArchivedRun(exp_dir.name, run_dir.name, run_dir, metrics))
    runs.sort(key=lambda r: (r.finished_at, r.built_at, r.run_id), reverse=True)
    return runs


def find_run(archive: Path, run_id: str, experiment: str | None = None) -> ArchivedRun:
    matches = [r for r in list_runs(archive, experiment) if r.run_id == run_id]
    if not matches and experiment:
        matches = [r for r in list_runs(archive) if r.run_id == run_id]
    if not matches:
        raise InputError("run-not-archived", archive, run_id=run_id)
    if len(matches) > 1:
        raise InputError("run-id-ambiguous", archive, run_id=run_id, experiments=[f"{m.experiment}/{m.run_id}" for m in matches])
    return matches[0]


# --------------------------------------------------------------------------- index


@contextmanager
def locked(archive: Path) -> Iterator[None]:
    """An exclusive lock on the archive, so concurrent builds update the index one at a time."""
    archive.mkdir(parents=True, exist_ok=True)
    with open(archive / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomic(path: Path, content: str | bytes) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
