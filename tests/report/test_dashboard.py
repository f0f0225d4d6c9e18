"""The dashboard's rows (report/dashboard.py) and the digest's lead (weekly.py), from archived
runs' metrics.json. The files here are written by the test in the shape the build writes them
(only the keys a test is about); the end-to-end tests in test_cli_build.py read real builds."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from postmortem import archive, weekly
from postmortem.report import dashboard as d
from postmortem.words import labels


def _run(tmp: Path, run_id: str, finished: str, metrics: dict, experiment: str = "exp") -> archive.ArchivedRun:
    metrics = {"run": {"id": run_id, "experiment": experiment, "finished_at": finished}, **metrics}
    folder = tmp / experiment / run_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return archive.ArchivedRun(experiment, run_id, folder, metrics)


def _settings(tmp: Path, run: archive.ArchivedRun, values: dict) -> None:
    (run.path / "data").mkdir(exist_ok=True)
    doc = {"archive_schema_version": 1, "settings": {k: {"value": v, "source": "config:x.yaml"} for k, v in values.items()}}
    (run.path / "data" / "run.json").write_text(json.dumps(doc))


def test_setting_changes_put_hyperparameters_then_the_parallel_layout_first():
    before = {"learning_rate": 3e-3, "data_parallel": 8, "num_layers": 32, "framework_version": "2.9", "last_loss": 1.1,
              "model_path": "/a.ckpt", "full_model_flops": 1e9, "user.seq_length": 2048, "seq_length": 2048, "user.peak_lr": 3e-3}
    after = {"learning_rate": 6e-3, "data_parallel": 4, "num_layers": 32, "framework_version": "2.10", "last_loss": 0.9,
             "model_path": "/b.ckpt", "seq_length": 4096, "user.seq_length": 4096, "user.peak_lr": 6e-3, "dataset": "wiki"}
    changes = d.setting_changes(before, after)
    # outcomes (last loss, checkpoint path, logged FLOPs) are not changes; user.seq_length repeats seq_length
    assert [c.key for c in changes] == ["learning_rate", "seq_length", "data_parallel", "dataset", "framework_version", "user.peak_lr"]
    assert d._change_line(changes[0]) == "learning_rate 0.003 → 0.006"
    assert d._change_line(changes[3]) == "dataset — → wiki"


def test_runs_in_time_order_each_against_the_run_before(tmp_path):
    runs = [
        _run(tmp_path, "c", "2026-11-03T10:00:00+00:00", {}),
        _run(tmp_path, "a", "2026-11-01T10:00:00+00:00", {}),
        _run(tmp_path, "b", "2026-11-02T10:00:00+00:00", {}),
    ]
    _settings(tmp_path, runs[1], {"learning_rate": 1e-3, "global_batch_size": 512})
    _settings(tmp_path, runs[2], {"learning_rate": 2e-3, "global_batch_size": 512})
    # c has no data/run.json (a json-only archive copy): its changes are unknown, and say why
    points = d.experiment_points(runs)
    assert [p.run_id for p in points] == ["a", "b", "c"]
    assert points[0].changes is None and points[0].changes_why == "first_run"
    assert [(c.key, c.before, c.after) for c in points[1].changes] == [("learning_rate", 1e-3, 2e-3)]
    assert points[2].changes is None and points[2].changes_why == "why_no_settings"
    table = d.runs_table(points, labels("zh"), "", "runs-exp")
    changed = [row[2] for row in table.rows]
    assert changed[0].text == "首次运行" and changed[1].text == "learning_rate 0.001 → 0.002"
    assert changed[2].text == "—" and "data/run.json" in changed[2].reason


def test_missing_figures_show_a_dash_and_why(tmp_path):
    old = _run(tmp_path, "old", "2026-11-01T10:00:00+00:00", {"throughput": {"steady": {"tokens_per_s": 1000.0}},
                                                               "mfu": {"value": None, "reason": "peak FLOPS unknown"}})
    new = _run(tmp_path, "new", "2026-11-02T10:00:00+00:00", {
        "throughput": {"steady": {"tokens_per_s": 1250.0, "data_wait_share": None}},
        "mfu": {"value": 0.412}, "profile": {"comm_share": 0.18},
        "phases": [{"max_allocated_bytes": 2 * 1024**3}, {"max_allocated_bytes": 3 * 1024**3}, {"max_allocated_bytes": None}],
    })
    L = labels("en")
    first, second = d.runs_table(d.experiment_points([old, new]), L, "", "t").rows
    tokens, mfu, memory, comm, wait = (3, 4, 5, 6, 7)
    assert first[mfu].text == "—" and first[mfu].reason == "peak FLOPS unknown"  # the analysis's own reason
    assert "profile.comm_share" in first[comm].reason  # a key this archive's build did not write
    assert "profile.memory.peak_bytes" in first[memory].reason or "memory" in first[memory].reason
    assert second[tokens].text == "1.25k" and second[tokens].sub == "+25.0%"  # against the run above: 1250 / 1000 - 1
    assert second[mfu].text == "41.2%" and second[comm].text == "18.0%"
    assert second[memory].text == "3.00 GiB"  # the largest phase's, while profile.memory.peak_bytes is not written
    assert second[wait].text == "—" and second[wait].reason == L["why_no_data_wait"]  # written, but not measured


def test_verdicts_name_the_families_that_moved_and_a_nan_first(tmp_path):
    run = _run(tmp_path, "r", "2026-11-02T10:00:00+00:00", {
        "stability": {"nan_steps": [120, 121]},
        "baseline": {"run": {"id": "base"}, "verdicts": {"throughput": "regressed", "convergence": "improved",
                                                          "stability": "no significant change", "efficiency": "unknown"},
                     "deltas": {"loss_at_equal_tokens": {"current": 2.01, "rel": -0.031, "significant": True,
                                                         "alignment": "by tokens (at 1,000 tokens)"}}},
    })
    row = d.runs_table(d.experiment_points([run]), labels("zh"), "", "t").rows[0]
    verdict, loss = row[9], row[8]
    assert [(p.text, p.tone) for p in verdict.parts] == [("NaN/Inf × 2", "bad"), ("吞吐\u00a0▼", "bad"), ("收敛\u00a0▲", "good")]
    assert "对比 base" in verdict.title and "稳定性：无显著变化" in verdict.title
    assert (loss.text, loss.sub, loss.tone) == ("2.010", "-3.1%", "good")  # lower loss, significant: better


def test_trends_have_time_on_the_x_axis_and_say_what_is_not_drawn(tmp_path):
    runs = [_run(tmp_path, f"r{i}", f"2026-11-0{i}T10:00:00+00:00", {"throughput": {"steady": {"tokens_per_s": 1000.0 + i}}})
            for i in range(1, 4)]
    chart, note = d.trend_chart(d.experiment_points(runs), labels("en"), "trends")
    (tokens,) = chart.spec["concat"]
    assert tokens["encoding"]["x"]["type"] == "temporal" and tokens["encoding"]["x"]["scale"]["type"] == "utc"
    data = tokens.get("data") or chart.spec["data"]  # altair lifts the data of a lone chart to the top
    assert [r["run"] for r in data["values"]] == ["r1", "r2", "r3"]
    assert note.startswith("Not drawn") and "MFU" in note and "Peak memory" in note


def _digest_archive(tmp_path: Path) -> Path:
    regression = {"kind": "regression", "severity": "warning", "message": "throughput regressed vs base: tokens/s -20.0%",
                  "evidence": {"family": "throughput", "baseline": "base", "changes": "tokens/s -20.0%"}}
    stall = {"kind": "data_stalls", "severity": "warning", "message": "9 data-stall steps (3.0%)",
             "evidence": {"count": 9, "share": 0.03, "lost_s": 12.5}}
    _run(tmp_path, "base", "2026-11-30T10:00:00+00:00", {"findings": [stall]})
    _run(tmp_path, "two-families", "2026-12-01T10:00:00+00:00", {
        "baseline": {"run": {"id": "base"}, "verdicts": {"throughput": "regressed", "stability": "regressed"}},
        "findings": [regression, dict(regression, message="stability regressed vs base: loss spikes 0 → 1",
                                      evidence={"family": "stability", "baseline": "base", "changes": "loss spikes 0 → 1"}),
                     {"kind": "log_errors", "severity": "warning", "message": "1 error in the logs", "evidence": {"count": 1, "detail": "ERROR boom"}}],
    })
    _run(tmp_path, "nan", "2026-12-02T10:00:00+00:00", {
        "findings": [{"kind": "nan_loss", "severity": "critical", "message": "3 steps with NaN/Inf loss",
                      "evidence": {"count": 3, "first_step": 70}}]}, experiment="other")
    return tmp_path


def test_digest_counts_runs_that_regressed_and_leads_with_what_matters(tmp_path):
    root = _digest_archive(tmp_path)
    period = weekly.parse_period("2026-W49", None, datetime(2026, 12, 3, tzinfo=UTC))
    digest = weekly.collect(root, period)
    # a run with two regressed families is one regression
    assert digest.run_count == 3 and digest.regression_count == 1
    lead = [(a.rank, a.run_id) for a in digest.attention]
    # a NaN, then the regression, then the failed launch, and the clean baseline's data-stall warning last
    assert lead == [(0, "nan"), (1, "two-families"), (2, "two-families"), (4, "base")]  # 3 is a run unusual for its experiment
    zh = weekly.render_markdown(digest, "zh")
    lead = zh[zh.index("## 需要关注"):]
    assert lead.index("NaN/Inf") < lead.index("退化") < lead.index("行错误") < lead.index("数据停顿")
    assert "。；" not in lead
    assert "完成 3 个任务 · 1 个任务相对基线退化" in zh


def test_names_from_the_archive_are_escaped_and_links_quoted(tmp_path):
    from postmortem.index import write_indexes

    hostile = "<img src=x onerror=alert(1)>#?"
    run = _run(tmp_path, hostile, "2026-11-02T10:00:00+00:00", {}, experiment="exp & <b>")
    _settings(tmp_path, run, {"learning_rate": 1e-3, "note": "</script><script>alert(2)</script>"})
    _run(tmp_path, "later", "2026-11-03T10:00:00+00:00", {}, experiment="exp & <b>")
    write_indexes(tmp_path, datetime(2026, 11, 4, tzinfo=UTC), "zh")
    for page in (tmp_path / "index.html", tmp_path / "exp & <b>" / "index.html"):
        html = page.read_text()
        assert "<img src=x" not in html and "<b>" not in html and "alert(2)</script>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;#?" in html  # the name as text
        assert "%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E%23%3F/report.html" in html  # the link, quoted
