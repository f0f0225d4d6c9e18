"""The weekly digest: the runs that finished in a period, per experiment, from the archive alone.

Idempotent: the digest depends only on the archive and the period (no "generated at" time), so
rerunning it gives the same bytes. Charts are static SVG (vl-convert), so the same HTML works
offline, in mail, and as the PDF's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from . import archive
from .errors import InputError

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
        raise InputError("bad-option", variant="week-and-since")
    if week:
        m = _WEEK.match(week)
        if not m:
            raise InputError("bad-option", variant="week", given=week)
        try:
            monday = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
        except ValueError:
            raise InputError("bad-option", variant="no-such-week", given=week) from None
        start = datetime(monday.year, monday.month, monday.day, tzinfo=UTC)
        return Period(start, start + timedelta(days=7), week, week)
    m = _SINCE.match(since or "7d")
    if not m:
        raise InputError("bad-option", variant="since", given=since)
    amount = int(m.group(1))
    delta = timedelta(days=amount) if m.group(2) == "d" else timedelta(hours=amount)
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    start = end - delta
    label = f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC"
    return Period(start, end, label, f"{start:%Y%m%dT%H}-{end:%Y%m%dT%H}")


@dataclass(frozen=True)
class Attention:
    """One thing the digest leads with. rank: 0 a critical finding (NaN, divergence), 1 a run
    that regressed against its baseline, 2 a failed launch (errors in the logs, a restart, an
    interrupted checkpoint), 3 a run unusual for its experiment (a figure outside the normal range
    of its archived runs, on the worse side: "unusual this week"), 4 any other warning."""

    rank: int
    experiment: str
    run_id: str
    report: str
    finished: datetime | None
    findings: tuple[dict, ...]  # metrics.json findings (kind, severity, message, evidence)
    families: tuple[str, ...] = ()  # rank 1: the families that regressed
    baseline: str | None = None
    failure: dict | None = None  # rank 0: metrics.json's failure block of a run that died


FAILURES = frozenset({"log_errors", "restarts", "interrupted_checkpoint"})
UNUSUAL = "unusual"  # analysis/history.py
ATTENTION_SHOWN = 12


@dataclass(frozen=True)
class ExperimentDigest:
    name: str
    history: tuple  # RunPoints of every archived run of the experiment up to the period's end, oldest first
    in_period: tuple  # the RunPoints of the period's runs, oldest first
    runs: tuple[archive.ArchivedRun, ...]  # the period's runs, oldest first


@dataclass(frozen=True)
class Digest:
    period: Period
    experiments: tuple[ExperimentDigest, ...]
    attention: tuple[Attention, ...]  # most important first

    @property
    def run_count(self) -> int:
        return sum(len(e.in_period) for e in self.experiments)

    @property
    def regression_count(self) -> int:
        """Runs that regressed against their baselines (a run with two regressed families is one)."""
        return sum(1 for a in self.attention if a.rank == 1)

    @property
    def unusual_count(self) -> int:
        """Runs with a figure outside their experiment's normal range, on the worse side."""
        return sum(1 for a in self.attention if a.rank == 3)


def collect(archive_root: Path, period: Period) -> Digest:
    from .report.dashboard import experiment_points

    by_experiment: dict[str, list[archive.ArchivedRun]] = {}
    for run in archive.list_runs(archive_root):
        by_experiment.setdefault(run.experiment, []).append(run)
    experiments, attention = [], []
    for name in sorted(by_experiment):
        history_runs = [r for r in by_experiment[name] if _when(r) < period.end]
        in_period = [r for r in history_runs if _in_period(r, period)]
        if not in_period:
            continue
        points = experiment_points(history_runs)
        mine = {r.run_id for r in in_period}
        shown = tuple(p for p in points if p.run_id in mine)
        order = {p.run_id: i for i, p in enumerate(shown)}
        runs = tuple(sorted(in_period, key=lambda r: order[r.run_id]))
        experiments.append(ExperimentDigest(name, tuple(points), shown, runs))
        for r in in_period:
            attention += _attention(r)
    attention.sort(key=lambda a: (a.rank, -(a.finished.timestamp() if a.finished else 0.0), a.experiment, a.run_id))
    return Digest(period, tuple(experiments), tuple(attention))


