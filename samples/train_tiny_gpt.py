"""Train a tiny GPT-style causal LM with MindSpore on the CPU, the way a small real job would.

Launched by ``make_samples.py`` once per launch, with the run folder as working directory and
stdout/stderr going to ``train.log``. Everything it writes into the run folder is what MindSpore,
tensorboardX or the user's own callback writes during a real run. The ``--inject-*`` flags put
known events into the run (loss spike, data stall, crash, NaN) so a postmortem can be checked
against facts that are known in advance; they only change the data or stop the process.

Reads the architecture, batch, optimizer and schedule from ``config.yaml`` (MindFormers layout).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import math
import sys
import time
from pathlib import Path

import numpy as np
import yaml

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import Normal, initializer
from mindspore.dataset import GeneratorDataset
from mindspore.nn.learning_rate_schedule import LearningRateSchedule
from mindspore.train import (
    Callback,
    CheckpointConfig,
    LossMonitor,
    Model,
    ModelCheckpoint,
    SummaryCollector,
    TimeMonitor,
)

# --------------------------------------------------------------------------- model


class Block(nn.Cell):
    """Pre-LN transformer block with causal multi-head self-attention."""

    def __init__(self, hidden: int, heads: int, seq: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.ln1 = nn.LayerNorm((hidden,))
        self.qkv = nn.Dense(hidden, 3 * hidden)
        self.proj = nn.Dense(hidden, hidden)
        self.ln2 = nn.LayerNorm((hidden,))
        self.fc1 = nn.Dense(hidden, 4 * hidden)
        self.fc2 = nn.Dense(4 * hidden, hidden)
        self.act = nn.GELU()
        causal = np.triu(np.full((seq, seq), -1e4, dtype=np.float32), k=1)
        self.causal = Tensor(causal)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def construct(self, x):
        b, t, c = x.shape
        q, k, v = ops.split(self.qkv(self.ln1(x)), c, axis=-1)
        q = q.reshape(b, t, self.heads, self.head_dim).transpose(0, 2, 1, 3)
        k = k.reshape(b, t, self.heads, self.head_dim).transpose(0, 2, 3, 1)
        v = v.reshape(b, t, self.heads, self.head_dim).transpose(0, 2, 1, 3)
        att = ops.softmax(ops.matmul(q, k) * self.scale + self.causal, axis=-1)
        y = ops.matmul(att, v).transpose(0, 2, 1, 3).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class TinyGPT(nn.Cell):
    """Token + learned position embedding, N blocks, final LN, LM head tied to the embedding."""

    def __init__(self, vocab: int, hidden: int, layers: int, heads: int, seq: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden, embedding_table=Normal(0.02))
        self.position = Parameter(initializer(Normal(0.02), (seq, hidden)), name="position_embedding")
        self.blocks = nn.CellList([Block(hidden, heads, seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm((hidden,))

    def construct(self, tokens):
        x = self.embedding(tokens) + self.position
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        return ops.matmul(x, self.embedding.embedding_table.T)


class LMLoss(nn.Cell):
    """Next-token cross entropy averaged over positions where loss_mask is set."""

    def __init__(self, net: TinyGPT, vocab: int) -> None:
        super().__init__()
        self.net = net
        self.vocab = vocab

    def construct(self, tokens, loss_mask):
        logits = self.net(tokens[:, :-1])
        ce = ops.cross_entropy(
            logits.reshape(-1, self.vocab), tokens[:, 1:].reshape(-1), reduction="none"
        )
        mask = loss_mask.reshape(-1)
        return (ce * mask).sum() / mask.sum()


class WarmupCosine(LearningRateSchedule):
    """Linear warm-up to peak, then cosine decay to min_lr at total_steps."""

    def __init__(self, peak: float, min_lr: float, warmup: int, total: int) -> None:
        super().__init__()
        self.peak, self.min_lr = peak, min_lr
        self.warmup, self.total = float(warmup), float(total)

    def construct(self, global_step):
        step = global_step.astype(ms.float32)
        warm = self.peak * (step + 1.0) / self.warmup
        progress = ops.clip_by_value((step - self.warmup) / (self.total - self.warmup), 0.0, 1.0)
        cosine = self.min_lr + 0.5 * (self.peak - self.min_lr) * (1.0 + ops.cos(math.pi * progress))
        return ops.select(step < self.warmup, warm, cosine)


class TrainStep(nn.Cell):
    """One optimizer step that also returns the global grad norm and the lr this step used.

    The norm is taken from the very gradients handed to the optimizer (no clipping), and the lr
    is the schedule evaluated at the optimizer's own global_step before it increments it.
    """

    def __init__(self, net_with_loss: nn.Cell, optimizer: nn.Optimizer, schedule: LearningRateSchedule):
        super().__init__(auto_prefix=False)
        self.network = net_with_loss
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.schedule = schedule
        self.grad = ops.GradOperation(get_by_list=True)
        self.scalar_summary = ops.ScalarSummary()

    def construct(self, tokens, loss_mask):
        loss = self.network(tokens, loss_mask)
        grads = self.grad(self.network, self.weights)(tokens, loss_mask)
        grad_norm = ops.sqrt(ops.addn([ops.reduce_sum(g * g) for g in grads]))
        lr = self.schedule(self.optimizer.global_step)
        self.scalar_summary("lr", lr)
        self.scalar_summary("grad_norm", grad_norm)
        loss = ops.depend(loss, self.optimizer(grads))
        return loss, grad_norm, lr


# --------------------------------------------------------------------------- data


class MarkovTokens:
    """Noisy first-order Markov text: next = perm[current] with prob 1-noise, else uniform.

    Learnable (loss falls towards the chain's entropy, ~0.6 nats for noise 0.1) and fully
    determined by (seed, global step), so a resumed launch sees the same batches again.
    Iterated once per epoch; yields single samples that ``.batch()`` groups per step.
    """

    def __init__(self, cfg: dict, args: argparse.Namespace, first_epoch: int) -> None:
        model = cfg["model"]["model_config"]
        self.vocab = model["vocab_size"]
        self.seq = model["seq_length"]
        self.batch = cfg["runner_config"]["batch_size"]
        self.steps_per_epoch = args.steps_per_epoch
        self.seed = cfg["seed"]
        self.perm = np.random.default_rng(self.seed).permutation(self.vocab)
        self.epoch = first_epoch  # 0-based epoch the next __iter__ produces
        self.args = args

    def __len__(self) -> int:
        return self.steps_per_epoch * self.batch

    def _sequence(self, rng: np.random.Generator) -> np.ndarray:
        tokens = np.empty(self.seq + 1, dtype=np.int32)
        tokens[0] = rng.integers(self.vocab)
        noise = rng.random(self.seq) < 0.1
        random_next = rng.integers(self.vocab, size=self.seq)
        for i in range(self.seq):
            tokens[i + 1] = random_next[i] if noise[i] else self.perm[tokens[i]]
        return tokens

    def __iter__(self):
        epoch = self.epoch
        self.epoch += 1
        for i in range(self.steps_per_epoch):
            step = epoch * self.steps_per_epoch + i + 1  # global step that will consume this batch
            rng = np.random.default_rng([self.seed, step])
            if step == self.args.inject_stall_step:
                time.sleep(self.args.inject_stall_s)  # slow storage / preprocessing
            for _ in range(self.batch):
                tokens = self._sequence(rng)
                if step == self.args.inject_spike_step:
                    tokens = rng.integers(self.vocab, size=self.seq + 1).astype(np.int32)
                mask = np.ones(self.seq, dtype=np.float32)
                if self.args.inject_nan_from and step >= self.args.inject_nan_from:
                    mask[0] = np.nan  # a corrupted loss-mask column
                yield tokens, mask


# --------------------------------------------------------------------------- callbacks


def _now() -> str:
    return dt.datetime.now().isoformat(sep=" ", timespec="milliseconds")


class StepLogger(Callback):
    """The user's own per-step log line, plus MindFormers-style monitor lines and tensorboardX."""

    def __init__(self, cfg: dict, args: argparse.Namespace, train_cell: TrainStep) -> None:
        super().__init__()
        model = cfg["model"]["model_config"]
        self.seq = model["seq_length"]
        self.batch = cfg["runner_config"]["batch_size"]
        self.epochs = cfg["runner_config"]["epochs"]
        self.steps_per_epoch = args.steps_per_epoch
        self.args = args
        self.cell = train_cell
        self.flops_per_step = flops_per_token(model) * self.batch * self.seq
        self.prev_end: float | None = None
        self.step_begin = 0.0
        self.losses: list[float] = []
        self.mf_logger = mindformers_logger() if args.mindformers_log else None
        self.tb = None
        if args.tensorboard:
            from tensorboardX import SummaryWriter

            self.tb = SummaryWriter(logdir="tensorboard/rank_0")

    def on_train_begin(self, run_context) -> None:
        self.prev_end = time.time()

    def on_train_step_begin(self, run_context) -> None:
        self.step_begin = time.time()

    def on_train_step_end(self, run_context) -> None:
        end = time.time()
        cb = run_context.original_args()
        loss, grad_norm, lr = (float(t.asnumpy().reshape(-1)[0]) for t in cb.net_outputs)
        step = int(self.cell.optimizer.global_step.asnumpy().reshape(-1)[0])  # global step, survives a resume
        step_s = end - self.prev_end
        data_ms = (self.step_begin - self.prev_end) * 1000.0
        self.prev_end = end
        tokens_per_s = self.batch * self.seq / step_s
        fields = {
            "step": step,
            "epoch": cb.cur_epoch_num,
            "loss": round(loss, 6),
            "lr": float(f"{lr:.6e}"),
            "grad_norm": round(grad_norm, 6),
            "step_ms": round(step_s * 1000.0, 3),
            "data_ms": round(data_ms, 3),
            "tokens_per_s": round(tokens_per_s, 1),
        }
        if self.args.json_log:
            print(json.dumps({"time": _now(), **fields}), flush=True)
        else:
            print(_now(), " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)
        if self.mf_logger is not None:
            self._mindformers_lines(step, loss, lr, grad_norm, step_s)
        if self.tb is not None:
            self.tb.add_scalar("loss", loss, global_step=step)
            self.tb.add_scalar("learning-rate", lr, global_step=step)
            self.tb.add_scalar("grad-norm", grad_norm, global_step=step)
            self.tb.add_scalar("throughput", self.batch / step_s, global_step=step)
            self.tb.add_scalar("iteration-time", step_s * 1000.0, global_step=step)
            self.tb.flush()
        if self.args.inject_crash_after and step == self.args.inject_crash_after:
            raise RuntimeError(
                f"Worker 0 lost its device during step {step + 1}: the process must restart from a checkpoint."
            )

    def _mindformers_lines(self, step: int, loss: float, lr: float, grad_norm: float, step_s: float) -> None:
        epoch = (step - 1) // self.steps_per_epoch + 1
        in_epoch = (step - 1) % self.steps_per_epoch + 1
        self.losses.append(loss)
        tflops = self.flops_per_step / step_s / 1e12
        self.mf_logger.info(
            "{ Epoch:[%3d/%3d], step:[%5d/%5d], loss: %5.3f, per_step_time: %dms, lr: %s, "
            "overflow cond: %s, loss_scale: %s, global_norm: %s, train_throughput_per_npu: %.3fT",
            epoch, self.epochs, in_epoch, self.steps_per_epoch, loss, int(step_s * 1000),
            np.float32(lr), False, 1.0, np.array([grad_norm], dtype=np.float32), tflops,
        )
        total = self.epochs * self.steps_per_epoch
        percent = 100.0 * step / total
        show_str = ("|%%-%ds|" % 50) % (int(50 * percent / 100) * "█")
        remain = dt.timedelta(seconds=int((total - step) * step_s))
        self.mf_logger.info("  %4.1f%% %s %.5f samples/s/p  %s }", percent, show_str, self.batch / step_s, remain)

    def on_train_end(self, run_context) -> None:
        if self.tb is not None:
            self.tb.close()


class ProfileSteps(Callback):
    """The MindSpore 2.x profiler driven by a schedule: skip `skip` steps, record `active` steps."""

    def __init__(self, skip: int, active: int) -> None:
        super().__init__()
        from mindspore.profiler import ProfilerActivity, schedule, tensorboard_trace_handler

        self.prof = ms.profiler.profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=0, warmup=0, active=active, repeat=1, skip_first=skip),
            on_trace_ready=tensorboard_trace_handler("./profiler_data"),
            profile_memory=True,
        )

    def on_train_begin(self, run_context) -> None:
        self.prof.start()

    def on_train_step_end(self, run_context) -> None:
        self.prof.step()

    def on_train_end(self, run_context) -> None:
        self.prof.stop()


