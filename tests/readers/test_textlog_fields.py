"""Lines read by their fields (readers/textlog/fields.py) and each file's inference (textlog): the
lexicon's families, separators, value forms and units on real lines of the mined corpus
(tests/fixtures/logcorpus), and what is inferred across a file, each said in data quality.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from postmortem.model import Artifact
from postmortem.readers import textlog
from postmortem.readers.textlog import fields as logfields, parse as logparse, shapes as logshapes


def fields(line: str) -> logfields.FieldRecord | None:
    return logfields.read(logfields.normalise(line))


def read_text(tmp_path: Path, text: str, name: str = "train.log"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return textlog.READER.read(Artifact(path=str(p), rel=name, size=p.stat().st_size, mtime=0.0, rank=None))


def loss(r) -> list[tuple[int, float]]:
    df = r.tables["scalars"].filter(pl.col("tag") == "loss")
    return list(zip(df["step"].to_list(), df["value"].to_list()))


def variants(r) -> set[str]:
    return {d.variant for d in r.diagnostics if d.slug in ("log-inferred", "log-steps-per-epoch")}


def test_every_spelling_of_the_lexicon_is_reached():
    """keys() only tries the key pattern where a word holds a hint: each family's spellings must be found."""
    samples = {
        "loss": ["loss", "total_loss", "avg loss", "aver loss", "cur loss", "train_loss", "Loss", "LOSS", "损失"],
        "loss_part": ["lm_loss", "G_loss", "loss_cls", "Dloss", "kl loss"],
        "eval_loss": ["val_loss", "eval loss", "test loss", "val mse loss", "Vali Loss"],
        "loss_summary": ["best loss", "last train loss"],
        "loss_scale": ["loss_scale", "loss scale value", "scale_sense"],
        "epoch": ["epoch", "Epoch", "EPOCH", "ep", "cur_epoch", "epcoh", "轮次"],
        "step": ["step", "iter", "iteration", "batch", "cur_step", "Episode", "步数"],
        "global_step": ["global_step", "current step num", "cur_step_num"],
        "steps_per_epoch": ["steps per epoch", "per epoch size", "dataset_size"],
        "step_time": ["per step time", "step time", "step cost", "avg step time", "time per step", "ms per step",
                      "step_time_avg"],
        "time": ["time", "cost", "time cost", "elapsed", "interval", "耗时"],
        "epoch_time": ["epoch time", "epoch cost", "Per sink_size step time"],


        "epoch_time": ["epoch time", "epoch cost"],
        "time_left": ["left time", "time left", "remaining time", "eta"],
        "throughput": ["fps", "throughput"],
        "lr": ["lr", "learning rate", "cur_lr"],
        "grad_norm": ["grad_norm", "global_norm", "gnorm"],
        "overflow": ["overflow cond", "overflow"],
        "rank": ["rank", "rank_id", "device_id", "local_rank"],
    }
    for family, spellings in samples.items():
        for sp in spellings:
            text = f", {sp}: 1"
            found = [(fam, text[start:end]) for start, end, fam in logfields.keys(text)]
            assert found and found[0] == (family, sp), (family, sp, found)


def test_no_key_holds_a_stop_character():
    """keys() keeps KEY_RE's answer per window ending at the first KEY_STOP character: that is
    exact only if KEY_RE never consumes one (it may look at one, in a lookahead)."""
    from re import _constants as c, _parser as p

    def consumed(items, out):
        for op, av in items:
            if op in (c.ASSERT, c.ASSERT_NOT):
                continue  # lookarounds look, they consume nothing
            if op is c.LITERAL:
                out.append(lambda ch, av=av: ord(ch) == av or ord(ch.lower()) == av or ord(ch.upper()) == av)
            elif op is c.NOT_LITERAL:
                out.append(lambda ch, av=av: ord(ch) != av)
            elif op is c.ANY:
                out.append(lambda ch: True)
            elif op is c.IN:
                out.append(lambda ch, av=av: any(logfields.re.fullmatch(p_, ch, logfields.re.I) for p_ in [_class(av)]))
            elif op is c.BRANCH:
                for b in av[1]:
                    consumed(b, out)
            elif op is c.SUBPATTERN:
                consumed(av[-1], out)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                consumed(av[2], out)
            elif op is c.ATOMIC_GROUP:
                consumed(av, out)
        return out

    def _class(items):  # an IN node back as a character class
        parts, neg = [], ""
        for op, av in items:
            if op is c.NEGATE:
                neg = "^"
            elif op is c.LITERAL:
                parts.append(logfields.re.escape(chr(av)))
            elif op is c.RANGE:
                parts.append(f"{logfields.re.escape(chr(av[0]))}-{logfields.re.escape(chr(av[1]))}")
            elif op is c.CATEGORY:
                parts.append({c.CATEGORY_DIGIT: r"\d", c.CATEGORY_SPACE: r"\s", c.CATEGORY_WORD: r"\w",
                              c.CATEGORY_NOT_DIGIT: r"\D", c.CATEGORY_NOT_SPACE: r"\S", c.CATEGORY_NOT_WORD: r"\W"}[av])
        return f"[{neg}{''.join(parts)}]"

    tests = consumed(p.parse(logfields.GRAMMAR.key_re.pattern, logfields.re.I), [])
    assert len(tests) > 50
    for ch in logfields.KEY_STOP:
        assert not any(t(ch) for t in tests), ch
    # and the window gives what KEY_RE gives, on lines that differ only after a stop character
    for text in ("epoch: 1, step: 5, loss is loss:5.0", "loss_value(ms) = 3", "per step time: 5ms", "G_loss:1 D_loss:2"):
        for start, end, fam in logfields.keys(text):
            m = logfields.GRAMMAR.key_re.match(text, start)
            assert (m.end(), logfields.GRAMMAR.family_of[int(m.lastgroup[1:])]) == (end, fam)


def test_the_digits_a_pattern_spells_are_in_the_form():
    """A line's form keeps the digits after a letter or "_" ("l1 loss", "top_1"), an isolated ".0"
    and whether mpirun's "[1," prefix matches; a pattern spelling a digit anywhere else would
    need the form to keep it too."""
    from re import _constants as c, _parser as p

    def digits(items, out, prev=None):
        for op, av in items:
            if op is c.LITERAL and chr(av).isdigit():
                word = prev is not None and ((prev[0] is c.LITERAL and (chr(prev[1]).isalpha() or chr(prev[1]) == "_"))
                                             or prev[0] is c.MAX_REPEAT)  # (top_?1: after an optional "_")
                out.append((chr(av), "word" if word else chr(prev[1]) if prev and prev[0] is c.LITERAL else "?"))
            elif op is c.BRANCH:
                for b in av[1]:
                    digits(b, out, prev)
            elif op is c.SUBPATTERN:
                digits(av[-1], out, prev)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                digits(av[2], out, prev)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                digits(av[1], out, prev)
            prev = (op, av)
        return out

    spelled = set()
    for name in ("KEY_RE", "VALUE_RE", "RATE_RE", "RANK_PREFIX_RE", "BARE_PROGRESS_RE", "_SEP_AFTER", "DOUBLE_PROGRESS_RE",
                 "GLUED_COUNTER_RE", "SUFFIX_COUNTER_RE", "SEC_PER_IT_RE", "ZH_EPOCH_RE", "ZH_STEP_RE", "EVAL_WORDS",
                 "EVAL_AFTER", "EVAL_DICT", "TOKEN_RE"):
        pat = getattr(logfields.GRAMMAR, name.lower()) if hasattr(logfields.GRAMMAR, name.lower()) else getattr(logfields, name)
        spelled |= {(name, d, where) for d, where in digits(p.parse(pat.pattern, pat.flags), []) if where != "word"}
    assert spelled == {("VALUE_RE", "0", "."), ("RANK_PREFIX_RE", "1", "[")}