def _attention(run: archive.ArchivedRun) -> list[Attention]:
    """What a run brings to the head of the digest: a critical finding, a regression, a failed
    launch, a warning; info findings stay in its report."""
    found = [f for f in run.metrics.get("findings") or [] if isinstance(f, dict)]
    report = f"{run.experiment}/{run.run_id}/report.html"
    base = dict(experiment=run.experiment, run_id=run.run_id, report=report, finished=run.finished)
    failure = run.metrics.get("failure")
    out = [Attention(0, findings=(), failure=failure, **base)] if isinstance(failure, dict) else []
    out += [Attention(0, findings=(f,), **base) for f in found if f.get("severity") == "critical"]
    verdicts = (run.metrics.get("baseline") or {}).get("verdicts") or {}
    regressed = tuple(sorted(k for k, v in verdicts.items() if v == "regressed"))
    if regressed:
        baseline = ((run.metrics.get("baseline") or {}).get("run") or {}).get("id")
        texts = tuple(f for f in found if f.get("kind") == "regression")
        out.append(Attention(1, findings=texts, families=regressed, baseline=baseline, **base))
    out += [Attention(2, findings=(f,), **base) for f in found if f.get("kind") in FAILURES and f.get("severity") != "critical"]
    unusual = tuple(f for f in found if f.get("kind") == UNUSUAL and f.get("severity") == "warning")
    if unusual:  # one item a run: its figures outside the experiment's normal range
        out.append(Attention(3, findings=unusual, **base))
    out += [Attention(4, findings=(f,), **base) for f in found
            if f.get("severity") == "warning" and f.get("kind") not in FAILURES and f.get("kind") not in ("regression", UNUSUAL)]
    return out


def _when(run: archive.ArchivedRun) -> datetime:
    return run.finished or datetime.min.replace(tzinfo=UTC)  # undated runs sort before any period


def _in_period(run: archive.ArchivedRun, period: Period) -> bool:
    return period.start <= _when(run) < period.end


# --------------------------------------------------------------------------- rendering


def finding_text(f: dict, lang: str) -> str:
    """A metrics.json finding in the digest's language (report/messages.py makes the text)."""
    from .analysis.types import Finding, FindingKind, FindingSeverity
    from .text import from_jsonable
    from .words import render
    from .report.messages import finding_text as text

    try:
        params = {str(k): from_jsonable(v) for k, v in dict(f.get("evidence") or {}).items()}
        finding = Finding(FindingKind(f.get("kind")), FindingSeverity(f.get("severity", "info")),
                          {**params, "message": str(f.get("message", ""))}, str(f.get("variant") or ""))
    except ValueError:  # a kind this version does not know: its message as written
        return str(f.get("message", ""))
    return render(text(finding), lang)


_TAG = {0: ("critical", "critical"), 1: ("v_regressed", "bad"), 2: ("tag_failure", "bad"), 3: ("@history.tag", "warning"),
        4: ("warning", "warning")}


def _tag(rank: int, L) -> str:
    """An item's badge: a label, or a catalogue text ("@key": unusual this week)."""
    key = _TAG[rank][0]
    if key.startswith("@"):
        from .words import render
        from .text import Text

        return render(Text(key[1:]), L.lang)
    return L[key]


def attention_text(a: Attention, L) -> str:
    if a.failure is not None:  # how the run died: its kind, first failing rank and step
        from .report.sections.failure import brief

        return brief(a.failure, L) or ""
    if a.rank == 1 and not a.findings:  # an archive from before regression findings
        return L.fmt("regressed_item", families=L.join(L.name("family_", f) for f in a.families), baseline=a.baseline or "?")
    # whole sentences, each with its own full stop: set side by side, not joined by a separator
    return ("" if L.lang == "zh" else " ").join(finding_text(f, L.lang) for f in a.findings)


