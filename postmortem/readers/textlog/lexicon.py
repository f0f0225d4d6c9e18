"""The text-log lexicon: data only. What a key means (FAMILIES), what a unit is worth (UNITS) and
which free-form writers hand their lines to the field reader (WRITERS).

Everything the field reader (``fields``) matches is built from these three tables, once per
lexicon (``fields.Grammar``): the key pattern from the families' spellings, every unit pattern
(after a value, in parentheses or brackets after a key, in ``s/it`` rates, in a JSON or key=value
key's suffix) from UNITS, the scanner's anchors for free-form lines from WRITERS. Adding a
spelling is one string in its family, a unit one row, a writer one entry (docs/formats/textlogs.md
"Extending the lexicon"; tests/readers/test_textlog_lexicon.py adds one of each in a temporary
module and reads a line with it).

Spellings are regexes, matched case-insensitively as whole keys (not glued to a letter, digit or
``_`` on either side); ``S`` between words is the one separator writers use there (``_``, ``-``,
``.``, a space or nothing: "per_step_time", "per step time", "steptime").
"""

from __future__ import annotations

from dataclasses import dataclass

S = r"[ _\-.]?"  # between the words of a key

ROLES = ("counter", "value", "mark", "ignore")
DIMENSIONS = ("time", "rate", "ratio", "none")


@dataclass(frozen=True)
class Family:
    """One meaning a key can have.

    ``role``: a counter (its value goes to the record's ``tag`` slot: epoch, step, global_step,
    per_epoch, rank), a value (a scalar tagged ``tag``; None: named after each line's own key,
    as a loss part is), a mark (a flag the shapes read; the field reader takes it and keeps
    nothing) or ignore (a key that means something else: a run's best loss, the time left).
    ``strength`` "weak": read as a step's time only beside a step counter and where no strong
    time key is on the line. ``bare``: read with only a space between key and value ("loss 0.2").
    ``hints``: substrings one of which every word starting a key holds; ``words``: short whole
    words that may start one (the tokenizer tries the key pattern only at such words)."""

    name: str
    role: str
    tag: str | None
    spellings: tuple[str, ...]
    dimension: str = "none"
    strength: str = "strong"
    loss: bool = False
    bare: bool = False
    hints: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        assert self.role in ROLES and self.dimension in DIMENSIONS and self.strength in ("strong", "weak"), self


