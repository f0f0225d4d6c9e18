"""Loading on real logs this project did not make (tests/fixtures/conformance/, PROVENANCE.md in
each): the per-step table's e2e times, timers and gaps, worked out by hand from the lines."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from postmortem.load import load_run
from postmortem.model import ReadResult
from postmortem.readers import textlog
from postmortem.readers.base import Reader

CONFORMANCE = Path(__file__).resolve().parent / "fixtures" / "conformance"




def test_mindformers_log_e2e_from_its_timestamps_beside_per_step_time():
    """worker_0.log, MindFormers r1.4+ lines at 15:34:27,308 / 29,173 / 30,941 / 32,704 / 34,469
    with per_step_time 103328 / 1752 / 1754 / 1756 / 1758 ms."""
    run = load_run(CONFORMANCE / "mf-docs-llama2-13b-log")
    steps = run.tables["steps"].sort("step")
    assert steps["step"].to_list() == [1, 2, 3, 4, 5]
    e2e = [29.173 - 27.308, 30.941 - 29.173, 32.704 - 30.941, 34.469 - 32.704]  # 1.865, 1.768, 1.763, 1.765
    timer = [1.752, 1.754, 1.756, 1.758]
    rest = steps.filter(pl.col("step") > 1)
    assert rest["step_time_s"].to_list() == pytest.approx(e2e, abs=1e-6)
    assert rest["in_step_s"].to_list() == pytest.approx(timer)
    assert rest["gap_s"].to_list() == pytest.approx([a - b for a, b in zip(e2e, timer)], abs=1e-6)  # 0.113, 0.014, 0.007, 0.007
    assert set(rest["source"]) == {"wall-clock:log:mindformers"} and set(rest["in_step_source"]) == {"log:mindformers"}
    # step 1 has no step end before it: only its own timer (compile included), and the table says so
    first = steps.row(0, named=True)
    assert first["step_time_s"] == pytest.approx(103.328) and first["source"] == "timer:log:mindformers"
    assert first["gap_s"] is None


def test_zone_less_times_without_a_zoned_source_stay_local():
    run = load_run(CONFORMANCE / "mf-docs-llama2-13b-log")
    assert run.clock == "local"
    notes = [d for d in run.diagnostics if d.slug == "log-clock-local"]
    assert [n.path for n in notes] == ["msrun_log/worker_0.log"]
    # the gaps do not depend on the offset
    assert run.tables["steps"].filter(pl.col("step") == 2)["step_time_s"][0] == pytest.approx(1.865, abs=1e-6)


def test_mindformers_lines_without_timestamps_give_only_the_timer():
    """worker_0.log of the skip-data page: per_step_time 166756 and 7637 ms, no timestamps."""
    steps = load_run(CONFORMANCE / "mf-docs-skipdata-log").tables["steps"].sort("step")
    assert steps.select("step", "step_time_s", "source").rows() == [
        (1, pytest.approx(166.756), "timer:log:mindformers"), (2, pytest.approx(7.637), "timer:log:mindformers")]
    assert steps["gap_s"].null_count() == 2


def test_time_monitor_epoch_averages_are_marked_as_averages():
    """C3D train.log: TimeMonitor per step time 332.464, 269.439, 273.972, 271.018, 269.644 ms at
    the ends of epochs 1, 2, 3, 29, 30 (223 steps per epoch)."""
    steps = load_run(CONFORMANCE / "ms-models-c3d-lossmonitor-log").tables["steps"].sort("step")
    assert steps["step"].to_list() == [223, 446, 669, 6467, 6690]
    assert steps["step_time_s"].to_list() == pytest.approx([0.332464, 0.269439, 0.273972, 0.271018, 0.269644])
    assert set(steps["source"]) == {"average:log:timemonitor"} and steps["in_step_s"].null_count() == 5


def test_a_claimed_log_that_gives_nothing_is_never_silent():
    """MindYOLO's train.log: whatever the text-log reader takes from it, a file that gives no
    rows has a warning saying so."""
    run = load_run(CONFORMANCE / "mindyolo-issue402-log")
    entry = next(e for e in run.inventory if e.rel == "train.log")
    warnings = [d for d in run.diagnostics if d.path == "train.log" and d.severity in ("warning", "error")]
    assert entry.rows > 0 or warnings


def test_nothing_taken_and_nothing_said_gets_a_warning_naming_the_reader(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.log").write_text("the job was started by hand\n")
    (run / "empty.log").write_text("")
    mute = Reader("textlog", textlog.READER.claims, lambda artifact: ReadResult(reader="textlog"))
    loaded = load_run(run, readers=(mute,))
    notes = {d.path: d for d in loaded.diagnostics if d.slug == "textlog-nothing-read"}
    assert set(notes) == {"notes.log", "empty.log"} and all(n.severity == "warning" for n in notes.values())
    assert "the file is empty" in notes["empty.log"].message
    assert "the reader gave no reason" in notes["notes.log"].message


def test_every_log_source_has_a_trust():
    """A log shape's source missing from SOURCE_PRIORITY would rank below every known one."""
    from postmortem.load.sources import SOURCE_PRIORITY
    from postmortem.readers.textlog.shapes import SHAPES

    # "log" is the settings-only shapes' (parameter counts, printed config): they give no values
    sources = {s.source for s in SHAPES if s.source != "log"}
    sources |= {f.source for s in SHAPES for f in getattr(s, "fields", ()) if getattr(f, "source", None)}
    assert sources <= set(SOURCE_PRIORITY), sorted(sources - set(SOURCE_PRIORITY))


@pytest.mark.parametrize("folder", sorted(p.name for p in CONFORMANCE.iterdir() if p.is_dir()))
def test_every_claimed_file_gives_rows_or_a_warning(folder):
    """Nothing silent, on every real run here: a claimed file that gives nothing (a profiler file
    known and not read, an intermediate one, one whose data a file beside it carries) warns why;
    an info alone is not enough."""
    run = load_run(CONFORMANCE / folder)
    warned = {d.path for d in run.diagnostics if d.severity != "info"}
    silent = [e.rel for e in run.inventory if e.reader and e.rows == 0 and e.rel not in warned]
    assert silent == []
