"""`postmortem check CONFIG` on real MindFormers configs (tests/fixtures/configs/mindformers, with
their provenance) and on broken variants of them: each rule fires where it should and nowhere
else; exit 1 only for a job that cannot run (or any warning with --strict), 2 for bad input."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from postmortem.cli import main
from postmortem.precheck import check_config

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs" / "mindformers"

# Each real config with the devices its layout is meant for, and every rule that does not pass
# as shipped (from reading the file: see the folder's README).
AS_SHIPPED = {
    "pretrain_llama2_7b.yaml": (8, {"checkpoint_interval": "unknown"}),
    "pretrain_llama2_13b.yaml": (8, {"checkpoint_interval": "unknown"}),
    "pretrain_llama2_70b_bf16_32p.yaml": (32, {"checkpoint_interval": "unknown", "parallel_features": "warn"}),
    "pretrain_gpt2_small_fp16.yaml": (8, {"checkpoint_interval": "unknown"}),
    "pretrain_mixtral-8x7b.yaml": (16, {"checkpoint_interval": "unknown"}),
    "finetune_glm4_9b.yaml": (8, {"checkpoint_interval": "unknown", "parallel_features": "warn"}),
    "pretrain_qwen3_32b_4k.yaml": (16, {"checkpoint_interval": "unknown", "pipeline": "warn", "recompute": "warn"}),
}


def statuses(path: Path, **kw) -> dict[str, str]:
    return {str(c.name): str(c.status) for c in check_config(path, **kw).checks}


def not_passing(path: Path, **kw) -> dict[str, str]:
    return {k: v for k, v in statuses(path, **kw).items() if v != "pass"}


@pytest.mark.parametrize("name", sorted(AS_SHIPPED))
def test_real_configs_as_shipped(name):
    devices, expected = AS_SHIPPED[name]
    assert not_passing(CONFIGS / name, devices=devices) == expected


def test_the_layout_needs_the_device_count():
    got = check_config(CONFIGS / "pretrain_llama2_70b_bf16_32p.yaml").checks
    layout = next(c for c in got if c.name == "layout")
    assert str(layout.status) == "unknown" and layout.evidence["product"] == 32


def _variant(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """The real file with a few lines changed (each pattern must match exactly once)."""
    text = (CONFIGS / name).read_text(encoding="utf-8")
    for pattern, repl in edits:
        text, n = re.subn(pattern, repl, text, flags=re.M)
        assert n == 1, pattern
    out = tmp_path / f"broken-{name}"
    out.write_text(text, encoding="utf-8")
    return out


# (base config, edits, extra arguments, the rules whose status changes and to what)
BROKEN = {
    "layout": ("pretrain_llama2_13b.yaml", [(r"^  data_parallel: 8", "  data_parallel: 4")], {},
               {"layout": "fail", "global_batch": "pass"}),
    "heads": ("pretrain_gpt2_small_fp16.yaml", [(r"^  data_parallel: 8", "  data_parallel: 1"),
                                                (r"^  model_parallel: 1", "  model_parallel: 8"),
                                                (r"^    num_heads: 12", "    num_heads: 20")], {},
              {"num_heads_divisible": "fail"}),
    "hidden": ("pretrain_gpt2_small_fp16.yaml", [(r"^  data_parallel: 8", "  data_parallel: 1"),
                                                 (r"^  model_parallel: 1", "  model_parallel: 8"),
                                                 (r"^    num_heads: 12", "    num_heads: 16"),
                                                 (r"^    hidden_size: 768", "    hidden_size: 780")], {},
               {"hidden_size_divisible": "fail"}),
    "kv-heads": ("pretrain_llama2_70b_bf16_32p.yaml", [(r"^  model_parallel: 4", "  model_parallel: 16"),
                                                       (r"^  pipeline_stage: 8", "  pipeline_stage: 2")], {},
                 {"kv_heads_divisible": "fail"}),
    "micro-below-stages": ("pretrain_mixtral-8x7b.yaml", [(r"^  micro_batch_num: 16", "  micro_batch_num: 1")], {},
                           {"pipeline": "fail"}),
    "stages-above-layers": ("pretrain_gpt2_small_fp16.yaml", [(r"^  data_parallel: 8", "  data_parallel: 1"),
                                                              (r"^  pipeline_stage: 1", "  pipeline_stage: 16"),
                                                              (r"^  micro_batch_num: 1", "  micro_batch_num: 64")],
                            {"devices": 16}, {"pipeline": "fail"}),
    "micro-without-pipeline": ("pretrain_llama2_7b.yaml", [(r"^  micro_batch_num: 1", "  micro_batch_num: 4")], {},
                               {"pipeline": "warn"}),
    "accumulation-with-pipeline": ("pretrain_mixtral-8x7b.yaml",
                                   [(r"^  batch_size: 1\n", "  batch_size: 1\n  gradient_accumulation_steps: 4\n")], {},
                                   {"global_batch": "warn"}),
    "global-batch": ("pretrain_llama2_7b.yaml", [], {"global_batch_size": 128}, {"global_batch": "fail"}),
    "positions": ("pretrain_qwen3_32b_4k.yaml", [(r"^    seq_length: 4096", "    seq_length: 8192")], {},
                  {"positions": "warn"}),
    "po-without-dp": ("pretrain_llama2_7b.yaml", [(r"^  data_parallel: 8", "  data_parallel: 1"),
                                                  (r"^  model_parallel: 1", "  model_parallel: 8")], {},
                      {"parallel_features": "warn"}),
    "sp-without-mp": ("pretrain_llama2_13b.yaml", [(r"^  use_seq_parallel: False", "  use_seq_parallel: True")], {},
                      {"parallel_features": "warn"}),
    "recompute-both": ("pretrain_llama2_13b.yaml", [(r"^  select_recompute: False", "  select_recompute: True")], {},
                       {"recompute": "warn"}),
    "comm-recompute": ("pretrain_gpt2_small_fp16.yaml", [(r"^  parallel_optimizer_comm_recompute: False",
                                                          "  parallel_optimizer_comm_recompute: True")], {},
                       {"recompute": "warn"}),
    "save-often": ("pretrain_llama2_7b.yaml", [], {"step_time_s": 1.5}, {"checkpoint_interval": "warn"}),
    "save-ok": ("pretrain_llama2_7b.yaml", [], {"step_time_s": 4.0}, {"checkpoint_interval": "pass"}),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_fires_where_it_should_and_nowhere_else(case, tmp_path):
    name, edits, extra, changed = BROKEN[case]
    extra = dict(extra)
    devices = extra.pop("devices", AS_SHIPPED[name][0])
    before = statuses(CONFIGS / name, devices=AS_SHIPPED[name][0])
    after = statuses(_variant(tmp_path, name, *edits), devices=devices, **extra)
    diff = {k: v for k, v in after.items() if before.get(k) != v}
    assert diff == {k: v for k, v in changed.items() if before.get(k) != v}
    for k, v in changed.items():
        assert after[k] == v, k


def test_the_disk_estimate_follows_the_model_and_the_kept_copies(tmp_path):
    """Llama 2 7B (6.74 B parameters from its shape: FFN 11008 from multiple_of 256) in fp16 with
    fp32 Adam moments, sharded over dp 8 by the parallel optimizer: 14 bytes a parameter once,
    five copies kept (CheckpointMonitor's default)."""
    c = next(c for c in check_config(CONFIGS / "pretrain_llama2_7b.yaml", devices=8).checks if c.name == "checkpoint_disk")
    ev = c.evidence
    assert ev["parameters"] == pytest.approx(32 * (4 * 4096**2 + 3 * 4096 * 11008) + 32000 * 4096)
    assert ev["keep_checkpoint_max"] == 5 and ev["keep_default"] is True
    assert ev["bytes_per_save"] == pytest.approx(ev["parameters"] * (2 + 8))
    assert ev["total_bytes"] == pytest.approx(5 * ev["bytes_per_save"])


def test_disk_above_the_free_space_warns(tmp_path):
    path = _variant(tmp_path, "pretrain_llama2_7b.yaml", (r"^output_dir: './output'.*$", f"output_dir: '{tmp_path}/out'"),
                    (r"^    save_checkpoint_steps: 100", "    save_checkpoint_steps: 100\n    keep_checkpoint_max: 100000"))
    c = next(c for c in check_config(path, devices=8).checks if c.name == "checkpoint_disk")
    assert str(c.status) == "warn" and c.evidence["free_bytes"] > 0


# --------------------------------------------------------------------------- the command


def test_exit_codes(tmp_path, capsys):
    good = CONFIGS / "pretrain_llama2_7b.yaml"
    assert main(["check", str(good), "--devices", "8"]) == 0
    assert main(["check", str(good), "--devices", "16"]) == 1  # dp × mp × pp = 8 ≠ 16: cannot run
    warned = CONFIGS / "pretrain_qwen3_32b_4k.yaml"
    assert main(["check", str(warned), "--devices", "16"]) == 0
    assert main(["check", str(warned), "--devices", "16", "--strict"]) == 1
    out = " ".join(capsys.readouterr().out.split())  # the table folds long cells
    assert "layout" in out and "16 devices" in out and "fix: make data_parallel" in out


def test_json_output(capsys):
    assert main(["check", str(CONFIGS / "pretrain_llama2_7b.yaml"), "--devices", "16", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 1 and doc["devices"] == 16
    layout = next(c for c in doc["checks"] if c["check"] == "layout")
    assert layout["status"] == "fail" and layout["params"]["product"] == 8 and layout["fix"].startswith("make ")


def test_chinese(capsys):
    assert main(["check", str(CONFIGS / "pretrain_qwen3_32b_4k.yaml"), "--devices", "8", "--lang", "zh"]) == 1
    out = "".join(capsys.readouterr().out.split())  # the table folds long cells
    assert "未通过" in out and "MindFormers无法启动" in out and "建议：" in out and "1项未通过" in out


@pytest.mark.parametrize("content,slug", [
    (None, "check-config-missing"),
    (b"model: [unclosed\n", "check-config-unparseable"),
    (b"\xff\xfe not text", "check-config-unparseable"),
    (b"- a list\n- not a mapping\n", "check-config-not-training"),
    (b"seed: 0\noutput_dir: ./output\n", "check-config-not-training"),
    ("fifo", "check-config-unreadable"),
    ("dir", "check-config-unreadable"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, content, slug):
    path = tmp_path / "config.yaml"
    if content == "fifo":
        os.mkfifo(path)  # would block a plain read
    elif content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error[{slug}]: {path}")
