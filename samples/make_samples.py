"""Regenerate the shipped sample runs (and, with --fixtures, the small test runs).

    python samples/make_samples.py             # samples/gpt-tiny-base, samples/gpt-tiny-lr2x, samples/profiler-cpu
    python samples/make_samples.py --fixtures  # tests/fixtures/runs/nan

Each launch is a real MindSpore training process (``train_tiny_gpt.py``) started with the run
folder as working directory and its stdout/stderr appended to ``train.log``, as a job tee would.
The facts about injected events are written to ``samples/injected_events.json``, never into a run
folder: a run folder holds only what a real run leaves behind. This file does not import
mindspore; only the launched training processes do.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TRAIN = HERE / "train_tiny_gpt.py"
FIXTURES = REPO / "tests" / "fixtures" / "runs"

STEPS_PER_EPOCH = 100
EPOCHS = 3
BASE_LR = 3.0e-3
SPIKE_STEP = 150  # Run B: this step's batch is uniform random tokens
STALL_STEP = 120  # Run B: the data source sleeps STALL_S before yielding this step's batch
STALL_S = 1.0  # the pipeline reads ~10 steps ahead, which hides part of the sleep
CRASH_AFTER = 260  # Run B: launch 1 raises right after this global step
RESUME_CKPT = "checkpoint/tiny_gpt-2_100.ckpt"  # Run B: launch 2 resumes from global step 200
PROFILE_SKIP, PROFILE_ACTIVE = 5, 3  # profiler sample: steps 6-8 are recorded
NAN_FROM = 40  # fixture: NaN in the loss mask from this step on


def config(*, lr: float, epochs: int, vocab: int = 128, hidden: int = 32, heads: int = 4,
           layers: int = 2, save_steps: int = 50, keep_max: int = 3) -> dict:
    """A MindFormers-style run config: what the training script actually reads."""
    return {
        "seed": 1234,
        "run_mode": "train",
        "output_dir": "./output",
        "model": {
            "arch": {"type": "TinyGPT"},
            "model_config": {
                "type": "GPT2Config",
                "num_layers": layers,
                "hidden_size": hidden,
                "num_heads": heads,
                "seq_length": 32,
                "vocab_size": vocab,
                "compute_dtype": "float32",
                "param_init_type": "float32",
                "tie_word_embeddings": True,
            },
        },
        "runner_config": {"batch_size": 8, "epochs": epochs, "sink_mode": False, "gradient_accumulation_steps": 1},
        "parallel_config": {"data_parallel": 1, "model_parallel": 1, "pipeline_stage": 1, "micro_batch_num": 1},
        "optimizer": {"type": "AdamWeightDecay", "beta1": 0.9, "beta2": 0.95, "eps": 1.0e-8, "weight_decay": 0.01},
        "lr_schedule": {"type": "WarmUpCosine", "learning_rate": lr, "min_lr": lr / 10, "warmup_steps": 30},
        "callbacks": {"save_checkpoint_steps": save_steps, "keep_checkpoint_max": keep_max},
        "context": {"mode": "GRAPH_MODE", "device_target": "CPU"},
    }


def launch(run_dir: Path, *flags: str) -> int:
    """One training process; returns its exit code (a crashed launch is expected to fail)."""
    with open(run_dir / "train.log", "a", encoding="utf-8") as log:
        proc = subprocess.run([sys.executable, str(TRAIN), "--config", "config.yaml", *flags],
                              cwd=run_dir, stdout=log, stderr=subprocess.STDOUT, check=False)
    return proc.returncode


def fresh_run(run_dir: Path, cfg: dict) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)  # closed summaries/ckpts are 0400; rmtree copes
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


# --------------------------------------------------------------------------- facts from the logs

KV_LINE = re.compile(r"^\S+ \S+ (step=\d+ .*)$")


def step_records(run_dir: Path) -> list[dict]:
    """The user callback's per-step records, key=value and JSON lines, in file order."""
    records = []
    for line in (run_dir / "train.log").read_text(encoding="utf-8").splitlines():
        if line.startswith("{") and '"step"' in line:
            records.append(json.loads(line))
        elif m := KV_LINE.match(line):
            records.append({k: float(v) for k, v in (p.split("=", 1) for p in m.group(1).split())})
    return records


def checkpoint_facts(run_dir: Path) -> list[dict]:
    """Training checkpoints left in checkpoint/, with the global step each one holds."""
    facts = []
    for path in sorted((run_dir / "checkpoint").glob("*.ckpt")):
        m = re.fullmatch(r"(.+)-(\d+)_(\d+)\.ckpt", path.name)
        assert m, path.name
        epoch, in_epoch = int(m.group(2)), int(m.group(3))
        facts.append({"file": f"checkpoint/{path.name}", "prefix": m.group(1), "epoch": epoch,
                      "step_in_epoch": in_epoch, "global_step": (epoch - 1) * STEPS_PER_EPOCH + in_epoch})
    return sorted(facts, key=lambda f: (f["global_step"], f["file"]))


# --------------------------------------------------------------------------- runs


def make_base() -> dict:
    run = HERE / "gpt-tiny-base"
    fresh_run(run, config(lr=BASE_LR, epochs=EPOCHS))
    t0 = time.time()
    rc = launch(run, "--steps-per-epoch", str(STEPS_PER_EPOCH), "--flops-collector")
    assert rc == 0, f"base run failed, see {run / 'train.log'}"
    records = step_records(run)
    return {
        "folder": run.name,
        "peak_lr": BASE_LR,
        "steps": [int(records[0]["step"]), int(records[-1]["step"])],
        "launches": 1,
        "checkpoints": checkpoint_facts(run),
        "final_loss": records[-1]["loss"],
        "generation_s": round(time.time() - t0, 1),
    }


