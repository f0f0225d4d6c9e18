"""Light checks that the shipped sample runs keep every kind of artifact, and that the injected
events in samples/injected_events.json are really visible in the files.

Regenerate with ``python samples/make_samples.py`` (and ``--fixtures``). These tests read the
files with their own tiny TFRecord framing walker so they do not depend on postmortem's readers.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

import crc32c
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
BASE = SAMPLES / "gpt-tiny-base"
LR2X = SAMPLES / "gpt-tiny-lr2x"
PROFILER = SAMPLES / "profiler-cpu"
NAN = REPO / "tests" / "fixtures" / "runs" / "nan"
EVENTS = json.loads((SAMPLES / "injected_events.json").read_text())

SUMMARY_NAME = re.compile(r"events\.out\.events\.summary\.(\d+)\.\d+\.[^/]+_(MS|lineage)$")
KV_LINE = re.compile(r"^\S+ \S+ (step=\d+ .*)$")


def masked_crc(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path: Path) -> list[bytes]:
    """Every record of a TFRecord-framed file; fails on a bad CRC or a truncated tail."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        assert len_crc == masked_crc(header), f"{path}: length CRC at {pos}"
        body = data[pos + 12 : pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
        assert len(body) == length and body_crc == masked_crc(body), f"{path}: data CRC at {pos}"
        out.append(body)
        pos += 16 + length
    return out


def summary_files(run: Path, kind: str) -> list[Path]:
    files = [p for p in (run / "summary").iterdir() if (m := SUMMARY_NAME.search(p.name)) and m.group(2) == kind]
    return sorted(files, key=lambda p: int(SUMMARY_NAME.search(p.name).group(1)))


def step_records(run: Path) -> list[dict]:
    """The user callback's per-step lines (key=value or JSON) from train.log, in order."""
    out = []
    for line in (run / "train.log").read_text(encoding="utf-8").splitlines():
        if line.startswith("{") and '"step"' in line:
            out.append(json.loads(line))
        elif m := KV_LINE.match(line):
            out.append({k: float(v) for k, v in (p.split("=", 1) for p in m.group(1).split())})
    return out


@pytest.mark.parametrize("run", [BASE, LR2X, PROFILER, NAN], ids=lambda p: p.name)
def test_run_has_config_summary_and_log(run: Path) -> None:
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    model = cfg["model"]["model_config"]
    for key in ("num_layers", "hidden_size", "num_heads", "seq_length", "vocab_size"):
        assert isinstance(model[key], int) and model[key] > 0
    assert cfg["runner_config"]["batch_size"] > 0
    assert cfg["parallel_config"]["data_parallel"] == 1

    ms_files = summary_files(run, "MS")
    lineage_files = summary_files(run, "lineage")
    assert ms_files and len(lineage_files) == len(ms_files)
    # train lineage (hyperparameters) is written at train end, so a crashed launch has none
    assert b"AdamWeightDecay" in lineage_files[-1].read_bytes()
    for path in ms_files:
        recs = records(path)
        assert b"MindSpore.Event:1" in recs[0]  # the version event comes first
        blob = b"".join(recs)
        for tag in (b"loss/auto", b"lr", b"grad_norm"):
            # Summary.Value.tag is field 1 (wire type 2): 0x0a, length, tag bytes
            assert b"\n" + bytes([len(tag)]) + tag in blob, f"{path.name} lacks {tag!r}"

    log = (run / "train.log").read_text(encoding="utf-8")
    assert re.search(r"^epoch: \d+ step: \d+, loss is ", log, re.M)  # LossMonitor
    assert re.search(r"^Train epoch time: [\d.]+ ms, per step time: [\d.]+ ms \(data time: ", log, re.M)
    steps = step_records(run)
    assert steps and all({"step", "loss", "lr", "grad_norm", "step_ms", "tokens_per_s"} <= set(r) for r in steps)


@pytest.mark.parametrize("run", [BASE, LR2X], ids=lambda p: p.name)
def test_training_run_is_complete(run: Path) -> None:
    steps = step_records(run)
    assert {int(r["step"]) for r in steps} == set(range(1, 301))
    losses = [r["loss"] for r in steps]
    assert sum(losses[-20:]) / 20 < 0.5 * sum(losses[:5]) / 5  # the model really learned
    lrs = [r["lr"] for r in steps[:300]]
    assert max(lrs) > 5 * lrs[0] and lrs[-1] < 0.5 * max(lrs)  # warm-up, then decay
    ckpts = sorted((run / "checkpoint").glob("*.ckpt"))
    assert len(ckpts) >= 3
    assert list((run / "checkpoint").glob("*-graph.meta"))
    assert not list(run.rglob("*.tmp"))
    assert not list(run.rglob("injected_events.json"))  # facts live outside run folders


def test_base_has_flops_collector_lines() -> None:
    log = (BASE / "train.log").read_text(encoding="utf-8")
    assert "Full model flops is" in log
    assert re.search(r"mfu:[\d.]+% hfu:[\d.]+%", log)


def test_lr2x_restart_artifacts() -> None:
    assert len(summary_files(LR2X, "MS")) == 2  # one per launch
    names = {p.name for p in (LR2X / "checkpoint").glob("*.ckpt")}
    assert any(n.startswith("tiny_gpt_1-") for n in names)  # MindSpore's rerun prefix
    for fact in EVENTS["lr2x"]["checkpoints"]:
        assert (LR2X / fact["file"]).is_file()

    log = (LR2X / "train.log").read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log
    steps = [int(r["step"]) for r in step_records(LR2X)]
    crash, resume = EVENTS["lr2x"]["crash"]["after_step"], EVENTS["lr2x"]["resume"]["first_step"]
    assert steps.count(resume) == 2 and steps.count(crash) == 2 and steps.count(crash + 1) == 1
    assert steps[steps.index(crash) + 1] == resume  # the second launch starts over at the resume step


def test_lr2x_injected_spike_and_stall_are_visible() -> None:
    first_launch = {int(r["step"]): r for r in step_records(LR2X) if "time" not in r}
    spike = EVENTS["lr2x"]["loss_spike"]["step"]
    before = [first_launch[s]["loss"] for s in range(spike - 10, spike)]
    assert first_launch[spike]["loss"] > 3 * (sum(before) / len(before))
    stall = EVENTS["lr2x"]["data_stall"]["step"]
    data_ms = {s: r["data_ms"] for s, r in first_launch.items() if s > 1}
    assert max(data_ms, key=data_ms.get) == stall


def test_lr2x_mindformers_log_and_tensorboard() -> None:
    info = (LR2X / "output" / "log" / "rank_0" / "info.log").read_text(encoding="utf-8")
    line = re.compile(
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - \[[^\]]+\] - INFO - \{ Epoch:\[\s*\d+/\s*3\], "
        r"step:\[\s*\d+/\s*100\], loss: [\d.]+, per_step_time: \d+ms, lr: \S+, overflow cond: False, "
        r"loss_scale: 1.0, global_norm: \[[\d.]+\], train_throughput_per_npu: [\d.]+T$",
        re.M,
    )
    assert len(line.findall(info)) == 300 + 60  # launch 1 up to the crash, launch 2 again from 201
    assert re.search(r"samples/s/p  \d+:\d\d:\d\d \}$", info, re.M)  # progress line

    from tensorboardX.proto import event_pb2

    files = sorted((LR2X / "tensorboard" / "rank_0").glob("events.out.tfevents.*"))
    assert len(files) == 2
    tags = set()
    for path in files:
        for body in records(path):
            event = event_pb2.Event.FromString(body)
            tags.update(v.tag for v in event.summary.value)
    assert {"loss", "learning-rate", "grad-norm", "throughput", "iteration-time"} <= tags


def test_profiler_sample_is_small_and_parsable() -> None:
    assert sum(p.stat().st_size for p in PROFILER.rglob("*") if p.is_file()) < 1_000_000
    traces = list(PROFILER.glob("profiler_data/*_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json"))
    assert len(traces) == 1
    assert json.loads(traces[0].read_text())  # a non-empty Chrome trace
    assert list(PROFILER.glob("profiler_data/*_ascend_ms/FRAMEWORK/cpu_ms_memory_record_0.txt"))


def test_nan_fixture() -> None:
    steps = step_records(NAN)
    assert [int(r["step"]) for r in steps] == list(range(1, 61))
    facts = json.loads((NAN.parent / "injected_events.json").read_text())["nan"]
    first_nan = facts["first_nan_loss_step"]
    assert all(math.isfinite(r["loss"]) for r in steps[: first_nan - 1])
    assert all(math.isnan(r["loss"]) and math.isnan(r["grad_norm"]) for r in steps[first_nan - 1 :])
    assert len(list((NAN / "checkpoint").glob("*.ckpt"))) == 1


def test_samples_stay_small() -> None:
    assert sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file()) < 8_000_000
