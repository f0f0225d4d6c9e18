"""MindFormers' health records: health_ckpts.json, the embedding local norm, MoE expert load and
token drops, judged by the rules their writer applies (analysis/health.py).

Fixtures: tests/fixtures/health (make_fixtures.py: tensorboardX's real writer called as MindFormers
calls it; health_ckpts.json as CheckpointMonitor.save_checkpoint writes it) and the real MindFormers
checkpoint of tests/fixtures/checkpoints/mindformers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from postmortem.analysis import analyze
from postmortem.analysis.health import health, health_resume_point
from postmortem.analysis.types import FindingKind, FindingSeverity
from postmortem.load import load_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HEALTH = FIXTURES / "health"


def _findings(run_dir, kind):
    return [f for f in analyze(load_run(run_dir)).findings if f.kind == kind]


def test_the_last_healthy_save_is_the_one_to_resume_from():
    run = load_run(HEALTH / "health_ckpts")
    point = health_resume_point(run)
    assert (point.ckpt_name, point.step, point.is_health, point.on_disk) == ("llama_rank_0-1_4.ckpt", 4, 0, False)
    h = health(run)
    assert [s.step for s in h.unhealthy] == [6, 8]
    [f] = _findings(HEALTH / "health_ckpts", FindingKind.UNHEALTHY_CHECKPOINT)
    assert (f.variant, f.severity) == ("latest", FindingSeverity.WARNING)
    assert (f.params["first_step"], f.params["resume_step"], f.params["latest_name"]) == (6, 4, "llama_rank_0-1_8.ckpt")


def _with_real_checkpoint(tmp_path: Path, entries: list[tuple[int, str]]) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "checkpoints" / "mindformers", run)
    record = [{"is_health": h, "ckpt_name": name} for h, name in entries]
    (run / "output" / "health_ckpts.json").write_text(json.dumps(record, indent=4))
    return run


def test_a_save_on_disk_takes_its_files_step(tmp_path):
    run_dir = _with_real_checkpoint(tmp_path, [(0, "llama_rank_0-1_2.ckpt"), (0, "llama_rank_0-2_2.ckpt")])
    run = load_run(run_dir)
    file_step = run.tables["checkpoints"].filter(pl.col("path").str.ends_with("llama_rank_0-2_2.ckpt"))["step"][0]
    point = health_resume_point(run)
    assert point.ckpt_name == "llama_rank_0-2_2.ckpt" and point.on_disk and point.step == file_step
    assert _findings(run_dir, FindingKind.UNHEALTHY_CHECKPOINT) == []  # every save healthy: nothing to say


def test_an_earlier_unhealthy_save_is_an_info(tmp_path):
    run_dir = _with_real_checkpoint(tmp_path, [(1, "llama_rank_0-1_2.ckpt"), (0, "llama_rank_0-2_2.ckpt")])
    [f] = _findings(run_dir, FindingKind.UNHEALTHY_CHECKPOINT)
    assert (f.variant, f.severity, f.params["first_step"]) == ("earlier", FindingSeverity.INFO, 2)


def test_no_healthy_save_is_critical(tmp_path):
    run_dir = _with_real_checkpoint(tmp_path, [(1, "llama_rank_0-1_2.ckpt"), (2, "llama_rank_0-2_2.ckpt")])
    assert health_resume_point(load_run(run_dir)) is None
    [f] = _findings(run_dir, FindingKind.UNHEALTHY_CHECKPOINT)
    assert (f.variant, f.severity) == ("none", FindingSeverity.CRITICAL)


@pytest.mark.parametrize(("text", "variant"), [
    (None, "json"),  # the real record cut short
    ('{"is_health": 0, "ckpt_name": "x-1_2.ckpt"}', "not-list"),
    ('[{"ckpt_name": "llama_rank_0-1_2.ckpt"}, {"is_health": 0, "ckpt_name": "llama_rank_0-1_4.ckpt"}]', "entries"),
    ("[]", "empty"),
    ("[" * 100_000 + "]" * 100_000, "json"),  # hostile nesting
])
def test_a_bad_record_says_why(tmp_path, text, variant):
    run = tmp_path / "run" / "output"
    run.mkdir(parents=True)
    real = (HEALTH / "health_ckpts" / "output" / "health_ckpts.json").read_text()
    (run / "health_ckpts.json").write_text(real[:57] if text is None else text)
    loaded = load_run(run.parent)
    [d] = [d for d in loaded.diagnostics if d.slug == "health-record-invalid"]
    assert (d.variant, d.path) == (variant, "output/health_ckpts.json")
    if variant == "entries":  # MindFormers' resume counts an entry without is_health as unhealthy; so do we
        assert health_resume_point(loaded).ckpt_name == "llama_rank_0-1_4.ckpt"
        assert [s.ckpt_name for s in health(loaded).unhealthy] == ["llama_rank_0-1_2.ckpt"]


def test_the_embedding_norm_against_the_writers_threshold():
    h = health(load_run(HEALTH / "tb_moe"))
    e = h.embedding
    assert e.tag == "local_norm/model.tok_embeddings.embedding_weight"  # not the layer weight's local norm
    assert (e.threshold, e.threshold_source, e.first_over, e.over, e.steps) == (1.0, "default", 7, 4, 10)
    assert e.peak == pytest.approx(1.7) and e.peak_step == 10
    assert not e.judged  # no pipeline parallel: MindFormers records every save healthy
    [f] = _findings(HEALTH / "tb_moe", FindingKind.EMBEDDING_NORM)
    assert f.variant == "unjudged" and f.params["first_step"] == 7


def test_expert_load_per_layer_from_add_scalars():
    h = health(load_run(HEALTH / "tb_moe"))
    loads = h.series["expert_load"]
    assert loads.height == 2 * 4 * 10  # every expert of every layer: add_scalars writes one file per expert
    by_layer = {x.layer: x for x in h.expert_load}
    assert (by_layer[0].max_over_mean, by_layer[0].experts) == (1.0, 4)
    assert (by_layer[1].busiest, by_layer[1].busiest_share, by_layer[1].max_over_mean) == (3, 0.75, 3.0)
    assert _findings(HEALTH / "tb_moe", FindingKind.TOKEN_DROPS) == []  # no drop-rate series: nothing judged


def test_a_run_without_health_records_has_none():
    assert health(load_run(FIXTURES / "checkpoints" / "mindformers")) is None


def test_token_drops_above_zero_are_a_finding():
    """The drop-rate rule on the values MindFormers' ``layer: %d, drop_rate: %.5f`` lines give
    (tests/fixtures/health/log_lines.md; the text-log reader turns them into drop_rate/{layer})."""
    from postmortem.analysis.health import Health, _drops, health_findings

    drops = pl.DataFrame({"step": [1, 2, 3, 1, 2, 3], "layer": [0, 0, 0, 1, 1, 1],
                          "value": [0.0, 0.0, 0.0, 0.0, 0.01234, 0.04]})
    h = Health(None, (), None, None, (), _drops(drops))
    [f] = health_findings(h)
    assert f.kind == FindingKind.TOKEN_DROPS
    assert (f.params["layers"], f.params["of"], f.params["layer"], f.params["first_step"], f.params["peak_step"]) == (1, 2, 1, 2, 3)


def test_metrics_json_holds_the_health_block_and_validates():
    import jsonschema

    from postmortem.report.metrics_json import SCHEMA_VERSION, load_schema, to_metrics

    doc = to_metrics(analyze(load_run(HEALTH / "health_ckpts")))
    jsonschema.validate(doc, load_schema())
    assert SCHEMA_VERSION == "1.5" and doc["schema_version"] == "1.5"
    assert doc["health"]["resume"]["ckpt_name"] == "llama_rank_0-1_4.ckpt"
    assert [s["healthy"] for s in doc["health"]["saves"]] == [True, True, False, False]
    assert to_metrics(analyze(load_run(FIXTURES / "checkpoints" / "mindformers")))["health"] is None


DOCS = HEALTH / "mf-docs"


def test_mindformers_docs_record_reads_as_its_doc_says():
    """The health_ckpts.json MindFormers' docs print: 0 healthy, 1 not; resume from the first."""
    run = load_run(DOCS / "health_ckpts")
    h = health(run)
    assert [(s.ckpt_name, s.step, s.healthy) for s in h.saves] == [
        ("qwen3_8b_8b_rank_0-1_1.safetensors", 1, True), ("qwen3_8b_rank_0-2_1.safetensors", None, False)]
    assert health_resume_point(run).ckpt_name == "qwen3_8b_8b_rank_0-1_1.safetensors"
    # the doc's config: the threshold from CheckpointMonitor, pipeline parallel on
    assert run.settings["embedding_local_norm_threshold"].value == 270.0
    [f] = _findings(DOCS / "health_ckpts", FindingKind.UNHEALTHY_CHECKPOINT)
    assert f.variant == "latest" and f.params["resume_step"] == 1


def test_checkpoint_2_common_json_is_a_health_record_only_when_judged():
    run = load_run(DOCS / "common_json")
    h = health(run)
    assert [(s.ckpt_name, s.step, s.is_health) for s in h.saves] == [("iteration_00000001", 1, 1)]
    assert h.record == "output/checkpoint/*/common.json" and h.resume is None
    assert run.settings["embedding_local_norm_threshold"].source == "config:ckpt_health_monitor_2.yaml"
    off = load_run(DOCS / "common_json_off")  # ckpt_status null: the monitor was off
    assert health(off) is None and off.tables["health_ckpts"].is_empty()


def test_the_threshold_comes_from_the_config(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(HEALTH / "tb_moe", run_dir)
    shutil.copy(DOCS / "health_ckpts" / "ckpt_health_monitor.yaml", run_dir / "run.yaml")
    e = health(load_run(run_dir)).embedding
    assert (e.threshold, e.threshold_source, e.first_over, e.judged) == (270.0, "config:run.yaml", None, True)
    assert _findings(run_dir, FindingKind.EMBEDDING_NORM) == []  # 1.7 at most: under 270
