"""configfile reader on MindFormers-style YAML / JSON configs (tests/fixtures/configs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from postmortem.model import Artifact
from postmortem.readers import configfile

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "configs"


def art(path: Path, rel: str | None = None) -> Artifact:
    return Artifact(path=str(path), rel=rel or path.name, size=path.stat().st_size, mtime=0.0)


def test_mindformers_yaml_settings():
    r = configfile.READER.read(art(FIX / "run_llama2_7b.yaml", "config/run_llama2_7b.yaml"))
    s = {k: v.value for k, v in r.settings.items()}
    assert s["num_layers"] == 32 and s["hidden_size"] == 4096 and s["num_heads"] == 32
    assert s["seq_length"] == 4096 and s["vocab_size"] == 32000
    assert s["micro_batch_size"] == 4 and s["batch_size"] == 4 and s["epoch"] == 2 and s["sink_size"] == 2
    assert s["data_parallel"] == 8 and s["model_parallel"] == 1 and s["pipeline_stage"] == 2
    assert s["micro_batch_num"] == 16 and s["vocab_emb_dp"] is True and s["use_seq_parallel"] is False
    assert s["optimizer"] == "FP32StateAdamWeightDecay"
    assert s["learning_rate"] == pytest.approx(3e-4) and s["warmup_ratio"] == pytest.approx(0.03)
    assert s["save_checkpoint_steps"] == 500  # from the misspelt "CheckpointMointor"
    assert s["device"] == "Ascend" and s["mode"] == "GRAPH_MODE"
    assert s["precision"] == "float16" and s["network"] == "llama2_7b"
    # 4 per device x dp 8 x 16 micro batches (pipeline_stage 2 > 1): MindFormers resets the
    # accumulation (2) to 1 under a pipeline (trainer/base_trainer.py)
    assert s["global_batch_size"] == 4 * 8 * 16
    assert r.settings["global_batch_size"].source == "derived:config:config/run_llama2_7b.yaml"
    assert r.settings["num_layers"].source == "config:config/run_llama2_7b.yaml"
    assert not r.diagnostics


def test_json_config_alias_keys_and_no_pipeline_factor():
    r = configfile.READER.read(art(FIX / "hf_style_config.json"))
    s = {k: v.value for k, v in r.settings.items()}
    assert (s["num_layers"], s["hidden_size"], s["num_heads"], s["ffn_hidden_size"]) == (2, 64, 4, 256)
    assert s["global_batch_size"] == 8 * 2  # pipeline_stage 1: micro_batch_num does not count
    assert s["save_checkpoint_steps"] == 100 and s["mode"] == "PYNATIVE_MODE" and s["warmup_steps"] == 10


def test_broken_yaml_gives_diagnostic_with_line():
    r = configfile.READER.read(art(FIX / "broken.yaml"))
    assert r.settings == {}
    (d,) = r.diagnostics
    assert d.slug == "config-unparseable" and d.path == "broken.yaml"
    assert d.offset is not None and 5 <= d.offset <= 7  # the unclosed "[8" on line 5


def test_claims_are_conservative():
    claims = configfile.READER.claims
    assert claims(art(FIX / "run_llama2_7b.yaml"))
    assert claims(art(FIX / "hf_style_config.json"))
    assert not claims(art(FIX / "unrelated.json"))
    assert not claims(art(FIX / "meta_like.json", "output/checkpoint/rank_0/meta.json"))
    assert not claims(art(FIX / "hf_style_config.json", "summary/train_metadata.json"))
    assert not claims(art(FIX / "hf_style_config.json", "prof/x_ascend_ms/ASCEND_PROFILER_OUTPUT/communication.json"))


def test_non_mapping_yaml(tmp_path: Path):
    p = tmp_path / "list.yaml"
    p.write_text("- a\n- b\n")
    r = configfile.READER.read(art(p))
    assert r.settings == {} and r.diagnostics[0].slug == "config-not-mapping"
