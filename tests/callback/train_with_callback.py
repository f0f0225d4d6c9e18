"""Train a tiny causal LM with MindSpore 2.10 on the CPU, recorded by postmortem's callback.

Run by tests/callback/test_callback.py in subprocesses (MindSpore never enters the test process).
Each ``--run OUT_DIR[:options]`` is one Model.train (one launch) into its own output folder; several
runs share one process so the tests pay MindSpore's import once. Options (comma-separated):
``steps=N``, ``stall=STEP/SECONDS`` (the dataset generator waits until training has used the
batches before, then sleeps before yielding that step's batch), ``raise=STEP`` (the generator raises at that step: a crash Model.train sees),
``kill=STEP`` (os._exit at that step: a crash nothing sees), ``sink=N`` (the callback's sink_size),
``read=N`` (its read_every), ``ms_sink=N`` (Model.train asked for sink mode with sink_size N), ``dir=PATH`` (the callback's output folder, if not OUT_DIR),
``launch=ID`` (the launch id, as a launcher sets POSTMORTEM_LAUNCH_ID), ``yaml=FILE`` (the callback
built by MindFormers' build_callback from the yaml's ``callbacks:``, after ``import postmortem.mindformers``).

What the training itself measured goes to OUT_DIR/../<name>.facts.json (outside the run folder):
every step's begin (by a callback before postmortem's) and end (by one after it) on the wall clock,
and each stall's start and end. With MS_ROLE set (MindSpore's dynamic cluster: a scheduler and
workers on the CPU) the process initialises the real communicator first, and trains data parallel.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn
from mindspore.dataset import GeneratorDataset
from mindspore.train import Callback, Model

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the postmortem under test
VOCAB, HIDDEN, SEQ, BATCH = 64, 16, 8, 4


class TinyLM(nn.Cell):
    """Embedding, one MLP block, an LM head; returns the mean next-token loss."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.fc1 = nn.Dense(HIDDEN, 4 * HIDDEN)
        self.act = nn.GELU()
        self.fc2 = nn.Dense(4 * HIDDEN, HIDDEN)
        self.head = nn.Dense(HIDDEN, VOCAB)
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, tokens, labels):
        x = self.embedding(tokens)
        x = x + self.fc2(self.act(self.fc1(x)))
        logits = self.head(x).reshape((-1, VOCAB))
        return self.loss(logits, labels.reshape((-1,)))


class TrainStep(nn.Cell):
    """One training step that returns what MindFormers' train cells return: (loss, overflow,
    loss scale, lr, global norm), with a static loss scale (MindSpore's own loss-scale cell needs
    the NPU's float status)."""

    def __init__(self, net, optimizer, scale: float = 1024.0) -> None:
        super().__init__(auto_prefix=False)
        self.net, self.optimizer = net, optimizer
        self.weights = optimizer.parameters
        self.grad = ms.ops.GradOperation(get_by_list=True, sens_param=True)
        self.scale = Tensor(scale, ms.float32)

    def construct(self, tokens, labels):
        loss = self.net(tokens, labels)
        grads = self.grad(self.net, self.weights)(tokens, labels, self.scale.astype(loss.dtype))
        grads = ms.ops.HyperMap()(ms.ops.partial(ms.ops.mul, 1.0 / self.scale), grads)
        norm = ms.ops.sqrt(ms.ops.addn([ms.ops.reduce_sum(g * g) for g in grads]))
        overflow = ms.ops.logical_not(ms.ops.isfinite(norm))
        loss = ms.ops.depend(loss, self.optimizer(grads))
        return loss, overflow, self.scale, self.optimizer.get_lr(), norm


class Facts(Callback):
    """The test's own clock: `first` goes before postmortem's callback, the other after it."""

    def __init__(self, facts: dict, first: bool) -> None:
        super().__init__()
        self.facts, self.first = facts, first

    def on_train_step_begin(self, run_context):
        if self.first:
            self.facts["begin"].append(time.time())

    def on_train_step_end(self, run_context):
        if not self.first:
            cb = run_context.original_args()
            self.facts["end"].append(time.time())
            self.facts["step"].append(int(cb.cur_step_num))
            self._save()

    def _save(self):
        save(self.facts)


_SAVING = threading.Lock()


def save(facts: dict) -> None:
    """Whole or not at all: the dataset's thread and the training loop both save."""
    with _SAVING:
        tmp = Path(facts["path"] + ".tmp")
        tmp.write_text(json.dumps(facts))
        os.replace(tmp, facts["path"])