def test_a_line_read_by_its_form_is_read_as_alone():
    """read() decides once per form (the line with its digits as 0, but for the digits a pattern
    spells): a line whose form was decided from another line reads as if it were read first."""
    import dataclasses
    import random

    rnd = random.Random(5)
    lines = ["[1,3]<stdout>: epoch: 1 step: 3 loss: 0.5", "l1 loss: 0.3, step 4", "{'top_1': 0.5, 'loss': 1.3}",
             "epoch: 1.0, step: 200.0, loss: 2.0", "ITER: 255.0/692.25 LOSS: 1.0", "G12_loss: 1.0 D_loss: 2",
             "eval 12 loss: 3.0", "box 12_loss: 3 step: 4", "step_0: loss=3.59", "1epoch 2iter loss: 3",
             "Epoch[19] [755/1250] step cost: 509.00 ms, G_loss: 3.46, D_loss: 0.13",
             "epoch: 1, step: 5, loss is loss:5.049500, epoch time: 250005.000ms, per step time: 505.000",
             "[43/1200][755/937][23] Loss_D: -2.134102 Loss_G: -33.761238",
             "Epoch 26:  45%|####5     | 5/1000 [00:10<00:12, 44.1it/s, loss=3.042]",
             "第 3 轮 第 100 步 损失: 0.25", "2021-12-04 14:29:25,504:INFO:epoch[12], iter[12505], loss:3.9, 482.50 imgs/sec"]
    seen = 0
    for line in lines:
        first = logfields.normalise(line)
        for digits in ("0", "1", None, None, None):
            other = "".join((digits or rnd.choice("0123456789")) if c in "0123456789" else c for c in first)
            logfields.GRAMMAR.forms.clear()
            alone = logfields.read(other)
            logfields.GRAMMAR.forms.clear()
            logfields.read(first)  # decides the form, when it is the same
            seen += logfields.read(other) is not None
            after = logfields.read(other)
            assert (alone and dataclasses.asdict(alone)) == (after and dataclasses.asdict(after)), (first, other)
    assert seen > 40


@pytest.mark.parametrize(
    "line, epoch, step, total, values",
    [
        # separators: ' is ', ':', '=', full-width, brackets, '-' before a counter, runs of spaces
        ("epoch: 1 step: 223, loss is 2.8705792", 1, 223, None, {"loss": 2.8705792}),
        ("epoch:0/15, iter-719000/731560, aver loss:1.5836, cur loss:1.1664", 0, 719000, 731560, {"loss": 1.1664}),
        ("Date time:  2021-04-13 13:55:39         epoch:  0 / 20         step:  50 / 10010        Dloss:  0.21959287",
         0, 50, 10010, {"loss": 0.21959287}),
        ("loss_g:12.06, loss_d:0.49, loss_idt_b\uff1a1.87", None, None, None, {"loss": 12.06, "loss_idt_b": 1.87}),
        ("epoch[0], iter[100], loss:(Tensor(shape=[], dtype=Float32, value= 50.2733), Tensor(shape=[], dtype=Bool, "
         "value= False)), cur_lr:0.000660, mean_fps:743.09 imgs/sec", 0, 100, None, {"loss": 50.2733, "lr": 0.00066}),
        # value forms: [cur/mean], glued to the next word, a float counter, a bare [s/N], two brackets
        ("epoch: [  0/200], step:[  624/  625], loss:[5.258/5.258], time:[140412.236], lr:[0.100]", 0, 624, 625,
         {"loss": 5.258}),
        ("epoch: [0/1] step: [40/5004], loss is 7.078993Epoch time: 3438.972 ms, fps: 1488 img/sec.", 0, 40, 5004,
         {"loss": 7.078993}),
        ("EPOCH: 0 ITER: 200.0/692.2578125 EPS: 4765.57 LOSS: 5.8117 METRIC: 0.0000", 0, 200, 693, {"loss": 5.8117}),
        ("loss: 2.302806  [  0/938]", None, 0, 938, {"loss": 2.302806}),
        ("[0/1200][230/937][23] Loss_D: -379.555344 Loss_G: -33.761238", 0, 230, 937, {"loss": -379.555344}),
        ("1epoch 1iter loss_G=27.5 loss_D=27.5 0.30s/it", 1, 1, None, {"loss": 27.5, "step_time": 0.3}),
        ("step_0: loss=3.5922117", None, 0, None, {"loss": 3.5922117}),
        ("{'loss': 0.1826, 'learning_rate': 4.577586206896552e-05, 'epoch': 1.0}", 1, None, None, {"loss": 0.1826}),
        # units: suffix glued or spaced, in the key, unitless (ms, settled later)
        ("epoch: 2, step: 250, loss is loss:0.090041, epoch time: 60457.911ms, per step time: 241.832ms", 2, 250, None,
         {"loss": 0.090041, "epoch_time": 60.457911, "step_time": 0.241832}),
        ("ms per step:532.31   epoch:1/100  step:0/25  Dloss:0.6940  Gloss:38.1245", 1, 0, 25,
         {"step_time": 0.53231, "loss": 0.694}),
        ("epoch 1/100 step 2/133, loss = 0.027709303, step_time_avg = 6.66 secs", 1, 2, 133, {"step_time": 6.66}),
        ("  traing coarse net, step: 10 loss:1.606946, time cost: 0.051651954650878906", None, 10, None,
         {"loss": 1.606946, "step_time": 0.051651954650878906e-3}),
    ],
)
def test_a_line_is_read_by_its_fields(line, epoch, step, total, values):
    r = fields(line)
    assert r is not None and r.has_loss
    assert (r.epoch, r.step, r.steps_total) == (epoch, step, total)
    got = {}
    for tag, _, value in r.values:
        got.setdefault(tag, value)
    for tag, value in values.items():
        assert got.get(tag) == pytest.approx(value), (tag, got)


@pytest.mark.parametrize(
    "line",
    [
        "Overflow detected, the loss scale is reduced: loss_scale 65536.0 -> 32768.0",
        "the loss is decreasing",
        "  loss: CrossEntropyLoss",
        "loss: 9.6.7",  # glued to more digits: no value
        "INFO:root:best loss: 6.1306587e-06",
    ],
)
def test_lines_that_are_no_record(line):
    r = fields(line)
    assert r is None or not r.has_loss


def test_evaluation_lines_are_kept_apart():
    assert fields("Epoch 5, train loss 0.23, val loss 0.3").values[:2] == [("loss", "train loss", 0.23),
                                                                           ("eval_loss", "val loss", 0.3)]
    r = fields("[2023-03-08 10:53:23]: rating loss 16.7847 | text loss 9.9074 | total loss 26.6921 on valid")
    assert r.eval and not any(t == "loss" for t, _, _ in r.values)


def test_in_epoch_steps_zero_based_epochs_and_printed_totals(tmp_path):
    text = "".join(f"epoch: [{e:3d}/200], step:[{s:5d}/  625], loss:[{e + s / 1000:.3f}/1.0], lr:[0.100]\n"
                   for e in (0, 1) for s in (312, 624))
    r = read_text(tmp_path, text)
    assert [s for s, _ in loss(r)] == [312, 624, 937, 1249]  # (e+1-1)*625 + s
    assert "epoch-0-based-lines" in variants(r) or "epoch-0-based" in variants(r)


def test_a_step_that_goes_on_across_epochs_is_global(tmp_path):
    text = "".join(f"epoch[{e}], iter[{i}], loss:{5 - i / 1000:.3f}, per step time:{100 + i % 3}ms\n"
                   for e, i in ((0, 100), (0, 200), (1, 300), (2, 400)))
    r = read_text(tmp_path, text)
    assert [s for s, _ in loss(r)] == [100, 200, 300, 400]
    assert "step-global" in variants(r)


def test_no_counter_gives_ordinals_and_says_so(tmp_path):
    r = read_text(tmp_path, "train loss: 2.5\ntrain loss: 2.25\ntrain loss: 2.0\n")
    assert loss(r) == [(1, 2.5), (2, 2.25), (3, 2.0)] and "ordinal" in variants(r)
    # one such line is no record (not a run): said as unread
    r = read_text(tmp_path, "train loss: 2.5\n", "one.log")
    assert loss(r) == [] and any(d.slug == "log-loss-unread" for d in r.diagnostics)