class CallerPathFilter(logging.Filter):
    """MindFormers' logger prints the source location relative to the package root."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.where = "mindformers/core/callback/callback.py:529"
        return True


def mindformers_logger() -> logging.Logger:
    log_dir = Path("output/log/rank_0")
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_dir / "info.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s - [%(where)s] - %(levelname)s - %(message)s"))
    handler.addFilter(CallerPathFilter())
    logger = logging.getLogger("mindformers")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    logger.propagate = False
    return logger


def flops_per_token(model: dict) -> float:
    """PaLM appendix B: 6N + 12*L*H*Q*T, N without position embeddings (tied head counted once)."""
    h, layers, v, t = model["hidden_size"], model["num_layers"], model["vocab_size"], model["seq_length"]
    per_layer = 12 * h * h + 13 * h  # qkv+proj+mlp weights and biases, two LayerNorms
    n = layers * per_layer + v * h + 2 * h
    return 6.0 * n + 12.0 * layers * h * t


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="config.yaml")
    p.add_argument("--steps-per-epoch", type=int, default=100)
    p.add_argument("--resume-ckpt", default="", help="checkpoint to resume from (train cell incl. optimizer)")
    p.add_argument("--mindformers-log", action="store_true", help="also write output/log/rank_0/info.log")
    p.add_argument("--tensorboard", action="store_true", help="also write tensorboard/rank_0 with tensorboardX")
    p.add_argument("--profile", default="", help="START:ACTIVE, profile ACTIVE steps after START into profiler_data/")
    p.add_argument("--no-checkpoint", action="store_true", help="leave out ModelCheckpoint")
    p.add_argument("--json-log", action="store_true", help="print the per-step line as JSON")
    p.add_argument("--flops-collector", action="store_true", help="add FlopsUtilizationCollector")
    p.add_argument("--inject-spike-step", type=int, default=0, help="feed uniform random tokens at this step")
    p.add_argument("--inject-stall-step", type=int, default=0, help="data source sleeps before this step")
    p.add_argument("--inject-stall-s", type=float, default=0.4)
    p.add_argument("--inject-crash-after", type=int, default=0, help="raise after this global step")
    p.add_argument("--inject-nan-from", type=int, default=0, help="NaN in the loss mask from this step")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text())
    model_cfg = cfg["model"]["model_config"]
    runner = cfg["runner_config"]
    sched = cfg["lr_schedule"]
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    ms.set_seed(cfg["seed"])
    ms.dataset.config.set_prefetch_size(2)  # small queue so a data stall is not hidden by prefetch

    net = TinyGPT(
        model_cfg["vocab_size"], model_cfg["hidden_size"], model_cfg["num_layers"],
        model_cfg["num_heads"], model_cfg["seq_length"],
    )
    total_steps = runner["epochs"] * args.steps_per_epoch
    schedule = WarmupCosine(sched["learning_rate"], sched["min_lr"], sched["warmup_steps"], total_steps)
    opt_cfg = cfg["optimizer"]
    optimizer = nn.AdamWeightDecay(
        net.trainable_params(), learning_rate=schedule, beta1=opt_cfg["beta1"], beta2=opt_cfg["beta2"],
        eps=opt_cfg["eps"], weight_decay=opt_cfg["weight_decay"],
    )
    train_cell = TrainStep(LMLoss(net, model_cfg["vocab_size"]), optimizer, schedule)

    initial_epoch = 0
    if args.resume_ckpt:
        params = ms.load_checkpoint(args.resume_ckpt)
        initial_epoch = int(params["epoch_num"].asnumpy().reshape(-1)[0])
        not_loaded, _ = ms.load_param_into_net(train_cell, params)
        print(f"Resumed from {args.resume_ckpt} at epoch {initial_epoch}, "
              f"global_step {int(optimizer.global_step.asnumpy().reshape(-1)[0])}; not loaded: {not_loaded}", flush=True)

    source = MarkovTokens(cfg, args, initial_epoch)
    dataset = GeneratorDataset(source, ["tokens", "loss_mask"], shuffle=False, num_parallel_workers=1,
                               python_multiprocessing=False)
    dataset = dataset.batch(runner["batch_size"], drop_remainder=True)

    ckpt_cfg = CheckpointConfig(
        save_checkpoint_steps=cfg["callbacks"]["save_checkpoint_steps"],
        keep_checkpoint_max=cfg["callbacks"]["keep_checkpoint_max"],
        append_info=["epoch_num", "step_num"],
    )
    lineage = {
        "seq_length": model_cfg["seq_length"], "hidden_size": model_cfg["hidden_size"],
        "num_layers": model_cfg["num_layers"], "num_heads": model_cfg["num_heads"],
        "vocab_size": model_cfg["vocab_size"], "peak_lr": float(sched["learning_rate"]),
        "warmup_steps": sched["warmup_steps"],
    }
    callbacks: list[Callback] = [
        SummaryCollector(
            summary_dir="summary", collect_freq=1, custom_lineage_data=lineage,
            collect_specified_data={
                "histogram_regular": "^blocks.0.fc1.weight$",
                "collect_input_data": False,
                "collect_landscape": None,  # loss-landscape ckpts would be ~120 KB per step
            },
        ),
        LossMonitor(),
        TimeMonitor(data_size=args.steps_per_epoch, data_time=True),
    ]
    if not args.no_checkpoint:
        callbacks.append(ModelCheckpoint(prefix="tiny_gpt", directory="checkpoint", config=ckpt_cfg))
    if args.flops_collector:
        from mindspore.train.callback import FlopsUtilizationCollector

        callbacks.append(FlopsUtilizationCollector(data_size=args.steps_per_epoch, computility=1e12))
    callbacks.append(StepLogger(cfg, args, train_cell))
    if args.profile:
        callbacks.append(ProfileSteps(*(int(x) for x in args.profile.split(":"))))

    model = Model(train_cell)
    model.train(runner["epochs"], dataset, callbacks=callbacks, dataset_sink_mode=False,
                initial_epoch=initial_epoch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