# Order matters twice: families are tried in this order at one place (so the longer "loss scale"
# wins over "loss"), and within a family the first spelling that fits wins.
FAMILIES: tuple[Family, ...] = (
    Family("loss_scale", "value", "loss_scale", (rf"loss{S}scal(?:e|ing)(?:{S}value)?", rf"scale{S}sense", rf"cur{S}scale"),
           hints=("scale", "sense")),
    # a run's summary, not a step's: "best loss: 6.1e-06", "last train loss: 7.4e-06"
    Family("loss_summary", "ignore", None,
           (rf"(?:best|last|final|min(?:imum)?|lowest)(?:{S}(?:train(?:ing)?|eval|val(?:id)?))?(?:{S}mse)?{S}loss",),
           hints=("best", "last", "final", "minimum", "lowest"), words=("min",)),
    # (a word between needs its separator: "value_loss" is no eval loss; "Vali Loss": Informer's validation)
    Family("eval_loss", "value", "eval_loss",
           (rf"(?:eval(?:uation)?|val(?:i|id(?:ation)?)?|test(?:ing)?|dev)(?:[ _\-.][a-z0-9]+)?{S}loss",),
           loss=True, bare=True, hints=("eval", "valid", "test", "dev"), words=("val", "vali")),
    # the loss itself; modifiers the writer puts before it (total, average, train, ...)
    Family("loss", "value", "loss",
           (  # (first: a longer key that starts like the next) PaddlePaddle examples' running mean: "avg loss so far is 0.1097"
            rf"(?:(?:avg|average|mean|running){S})?loss{S}so{S}far",
            rf"(?:total|overall|train(?:ing)?|avg|aver|average|mean|running|smooth(?:ed)?|batch|cur(?:rent)?|step|"
            rf"epoch{S}avg|net|final){S}loss(?:{S}(?:avg|mean|value|val(?=\s*[:=])))?", r"loss(?:es)?(?:_value)?",
            r"(?:平均|训练|总)?损失(?:值|函数值)?"),
           loss=True, bare=True, hints=("loss", "total", "overall", "train", "avg", "aver", "mean", "running", "smooth", "net")),
    # a named part of the loss: lm_loss, box_loss, loss_cls, kl loss, numbered losses ("loss1: 2.14",
    # SciAI cPINNs; "loss_0   0.0348", MindFlow), never a number glued to the key ("loss0.5")
    Family("loss_part", "value", None,
           (r"[a-z][a-z0-9]*(?:[ _][a-z0-9]+)?_loss(?:_[a-z0-9]+)?", r"[a-z][a-z0-9]{0,3}loss", r"loss_[a-z][a-z0-9_]*",
            r"(?:kl|ce|mse|aux|l1|l2|mlm|nsp) loss", r"loss_?\d{1,2}(?!\.\d)"),
           loss=True, words=("ce", "kl", "mse", "aux", "l1", "l2", "mlm", "nsp")),
    # what is left of the run, not a step's time: "left time: 20244.7053s" (Informer's speed line)
    Family("time_left", "ignore", None, (rf"(?:left|remain(?:ing)?){S}time", rf"time{S}(?:left|remain(?:ing)?)", r"eta"),
           dimension="time", hints=("left", "remain"), words=("eta",)),
    # (MindFormers' epoch_end in sink mode: "Per sink_size step time" is the time of sink_size steps)
    Family("epoch_time", "value", "epoch_time",
           (rf"epoch{S}(?:time|cost|duration)(?:{S}cost)?", rf"per{S}sink{S}size{S}step{S}time", rf"time{S}(?:per|of){S}epoch",
            rf"train{S}epoch{S}time", r"每(?:个)?epoch耗时"),
           dimension="time", hints=("epoch", "time", "per")),
    Family("step_time", "value", "step_time",
           (rf"(?:avg|average|mean)?{S}(?:per{S})?(?:step|iter(?:ation)?|batch){S}(?:time|cost)(?:{S}(?:cost|avg|mean))?",
            rf"time{S}(?:per|/){S}(?:step|iter(?:ation)?|batch)", rf"step{S}cost{S}time",
            rf"per{S}step{S}time", rf"(?:ms|s){S}per{S}(?:step|iter(?:ation)?)", r"每(?:个)?step耗时", r"单步耗时",
            # CycleGAN's Reporter: "total cost: 220538.81 ms, per step: 22053.88 ms" (read only with its unit)
            rf"per{S}(?:step|iter(?:ation)?|batch)"),
           dimension="time", hints=("step", "iter", "batch", "per", "cost"), words=("ms", "s")),
    # a time with no "step" in its key: a per-step time only on a line with a step
    Family("time", "value", "step_time",
           (rf"(?:cost|time){S}(?:cost|time)", r"time", r"timer", r"cost", r"interval", rf"elapsed(?:{S}time)?",
            rf"time{S}elapsed", r"耗时", r"用时"),
           dimension="time", strength="weak", hints=("time", "cost", "interval", "elapsed")),
    Family("throughput", "value", "throughput",
           (r"fps", rf"samples?{S}per{S}s(?:ec(?:ond)?)?", rf"tokens?{S}per{S}s(?:ec(?:ond)?)?",
            r"throughput(?:[ _]per[ _](?:npu|device))?"),
           dimension="rate", hints=("fps", "sample", "token", "throughput")),
    Family("lr", "value", "lr", (rf"learning{S}rate", rf"cur(?:rent)?{S}lr", r"lr"), hints=("learning", "cur", "lr")),
    Family("grad_norm", "value", "grad_norm", (rf"(?:global|grad(?:ient)?){S}norm", r"gnorm", r"norm"),
           hints=("global", "grad", "norm")),
    Family("overflow", "mark", "overflow", (rf"overflow(?:{S}cond)?", rf"is{S}overflow"), hints=("overflow",), words=("is",)),
    Family("epoch", "counter", "epoch", (rf"cur(?:rent)?{S}epoch(?:{S}num)?", r"epochs?", r"epcoh", r"ep", r"轮次", r"轮数", r"轮"),
           bare=True, hints=("epoch", "epcoh"), words=("ep",)),
    Family("global_step", "counter", "global_step",
           (rf"global{S}(?:step|iter(?:ation)?)s?", rf"cur(?:rent)?{S}step{S}num", rf"total{S}step"), bare=True,
           hints=("global", "total")),
    Family("steps_per_epoch", "counter", "per_epoch",
           (r"steps(?=\s*[:=])", rf"(?:steps?|iters?){S}per{S}epoch", rf"per{S}epoch{S}size", rf"batch(?:es)?{S}per{S}epoch",
            rf"dataset{S}size"),
           hints=("size",)),
    # (reinforcement learning, MindSpore RL: an episode is the loop's unit, a step like any other)
    Family("step", "counter", "step",
           (r"episodes?", rf"cur(?:rent)?{S}step", rf"step{S}num", r"steps?", r"iter(?:a|ation)?s?", rf"batch(?:{S}(?:idx|id))?",
            r"步数", r"步", r"迭代",
            r"it(?=\s*[:=]\s*\d)"),  # Raissi's PINNs and their copies: "It: 10, Loss: 2.1e-01, Time: 0.11"
           bare=True, hints=("episode", "step", "iter", "batch"), words=("it",)),
    Family("rank", "counter", "rank", (rf"rank(?:{S}id)?", rf"device{S}id", rf"local{S}rank"), bare=True,
           hints=("rank", "device")),
)


