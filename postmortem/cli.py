"""Command line: build, inspect, check, rebuild, archive, weekly.

Every expected failure is a PostmortemError, caught once in ``main`` and printed as one line
(``error[slug]: path: message``) with exit code 2. Exit 1 is reserved for a regression found
with --fail-on-regression. Set POSTMORTEM_DEBUG=1 to see a traceback for internal errors.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from . import __version__
from .errors import PostmortemError

app = typer.Typer(
    name="postmortem",
    help="Explain a finished MindSpore / MindFormers training run from the files it left on disk.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
archive_app = typer.Typer(help="List and show archived runs.", no_args_is_help=True)
app.add_typer(archive_app, name="archive")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
_WARM_UP = "postmortem.load:warm_up"  # what a helper imports and sets up when it starts (parallel.Session)


def _version(value: bool) -> None:
    if value:
        out.print(f"postmortem {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")] = False,
) -> None:
    pass


@app.command()
def inspect(
    run_dir: Annotated[str, typer.Argument(help="Run folder to read.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the inventory as JSON.")] = False,
) -> None:
    """Show what postmortem finds in a run folder: files per reader, steps, tags, ranks, checkpoints."""
    from .parallel import Session

    with Session(warm_up=_WARM_UP) as session:  # before the imports below: they import polars
        from .inventory import describe
        from .load import load_run

        info = describe(load_run(run_dir, session=session))
    if as_json:
        sys.stdout.write(_json(info) + "\n")
        return
    _print_inventory(info)


@app.command()
def build(
    run_dir: Annotated[str, typer.Argument(help="Run folder to report on.")],
    baseline: Annotated[Optional[str], typer.Option(help="Baseline: a run folder, an archived run folder, an archived RUN_ID, or 'prev'.")] = None,
    out_dir: Annotated[Optional[str], typer.Option("--out", help="Archive folder (default: out).")] = None,
    experiment: Annotated[Optional[str], typer.Option(help="Experiment name (default: from config / lineage / folder).")] = None,
    run_id: Annotated[Optional[str], typer.Option("--run-id", help="Run id (default: the run folder's name).")] = None,
    formats: Annotated[Optional[str], typer.Option("--format", help="Comma-separated: html,pdf,json,md.")] = None,
    device: Annotated[Optional[str], typer.Option(help="Device for the peak FLOPS table, e.g. 910B2, H100-SXM.")] = None,
    peak_tflops: Annotated[Optional[float], typer.Option("--peak-tflops", help="Dense peak TFLOPS per device.")] = None,
    devices: Annotated[Optional[int], typer.Option(help="Number of devices (default: from the run).")] = None,
    global_batch_size: Annotated[Optional[int], typer.Option("--global-batch-size", help="Samples per step across devices.")] = None,
    seq_length: Annotated[Optional[int], typer.Option("--seq-length", help="Tokens per sample.")] = None,
    target_loss: Annotated[Optional[float], typer.Option("--target-loss", help="Loss for time-to-target.")] = None,
    config: Annotated[Optional[str], typer.Option(help="A postmortem.toml with settings.")] = None,
    lang: Annotated[Optional[str], typer.Option(help="Report language: en or zh.")] = None,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="Exit 1 if a figure regressed significantly against the baseline (or, with --against history, is outside its experiment's normal range on the worse side).")] = False,
    against: Annotated[Optional[str], typer.Option("--against", help="What --fail-on-regression judges against: baseline (default) or history.")] = None,
    history_runs: Annotated[Optional[int], typer.Option("--history-runs", help="Archived runs of the experiment what is normal rests on (default 10, at least 5 needed).")] = None,
) -> None:
    """Build the report (HTML, PDF, metrics.json, summary.md) into OUT/<experiment>/<run_id>/."""
    from .config import flag_values, load_settings
    from .parallel import Session

    settings = load_settings(config, flag_values(locals()))
    # Made before the imports below (they import polars); its helpers' start (~0.4 s of imports)
    # overlaps them. With a PDF to lay out, a helper is busy to the end.
    with Session(helpers_busy="pdf" in settings.formats, warm_up=_WARM_UP) as session:
        from .pipeline import build_report

        result = build_report(run_dir, settings, progress=_progress(), session=session)
    _print_written(result.files, settings.lang)
    out.print(result.headline, markup=False)
    if settings.fail_on_regression and result.regressed:
        if settings.against == "history":
            err.print(f"unusual for this experiment: {', '.join(result.regressed)}")
        else:
            err.print(f"regression against baseline {result.baseline_id}: {', '.join(result.regressed)}")
        raise typer.Exit(1)


@app.command()
def rebuild(
    run: Annotated[str, typer.Argument(help="Archived run: RUN_ID or its folder under the archive.")],
    archive_dir: Annotated[str, typer.Option("--archive", help="Archive folder.")] = "out",
    experiment: Annotated[Optional[str], typer.Option(help="Experiment, when the run id is in several.")] = None,
    formats: Annotated[Optional[str], typer.Option("--format", help="Comma-separated: html,pdf,json,md.")] = None,
    lang: Annotated[Optional[str], typer.Option(help="Report language: en or zh.")] = None,
    config: Annotated[Optional[str], typer.Option(help="A postmortem.toml with settings.")] = None,
) -> None:
    """Re-render an archived run's report from its archived data (the raw run folder is not needed)."""
    from pathlib import Path

    from . import archive
    from .config import load_settings
    from .parallel import Session

    path = Path(run)
    found = path if archive.is_archived_run(path) else archive.find_run(Path(archive_dir), run, experiment).path
    settings = load_settings(config, dict(out=str(found.parent.parent), formats=formats, lang=lang))
    with Session(workers=1 if "pdf" in settings.formats else 0, helpers_busy=True) as session:  # for the PDF
        from .pipeline import rebuild_report

        result = rebuild_report(found, settings, progress=_progress(), session=session)
    _print_written(result.files, settings.lang)
    out.print(result.headline, markup=False)


