"""The training callback's cost per step on the CPU (bench/README.md: "The training callback").

    python bench/callback_overhead.py [--steps 20000] [--train-steps 1500]

Runs MindSpore itself (the callback's cost is in the training process; the reading path never
imports MindSpore). Two measurements:

1. hooks: MindSpore's own RunContext and InternalCallbackParam, a real Tensor as the network's
   output; on_train_step_begin + on_train_step_end called `--steps` times, writing to a real file
   in a temp folder: the cost per step of the hooks alone, with device values read every step
   (read_every=1) and every 100 steps (read_every=100: host times only on the other steps).
2. training: Model.train of a small Dense network, `--train-steps` steps of a few ms, with and
   without the callback, interleaved (3 runs each): the time spent inside the callback's step hooks
   per step (perf_counter around them), and the per-step medians of each (their difference is the
   overhead as training sees it, and is noise-dominated on a shared machine).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mindspore as ms  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402
from mindspore.dataset import NumpySlicesDataset  # noqa: E402
from mindspore.train import Callback, Model  # noqa: E402
from mindspore.train.callback._callback import InternalCallbackParam, RunContext  # noqa: E402

from postmortem.callback import PostmortemCallback  # noqa: E402


def hooks(steps: int, read_every: int, folder: Path) -> float:
    net = nn.Dense(8, 1)
    cb = InternalCallbackParam()
    cb.cur_step_num, cb.cur_epoch_num, cb.epoch_num, cb.batch_num = 0, 1, 1, steps
    cb.network, cb.optimizer, cb.train_dataset, cb.dataset_sink_mode = net, None, None, False
    cb.train_dataset_element = (Tensor(np.zeros((4, 8), np.int32)),)
    cb.net_outputs = (Tensor(np.float32(2.5)), Tensor(False), Tensor(np.float32(1024.0)), Tensor(np.float32(1e-4)),
                      Tensor(np.float32(0.7)))
    ctx = RunContext(cb)
    rec = PostmortemCallback(folder / f"r{read_every}", read_every=read_every)
    rec.on_train_begin(ctx)
    rec.on_train_epoch_begin(ctx)
    cb.cur_step_num = 1
    rec.on_train_step_begin(ctx)  # the header
    rec.on_train_step_end(ctx)
    t0 = time.perf_counter()
    for step in range(2, steps + 2):
        cb.cur_step_num = step
        rec.on_train_step_begin(ctx)
        rec.on_train_step_end(ctx)
    per_step = (time.perf_counter() - t0) / steps
    rec.on_train_end(ctx)
    assert not rec._dead
    return per_step


class Timed(PostmortemCallback):
    """The callback with the time spent in its step hooks summed (perf_counter around super())."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.per_step: list[float] = []
        self._step = 0.0

    def on_train_step_begin(self, run_context):
        t0 = time.perf_counter()
        super().on_train_step_begin(run_context)
        self._step = time.perf_counter() - t0

    def on_train_step_end(self, run_context):
        t0 = time.perf_counter()
        super().on_train_step_end(run_context)
        self.per_step.append(self._step + time.perf_counter() - t0)


class StepClock(Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_step_end(self, run_context):
        self.ends.append(time.perf_counter())


def training(steps: int, with_callback: bool, folder: Path, read_every: int = 100) -> tuple[float, list[float] | None]:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((steps * 32, 256), dtype=np.float32), rng.standard_normal((steps * 32, 1), dtype=np.float32)
    ds = NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(32)
    net = nn.SequentialCell(nn.Dense(256, 512), nn.ReLU(), nn.Dense(512, 1))
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 1e-3))
    clock = StepClock()
    timed = Timed(folder / "train", read_every=read_every) if with_callback else None
    model.train(1, ds, callbacks=[clock] + ([timed] if timed else []), dataset_sink_mode=False)
    gaps = np.diff(np.array(clock.ends[10:]))  # past compile and warm-up
    return float(np.median(gaps)), (timed.per_step[10:] if timed else None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--train-steps", type=int, default=1500)
    args = ap.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for read_every in (1, 100):
            best = min(hooks(args.steps, read_every, folder) for _ in range(3))
            print(f"hooks, read_every={read_every}: {best * 1e6:.1f} us per step (best of 3, {args.steps} steps)")
        runs = {False: [], True: []}
        inside = []
        for with_callback in (False, True, False, True, False, True):
            step, spent = training(args.train_steps, with_callback, folder)
            runs[with_callback].append(step)
            if spent is not None:
                inside.extend(spent)
        without, with_ = statistics.median(runs[False]), statistics.median(runs[True])
        mean, median, p99 = float(np.mean(inside)), float(np.median(inside)), float(np.percentile(inside, 99))
        print(f"training (read_every=100): time in the callback's hooks per step: mean {mean * 1e6:.1f} us "
              f"({mean / without:.2%} of the median step), median {median * 1e6:.1f} us, p99 {p99 * 1e6:.1f} us; "
              f"median step without {without * 1e3:.3f} ms, "
              f"with {with_ * 1e3:.3f} ms ({(with_ - without) * 1e6:+.1f} us; interleaved, 3 runs each)")


if __name__ == "__main__":
    main()