@dataclass(frozen=True)
class Unit:
    """One spelling of a unit: a literal (matched case-insensitively, not glued to a letter after
    it), its dimension, the factor to SI (seconds; a rate's is 1) and, for a rate, the tag its
    values take. ``suffix``: a JSON or key=value key ending in ``_<spelling>`` is a time in it
    (``step_ms``)."""

    spelling: str
    dimension: str
    si: float = 1.0
    tag: str | None = None
    suffix: bool = False


UNITS: tuple[Unit, ...] = (
    Unit("ns", "time", 1e-9, suffix=True),
    Unit("us", "time", 1e-6, suffix=True),
    Unit("µs", "time", 1e-6),
    Unit("μs", "time", 1e-6),
    Unit("ms", "time", 1e-3, suffix=True),
    Unit("s", "time", 1.0, suffix=True),
    Unit("sec", "time", 1.0),
    Unit("secs", "time", 1.0),
    Unit("second", "time", 1.0),
    Unit("seconds", "time", 1.0),
    Unit("min", "time", 60.0),
    Unit("mins", "time", 60.0),
    Unit("minute", "time", 60.0),
    Unit("minutes", "time", 60.0),
    Unit("h", "time", 3600.0),
    Unit("hour", "time", 3600.0),
    Unit("hours", "time", 3600.0),
    Unit("毫秒", "time", 1e-3),
    Unit("秒", "time", 1.0),
    Unit("分钟", "time", 60.0),
    # rates printed after their value: "16.54 img/s", "1234 tokens/s", "0.00600 samples/s/p"
    *(Unit(f"{w}/{s}", "rate", tag="samples_per_s") for w in ("sample", "samples", "img", "imgs", "image", "images")
      for s in ("s", "sec")),
    Unit("samples/s/p", "rate", tag="samples_per_s"),
    Unit("sample/s/p", "rate", tag="samples_per_s"),
    Unit("samples/sec/p", "rate", tag="samples_per_s"),
    Unit("sample/sec/p", "rate", tag="samples_per_s"),
    *(Unit(f"{w}/{s}", "rate", tag="tokens_per_s") for w in ("token", "tokens", "tok") for s in ("s", "sec")),
    Unit("fps", "rate", tag="fps"),
    # steps a second (tqdm's rate once faster than one step a second: "3.40it/s"): the step's time is its inverse
    Unit("it/s", "rate", tag="step_time"),
)


@dataclass(frozen=True)
class Writer:
    """A writer whose lines the field reader takes: the literals one of which its lines hold (the
    C scanner hands such lines back), one real line with where it is from, how its step is counted
    (shapes.STEP_RULES) and the events its lines announce (shapes.Event kinds)."""

    name: str
    anchors: tuple[str, ...]
    example: str
    source: str
    step: str = "global"
    events: tuple[str, ...] = ()


