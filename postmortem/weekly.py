"""The weekly digest: the runs that finished in a period, per experiment, from the archive alone.

Idempotent: the digest depends only on the archive and the period (no "generated at" time), so
rerunning it gives the same bytes. Charts are static SVG (vl-convert), so the same HTML works
offline, in mail, and as the PDF's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from . import archive
from .errors import InputError
from .index import headline_figures, index_row

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_SINCE = re.compile(r"^(\d+)([dh])$")


@dataclass(frozen=True)
class Period:
    start: datetime  # inclusive, UTC
    end: datetime  # exclusive, UTC
    label: str  # "2026-W48" or "2026-11-23 – 2026-11-30"
    slug: str  # folder name under out/weekly/


def parse_period(week: str | None, since: str | None, now: datetime) -> Period:
    if week and since:
        raise InputError("bad-option", "give --week or --since, not both")
    if week:
        m = _WEEK.match(week)
        if not m:
            raise InputError("bad-option", f"--week must look like 2026-W48, got {week!r}")
        try:
            monday = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
        except ValueError:
            raise InputError("bad-option", f"no such ISO week: {week!r}") from None
        start = datetime(monday.year, monday.month, monday.day, tzinfo=UTC)
        return Period(start, start + timedelta(days=7), week, week)
    m = _SINCE.match(since or "7d")
    if not m:
        raise InputError("bad-option", f"--since must look like 7d or 36h, got {since!r}")
    amount = int(m.group(1))
    delta = timedelta(days=amount) if m.group(2) == "d" else timedelta(hours=amount)
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    start = end - delta
    label = f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC"
    return Period(start, end, label, f"{start:%Y%m%dT%H}-{end:%Y%m%dT%H}")


@dataclass(frozen=True)
class ExperimentDigest:
    name: str
    runs: tuple[dict, ...]  # index rows of runs in the period, newest first, with headline texts
    history: tuple[dict, ...]  # every archived run of the experiment (for the trend), oldest first
    regressions: tuple[dict, ...]
    findings: tuple[dict, ...]  # the most severe findings of the period's runs


@dataclass(frozen=True)
class Digest:
    period: Period
    experiments: tuple[ExperimentDigest, ...]

    @property
    def run_count(self) -> int:
        return sum(len(e.runs) for e in self.experiments)

    @property
    def regression_count(self) -> int:
        return sum(len(e.regressions) for e in self.experiments)


_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def collect(archive_root: Path, period: Period) -> Digest:
    runs = archive.list_runs(archive_root)
    by_experiment: dict[str, list[archive.ArchivedRun]] = {}
    for run in runs:
        by_experiment.setdefault(run.experiment, []).append(run)
    experiments = []
    for name in sorted(by_experiment):
        all_runs = by_experiment[name]
        in_period = [r for r in all_runs if _in_period(r, period)]
        if not in_period:
            continue
        rows = []
        regressions = []
        findings = []
        for r in in_period:
            row = index_row(r) | {"headline": headline_figures(r.metrics)}
            rows.append(row)
            for family, verdict in sorted(row["verdicts"].items()):
                if verdict == "regressed":
                    regressions.append({"run_id": r.run_id, "family": family, "baseline": row["baseline"], "report": row["report"]})
            for f in r.metrics.get("findings") or []:
                findings.append({"run_id": r.run_id, "severity": f.get("severity", "info"), "message": f.get("message", "")})
        findings.sort(key=lambda f: (_SEVERITY_ORDER.get(f["severity"], 3), f["run_id"], f["message"]))
        history = [index_row(r) for r in reversed(all_runs) if _when(r) < period.end]
        experiments.append(ExperimentDigest(name, tuple(rows), tuple(history), tuple(regressions), tuple(findings[:8])))
    return Digest(period, tuple(experiments))


def _when(run: archive.ArchivedRun) -> datetime:
    return run.finished or datetime.min.replace(tzinfo=UTC)  # undated runs sort before any period


def _in_period(run: archive.ArchivedRun, period: Period) -> bool:
    return period.start <= _when(run) < period.end


# --------------------------------------------------------------------------- rendering


def trend_svg(history: tuple[dict, ...], field: str, title: str) -> str | None:
    import altair as alt
    import vl_convert

    points = [{"run": r["run_id"], "order": i, "value": r[field]} for i, r in enumerate(history) if r[field] is not None]
    if len(points) < 2:
        return None
    chart = (
        alt.Chart(alt.Data(values=points), title=title, width=300, height=120)
        .mark_line(point=True)
        .encode(
            x=alt.X("run:N", sort=[p["run"] for p in points], title=None, axis=alt.Axis(labelAngle=-30, labelLimit=90)),
            y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
        )
    )
    return vl_convert.vegalite_to_svg(chart.to_dict(validate=False))


def render_html(digest: Digest, for_pdf: bool = False) -> str:
    from importlib.resources import files

    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(files("postmortem.templates").joinpath("weekly.html.j2").read_text(encoding="utf-8"))
    experiments = []
    for e in digest.experiments:
        charts = [
            svg
            for field, title in (("tokens_per_s", "tokens/s"), ("final_loss", "final smoothed loss"), ("step_time_s", "step time (s)"))
            if (svg := trend_svg(e.history, field, title))
        ]
        experiments.append({"e": e, "charts": charts})
    return template.render(digest=digest, experiments=experiments, for_pdf=for_pdf)


def render_markdown(digest: Digest) -> str:
    from .report.markdown import escape_md

    lines = [f"# postmortem weekly digest — {digest.period.label}", ""]
    lines.append(f"{digest.run_count} run(s) finished, {digest.regression_count} regression(s) against their baselines.")
    for e in digest.experiments:
        lines += ["", f"## {escape_md(e.name)}", ""]
        for r in e.runs:
            figures = " · ".join(f"{label} {text}" for label, text in r["headline"])
            base = f" (vs {escape_md(r['baseline'])})" if r["baseline"] else ""
            lines.append(f"- **{escape_md(r['run_id'])}**{base}: {figures} — [report]({r['report']})")
        for g in e.regressions:
            lines.append(f"- ⚠ {escape_md(g['run_id'])}: {g['family']} regressed against {escape_md(g['baseline'] or '?')}")
        for f in e.findings[:5]:
            lines.append(f"- {f['severity']}: {escape_md(f['run_id'])}: {escape_md(f['message'])}")
    return "\n".join(lines) + "\n"


def write_digest(archive_root: Path, digest: Digest, formats: tuple[str, ...]) -> list[Path]:
    folder = archive_root / "weekly" / digest.period.slug
    written = []
    with archive.locked(archive_root):
        folder.mkdir(parents=True, exist_ok=True)
        if "html" in formats:
            archive.write_atomic(folder / "digest.html", _relink(render_html(digest)))
            written.append(folder / "digest.html")
        if "md" in formats:
            archive.write_atomic(folder / "digest.md", _relink_md(render_markdown(digest)))
            written.append(folder / "digest.md")
        if "pdf" in formats:
            from .report.pdf import html_to_pdf

            archive.write_atomic(folder / "digest.pdf", html_to_pdf(render_html(digest, for_pdf=True)))
            written.append(folder / "digest.pdf")
    return written


def _relink(html: str) -> str:
    # Report links are archive-relative; the digest lives two folders down (weekly/<period>/).
    return html.replace('href="@archive/', 'href="../../')


def _relink_md(text: str) -> str:
    return re.sub(r"\]\((?!https?:)([^)]+)\)", r"](../../\1)", text)