def _attention_items(digest: Digest, L) -> tuple[list[dict], str]:
    items = [
        {"tag": _tag(a.rank, L), "tone": _TAG[a.rank][1], "run_id": a.run_id, "experiment": a.experiment,
         "report": quote(a.report), "text": attention_text(a, L)}
        for a in digest.attention[:ATTENTION_SHOWN]
    ]
    rest = len(digest.attention) - len(items)
    return items, L.fmt("more_items", n=rest) if rest > 0 else ""


def render_html(digest: Digest, lang: str = "en", paper: bool = False) -> str:
    """The digest as a page without scripts: its charts are static images, so the same page
    works offline, in mail, and as the PDF's source."""
    from . import __version__
    from .report import svg
    from .report.dashboard import experiment_view
    from .words import labels
    from .report.html import render

    L = labels(lang)
    views = [experiment_view(e.name, e.history, L, href_prefix="@archive/", shown=e.in_period) for e in digest.experiments]
    images = {v.chart.id: svg.svg_uri(v.chart.spec) for v in views if v.chart}
    items, more = _attention_items(digest, L)
    meta = L.fmt("digest_meta", period=digest.period.label, runs=digest.run_count, regressed=digest.regression_count)
    return render(
        "digest.html.j2", lang=lang, paper=paper, version=__version__, title=f"{L['digest_title']} · {digest.period.label}",
        meta=meta, attention=items, more=more, experiments=views, specs={}, images=images,
    )


def render_markdown(digest: Digest, lang: str = "en") -> str:
    from .index import headline_figures
    from .words import labels
    from .report.markdown import escape_md

    L = labels(lang)
    colon = L["colon"]
    lines = [f"# {L['digest_title']} — {escape_md(digest.period.label)}", ""]
    lines.append(L.fmt("digest_meta", period=escape_md(digest.period.label), runs=digest.run_count, regressed=digest.regression_count))
    if digest.experiments:
        items, more = _attention_items(digest, L)
        lines += ["", f"## {L['attention']}", ""]
        lines += [f"- **{item['tag']}** · {escape_md(item['run_id'])}{colon}{escape_md(item['text'])}" for item in items]
        lines += [f"- {more}"] if more else []
        if not items:
            lines.append(L["nothing_to_flag"])
    else:
        lines += ["", L["digest_empty"]]
    for e in digest.experiments:
        lines += ["", f"## {escape_md(e.name)}", ""]
        for r in e.runs:
            from .report.sections.failure import brief

            figures = " · ".join(f"{label} {text}" for label, text in headline_figures(r.metrics, lang))
            failed = brief(r.metrics.get("failure"), L)
            figures = f"{failed} · {figures}" if failed else figures
            baseline = ((r.metrics.get("baseline") or {}).get("run") or {}).get("id")
            against = L["paren"].format(L.fmt("vs_baseline", baseline=escape_md(baseline))) if baseline else ""
            link = f"[{L['report_link']}]({r.experiment}/{r.run_id}/report.html)"
            lines.append(f"- **{escape_md(r.run_id)}**{against}{colon}{figures} — {link}")
    return "\n".join(lines) + "\n"


def write_digest(archive_root: Path, digest: Digest, formats: tuple[str, ...], lang: str = "en") -> list[Path]:
    folder = archive_root / "weekly" / digest.period.slug
    written = []
    with archive.locked(archive_root):
        folder.mkdir(parents=True, exist_ok=True)
        if "html" in formats:
            archive.write_atomic(folder / "digest.html", _relink(render_html(digest, lang)))
            written.append(folder / "digest.html")
        if "md" in formats:
            archive.write_atomic(folder / "digest.md", _relink_md(render_markdown(digest, lang)))
            written.append(folder / "digest.md")
        if "pdf" in formats:
            from .report.pdf import html_to_pdf

            archive.write_atomic(folder / "digest.pdf", html_to_pdf(render_html(digest, lang, paper=True)))
            written.append(folder / "digest.pdf")
    return written


def _relink(html: str) -> str:
    # Report links are archive-relative; the digest lives two folders down (weekly/<period>/).
    return html.replace('href="@archive/', 'href="../../')


def _relink_md(text: str) -> str:
    return re.sub(r"\]\((?!https?:)([^)]+)\)", r"](../../\1)", text)