# Anchors are literals (the scanner matches bytes): one entry per case and script a loss word is
# printed in. Order: the first whose anchors a line holds takes it.
WRITERS: tuple[Writer, ...] = (
    # the header line that gives the epoch of the loss lines after it
    Writer("epoch-header", ("Epoch:",), "Epoch: 3 ",
           "https://github.com/2024-MindSpore-1/Code2/blob/3246b0f5436aba370f5848351fc52f7fa482843a/weiweiqing/mindspore-test/"
           "run/results/fru92%20resnet%20backbone%20full%20transform.txt#L1-L36 (corpus b-code2-weiweiqing-fru92-1: the header "
           "above `2023-08-07 15:56:18 - loss: 4.521990  [    0/  437]`)"),
    Writer("epoch-header-lower", ("epoch ",), "[2023-03-08 10:53:11]: epoch 1",
           "https://github.com/mindspore-ai/models/blob/eab643f51336dbf7d711f02d27e6516e5affee59/research/recommend/user/"
           "README.md#L170-L184 (corpus a-models-nete-1: NETE running.log, the header above `rating loss 18.0558 | text loss "
           "9.9066 | total loss 9.9066 on train`)"),
    Writer("epoch-header-title", ("Epoch ",), "Epoch 1",
           "https://github.com/mindspore-ai/docs/blob/9e844dc65dc5ef4381574e8b6ec2f93f9681f720/tutorials/source_en/beginner/"
           "train.md#L202-L247 (corpus a-ms-tut-train-1: the header above `loss: 2.302806  [  0/938]`)"),
    # (also the lines of counters whose loss is on a line below: MindChemistry's "==========step: 0 ,epoch: 0"
    # above "train mse loss: 0.8999285", joined in parse.pair_halves)
    Writer("counters", ("epoch:",),
           "2022-02-13 13:58:33.898547, epoch:0/15, iter-719000/731560, aver loss:1.5836, cur loss:1.1664, acc_aver:0.7349",
           "https://github.com/mindspore-ai/models/blob/eab643f51336dbf7d711f02d27e6516e5affee59/official/audio/EcapaTDNN/"
           "README.md#L272-L275 (corpus a-models-ecapa-1)"),
    Writer("loss", ("loss",), "  traing coarse net, step: 10 loss:1.606946, time cost: 0.051651954650878906",
           "https://github.com/mindspore-ai/models/blob/eab643f51336dbf7d711f02d27e6516e5affee59/research/cv/DepthNet/"
           "README.md#L197-L205 (corpus a-models-depthnet-1)"),
    Writer("Loss", ("Loss",), "1601it [05:38,  4.76it/s][40/40][1600/1664] Loss_D: 16.2060 Loss_G: 1.7243",
           "https://github.com/mindspore-courses/applications/blob/a95393b9106d4e88d7cf6d6826d5f437a0acf7ce/animeganv2/"
           "readme.md#L176-L178 (corpus b-apps-animegan-readme-1)"),
    Writer("LOSS", ("LOSS",),
           "2023-02-28 11:19:19,452 - INFO - EPOCH: 0 ITER: 200.0/692.2578125 EPS: 4765.57 LOSS: 5.8117 METRIC: 0.0000",
           "https://github.com/2023-MindSpore-4/Code12/blob/a217eb629d983f608bc70e15457986f2c863f9c8/wulianwei/"
           "DRG_Text%20Style%20Transfer_MindSpore_Code/working_dir/train_log (corpus b-code12-drg-trainlog-1)"),
    Writer("损失", ("损失",), "  进度: 12.5% | 迭代: 125/1000 | 损失: 0.693147 | 已用时: 3.2s | 预计剩余: 22.4s",
           "rebuilt from a user's print format string in public GitHub code: f\"\\r  进度: {progress:.1f}% | 迭代: "
           "{iteration+1}/{total_iterations} | 损失: {loss:.6f} | 已用时: {elapsed:.1f}s | 预计剩余: {eta:.1f}s\""),
    # a line naming the rank of the records after it (pix2pix's train.py prints `print("Device ID :", str(rank))`
    # before each record: several devices' prints interleaved in one log)
    Writer("rank-header", ("Device ID",), "Device ID : 3",
           "https://github.com/mindspore-courses/applications/blob/a95393b9106d4e88d7cf6d6826d5f437a0acf7ce/pix2pix/readme.md"
           "#L131-L146 (corpus b-apps-pix2pix-readme-2: the line above `ms per step : 11.199 epoch:  1 / 200 step:  100 / 400 "
           "Dloss:  0.227907 Gloss:  27.540344`; the writer: pix2pix/src/train.py#L112)"),
)
