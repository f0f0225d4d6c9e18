"""No verdict claims more than the files show, and the figures a run prints itself are used: on real
files (a MindOCR user's 7-record excerpt of a longer run, postmortem's callback records of a real
MindSpore run, the sample runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from postmortem.analysis import analyze
from postmortem.analysis.configcheck import CheckContext, check_values
from postmortem.analysis.types import CheckStatus, Symptom
from postmortem.load import load_run
from postmortem.words import render
from postmortem.report.verdict import verdict_lines

REPO = Path(__file__).resolve().parents[2]
OCR = REPO / "tests" / "fixtures" / "logcorpus" / "b" / "logs" / "b-mindocr-issue670-1.log"
CALLBACK = REPO / "tests" / "fixtures" / "callback" / "run"


def _verdict(a, lang: str = "en") -> str:
    """The verdict block as the report shows it: each problem's title, numbers and detail lines."""
    from datetime import UTC, datetime

    from postmortem.report.viewmodel import build_view

    v = build_view(a, lang=lang, generated_at=datetime.now(UTC), version="t").verdict
    return " ".join(" ".join([it.title, it.numbers, *it.lines]) for it in v.items)


def _excerpt(tmp_path: Path) -> Path:
    run = tmp_path / "ocr"
    run.mkdir()
    shutil.copy(OCR, run / "train.log")
    return run


def test_the_first_records_of_an_excerpt_are_no_spike(tmp_path):
    a = analyze(load_run(str(_excerpt(tmp_path))))
    steps = a.steps.filter(a.steps["loss"].is_not_null())["step"].to_list()
    assert len(steps) == 7
    spikes = [s.step for s in a.stability.loss.spikes]
    assert steps[0] not in spikes and steps[1] not in spikes  # 32.27 at the first record: no history to spike against
    assert spikes, "the later 32.27 after 11.99-17.04 is still a spike"


def test_an_excerpts_highest_learning_rate_is_not_called_the_peak(tmp_path):
    a = analyze(load_run(str(_excerpt(tmp_path))))
    lines = _verdict(a)
    assert "at its peak" not in lines and "of its peak" not in lines
    assert "highest learning rate in the log" in lines and "the schedule's peak is not known" in lines
    problem = next(p for p in a.diagnosis.problems if p.symptom == Symptom.SPIKES)
    assert problem.params["lr_basis"] == "log"
    assert "日志中最高学习率" in _verdict(a, "zh")


def test_a_schedule_seen_from_its_start_keeps_the_peak():
    a = analyze(load_run(str(REPO / "samples" / "gpt-tiny-lr2x")))
    problem = next(p for p in a.diagnosis.problems if p.params.get("lr_share") is not None)
    assert problem.params["lr_basis"] in ("config", "warmup")  # lr_schedule.learning_rate, and warmup seen to end
    assert "of its peak" in _verdict(a)


def test_a_layout_the_run_trained_with_is_never_refused():
    pipeline = {"pipeline_stage": 2, "model_parallel": 1, "micro_batch_num": 4, "use_parallel": True}
    before = check_values({**pipeline, "data_parallel": 1}, CheckContext(devices=4))
    layout = next(c for c in before if c.name == "layout")
    assert layout.status == CheckStatus.FAIL and "refuses to start" in render(layout.detail, "en")  # before launch: it would be
    after = next(c for c in check_values(pipeline, CheckContext(devices=4, trained_steps=5)) if c.name == "layout")
    assert after.status == CheckStatus.PASS and after.evidence["data_parallel"] == 2 and after.evidence["derived"] == ["data_parallel"]
    assert "MindSpore derives it" in render(after.detail, "en")
    sources = {"data_parallel": "callback:rank_0.jsonl", "pipeline_stage": "config:run.yaml"}
    read = next(c for c in check_values({**pipeline, "data_parallel": 1}, CheckContext(devices=4, trained_steps=5, sources=sources))
                if c.name == "layout")
    text = render(read.detail, "en")
    assert read.status == CheckStatus.WARN and "refuses" not in text
    assert "do not multiply to the devices" in text and "trained 5 steps" in text
    assert "data_parallel 1 (callback:rank_0.jsonl)" in text and "context_parallel not set" in text
    assert "无法启动" not in render(read.detail, "zh")


