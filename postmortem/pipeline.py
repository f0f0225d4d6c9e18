"""The build pipeline: load -> analyze -> view -> render -> archive. The only place that writes.

    run = load_run(RUN_DIR)                 # readers, one Run
    baseline = resolve_baseline(...)        # a run folder, an archived run, or "prev"
    analysis = analyze(run, baseline, ...)  # pure figures
    view = build_view(analysis, ...)        # what the report shows, formatted once
    files = render_*(view)                  # content only
    archive.write_run(...)                  # report + run_data, staged, swapped into place; indexes under a lock

The session's helper processes (parallel.Session; the second core) take the work that need not
wait for this one: one reads and analyses a baseline folder while the run is read here (the others,
or else that one, read ranks of the run with this process), and one lays out the PDF while the
HTML, JSON and markdown are made here.
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__, archive
from . import diagnostics as diag
from .config import AnalysisOptions, BuildSettings
from .errors import InputError, OutputError
from .load import load_run
from .model import Run
from .parallel import Session

if TYPE_CHECKING:
    from .analysis.types import BaselineAnalysis


@dataclass(frozen=True)
class BuildResult:
    folder: Path
    files: tuple[Path, ...]
    headline: str
    regressed: tuple[str, ...]  # figure families that regressed significantly
    baseline_id: str | None


def now() -> datetime:
    """Generation time; SOURCE_DATE_EPOCH pins it so reports are byte-reproducible."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), UTC)
    return datetime.now(UTC).replace(microsecond=0)


def build_report(run_dir: str, settings: BuildSettings, progress=None, session: Session | None = None) -> BuildResult:
    """session: the processes to work with (the CLI makes one before its imports, parallel.py);
    without one, everything is done here, in order."""
    session = session or Session(workers=0)
    archive_root = Path(settings.out)
    baseline_folder = raw_run_folder(settings.baseline)
    # A baseline folder is read and analysed by a helper while the run is read here (with the
    # other helpers, if any); without a baseline the helpers read ranks of the run with this process.
    baseline_job = session.submit(_analyzed_baseline, baseline_folder, settings.analysis) if baseline_folder else None
    with _status(progress, "reading run folder"):
        run = load_run(run_dir, session=session)
    if "pdf" in settings.formats:
        session.submit(_prepare_pdf)  # after the ranks: they are needed first
    run_id = archive.validate_name(settings.run_id or archive.safe_name(run.name), "run id")
    experiment = archive.validate_name(settings.experiment or default_experiment(run, run_dir), "experiment name")
    _refuse_inside_run(archive_root, Path(run_dir))
    with _status(progress, "loading baseline"):
        if baseline_job is not None:
            _import_renderers()  # while the helper finishes the baseline
            baseline, baseline_id = baseline_job.result(), archive.safe_name(baseline_folder.resolve().name)
        else:
            baseline, baseline_id = resolve_baseline(settings.baseline, archive_root, experiment, run_id)
    return render_and_archive(run, baseline, baseline_id, settings, run_id, experiment, progress, session)


def _import_renderers() -> None:
    from .report import metrics_json  # noqa: F401
    from .report import html, viewmodel  # noqa: F401  (altair: a quarter second)


def _analyzed_baseline(folder: Path, options: AnalysisOptions) -> BaselineAnalysis:
    """In a helper: what the comparison needs of a baseline folder (a small fraction of its tables)."""
    from .analysis import analyze_baseline

    return analyze_baseline(load_run(folder), options)


def _prepare_pdf() -> None:
    """In a helper, while this process analyses: import weasyprint and start vl-convert's
    JavaScript engine (about a second) before the PDF is asked for."""
    from .report import pdf, svg  # noqa: F401

    svg.to_svg({"mark": "point"})


def _render_pdf(view) -> bytes:
    from .report.pdf import render_pdf  # imported here: weasyprint takes half a second

    return render_pdf(view)


