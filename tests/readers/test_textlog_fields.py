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
    assert len(ranks_of(r, "step_time")) == 2 and "multi-line" in variants(r)
    # where the loss lines print their own step, a counter line gives nothing to the lines after it
    r = read_text(tmp_path, "epoch 1:[ 5/10] time per iter: 0.6\nstep: 5 loss: 2.0\nstep: 6 loss: 1.9\nAvg loss: 1.95\n", "own.log")
    assert loss(r) == [(5, 2.0), (6, 1.9)]
    # an epoch line with more on it is the epoch's summary, not the header of the lines after it
    assert logfields.header("Epoch (1):      Training Accuracy is 0.8702") is None
    assert logfields.header("....................Epoch: 0/100, ").epoch == 0
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