def test_interleaved_ranks_by_order_of_appearance(tmp_path):
    text = "".join(f"time: 2021-07-24 02:08:33, epoch: {e}, step: 31, loss is {v}\n"
                   for e in (10, 11) for v in (0.5 + e / 100, 0.6 + e / 100))
    r = read_text(tmp_path, text)
    df = r.tables["scalars"].filter(pl.col("tag") == "loss")
    assert df.group_by("rank").len().sort("rank")["len"].to_list() == [2, 2]
    assert df.filter(pl.col("rank") == 0)["value"].to_list() == [0.6, 0.61]
    assert "ranks-order" in variants(r)


def test_ranks_printed_by_a_grep_prefix(tmp_path):
    text = ("train_parallel0/log:epoch: 1 step: 97, loss is 1.9060308\ntrain_parallel0/log:epcoh: 2 step: 97, loss is "
            "1.6003821\ntrain_parallel1/log:epoch: 1 step: 97, loss is 1.7095519\n")
    r = read_text(tmp_path, text)
    df = r.tables["scalars"].filter(pl.col("tag") == "loss")
    assert df.filter(pl.col("rank") == 0)["step"].to_list() == [97, 194]
    assert df.filter(pl.col("rank") == 1)["value"].to_list() == [1.7095519]


def test_unitless_step_times_are_settled_by_the_wall_clock(tmp_path):
    seconds = "".join(f"2024-05-08 10:00:{2 * i:02d},000 INFO step {i}, loss: {3 - i / 10}, time: 2.0\n" for i in range(1, 6))
    r = read_text(tmp_path, seconds, "s.log")
    st = r.tables["scalars"].filter(pl.col("tag") == "step_time")["value"].to_list()
    assert st == [pytest.approx(2.0)] * 5 and "unit-s" in variants(r)
    millis = seconds.replace("time: 2.0", "time: 2000.0")
    r = read_text(tmp_path, millis, "ms.log")
    assert r.tables["scalars"].filter(pl.col("tag") == "step_time")["value"].to_list() == [pytest.approx(2.0)] * 5
    assert "unit-ms-clock" in variants(r)


def test_a_tqdm_bar_redrawn_at_one_step_is_one_record(tmp_path):
    bar = "Epoch 1: {p:3d}%|#   | {s}/1000 [00:10<00:12, 44.1it/s, loss={v}]"
    line = "\r".join([bar.format(p=1, s=10, v=0.9), bar.format(p=1, s=10, v=0.8), bar.format(p=2, s=20, v=0.7)])
    r = read_text(tmp_path, line + "\n")
    assert loss(r) == [(10, 0.8), (20, 0.7)]


def test_a_loss_like_line_no_record_took_warns(tmp_path):
    r = read_text(tmp_path, "epoch: 1 step: 1, loss is 2.5\nsomething loss: [1 2\n")
    d = [d for d in r.diagnostics if d.slug == "log-loss-unread"]
    assert d and d[0].params["n"] == 1 and "something loss" in d[0].params["line"] and d[0].severity == "warning"


def test_the_lexicon_anchors_reach_the_fields_reader():
    rec = logparse.Records()
    logparse.parse_line("2023-02-28 11:19:19,452 - INFO - EPOCH: 0 ITER: 200.0/692.2578125 LOSS: 5.8117", 1, rec, {})
    assert rec.recognised == {"fields:LOSS": 1} and len(rec.fields) == 1
    assert all(w in logshapes.anchors() for w in logshapes.FIELD_WORDS)


# --------------------------------------------------------------------------- summaries and evaluations
# (branch summaries, issue 21: lines that are an epoch's or a run's summary, or an evaluation's,
# are no training step record; real lines of the mined corpus, cited by id)

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "logcorpus"


def tags(r) -> dict[str, list[tuple[int, float]]]:
    df = r.tables["scalars"]
    out: dict[str, list] = {}
    for step, tag, value in zip(df["step"].to_list(), df["tag"].cast(pl.Utf8).to_list(), df["value"].to_list()):
        out.setdefault(tag, []).append((step, value))
    return out


def test_a_word_after_an_eval_word_needs_its_separator():
    # b-mindrl-iql-1: "value_loss" is the critic's value loss, no validation loss
    r = fields("Episode 5: critic_loss is 0.559, actor_loss is -0.3, value_loss is 0.079,mean_std is 0.184,per_step_time 16.027 ms,")
    assert not r.eval and [v for t, _, v in r.values if t == "loss"] == [0.559]
    assert fields("epoch 3, val_mse_loss: 0.2").values == [("eval_loss", "val_mse_loss", 0.2)]


def test_one_eval_loss_per_evaluation_line():
    # a-models-nete-1: the total is the evaluation's loss, its components are parts of it
    r = fields("[2023-03-08 10:53:23]: rating loss 16.7847 | text loss 9.9074 | total loss 26.6921 on valid")
    assert [(t, v) for t, _, v in r.values] == [("eval_loss_avg", 16.7847), ("eval_loss_avg", 9.9074), ("eval_loss", 26.6921)]
    # b-wwq-mindflow-kno-1: two plain losses, the first printed
    r = fields("Eval epoch: 10, recons loss: 4.7650219457864295e-05, relative pred loss: 0.01156728882342577")
    assert [t for t, _, _ in r.values] == ["eval_loss", "eval_loss_avg"]


def test_a_meter_printed_after_its_key_has_the_key_s_rank():
    # b-code7-centerface-8p-1: 'avg_loss:' + an AverageMeter printing "loss:<avg>", then the step's loss
    r = fields("2021-07-06 16:00:45,600:INFO:epoch:1, iter:1, avg_loss:loss:1017.134613, loss:762.4346313476562, "
               "overflow:False, loss_scale:1024.0")
    assert [(t, v) for t, _, v in r.values if t.startswith("loss")][:2] == [("loss_avg", 1017.134613), ("loss", 762.4346313476562)]


def test_mindspore_lite_epoch_dot_step_counter_and_epoch_means(tmp_path):
    # a-lite-train-lenet-1 (lite/src/train/loss_monitor.cc prints "<epoch>.<step>:\tLoss is X" and
    # "Epoch (<epoch>):\tLoss is <mean>"): "1.1000:" is epoch 1 step 1000, not the float 1.1
    r = fields("1.1000: Loss is 0.460352")
    assert (r.epoch, r.step) == (1, 1000)
    text = ("1.900:  Loss is 0.493\n1.1800: Loss is 0.0698758\nEpoch (1):      Loss is 0.384778\n"
            "Epoch (1):      Training Accuracy is 0.8702\n2.900:  Loss is 0.0480734\n2.1800: Loss is 0.12081\n"
            "Epoch (2):      Loss is 0.176118\n")
    r = read_text(tmp_path, text)
    assert loss(r) == [(900, 0.493), (1800, 0.0698758), (2700, 0.0480734), (3600, 0.12081)]  # the means are no records
    assert "summary" in variants(r) and "eval_loss" not in tags(r)


def test_mindformers_sink_summary_beside_the_monitor_lines():
    # a-mf-llama13b-2node-1: MFLossMonitor.epoch_end prints "Per sink_size step time ... avg loss" after each sink
    r = textlog.READER.read(Artifact(path=str(CORPUS / "a/logs/a-mf-llama13b-2node-1.log"), rel="x.log", size=1,
                                     mtime=0.0, rank=None))
    t = tags(r)
    assert t["loss"] == [(804, 0.762), (808, 0.702), (812, 0.739)]  # the avg loss of each sink is no record
    assert (804, pytest.approx(27.443713)) in t["epoch_time"]  # the sink's time, at its last step
    # the monitor's "time:27421.790 ms" is the 4-step sink's: the summary's per step time is the step's
    assert [v for s, v in t["step_time"] if s == 804] == [pytest.approx(6.860928)] * 2
    assert {"summary", "sink-time"} <= variants(r) and "ordinal" not in variants(r)