def options(spec: str) -> tuple[Path, dict]:
    out, _, rest = spec.partition(":")
    opts = {}
    for part in filter(None, rest.split(",")):
        key, _, value = part.partition("=")
        opts[key] = value
    return Path(out), opts


def train(out: Path, opts: dict, rank: int, size: int) -> None:
    from postmortem.callback import PostmortemCallback

    steps = int(opts.get("steps", 12))
    stall_step, stall_s = (int(opts["stall"].split("/")[0]), float(opts["stall"].split("/")[1])) if "stall" in opts else (0, 0.0)
    raise_at, kill_at = int(opts.get("raise", 0)), int(opts.get("kill", 0))
    facts = {"path": str(out.parent / f"{out.name}.rank{rank}.facts.json"), "begin": [], "end": [], "step": [],
             "stall": [], "rank": rank}
    rng = np.random.default_rng(rank)

    def batches():
        for i in range(1, steps + 1):
            if i in (stall_step, raise_at, kill_at):  # the pipeline runs ahead: wait until training has caught up
                deadline = time.time() + 30
                while len(facts["end"]) < i - 2 and time.time() < deadline:
                    time.sleep(0.001)
            if i == stall_step:
                t0 = time.time()
                time.sleep(stall_s)
                facts["stall"].append([i, t0, time.time()])
            if i == raise_at:
                raise RuntimeError(f"injected crash at step {i}")
            if i == kill_at:
                save(facts)
                os._exit(3)
            tokens = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1), dtype=np.int32)
            yield tokens[:, :-1], tokens[:, 1:]

    class Batches:
        """An iterable with a length: MindSpore counts a bare generator by running it through once."""

        def __iter__(self):
            return batches()

        def __len__(self):
            return steps

    dataset = GeneratorDataset(Batches(), ["tokens", "labels"], shuffle=False)
    net = TinyLM()
    lr = nn.piecewise_constant_lr([steps // 2, steps + 1], [0.01, 0.005])
    optimizer = nn.Adam(net.trainable_params(), learning_rate=lr)
    cell = TrainStep(net, optimizer)
    model = Model(cell)
    args = {"steps": steps, "batch_size": BATCH, "seq_length": SEQ, "api_key": "s3cr3t-value", "hf_token": "hf_abc",
            "parallel_config": {"data_parallel": size, "model_parallel": 1, "pipeline_stage": 1, "micro_batch_num": 1}}
    if opts.get("launch"):  # a launch id given by the launcher (all ranks of a launch may share one)
        os.environ["POSTMORTEM_LAUNCH_ID"] = opts["launch"]
    if opts.get("yaml"):  # as MindFormers builds it: by name, from a yaml's callbacks list
        import postmortem.mindformers  # noqa: F401
        from mindformers.core import build_callback
        from mindformers.tools.register import MindFormerConfig

        os.environ["LOCAL_DEFAULT_PATH"] = str(out)  # MindFormers' output folder
        recorder = build_callback(MindFormerConfig(opts["yaml"]).callbacks)[0]
    else:
        recorder = PostmortemCallback(opts.get("dir", out), args=args, sink_size=int(opts["sink"]) if "sink" in opts else None,
                                      read_every=int(opts.get("read", 1)), flush_every=4)
    os.environ.pop("POSTMORTEM_LAUNCH_ID", None)
    callbacks = [Facts(facts, True), recorder, Facts(facts, False)]
    try:
        if opts.get("ms_sink"):  # asks Model.train for sink mode: the CPU trains without (MindSpore logs so)
            model.train(1, dataset, callbacks=callbacks, dataset_sink_mode=True, sink_size=int(opts["ms_sink"]))
        else:
            model.train(1, dataset, callbacks=callbacks, dataset_sink_mode=False)
    except RuntimeError as exc:
        facts["crashed"] = str(exc)
    save(facts)


def main() -> None:
    ms.set_context(mode=ms.PYNATIVE_MODE if os.environ.get("PM_PYNATIVE") else ms.GRAPH_MODE, device_target="CPU")
    rank, size = 0, 1
    if os.environ.get("MS_ROLE"):
        from mindspore.communication import get_group_size, get_rank, init

        init()
        if os.environ["MS_ROLE"] == "MS_SCHED":
            return
        rank, size = get_rank(), get_group_size()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=size)
    runs = [a for a in sys.argv[1:]]
    for spec in runs:
        out, opts = options(spec)
        out.mkdir(parents=True, exist_ok=True)
        train(out, opts, rank, size)


if __name__ == "__main__":
    main()