def render_and_archive(
    run: Run, baseline: Run | BaselineAnalysis | None, baseline_id: str | None, settings: BuildSettings, run_id: str,
    experiment: str, progress=None, session: Session | None = None,
) -> BuildResult:
    from .analysis import analyze
    from .report.metrics_json import dumps, to_metrics
    from .report.verdict import verdict_lines

    session = session or Session(workers=0)
    from .pastruns import past_runs

    options = replace(settings.analysis, run_id=run_id, experiment=experiment)
    started, finished = run_times(run)
    with _status(progress, "analysing"):
        past = past_runs(Path(settings.out), experiment, run_id, finished, options.history_runs)
        analysis = analyze(run, baseline, options, past)
    generated_at = now()
    metrics = to_metrics(analysis, started_at=started, finished_at=finished, generated_at=generated_at.isoformat(),
                         generator=f"postmortem {__version__}", baseline_id=baseline_id)

    meta = {"run_id": run_id, "experiment": experiment, "built_at": generated_at.isoformat(), "baseline_id": baseline_id}
    files: dict[str, bytes | str] = {}
    with _status(progress, "rendering"):
        try:
            rendered = _render(analysis, run, settings, generated_at, session)
            data = archive.run_data(run, meta)  # while a helper may still lay out the PDF
            files.update({name: part.result() if isinstance(part, Future) else part for name, part in rendered.items()})
        except OSError as exc:  # disk full / no space for a renderer's temp files: nothing was written yet
            raise OutputError("render-failed", detail=str(exc.strerror or exc)) from None
    files["metrics.json"] = dumps(metrics)  # the archive needs it for indexes and baselines even when not asked for

    archive_root = Path(settings.out)
    with _status(progress, "writing"), archive.locked(archive_root):
        folder = archive.write_run(archive_root, experiment, run_id, {**files, **data})
        _update_indexes(archive_root, generated_at, settings.lang)
    regressed = tuple(_regressed_families(metrics) if settings.against == "baseline" else _unusual_figures(metrics))
    return BuildResult(
        folder=folder,
        files=tuple(folder / name for name in files),
        headline="\n".join([_headline(metrics, run_id, baseline_id, settings.lang),
                            *(f"  {x}" for x in verdict_lines(analysis, settings.lang))]),
        regressed=regressed,
        baseline_id=baseline_id,
    )


def _render(analysis, run: Run, settings: BuildSettings, generated_at: datetime, session: Session) -> dict[str, bytes | str | Future]:
    """The report's files; the PDF as a Future while a helper lays it out."""
    from .report.viewmodel import build_view

    view = build_view(
        analysis, lang=settings.lang, generated_at=generated_at, version=__version__, inventory=run.inventory
    )
    # The PDF (seconds of weasyprint layout) is laid out in a helper while the rest is rendered here.
    pdf = session.submit(_render_pdf, view) if "pdf" in settings.formats else None
    out: dict[str, bytes | str | Future] = {}
    if "html" in settings.formats:
        from .report.html import render_html

        out["report.html"] = render_html(view)
    if pdf is not None:
        out["report.pdf"] = pdf
    if "md" in settings.formats:
        from .report.markdown import render_markdown

        out["summary.md"] = render_markdown(view)
    return out


def run_times(run: Run) -> tuple[str | None, str | None]:
    """When the run started and finished (ISO, UTC): from the wall times the run logged; file
    mtimes only when it logged none (a copied folder has the copy's mtimes)."""
    import polars as pl

    times = pl.concat([run.tables["steps"]["wall_time"], run.tables["scalars"]["wall_time"]]).drop_nulls()
    if times.filter(times.is_finite()).is_empty():
        times = run.tables["checkpoints"]["mtime"].drop_nulls()
    times = times.filter(times.is_finite())
    if times.is_empty():
        return None, None
    iso = lambda t: datetime.fromtimestamp(float(t), UTC).isoformat(timespec="seconds")  # noqa: E731
    return iso(times.min()), iso(times.max())