def test_timemonitor_style_epoch_summary_beside_the_monitor_lines(tmp_path):
    # a-ms-tut-fgsm-r18-1
    text = ("    Epoch:[  0/  5], step:[ 1875/ 1875], loss:[0.094/0.094], time:2345.947 ms, lr:0.01000\n"
            "    Epoch time: 3680.524 ms, per step time: 1.963 ms, avg loss: 0.094\n"
            "    Epoch:[  1/  5], step:[ 1875/ 1875], loss:[0.323/0.323], time:1250.154 ms, lr:0.01000\n"
            "    Epoch time: 1250.843 ms, per step time: 0.667 ms, avg loss: 0.323\n")
    r = read_text(tmp_path, text)
    assert loss(r) == [(1875, 0.094), (3750, 0.323)]
    assert tags(r)["epoch_time"] == [(1875, pytest.approx(3.680524)), (3750, pytest.approx(1.250843))]
    assert [v for s, v in tags(r)["step_time"] if s == 1875] == [pytest.approx(0.001963)] * 2  # time:2345.947 ms is the sink's


def test_a_record_s_own_step_time_is_kept_beside_a_summary(tmp_path):
    # the same lines in non-sink mode: the record's time is one step's (under twice the summary's per step time)
    text = ("    Epoch:[  0/  5], step:[ 1875/ 1875], loss:[0.094/0.094], time:2.1 ms, lr:0.01000\n"
            "    Epoch time: 3680.524 ms, per step time: 1.963 ms, avg loss: 0.094\n")
    r = read_text(tmp_path, text)
    assert tags(r)["step_time"][0] == (1875, pytest.approx(0.0021)) and "sink-time" not in variants(r)


def test_a_trainer_s_run_summary_is_no_record(tmp_path):
    # b-mindnlp-blenderbot-copa-2: mindnlp's Trainer logs speed_metrics("train") and train_loss (the run's mean) once
    line = ("{'train_runtime': 11591.6409, 'train_samples_per_second': 6.211, 'train_steps_per_second': 1.553, "
            "'train_loss': 0.002952050690849622, 'epoch': 10.0}")
    assert fields(line).summary
    text = ("{'loss': 0.0004, 'learning_rate': 1e-05, 'epoch': 9.0}\n{'loss': 0.0002, 'learning_rate': 0.0, 'epoch': 10.0}\n"
            + line + "\n")
    r = read_text(tmp_path, text)
    # (its runtime x steps per second: 18002 steps over 10 epochs; the records, an epoch apart, at multiples of 1800)
    assert loss(r) == [(16200, 0.0004), (18000, 0.0002)] and {"summary", "epoch-fraction"} <= variants(r)
    # without the summary the whole-number epochs are the steps, as before
    r = read_text(tmp_path, text.replace(line + "\n", ""), "no-summary.log")
    assert loss(r) == [(9, 0.0004), (10, 0.0002)]


def test_a_tqdm_bar_with_an_accuracy_is_an_evaluation(tmp_path):
    # a-ms-nb-sentiment-1 (the tutorial's evaluate() sets loss and acc on its bar; tqdm sorts the keys)
    train = "Epoch 0: 100%|| 273/273 [00:30<00:00,  9.00it/s, loss=0.674]"
    test = "Epoch 0: 100%|| 117/117 [00:12<00:00,  9.43it/s, acc=0.511, loss=0.692]"
    assert not fields(train).eval and fields(test).eval
    r = read_text(tmp_path, train + "\n" + test + "\n" + train.replace("Epoch 0", "Epoch 1").replace("0.674", "0.683") + "\n")
    assert loss(r) == [(273, 0.674), (546, 0.683)] and tags(r)["eval_loss"] == [(273, 0.692)]
    # a-nr-ms-nb-sentiment-test-1: the test set's bar alone gives no training record
    r = read_text(tmp_path, "Epoch 0: 100%|| 391/391 [00:25<00:00, 15.10it/s, acc=0.857, loss=0.357]\n", "test.log")
    assert "loss" not in tags(r)


def test_an_epoch_line_with_validation_and_test_losses_is_one_evaluation(tmp_path):
    # b-comp-modelrain-informer-2: its Train Loss is the epoch's mean, no step record
    text = ("\titers: 3650, epoch: 1 | loss: 0.0191090\n\titers: 3700, epoch: 1 | loss: 0.0711959\n"
            "Epoch: 1 cost time: 1076.9905803203583\n"
            "Epoch: 1, Steps: 3741 | Train Loss: 0.1204433 Vali Loss: 0.0595001 Test Loss: 0.0681965\n")
    r = read_text(tmp_path, text)
    t = tags(r)
    assert [v for _, v in t["loss"]] == [0.019109, 0.0711959]
    assert [v for _, v in t["eval_loss"]] == [0.0595001] and [v for _, v in t["eval_loss_avg"]] == [0.0681965]


def test_an_epoch_line_with_a_throughput_and_lr_is_a_summary(tmp_path):
    # b-code7-centerface-8p-1: "epoch[e], loss:<avg>, N imgs/sec, lr:x" ends each epoch: no evaluation
    text = ("2021-07-06 16:01:42,710:INFO:epoch:2, iter:197, avg_loss:loss:1.906899, loss:1.6912976503372192, "
            "overflow:False, loss_scale:1024.0\n"
            "2021-07-06 16:01:42,869:INFO:epoch[2], loss:1.906899, 442.33 imgs/sec, lr:0.004000000189989805\n"
            "2021-07-06 16:01:42,985:INFO:epoch:3, iter:0, avg_loss:loss:1.804715, loss:1.804714560508728, "
            "overflow:False, loss_scale:1024.0\n")
    r = read_text(tmp_path, text)
    t = tags(r)
    assert [v for _, v in t["loss"]] == [1.6912976503372192, 1.804714560508728]
    assert "eval_loss" not in t and "summary" in variants(r)


# --------------------------------------------------------------------------- record shapes (lane shapes, issue 21)


@pytest.mark.parametrize(
    "line, epoch, step, values",
    [
        # numbered losses with no plain loss: the first is the line's (b-sciai-cpinns-1, b-mindflow-superposition-1)
        ("  step: 0, loss1: 2.1404986, loss2: 8.205103, loss3: 37.23588, loss4: 3.56359, interval: 50.858s", None, 0,
         {"loss": 2.1404986, "loss2": 8.205103, "loss4": 3.56359}),
        ("19:46:55INFO Epoch 295: loss_0   0.034830 and loss_1   0.190902", 295, None, {"loss": 0.03483, "loss_1": 0.190902}),
        # a doubled colon; tqdm's count with no total is the step, the bracket beside it the epoch (b-apps-colorization-readme-1)
        ("14it [00:11,  1.63it/s][1/200]  Loss_net:: 6.1110", 1, 14, {"loss": 6.111}),
    ],
)
def test_record_shapes_of_a_line(line, epoch, step, values):
    r = fields(line)
    assert r is not None and r.has_loss
    assert (r.epoch, r.step) == (epoch, step)
    got = {t: v for t, _, v in reversed(r.values)}
    assert {t: got.get(t) for t in values} == pytest.approx(values)


def test_a_number_glued_to_loss_is_no_numbered_loss():
    assert fields("loss0.5 step 3") is None or not fields("loss0.5 step 3").has_loss


