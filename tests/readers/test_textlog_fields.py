"""Lines read by their fields (readers/logfields.py) and each file's inference (textlog): the
lexicon's families, separators, value forms and units on real lines of the mined corpus
(tests/fixtures/logcorpus), and what is inferred across a file, each said in data quality.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from postmortem.model import Artifact
from postmortem.readers import logfields, logparse, logshapes, textlog


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
    """keys() only tries KEY_RE where a word holds a hint: each family's spellings must be found."""
    samples = {
        "loss": ["loss", "total_loss", "avg loss", "aver loss", "cur loss", "train_loss", "Loss", "LOSS", "损失"],
        "loss_part": ["lm_loss", "G_loss", "loss_cls", "Dloss", "kl loss"],
        "eval_loss": ["val_loss", "eval loss", "test loss", "val mse loss"],
        "loss_summary": ["best loss", "last train loss"],
        "loss_scale": ["loss_scale", "loss scale value", "scale_sense"],
        "epoch": ["epoch", "Epoch", "EPOCH", "ep", "cur_epoch", "epcoh", "轮次"],
        "step": ["step", "iter", "iteration", "batch", "cur_step", "Episode", "步数"],
        "global_step": ["global_step", "current step num", "cur_step_num"],
        "steps_per_epoch": ["steps per epoch", "per epoch size", "dataset_size"],
        "step_time": ["per step time", "step time", "step cost", "avg step time", "time per step", "ms per step",
                      "step_time_avg"],
        "time": ["time", "cost", "time cost", "elapsed", "interval", "耗时"],
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

    tests = consumed(p.parse(logfields.KEY_RE.pattern, logfields.re.I), [])
    assert len(tests) > 50
    for ch in logfields.KEY_STOP:
        assert not any(t(ch) for t in tests), ch
    # and the window gives what KEY_RE gives, on lines that differ only after a stop character
    for text in ("epoch: 1, step: 5, loss is loss:5.0", "loss_value(ms) = 3", "per step time: 5ms", "G_loss:1 D_loss:2"):
        for start, end, fam in logfields.keys(text):
            m = logfields.KEY_RE.match(text, start)
            assert (m.end(), logfields._FAMILY_OF[int(m.lastgroup[1:])]) == (end, fam)


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
        pat = getattr(logfields, name)
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
            logfields._FORMS.clear()
            alone = logfields.read(other)
            logfields._FORMS.clear()
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
    assert fields("Epoch: 1 cost time: 1076.9935898780823") is None  # an epoch's cost: no step time
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
    assert {"time-line-before", "unit-s-small"} <= variants(r)


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