def test_the_callbacks_own_figures_are_used_and_named():
    a = analyze(load_run(str(CALLBACK)))
    params = a.mfu.model.params
    assert params.value == 4240.0  # the callback's header count, not a shape's estimate
    assert "the run counted itself" in render(params.method, "en") and "callback:" in render(params.source, "en")
    keys = [e.key for e in a.triage.evidence]
    assert "callback_data_wait_share" in keys and "logged_data_wait_share" not in keys
    lines = " ".join(verdict_lines(a, "en")) + _verdict(a)
    assert "(training log)" not in lines and "postmortem's callback" in lines


def test_summary_md_has_no_html_entities(tmp_path):
    from datetime import UTC, datetime

    from postmortem.report.markdown import render_markdown
    from postmortem.report.viewmodel import build_view

    a = analyze(load_run(str(REPO / "samples" / "gpt-tiny-lr2x")))
    md = render_markdown(build_view(a, lang="en", generated_at=datetime.now(UTC), version="t"))
    assert "&lt;" not in md and "&gt;" not in md and "&amp;" not in md


def test_a_printed_rate_is_the_throughput_where_no_batch_is_known(tmp_path):
    """MindFormers' documented skip-data log prints samples/s/p and no batch size."""
    run = tmp_path / "mf"
    run.mkdir()
    shutil.copy(REPO / "tests" / "fixtures" / "logcorpus" / "a" / "logs" / "a-mf-doc-skipdata-1.log", run / "train.log")
    a = analyze(load_run(str(run)))
    tp = a.throughput
    assert tp.global_batch_size.value is None
    assert tp.samples_per_s.value == 0.006 and tp.samples_per_s.unit == "samples/s/device"
    method = render(tp.samples_per_s.method, "en")
    assert "'samples/s/p'" in method and "per device" in method and "no global_batch_size" in method
    assert "单卡" in render(tp.samples_per_s.method, "zh")
    from postmortem.analysis.history import current_figures

    assert current_figures(a)["samples_per_s"] is None  # a per-device rate is no run's rate to compare across runs


def test_a_spike_at_the_logs_last_value_is_not_called_unrecovered():
    """The profiled sample's grad norm spikes at its 12th and last step: nothing after it to recover in."""
    from postmortem.analysis.types import FindingKind
    from postmortem.report.messages import finding_text

    a = analyze(load_run(str(REPO / "samples" / "profiler-cpu")))
    f = next(f for f in a.findings if f.kind == FindingKind.GRAD_NORM_SPIKES)
    assert f.variant == "end_only" and f.params["not_fast"] == 0 and f.severity == "info"
    text = render(finding_text(f), "en")
    assert "without fast recovery" not in text and "nothing after to recover in" in text


def test_a_log_that_starts_mid_run_is_judged_over_its_own_steps(tmp_path):
    """The last 200 lines of the baseline sample's real log: steps 234-300 of a 300-step run."""
    run = tmp_path / "tail"
    run.mkdir()
    lines = (REPO / "samples" / "gpt-tiny-base" / "train.log").read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "train.log").write_text("".join(lines[-200:]), encoding="utf-8")
    a = analyze(load_run(str(run)))
    assert a.step_range[0] > 200
    assert [p.name for p in a.phases.phases] == ["decay"]  # its first record is an ordinary step, no startup / compile
    assert "compile" not in a.throughput.window.excluded_counts
    why = render(a.convergence.convergence_step.reason, "en")
    assert "never came down" not in why and "the log starts at step" in why and "mid-run" in why
    assert "训练中途" in render(a.convergence.convergence_step.reason, "zh")


def test_a_global_batch_the_run_trained_with_is_not_failed():
    """MindFormers' stacking log on a GPU prints a global batch of 16 and micro batch 4 with data
    parallel 1, and trained 160 steps: a factor is not in the files, the job was not refused."""
    a = analyze(load_run(str(REPO / "tests" / "fixtures" / "conformance" / "mf-stacking-gpu-log")))
    check = next(c for c in a.config_checks if c.name == "global_batch")
    assert check.status == CheckStatus.WARN
    text = render(check.detail, "en")
    assert "yet the run trained 160 steps" in text and "global_batch_size 16 (log)" in text
    assert "gradient_accumulation_steps not set" in text