CYCLEGAN = (  # a-ms-tut-cyclegan-1: the MindSpore CycleGAN tutorial prints one record with a "\n" inside
    "Epoch:[  1/ 7], step:[   0/1019], time:6.202873s,\n"
    "loss_g:22.88, loss_d:0.95, loss_g_a: 1.00, loss_g_b: 1.00, loss_c_a: 7.12, loss_c_b: 6.90, loss_idt_a: 3.52, loss_idt_b: 3.34\n"
    "Epoch:[  1/ 7], step:[  80/1019], time:1.001927s,\n"
    "loss_g:12.06, loss_d:0.49, loss_g_a: 0.51, loss_g_b: 0.26, loss_c_a: 3.98, loss_c_b: 3.76, loss_idt_a: 1.68, loss_idt_b: 1.87\n"
    "Epoch:[  1/ 7], step:[ 320/1019], time:0.939093s,\n"
    "...\n"
    "Epoch:[  2/ 7], step:[ 960/1019], time:0.784652s,\n"
    "loss_g:5.22, loss_d:0.52, loss_g_a: 0.23, loss_g_b: 0.34, loss_c_a: 1.83, loss_c_b: 1.59, loss_idt_a: 0.76, loss_idt_b: 0.47\n"
    "Epoch:[  2/ 7], epoch time:923.28s, per step time:0.91, mean_g_loss:4.05, mean_d_loss:0.43,\n"
)


def test_a_record_over_two_lines_is_one_record_and_says_so(tmp_path):
    r = read_text(tmp_path, CYCLEGAN)
    # (e - 1) x 1019 + s; the counter line at step 320 lost its losses to the "..." and is no record
    assert loss(r) == [(0, 22.88), (80, 12.06), (1979, 5.22)]
    df = r.tables["scalars"]
    assert df.filter((pl.col("tag") == "step_time") & (pl.col("step") == 0))["value"].to_list() == [pytest.approx(6.202873)]
    assert df.filter((pl.col("tag") == "loss_d") & (pl.col("step") == 80))["value"].to_list() == [0.49]
    assert any(d.slug == "log-inferred" and d.variant == "two-line" and d.params["n"] == 3 for d in r.diagnostics)


def test_more_loss_lines_under_one_counter_line_join_it(tmp_path):
    # a-models-ugatit-1: a counter line, then d_loss, then g_loss
    text = "".join(f"  epoch 1:[ {s}/10200] time per iter: 0.6664\n  d_loss: {d}\n  g_loss: {g}\n"
                   for s, d, g in ((1220, 3.2190554, 2914.113), (1221, 3.6988006, 115.64786), (1222, 3.3407924, 313.15454)))
    r = read_text(tmp_path, text)
    assert loss(r) == [(1220, 3.2190554), (1221, 3.6988006), (1222, 3.3407924)]
    g = r.tables["scalars"].filter(pl.col("tag") == "g_loss")
    assert g["step"].to_list() == [1220, 1221, 1222] and not r.tables["scalars"].filter(pl.col("tag") == "eval_loss").height


def test_loss_lines_are_joined_only_where_that_is_the_files_layout(tmp_path):
    # a-lite-train-lenet-1: "Epoch (1): Training Accuracy" (counters, no loss) above the next epoch's loss lines, which
    # print the same key each: not one record with them, and most loss lines have no counter line beside
    text = ("1.1700: Loss is 0.0557566\n1.1800: Loss is 0.0698758\nEpoch (1):      Loss is 0.384778\n"
            "Epoch (1):      Training Accuracy is 0.8702\n2.100:  Loss is 0.0538642\n2.200:  Loss is 0.444504\n"
            "2.300:  Loss is 0.0806976\n2.400:  Loss is 0.0495807\n")
    r = read_text(tmp_path, text)
    assert not any(d.variant in ("two-line", "two-line-loss-first") for d in r.diagnostics)
    # a file whose training lines hold a step and a loss together: a counter line is never half of a record
    text = ("  traing coarse net, step: 10 loss:1.606946, time cost: 0.051651954650878906\n"
            "Epoch: 1, step: 20, time cost: 0.05\n"
            "train loss: 1.2\n"
            "  traing coarse net, step: 30 loss:1.506946, time cost: 0.051651954650878906\n")
    r = read_text(tmp_path, text, "single.log")
    assert loss(r) == [(10, 1.606946), (30, 1.506946)]
    assert not any(d.variant in ("two-line", "two-line-loss-first") for d in r.diagnostics)


def test_the_loss_line_may_come_first(tmp_path):
    # the mirror of the CycleGAN tutorial's layout (its two lines swapped): the order that joins more lines wins
    lines = CYCLEGAN.splitlines()[:4]
    text = "\n".join([lines[1], lines[0], lines[3], lines[2]]) + "\n"
    r = read_text(tmp_path, text)
    assert loss(r) == [(0, 22.88), (80, 12.06)]
    assert "two-line-loss-first" in variants(r)


def test_counters_printed_total_first_are_swapped_and_said(tmp_path):
    # b-yolov7ms-readme-1: yolov7_mindspore's train.py prints f"Epoch {epochs}/{cur_epoch}, Step {per_epoch_size}/{cur_step}"
    line = ("Epoch 300/1, Step 924/{s}, size (640, 640), loss: {v}, lbox: 0.0639, lobj: 0.0299, lcls: 0.0870, "
            "cur_lr: [0.00043236, 0.00043236, 0.07160841], step time: 1225.23 ms\n")
    r = read_text(tmp_path, line.format(s=800, v=23.138) + line.format(s=801, v=23.2474))
    assert loss(r) == [(800, 23.138), (801, 23.2474)] and "total-first" in variants(r)
    st = r.tables["scalars"].filter(pl.col("tag") == "step_time")
    assert st["step"].to_list() == [800, 801] and st["value"][0] == pytest.approx(1.22523)
    # current first (MindYOLO's own "Epoch 1/200, Step 100/3995"): as printed
    r = read_text(tmp_path, line.replace("Epoch 300/1, Step 924/{s}", "Epoch 1/300, Step {s}/924").format(s=800, v=2.0), "c.log")
    assert loss(r) == [(800, 2.0)] and "total-first" not in variants(r)


def test_a_shape_with_no_loss_of_its_own_leaves_a_loss_line_to_the_fields(tmp_path):
    # a-models-effnetb2-1: TimeMonitor's shape holds these times, but the line is the epoch's record
    text = "".join(f"epoch {e}: epoch time: 645634.656, per step time: 1033.015, avg loss: {v}\n"
                   for e, v in ((1, 5.814), (2, 4.786)))
    r = read_text(tmp_path, text)
    assert [v for _, v in loss(r)] == [5.814, 4.786]
    rec = logparse.Records()
    logparse.parse_line(" epoch time: 431.937 ms, per step time: 53.992 ms", 1, rec, {})
    assert rec.recognised == {"timemonitor": 1}  # (one that prints no loss stays TimeMonitor's)


# --------------------------------------------------------------------------- per-step times (lane times)

def step_times(r, rank: int | None = None) -> list[tuple[int, float]]:
    df = r.tables["scalars"].filter(pl.col("tag") == "step_time")
    if rank is not None:
        df = df.filter(pl.col("rank") == rank)
    return list(zip(df["step"].to_list(), df["value"].to_list()))


def test_a_time_with_no_step_in_its_key_gives_way_to_a_per_step_time():
    # corpus a-course-finetune-1: the iter cost is the epoch's, the per step time the step's
    r = fields("epoch[1/20], iter[56] cost: 8033.059, per step time: 143.447, avg loss: 1.276")
    assert [(t, k) for t, k, _ in r.values] == [("step_time", "per step time"), ("loss", "avg loss")]
    assert r.values[0][2] == pytest.approx(0.143447) and r.unitless == [0]
    # corpus b-dmcv-singan-cyclegan-2: "per step" with its unit, beside the epoch's total cost
    r = fields("Epoch [1] total cost: 220538.81 ms, per step: 22053.88 ms, G_loss: 18.95, D_loss: 5.37")
    assert [v for v in r.values if v[0] == "step_time"] == [("step_time", "per step", pytest.approx(22.05388))]
    # "per step" with no unit is no time
    assert not [v for v in fields("epoch 1 step 3 loss 0.2, samples per step: 32").values if v[0] == "step_time"]


def test_a_time_that_runs_into_a_date_or_clock_is_a_timestamp():
    # corpus a-models-psenet-1 and b-sponge-jtvae-readme-1
    assert [t for t, _, _ in fields("time: 2021-07-24 02:08:33, epoch: 10, step: 31, loss is 0.68408").values] == ["loss"]
    assert [t for t, _, _ in fields("epoch: 1 step: 1 , loss is 126.508942, time is 23 09:45:32").values] == ["loss"]