@archive_app.command("ls")
def archive_ls(
    experiment: Annotated[Optional[str], typer.Argument(help="Only this experiment.")] = None,
    archive_dir: Annotated[str, typer.Option("--archive", help="Archive folder.")] = "out",
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List archived runs, newest first."""
    from pathlib import Path

    from . import archive
    from .index import index_row
    from .words import numbers as fmt

    if experiment is not None:
        archive.validate_name(experiment, "experiment name")
    rows = [index_row(r) for r in archive.list_runs(Path(archive_dir), experiment)]
    if as_json:
        sys.stdout.write(_json(rows) + "\n")
        return
    if not rows:
        out.print(f"no archived runs in {archive_dir}" + (f" for {experiment}" if experiment else ""), markup=False)
        return
    t = Table(title=f"Runs in {archive_dir}", title_justify="left")
    for col, just in (("experiment", "left"), ("run", "left"), ("finished", "left"), ("steps", "right"), ("tokens/s", "right"),
                      ("MFU", "right"), ("final loss", "right"), ("baseline", "left"), ("verdict", "left")):
        t.add_column(col, justify=just)
    for r in rows:
        verdict = ", ".join(f"{k}: {v}" for k, v in sorted(r["verdicts"].items())) or "—"
        t.add_row(r["experiment"], r["run_id"], r["finished_text"], fmt.step(r["steps"]), fmt.tokens_per_s(r["tokens_per_s"]),
                  fmt.percent(r["mfu"]), fmt.loss(r["final_loss"]), r["baseline"] or "—", verdict)
    out.print(t)


@archive_app.command("show")
def archive_show(
    run_id: Annotated[str, typer.Argument(help="Archived run id.")],
    archive_dir: Annotated[str, typer.Option("--archive", help="Archive folder.")] = "out",
    experiment: Annotated[Optional[str], typer.Option(help="Experiment, when the run id is in several.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics.json.")] = False,
    lang: Annotated[Optional[str], typer.Option(help="Language: en or zh (default: the config's, else en).")] = None,
) -> None:
    """Show one archived run: headline figures, findings and where its files are."""
    from pathlib import Path

    from . import archive
    from .index import headline_figures
    from .words import labels
    from .config import load_settings
    from .weekly import finding_text

    found = archive.find_run(Path(archive_dir), run_id, experiment)
    if as_json:
        sys.stdout.write(_json(found.metrics) + "\n")
        return
    language = load_settings(None, dict(lang=lang)).lang
    L = labels(language)
    out.print(f"[bold]{found.experiment}/{found.run_id}[/bold]  {found.path}", highlight=False)
    for label, text in headline_figures(found.metrics, language):
        out.print(f"  {label:12} {text}", markup=False)
    for f in found.metrics.get("findings") or []:  # worded from their kind and parameters in the language
        severity = str(f.get("severity", ""))
        out.print(f"  {L.get(severity, severity):8} {finding_text(f, language)}", markup=False)
    for name in ("report.html", "report.pdf", "metrics.json", "summary.md"):
        if (found.path / name).exists():
            out.print(f"  {found.path / name}", markup=False)


@app.command()
def weekly(
    archive_dir: Annotated[Optional[str], typer.Option("--archive", help="Archive folder (default: out, or the config's out).")] = None,
    week: Annotated[Optional[str], typer.Option(help="ISO week, e.g. 2026-W48.")] = None,
    since: Annotated[Optional[str], typer.Option(help="A period ending now, e.g. 7d or 36h (default 7d).")] = None,
    formats: Annotated[str, typer.Option("--format", help="Comma-separated: html,pdf,md.")] = "html,pdf,md",
    lang: Annotated[Optional[str], typer.Option(help="Digest language: en or zh (default: the config's, else en).")] = None,
    config: Annotated[Optional[str], typer.Option(help="A postmortem.toml with settings.")] = None,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="Exit 1 if a run in the period regressed (with --against history: was unusual for its experiment).")] = False,
    against: Annotated[str, typer.Option("--against", help="What --fail-on-regression judges against: baseline (default) or history.")] = "baseline",
) -> None:
    """Write the digest of the runs that finished in a period: OUT/weekly/<period>/digest.{html,pdf,md}."""
    from pathlib import Path

    from . import weekly as digest_mod
    from .config import load_settings
    from .errors import InputError
    from .pipeline import now
    from .words import labels

    wanted = tuple(f.strip() for f in formats.split(",") if f.strip())
    bad = [f for f in wanted if f not in ("html", "pdf", "md")]
    if bad:
        raise InputError("bad-option", variant="format", given=bad, choices=["html", "pdf", "md"])
    settings = load_settings(config, dict(lang=lang, out=archive_dir))
    root = Path(settings.out)
    if not root.is_dir():
        raise InputError("archive-missing", root)
    period = digest_mod.parse_period(week, since, now())
    digest = digest_mod.collect(root, period)
    _print_written(digest_mod.write_digest(root, digest, wanted, settings.lang), settings.lang)
    L = labels(settings.lang)
    out.print(L.fmt("digest_line", period=period.label, runs=digest.run_count, regressed=digest.regression_count), markup=False)
    if against not in ("baseline", "history"):
        raise InputError("bad-option", variant="against", given=against, choices=["baseline", "history"])
    if fail_on_regression and (digest.unusual_count if against == "history" else digest.regression_count):
        raise typer.Exit(1)


@app.command()
def check(
    config_file: Annotated[str, typer.Argument(metavar="CONFIG", help="A MindFormers yaml (or training JSON) to check before launch.")],
    devices: Annotated[Optional[int], typer.Option(help="Devices the job will be launched on (msrun --worker_num).")] = None,
    step_time: Annotated[Optional[float], typer.Option("--step-time", help="Expected seconds per step (checks the checkpoint interval).")] = None,
    global_batch_size: Annotated[Optional[int], typer.Option("--global-batch-size", help="The global batch you mean (checked against the config).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    lang: Annotated[Optional[str], typer.Option(help="Language: en or zh (default: the project file's, else en).")] = None,
    baseline: Annotated[Optional[str], typer.Option(help="The run that worked: a run folder, an archived run folder, an archived RUN_ID, or 'prev'; prints what the config changes against it.")] = None,
    archive_dir: Annotated[Optional[str], typer.Option("--archive", help="Archive folder for an archived baseline (default: out, or the config's out).")] = None,
    experiment: Annotated[Optional[str], typer.Option(help="Experiment of 'prev' (default: the config's model name).")] = None,
) -> None:
    """Check a training config before launch: layout against devices, divisibility, micro-batches,
    global batch, positions, recompute, checkpoint interval and disk; with --baseline, what it
    changes against a run and what each change can move. Exit 1 when the job cannot run."""
    from .config import load_settings
    from .precheck import check_config

    project = load_settings(None, dict(lang=lang, out=archive_dir))
    language = project.lang
    result = check_config(config_file, devices=devices, step_time_s=step_time, global_batch_size=global_batch_size)
    diff = None
    if baseline:
        from pathlib import Path

        from .checkdiff import baseline_diff, resolve

        run, baseline_id = resolve(baseline, Path(project.out), experiment, result.settings)
        diff = baseline_diff(result.settings, run, baseline_id, devices)
    if as_json:
        from .report.metrics_json import config_check

        doc = {"config": result.path, "devices": result.devices, "exit_code": result.exit_code(strict),
               "checks": [config_check(c) for c in result.checks]}
        if diff is not None:
            from .checkdiff import to_json

            doc["baseline"] = to_json(diff)
        sys.stdout.write(_json(doc) + "\n")
    else:
        _print_checks(result, language)
        if diff is not None:
            _print_baseline_diff(diff, language)
    code = result.exit_code(strict)
    if code:
        raise typer.Exit(code)


def _print_checks(result, lang: str) -> None:
    from .analysis.types import CheckStatus
    from .words import labels, render
    from .report.messages import check_name

    L = labels(lang)
    mark = {CheckStatus.PASS: ("ok", "green"), CheckStatus.WARN: ("warn", "yellow"),
            CheckStatus.FAIL: ("fail", "red"), CheckStatus.UNKNOWN: ("unknown", "dim")}
    devices = L.fmt("check_devices", n=result.devices) if result.devices else L["check_devices_unknown"]
    out.print(L.fmt("check_head", path=result.path, devices=devices), markup=False)
    t = Table(show_header=False, box=None, pad_edge=False)
    for _ in range(3):
        t.add_column(overflow="fold")
    for c in result.checks:
        word, colour = mark[c.status]
        t.add_row(f"[{colour}]{L[word]}[/{colour}]", str(c.name),
                  f"{_escape(check_name(c.name, lang))}{L['colon']}{_escape(render(c.detail, lang))}")
        if c.fix is not None:
            t.add_row("", "", f"[dim]{L['check_fix']}{L['colon']}{_escape(render(c.fix, lang))}[/dim]")
    out.print(t)
    out.print(L.fmt("check_summary", fail=result.count(CheckStatus.FAIL), warn=result.count(CheckStatus.WARN),
                    ok=result.count(CheckStatus.PASS), unknown=result.count(CheckStatus.UNKNOWN)), markup=False)


def _print_baseline_diff(diff, lang: str) -> None:
    """What the config changes against the baseline, group by group (the report's identity
    groups, what most often explains a change first), each change with what it can and cannot
    move; then the versions, devices and environment variables. One line a change (soft-wrapped:
    a pipe or a narrow terminal keeps each line whole)."""
    from .words import labels, render, setting_value, source_text
    from .text import Text

    L = labels(lang)
    out.print("")
    out.print(render(Text("checkdiff.head", baseline=diff.baseline_id, n=len(diff.changes)), lang), markup=False)
    if not diff.changes:
        out.print("  " + render(Text("checkdiff.none"), lang), markup=False)
    families = lambda fs: L.join(L.name("family_", f) for f in fs) if fs else L["nothing"]  # noqa: E731
    width = max([len(c.key) for c in diff.changes] + [len(e.key) for e in diff.environment] + [8])
    for g, changes in diff.by_group():
        out.print(f"[bold]{_escape(render(Text(f'group.{g}'), lang))}[/bold]")
        for c in changes:
            value = render(Text(f"checkdiff.{c.change}", baseline=setting_value(c.baseline, lang),
                                current=setting_value(c.current, lang)), lang)
            moves = render(Text("checkdiff.moves", can=families(c.can_move), cannot=families(c.cannot_move)), lang)
            out.print(f"  {_escape(c.key.ljust(width))}  {_escape(value)}  [dim]{_escape(moves)}[/dim]")
    if diff.environment:
        out.print(f"[bold]{_escape(render(Text('checkdiff.environment'), lang))}[/bold]")
        for e in diff.environment:
            word, colour = {True: ("checkdiff.differs", "yellow"), False: ("checkdiff.same", "green"),
                            None: ("checkdiff.unknown", "dim")}[e.differs]
            where = source_text(e.baseline_source, lang) if e.baseline_source else ""
            row = render(Text("checkdiff.env-row" + ("" if where else "/bare"), baseline=setting_value(e.baseline, lang),
                              current=setting_value(e.current, lang), where=where), lang)
            out.print(f"  {_escape(e.key.ljust(width))}  [{colour}]{_escape(render(Text(word), lang))}[/{colour}]  {_escape(row)}")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _print_written(paths, lang: str) -> None:
    from .words import labels

    L = labels(lang)
    for path in paths:
        out.print(L.fmt("wrote", path=path), markup=False)


def _progress():
    """Progress on a terminal; nothing when output is piped (automation, CI)."""
    if not err.is_terminal:
        return None
    return err


def _json(data) -> str:
    return json.dumps(data, default=str, ensure_ascii=False, indent=2)


def _print_inventory(info: dict) -> None:
    steps = info["steps"]
    out.print(f"[bold]{info['run']}[/bold]  steps {steps['first']}–{steps['last']} ({steps['count']} distinct)  "
              f"ranks {', '.join(map(str, info['ranks'])) or '—'}")
    t = Table(title="Files by reader", title_justify="left")
    for col, just in (("reader", "left"), ("files", "right"), ("bytes", "right"), ("rows", "right")):
        t.add_column(col, justify=just)
    for name, r in info["readers"].items():
        t.add_row(name, str(r["files"]), f"{r['bytes']:,}", f"{r['rows']:,}")
    out.print(t)
    if info["tags"]:
        t = Table(title="Scalars (one value per step, best source)", title_justify="left")
        for col, just in (("tag", "left"), ("rows", "right"), ("steps", "right"), ("non-finite", "right"), ("sources", "left")):
            t.add_column(col, justify=just)
        for tag in info["tags"]:
            t.add_row(tag["tag"], f"{tag['rows']:,}", f"{tag['first_step']}–{tag['last_step']}",
                      str(tag["non_finite"]), ", ".join(tag["sources"]))
        out.print(t)
    if len(info["segments"]) > 1:
        for s in info["segments"]:
            extra = f" (replaced steps {s['discarded'][0]}–{s['discarded'][1]})" if s["discarded"] else ""
            out.print(f"launch {s['index'] + 1}: steps {s['first_step']}–{s['last_step']}{extra}")
    if info["checkpoints"]:
        t = Table(title="Checkpoints", title_justify="left")
        for col, just in (("path", "left"), ("rank", "right"), ("step", "right"), ("bytes", "right"), ("model params", "right"), ("kind", "left")):
            t.add_column(col, justify=just)
        for c in info["checkpoints"]:
            t.add_row(c["path"], str(c["rank"]), str(c["step"]), f"{c['bytes']:,}",
                      f"{c['model_params']:,}" if c["model_params"] is not None else "—", c["kind"] or "")
        out.print(t)
    unclaimed = [f for f in info["files"] if f["reader"] is None]
    if unclaimed:
        out.print("[bold]Not read[/bold]")
        for f in unclaimed:
            out.print(f"  {f['path']}: {f['note']}", markup=False)
    counts = info["diagnostics"]["counts"]
    out.print(f"[bold]Diagnostics[/bold] {', '.join(f'{v} {k}' for k, v in counts.items()) or 'none'}")
    for d in info["diagnostics"]["items"]:
        where = f"{d['path']}" + (f":{d['offset']}" if d["offset"] is not None else "") if d["path"] else ""
        out.print(f"  {d['severity']:7} {d['slug']:22} {where} {d['message']}", markup=False)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code; never lets a traceback reach the user."""
    args = sys.argv[1:] if argv is None else argv
    try:
        # Without standalone mode click returns typer.Exit's code instead of raising it.
        result = app(args=args, prog_name="postmortem", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except PostmortemError as exc:
        err.print(exc.one_line(_error_language(args)), markup=False)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err.print(_error_line("interrupted", args), markup=False)
        return 130
    except typer.TyperException as exc:  # usage errors: unknown command, bad option value, ...
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `postmortem`: the help is the answer
            out.print(message, markup=False, highlight=False)
            return 0
        err.print(_error_line("usage", args, detail=message), markup=False)  # click's own words stay English
        return getattr(exc, "exit_code", 2) or 2
    except KeyboardInterrupt:
        err.print(_error_line("interrupted", args), markup=False)
        return 130
    except Exception as exc:  # a bug: one line, and the way to see more
        if os.environ.get("POSTMORTEM_DEBUG"):
            raise
        err.print(_error_line("internal", args, kind=type(exc).__name__, detail=str(exc)), markup=False)
        return 3


def _error_language(args: list[str]) -> str:
    from .config import error_language

    return error_language(args)


def _error_line(slug: str, args: list[str], **params) -> str:
    """The one line of a failure that is not a PostmortemError (usage, interrupted, internal)."""
    return PostmortemError(slug, **params).one_line(_error_language(args))


def app_main() -> None:
    sys.exit(main())