def make_lr2x() -> dict:
    run = HERE / "gpt-tiny-lr2x"
    fresh_run(run, config(lr=2 * BASE_LR, epochs=EPOCHS))
    t0 = time.time()
    common = ["--steps-per-epoch", str(STEPS_PER_EPOCH), "--mindformers-log", "--tensorboard"]
    rc1 = launch(run, *common, "--inject-spike-step", str(SPIKE_STEP), "--inject-stall-step", str(STALL_STEP),
                 "--inject-stall-s", str(STALL_S), "--inject-crash-after", str(CRASH_AFTER))
    assert rc1 != 0, "launch 1 was meant to crash"
    ckpts_at_crash = checkpoint_facts(run)
    time.sleep(2.0)  # a relaunch takes a moment; also gives the new summary file a later stamp
    rc2 = launch(run, *common, "--resume-ckpt", RESUME_CKPT, "--json-log")
    assert rc2 == 0, f"resumed launch failed, see {run / 'train.log'}"

    records = step_records(run)
    first = [r for r in records if "time" not in r]  # launch 1 printed key=value, launch 2 JSON
    by_step = {int(r["step"]): r for r in first}
    stall = max(first, key=lambda r: r["data_ms"])
    prev_losses = [by_step[s]["loss"] for s in range(SPIKE_STEP - 10, SPIKE_STEP)]
    return {
        "folder": run.name,
        "peak_lr": 2 * BASE_LR,
        "steps": [int(records[0]["step"]), int(records[-1]["step"])],
        "launches": 2,
        "loss_spike": {
            "step": SPIKE_STEP,
            "how": "every sample of this step's batch is uniform random tokens",
            "loss": by_step[SPIKE_STEP]["loss"],
            "mean_loss_prev_10": round(sum(prev_losses) / len(prev_losses), 6),
            "grad_norm": by_step[SPIKE_STEP]["grad_norm"],
        },
        "data_stall": {
            "step": STALL_STEP,
            "how": f"the data source sleeps {STALL_S} s before yielding this step's first sample",
            "sleep_s": STALL_S,
            "observed_max_data_ms_step": int(stall["step"]),
            "observed_data_ms": stall["data_ms"],
            "observed_step_ms": stall["step_ms"],
        },
        "crash": {
            "after_step": CRASH_AFTER,
            "how": "launch 1 raises RuntimeError in a callback after this step; traceback in train.log",
            "checkpoints_at_crash": ckpts_at_crash,
        },
        "resume": {
            "from_checkpoint": RESUME_CKPT,
            "from_global_step": 200,
            "first_step": 201,
            "repeated_steps": [201, CRASH_AFTER],
            "how": "launch 2 loads the train cell (weights + optimizer state + global_step) with "
                   "load_checkpoint/load_param_into_net and trains epoch 3 again (initial_epoch=2)",
            "user_log_format": "launch 1 prints key=value lines, launch 2 prints JSON lines",
        },
        "checkpoints": checkpoint_facts(run),
        "final_loss": records[-1]["loss"],
        "generation_s": round(time.time() - t0, 1),
    }


def make_nan_fixture() -> dict:
    run = FIXTURES / "nan"
    fresh_run(run, config(lr=BASE_LR, epochs=1, vocab=64, hidden=16, heads=2, save_steps=50, keep_max=1))
    t0 = time.time()
    rc = launch(run, "--steps-per-epoch", "60", "--inject-nan-from", str(NAN_FROM))
    assert rc == 0, f"nan fixture failed, see {run / 'train.log'}"
    records = step_records(run)
    first_nan = next(int(r["step"]) for r in records if r["loss"] != r["loss"])
    return {"folder": "tests/fixtures/runs/nan", "steps": [1, 60], "nan_from_step": NAN_FROM,
            "first_nan_loss_step": first_nan, "checkpoints": checkpoint_facts(run),
            "generation_s": round(time.time() - t0, 1)}


def make_profiler_sample() -> dict:
    run = HERE / "profiler-cpu"
    fresh_run(run, config(lr=BASE_LR, epochs=1))
    t0 = time.time()
    # no ModelCheckpoint: a 12-step profiling job, and the folder must stay under 1 MB
    rc = launch(run, "--steps-per-epoch", "12", "--profile", f"{PROFILE_SKIP}:{PROFILE_ACTIVE}", "--no-checkpoint")
    assert rc == 0, f"profiler run failed, see {run / 'train.log'}"
    return {"folder": run.name, "steps": [1, 12],
            "profiled_steps": [PROFILE_SKIP + 1, PROFILE_SKIP + PROFILE_ACTIVE],
            "profiler_dirs": sorted(p.name for p in (run / "profiler_data").iterdir()),
            "generation_s": round(time.time() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", action="store_true", help="regenerate tests/fixtures/runs/ instead")
    parser.add_argument("--only", choices=["base", "lr2x", "profiler"], help="regenerate one sample only")
    args = parser.parse_args(argv)

    if args.fixtures:
        facts = {"nan": make_nan_fixture()}
        (FIXTURES / "injected_events.json").write_text(json.dumps(facts, indent=2) + "\n")
        print(json.dumps(facts, indent=2))
        return 0

    events_path = HERE / "injected_events.json"
    facts = json.loads(events_path.read_text()) if events_path.exists() else {}
    facts["schema_version"] = 1
    steps = {"base": make_base, "lr2x": make_lr2x, "profiler": make_profiler_sample}
    for name, make in steps.items():
        if args.only in (None, name):
            facts[name] = make()
            print(f"{name}: {facts[name]['generation_s']} s", flush=True)
    events_path.write_text(json.dumps(facts, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