def default_experiment(run: Run, run_dir: str) -> str:
    """Experiment name when none is given: the config's model name, else the parent folder's.

    Lineage's network name is not used: it is the training wrapper's class (TrainOneStepCell, ...).
    """
    for key in ("experiment", "network"):
        setting = run.settings.get(key)
        if setting and setting.source.startswith("config") and isinstance(setting.value, str) and setting.value.strip():
            return archive.safe_name(setting.value)
    parent = Path(run_dir).resolve().parent.name
    return archive.safe_name(parent or "default")


def resolve_baseline(spec: str | None, archive_root: Path, experiment: str, run_id: str) -> tuple[Run | None, str | None]:
    """A baseline from a run folder, an archived run folder, an archived run id, or "prev"."""
    if not spec:
        return None, None
    if spec == "prev":
        earlier = [r for r in archive.list_runs(archive_root, experiment) if r.run_id != run_id]
        if not earlier:
            raise InputError("baseline-not-found", archive_root, variant="prev", experiment=experiment)
        run, meta = archive.load_archived_run(earlier[0].path)
        return run, earlier[0].run_id
    folder = raw_run_folder(spec)
    if folder is not None:
        return load_run(folder), archive.safe_name(folder.resolve().name)
    path = Path(spec)
    if path.is_dir():  # an archived run folder
        run, meta = archive.load_archived_run(path)
        return run, meta.get("run_id") or path.name
    if "/" in spec or "\\" in spec:
        raise InputError("baseline-not-found", spec)
    found = archive.find_run(archive_root, spec, experiment)
    run, meta = archive.load_archived_run(found.path)
    return run, found.run_id


def raw_run_folder(spec: str | None) -> Path | None:
    """The baseline spec as a run folder to read, if it names one (not "prev", not an archived run)."""
    if not spec or spec == "prev":
        return None
    path = Path(spec)
    return path if path.is_dir() and not archive.is_archived_run(path) else None


def _refuse_inside_run(archive_root: Path, run_dir: Path) -> None:
    """Nothing is ever written inside the run folder."""
    out, run = archive_root.resolve(), run_dir.resolve()
    if out == run or run in out.parents:
        raise InputError("out-inside-run", archive_root)


def _update_indexes(archive_root: Path, generated_at: datetime, lang: str = "en") -> None:
    from .index import write_indexes

    write_indexes(archive_root, generated_at, lang)


def _unusual_figures(metrics: dict) -> list[str]:
    """The figures outside their experiment's normal range on the side that is worse (--against history)."""
    figures = (metrics.get("history") or {}).get("figures") or {}
    return sorted(name for name, f in figures.items() if f.get("unusual") and f.get("worse"))


def _regressed_families(metrics: dict) -> list[str]:
    verdicts = (metrics.get("baseline") or {}).get("verdicts") or {}
    return sorted(family for family, verdict in verdicts.items() if verdict == "regressed")


def _headline(metrics: dict, run_id: str, baseline_id: str | None, lang: str = "en") -> str:
    from .index import headline_line

    return headline_line(metrics, run_id, baseline_id, lang)


def _status(progress, what: str):
    if progress is None:
        return nullcontext()
    return progress.status(what + "…")


def rebuild_report(folder: Path, settings: BuildSettings, progress=None, session: Session | None = None) -> BuildResult:
    """Re-render an archived run from its archived tables, with the baseline it was built against."""
    session = session or Session(workers=0)
    run, meta = archive.load_archived_run(folder)
    run_id, experiment = meta.get("run_id") or folder.name, meta.get("experiment") or folder.parent.name
    baseline, baseline_id = None, meta.get("baseline_id")
    if baseline_id:
        try:
            baseline, baseline_id = resolve_baseline(baseline_id, Path(settings.out), experiment, run_id)
        except InputError as exc:  # the baseline left the archive: report without it, and say so
            note = diag.warning("baseline-missing", baseline=baseline_id, detail=exc.text)
            run = replace(run, diagnostics=run.diagnostics + (note,))
            baseline, baseline_id = None, None
    if "pdf" in settings.formats:
        session.submit(_prepare_pdf)
    return render_and_archive(run, baseline, baseline_id, settings, run_id, experiment, progress, session)