def test_time_lines_are_read_apart_and_left_time_is_none():
    r = fields("\tspeed: 1.0592s/iter; left time: 79195.7183s")  # corpus b-comp-modelrain-informer-1
    assert r.time_line and not r.has_loss and r.values == [("step_time", "s/iter", pytest.approx(1.0592))]
    r = fields("  step time is 4.832167148590088")  # corpus b-code3-deeplstm-readme-1
    assert r.time_line and r.unitless == [0]
    r = fields("Epoch: 1 cost time: 1076.9935898780823")  # an epoch's cost: no step time (a line of counters only)
    assert r is None or (not r.time_line and r.counters_only())
    rec = logparse.Records()
    logparse.parse_line("\tspeed: 0.2837s/iter; left time: 20244.7053s", 1, rec, {})
    assert rec.recognised == {"fields-time": 1} and len(rec.times) == 1 and not rec.fields


def test_a_time_line_after_its_record_is_its_time(tmp_path):
    # corpus b-comp-modelrain-informer-2: the speed line follows its record; the first belongs to an
    # iteration outside the excerpt
    text = ("\tspeed: 0.2995s/iter; left time: 21391.2259s\n"
            "\titers: 3450, epoch: 1 | loss: 0.4644736\n\tspeed: 0.2837s/iter; left time: 20244.7053s\n"
            "\titers: 3500, epoch: 1 | loss: 0.0331286\n\tspeed: 0.2913s/iter; left time: 20775.8468s\n")
    r = read_text(tmp_path, text)
    assert step_times(r) == [(3450, pytest.approx(0.2837)), (3500, pytest.approx(0.2913))]
    assert "time-line-after" in variants(r)


def test_a_unitless_time_line_after_its_record_has_its_unit_settled(tmp_path):
    # corpus b-code3-deeplstm-readme-1: time.time() differences, 0.03 ms a step as ms: seconds
    text = ("  step: 0 epoch: 0 batch: 0 loss: 0.08907777\n  step time is 4.832167148590088\n"
            "  step: 1 epoch: 0 batch: 1 loss: 0.09467506\n  step time is 0.03872847557067871\n"
            "  step: 2 epoch: 0 batch: 2 loss: 0.09016898\n  step time is 0.04083538055419922\n")
    r = read_text(tmp_path, text)
    assert step_times(r) == [(0, pytest.approx(4.832167148590088)), (1, pytest.approx(0.03872847557067871)),
                             (2, pytest.approx(0.04083538055419922))]
    assert {"time-line-after", "unit-s-small"} <= variants(r)


def test_a_time_line_that_prints_its_records_counters_comes_before_it(tmp_path):
    # corpus a-course-resnet50-1: the course's time line before LossMonitor's (a shape's record)
    text = ("epoch 1 cost time = 156.34279108047485, train step num: 1562, one step time: 100.09141554447814 ms, "
            "train samples per second of cluster: 319.7\nepoch: 1 step 1562, loss is 1.5020508766174316\n"
            "epoch 2 cost time = 27.33933186531067, train step num: 1562, one step time: 17.502773281248828 ms, "
            "train samples per second of cluster: 1828.3\nepoch: 2 step 1562, loss is 1.612194299697876\n")
    r = read_text(tmp_path, text)
    assert step_times(r) == [(1562, pytest.approx(0.10009141554447814)), (3124, pytest.approx(0.017502773281248828))]
    assert "time-line-shapes" in variants(r)
    # corpus a-models-ugatit-1: a counter and time line over loss lines that print no counter
    text = ("  epoch 1:[ 1220/10200] time per iter: 0.6664\n  d_loss: 3.2190554\n  g_loss: 2914.113\n"
            "  epoch 1:[ 1221/10200] time per iter: 0.6666\n  d_loss: 3.6988006\n  g_loss: 115.64786\n"
            "  epoch 1:[ 1222/10200] time per iter: 0.6654\n  d_loss: 3.3407924\n  g_loss: 313.15454\n")
    r = read_text(tmp_path, text)
    first = loss(r)[0][0]
    assert step_times(r)[0] == (first, pytest.approx(0.6664)) and len(step_times(r)) == 3
    assert {"two-line", "unit-s-small"} <= variants(r)  # (joined as one record with its loss lines: the time is its own)


def test_a_closing_time_line_beside_timed_shape_records_is_left(tmp_path):
    # corpus b-mindelec-freqmaxwell-1: TimeMonitor timed the record; the run's closing average is no step's
    text = ("epoch: 10 step: 79, loss is 1.502\nepoch time: 272.946 ms, per step time: 3.455 ms\n"
            "per step time: 3.4550081325\n")
    r = read_text(tmp_path, text)
    assert step_times(r) == [(790, pytest.approx(0.003455))]


def test_a_shape_line_with_a_step_time_it_does_not_read_is_read_by_its_fields(tmp_path):
    # corpus a-models-cnnctc-1: CNN-CTC's LossMonitor copy prints its timer's average (seconds)
    text = "".join(f"epoch: 1 step: {s} , loss is {70 - s}.25, average time per step is 0.2{s}5177839748392712\n"
                   for s in range(1, 5))
    r = read_text(tmp_path, text)
    assert [s for s, _ in loss(r)] == [1, 2, 3, 4]
    assert step_times(r)[0] == (1, pytest.approx(0.215177839748392712)) and "unit-s-small" in variants(r)


def test_a_first_step_that_would_be_a_compile_under_a_second_is_in_seconds(tmp_path):
    # corpus b-dmcv-ddag-readme-1: an average meter from a first step of 58 (the graph compile)
    values = (58.036, 1.749, 1.471, 1.376, 1.329)
    text = "".join(f"Epoch: [28][{100 * i}/696]   LR: 0.000035000001   Loss:0.{1687 + i}   Batch Time:{v}  \n"
                   for i, v in enumerate(values))
    r = read_text(tmp_path, text)
    assert [v for _, v in step_times(r)] == [pytest.approx(v) for v in values] and "unit-s-compile" in variants(r)
    # the same first step read as ms is over a second: a compile that long is no evidence, ms as printed
    r = read_text(tmp_path, text.replace("Batch Time:58.036", "Batch Time:5803.6"))
    assert step_times(r)[1][1] == pytest.approx(0.001749) and "unit-ms" in variants(r)


def test_time_lines_of_interleaved_ranks_take_ranks_in_order(tmp_path):
    # corpus a-models-ocrnet-1: 8 GPU ranks' LossMonitor and TimeMonitor lines, no prefix
    text = ("epoch: 2 step: 124, loss is 0.32486626505851746\nepoch time: 74857.710 ms, per step time: 603.691 ms\n"
            "epoch: 2 step: 124, loss is 0.5980132222175598\nepoch: 2 step: 124, loss is 0.2903040051460266\n"
            "epoch time: 74845.289 ms, per step time: 603.591 ms\nepoch time: 74872.818 ms, per step time: 603.813 ms\n"
            "epoch: 3 step: 124, loss is 0.5978401303291321\nepoch time: 75155.596 ms, per step time: 606.094 ms\n"
            "epoch: 3 step: 124, loss is 0.7612668871879578\nepoch: 3 step: 124, loss is 0.5324980020523071\n"
            "epoch time: 75150.912 ms, per step time: 606.056 ms\n")
    r = read_text(tmp_path, text)
    assert step_times(r, 0) == [(248, pytest.approx(0.603691)), (372, pytest.approx(0.606094))]
    assert step_times(r, 1) == [(248, pytest.approx(0.603591)), (372, pytest.approx(0.606056))]
    assert "ranks-order-times" in variants(r)


def test_a_time_line_with_no_rank_is_given_once_among_ranks(tmp_path):
    # corpus a-models-dam-1's form: ranks printed in order, each followed by its time line (no rank on either)
    text = ("epoch: 1 step: 3853 global_step: 3853, loss is 0.21962138\nstep time 197.07393646240234\n"
            "epoch: 1 step: 3853 global_step: 3853, loss is 0.21994969\nstep time 197.10779190063477\n"
            "epoch: 1 step: 3854 global_step: 3854, loss is 0.2575438\nstep time 197.8461742401123\n"
            "epoch: 1 step: 3854 global_step: 3854, loss is 0.29517844\nstep time 198.20117950439453\n")
    r = read_text(tmp_path, text)
    assert "ranks-order" in variants(r)
    assert step_times(r, 0) == [(3853, pytest.approx(0.19707393646240234)), (3854, pytest.approx(0.1978461742401123))]
    assert step_times(r, 1) == [(3853, pytest.approx(0.19710779190063477)), (3854, pytest.approx(0.19820117950439453))]


# --------------------------------------------------------------------------- ranks and steps per file (issue 21, lane ranks)


def ranks_of(r, tag: str = "loss") -> list[tuple[int, int, float]]:
    df = r.tables["scalars"].filter(pl.col("tag") == tag)
    return list(zip(df["rank"].to_list(), df["step"].to_list(), df["value"].to_list()))


def test_ranks_by_order_allow_an_excerpt_to_cut_the_first_run_short(tmp_path):
    """a-models-dam-1: 8 devices print each global step in a row; the excerpt starts inside step
    3853 (6 of its lines), then 3854 has all 8."""
    line = "epoch: 1 step: {s} global_step: {s}, loss is {v}\n"
    text = "".join(line.format(s=3853, v=0.2 + i / 100) for i in range(6)) + "".join(
        line.format(s=3854, v=0.3 + i / 100) for i in range(8))
    r = read_text(tmp_path, text)
    got = ranks_of(r)
    assert [x[0] for x in got] == list(range(6)) + list(range(8))
    assert [x for x in got if x[0] == 0] == [(0, 3853, 0.2), (0, 3854, 0.3)]
    assert "ranks-order" in variants(r)
    # one line a step (no run): one rank, nothing inferred
    r = read_text(tmp_path, "".join(line.format(s=s, v=0.2) for s in (1, 2, 3, 4)), "one.log")
    assert {x[0] for x in ranks_of(r)} == {None} and "ranks-order" not in variants(r)


BERT = ("epoch: 0.0, current epoch percent: 0.001, step: 100, outputs are (Tensor(shape=[1], dtype=Float32, [ {a}]), "
        "Tensor(shape=[], dtype=Bool, False), Tensor(shape=[], dtype=Float32, 65536))\n"
        "epoch: 0.0, current epoch percent: 0.002, step: 200, outputs are (Tensor(shape=[1], dtype=Float32, [ {b}]), "
        "Tensor(shape=[], dtype=Bool, False), Tensor(shape=[], dtype=Float32, 65536))\n...\n")


def test_ranks_pasted_one_after_another_are_read_in_order(tmp_path):
    """a-models-bert-2: `grep "epoch" LOG*/pretraining_log.txt` of two ranks: the steps start again."""
    r = read_text(tmp_path, BERT.format(a="1.08209e+01", b="1.07566e+01") + BERT.format(a="1.08218e+01", b="1.07770e+01"))
    assert ranks_of(r) == [(0, 100, 10.8209), (0, 200, 10.7566), (1, 100, 10.8218), (1, 200, 10.777)]
    assert "ranks-blocks" in variants(r)


def test_a_block_after_a_crash_or_carrying_the_loss_on_is_a_later_launch(tmp_path):
    crash = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nRuntimeError: device lost\n"
    r = read_text(tmp_path, BERT.format(a="1.08209e+01", b="1.07566e+01") + crash
                  + BERT.format(a="1.08218e+01", b="1.07770e+01"))
    assert {x[0] for x in ranks_of(r)} == {None} and "ranks-blocks" not in variants(r)
    # two runs one after the other, a setting printed before each (b-mindediting-readme-workers-1)
    runs = "num_parallel_workers: {w}\n" + "".join(f"epoch 1/100 step {s}/133, loss = {{v{s}}}, step_time_avg = 6.66 secs\n"
                                                    for s in (1, 2, 3))
    r = read_text(tmp_path, runs.format(w=8, v1=0.045729052, v2=0.027709303, v3=0.027135072) + "\n"
                  + runs.format(w=16, v1=0.04535071, v2=0.032363698, v3=0.02718924), "workers.log")
    assert {x[0] for x in ranks_of(r)} == {None} and "ranks-blocks" not in variants(r)
    # a resumed launch whose counter restarted: its first loss goes on from where the first block ended
    r = read_text(tmp_path, BERT.format(a="1.08209e+01", b="7.5") + BERT.format(a="7.4", b="7.3"), "resumed.log")
    assert {x[0] for x in ranks_of(r)} == {None} and "ranks-blocks" not in variants(r)


def test_pasted_ranks_keep_their_timemonitor_lines(tmp_path):
    """b-papercode-vehiclenet-2dev-1: two devices' LossMonitor + TimeMonitor logs, one after the other."""
    block = ("  epoch: 1 step: 2337, loss is {a}\n  epoch time: 1249107.232 ms, per step time: {t} ms\n"
             "  epoch: 2 step: 2337, loss is {b}\n  epoch time: 1151065.230 ms, per step time: 492.540 ms\n  ...\n")
    r = read_text(tmp_path, block.format(a=6.6500106, b=6.67811, t=534.492) + block.format(a=6.639152, b=6.4480543, t=534.466))
    assert ranks_of(r) == [(0, 2337, 6.6500106), (0, 4674, 6.67811), (1, 2337, 6.639152), (1, 4674, 6.4480543)]
    st = ranks_of(r, "step_time")
    assert (st[0][0], st[0][1]) == (0, 2337) and st[0][2] == pytest.approx(0.534492)
    assert (st[2][0], st[2][1]) == (1, 2337) and st[2][2] == pytest.approx(0.534466)


def test_a_grep_line_without_the_prefix_continues_the_file_above(tmp_path):
    """b-papercode-swenet-8p-1: each rank's later line is indented under its prefixed line."""
    text = ("  train_parallel0/log:epoch: 1 step: 1, loss is 0.6930392980575562\n                      ...\n"
            "                      epoch: 15 step: 1, loss is 0.06458353996276855\n"
            "  train_parallel1/log:epoch:1, step: 1, loss is 0.6925740242004395\n                      ...\n"
            "                      epoch: 15 step: 1, loss is 0.03458353996276855\n")
    r = read_text(tmp_path, text)
    assert ranks_of(r) == [(0, 1, 0.6930392980575562), (0, 15, 0.06458353996276855),
                           (1, 1, 0.6925740242004395), (1, 15, 0.03458353996276855)]
    assert next(d for d in r.diagnostics if d.variant == "ranks-carried").params == {"n": 2}


def test_a_device_id_line_names_the_rank_of_the_record_after_it(tmp_path):
    """b-apps-pix2pix-readme-2: pix2pix's train.py prints `Device ID : <rank>` before each record."""
    text = ("Device ID : 3\nms per step : 11.199 epoch:  1 / 200 step:  100 / 400 Dloss:  0.227907 Gloss:  27.540344\n"
            "Device ID : 0\nms per step : 739.631 epoch:  1 / 200 step:  0 / 400 Dloss:  0.8247761 Gloss:  41.588917\n"
            "Device ID : 3\nms per step : 12.217 epoch:  1 / 200 step:  200 / 400 Dloss:  0.028766029 Gloss:  42.01359\n")
    r = read_text(tmp_path, text)
    assert ranks_of(r) == [(3, 100, 0.227907), (0, 0, 0.8247761), (3, 200, 0.028766029)]
    assert {"ranks-printed", "ranks-carried"} <= variants(r)
    assert logfields.header("Device ID : 3").rank == 3 and logfields.header("Device_id: 3. Finish sync data") is None


def test_steps_per_epoch_change_where_the_epochs_jump(tmp_path):
    """b-dmcv-osnet-8p1p-1: an 8-device run's epochs 90-92 (12 steps each), then a 1-device run's
    epochs 245-247 (129 steps each)."""
    text = ("(8p)\n...\n" + "".join(f"epoch: {e} step: 12, loss is 1.05\nepoch time: 1779.959 ms, per step time: 148.330 ms\n"
                                    for e in (90, 91, 92))
            + "...\n(1p)\n...\n" + "".join(f"epoch: {e} step: 129, loss is 1.02\n" for e in (245, 246, 247)))
    r = read_text(tmp_path, text)
    assert [s for s, _ in loss(r)] == [90 * 12, 91 * 12, 92 * 12, 245 * 129, 246 * 129, 247 * 129]
    d = next(d for d in r.diagnostics if d.variant == "parts")
    assert d.params == {"n": 2, "counts": "12, 129", "epoch": 245}
    # no jump: one length for the file (the longest epoch), as before
    r = read_text(tmp_path, "".join(f"epoch: {e} step: {s}, loss is 1.0\n" for e in (1, 2, 3) for s in (6, 12)), "one.log")
    assert "parts" not in variants(r) and [s for s, _ in loss(r)][-1] == 36
    # epochs printing several lines show only their largest step seen (an excerpt may cut them): no parts
    text = "".join(f"epoch: {e} step: {s}, loss is 1.0\n" for e in (1, 2) for s in (1, 2, 3)) + "......\n" + "".join(
        f"epoch: {e} step: {s}, loss is 1.0\n" for e in (10, 11) for s in (1000, 1875))
    r = read_text(tmp_path, text, "cut.log")
    assert "parts" not in variants(r) and [s for s, _ in loss(r)][:4] == [1, 2, 3, 1876]


def test_steps_per_epoch_printed_by_an_epoch_summary_place_the_step_lines(tmp_path):
    """b-comp-modelrain-informer-2: `Steps: 3741` is printed by the epoch's summary only."""
    text = ("\titers: 3650, epoch: 1 | loss: 0.0191090\n\tspeed: 0.2703s/iter; left time: 19238.6926s\n"
            "\titers: 3700, epoch: 1 | loss: 0.0711959\n"
            "Epoch: 1, Steps: 3741 | Train Loss: 0.1204433 Vali Loss: 0.0595001 Test Loss: 0.0681965\n"
            "\titers: 50, epoch: 2 | loss: 0.0064192\n\titers: 100, epoch: 2 | loss: 0.0674745\n")
    r = read_text(tmp_path, text)
    assert [s for s, _ in loss(r)] == [3650, 3700, 3741 + 50, 3741 + 100]
    assert "fields-printed" in variants(r)


def test_a_record_split_over_lines_is_one_record(tmp_path):
    """a-models-ugatit-1: the counter and time on one line, d_loss and g_loss on the next two."""
    text = "".join(f"  epoch 1:[ {s}/10200] time per iter: 0.6664\n  d_loss: {d}\n  g_loss: {g_}\n"
                   for s, d, g_ in ((1220, 3.2190554, 2914.113), (1221, 3.6988006, 115.64786)))
    r = read_text(tmp_path, "  ...\n" + text + "  ...\n   [*] Training finished!\n")
    assert loss(r) == [(1220, 3.2190554), (1221, 3.6988006)]
    assert ranks_of(r, "g_loss") == [(None, 1220, 2914.113), (None, 1221, 115.64786)]
    assert len(ranks_of(r, "step_time")) == 2 and "two-line" in variants(r)
    # where the loss lines print their own step, a counter line gives nothing to the lines after it
    r = read_text(tmp_path, "epoch 1:[ 5/10] time per iter: 0.6\nstep: 5 loss: 2.0\nstep: 6 loss: 1.9\nAvg loss: 1.95\n", "own.log")
    assert loss(r) == [(5, 2.0), (6, 1.9)]
    # an epoch line with more on it is the epoch's summary, not the header of the lines after it
    assert logfields.header("Epoch (1):      Training Accuracy is 0.8702") is None
    r = fields("....................Epoch: 0/100, ")  # (a line of counters only: half of a record, logparse.pair_halves)
    assert r.counters_only() and r.epoch == 0
    # a line with an epoch's time is the epoch's summary (TimeMonitor's copies read it), not a header
    assert logfields.header("epoch: 3 step: 100, Epoch time: 247122.700, per step time: 633.648") is None


def test_ranks_writing_one_file_in_chunks(tmp_path):
    """b-comp-mindmomaorb-4p-1: two-line records of one process (epochs 0..2), then another's
    epoch 0, its Epoch line glued to the end of the first process's last line."""
    rec = " train_metrics: {{'data_time': 3.0e-05, 'train_time': {t}, 'energy_mae': 1.44, 'loss': {v}}}"
    text = ("Epoch: 0/100, \n" + rec.format(t=316.9, v=2.146209955215454) + "\nEpoch: 1/100, \n"
            + rec.format(t=13.8, v=2.025391608476639) + "\nEpoch: 2/100, \n" + rec.format(t=13.2, v=1.8204253315925598)
            + "Epoch: 0/100, \n" + rec.format(t=318.6, v=2.221798300743103) + "\nEpoch: 1/100, \n"
            + rec.format(t=13.8, v=2.0859665274620056) + "\n")
    r = read_text(tmp_path, text)
    assert ranks_of(r) == [(0, 1, 2.146209955215454), (0, 2, 2.025391608476639), (0, 3, 1.8204253315925598),
                           (1, 1, 2.221798300743103), (1, 2, 2.0859665274620056)]
    assert {"ranks-blocks", "epoch-0-based"} <= variants(r)
    assert logfields.segments("loss is -16.564177epoch: 50 step: 1172, loss is -11.598206") == [
        "loss is -16.564177", "epoch: 50 step: 1172, loss is -11.598206"]


def test_a_total_time_beside_a_per_step_time_on_an_epoch_line_is_the_epochs(tmp_path):
    # b-dmcv-singan-cyclegan-2 (the model zoo's GAN Reporter): one line per epoch, its total cost and
    # per-step time; their ratio is the steps per epoch (10), so epoch e ends at step 10e
    text = "".join(f"Epoch [{e}] total cost: {t:.2f} ms, per step: {t / 10:.2f} ms, G_loss: {g_:.2f}, D_loss: 5.37\n"
                   for e, t, g_ in ((1, 220538.81, 18.95), (2, 220474.24, 10.69), (3, 203885.92, 7.83)))
    r = read_text(tmp_path, text)
    assert loss(r) == [(10, 18.95), (20, 10.69), (30, 7.83)]
    assert [round(v, 5) for _, v in step_times(r)] == [22.05388, 22.04742, 20.38859]
    # with a step on the line, the other time is still no step time and no epoch's (a-course-finetune-1)
    r = fields("epoch[1], iter[56] cost: 8033.059, per step time: 143.447, loss: 1.276")
    assert [t for t, _, _ in r.values if t.endswith("time")] == ["step_time"]


def test_an_epoch_summary_with_a_unitless_per_step_time_leaves_the_records_times(tmp_path):
    # a-ms-tut-cyclegan-1: "Epoch:[  7/ 7], epoch time:911.41s, per step time:0.89, ..." prints its per step
    # time in seconds without a unit; read as ms it would make a sink of a million steps in a 1019-step
    # epoch, so the record before it keeps its own time (0.936919 s), no sink-time
    text = (CORPUS / "a" / "logs" / "a-ms-tut-cyclegan-1.log").read_text(encoding="utf-8")
    r = read_text(tmp_path, text)
    assert "sink-time" not in variants(r) and "unit-s-summary" in variants(r)
    last = [v for s, v in step_times(r) if s == 6 * 1019 + 960]  # the record's own time, and the epoch's mean
    assert last == [pytest.approx(0.936919), pytest.approx(0.89)]
    assert all(0.5 < v < 7 for _, v in step_times(r))  # (no per step time of 0.89 ms)
