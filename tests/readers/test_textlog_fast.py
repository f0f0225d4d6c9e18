"""The C line scanner (readers/_logscan.c) gives exactly what the reference (logparse) gives.

Every input is read twice: with the scanner, and without it (logparse reads every line, one at a
time). Tables, settings, diagnostics and the clock must be identical, floats bit for bit. Inputs:
every log fixture, conformance log and sample log, and logs of real line shapes mutated at random
(seeded) towards what the scanner must hand back: NaN spellings, Unicode spaces and digits, odd
timestamps, broken shapes, repeated keys, ERROR lines, invalid UTF-8, CRLF.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postmortem.model import Artifact
from postmortem.readers import textlog
from postmortem.readers.textlog import parse as logparse, shapes as logshapes

pytestmark = pytest.mark.skipif(textlog._logscan is None, reason="built without the C line scanner")

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted((ROOT / "tests" / "fixtures" / "logs").glob("*.log")) + sorted(
    (ROOT / "tests" / "fixtures" / "logs").glob("*.jsonl")
)
SAMPLE_LOGS = sorted(p for p in (ROOT / "samples").rglob("*.log") if "profiler_data" not in p.parts)
CONFORMANCE_LOGS = sorted(p for p in (ROOT / "tests" / "fixtures" / "conformance").rglob("*") if p.suffix in (".log", ".txt"))


def _read(path: Path, rank: int | None = 0):
    art = Artifact(path=str(path), rel=path.name, size=path.stat().st_size, mtime=0.0, rank=rank)
    return textlog.READER.read(art)


def _both(path: Path, monkeypatch) -> tuple:
    fast = _read(path)
    with monkeypatch.context() as m:
        m.setattr(textlog, "_logscan", None)
        ref = _read(path)
    return fast, ref


def _same(fast, ref, same_result) -> None:
    same_result(fast, ref)
    assert fast.clock == ref.clock


@pytest.mark.parametrize("path", LOGS + SAMPLE_LOGS + CONFORMANCE_LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_logs_read_the_same(path: Path, monkeypatch, same_result):
    fast, ref = _both(path, monkeypatch)
    _same(fast, ref, same_result)


def _scanner() -> object:
    return textlog._logscan.Scanner({}, *textlog._compiled().scanner_args, logshapes.N_FIXED, len(logshapes.PAIR_SLOTS))


def test_scanner_claims_the_hot_shapes():
    """The scanner does take the lines of the shapes it parses (else the speed is not there), hands
    back the lines of every other shape, the variants and the errors, and drops the rest."""
    body = "\n".join(BASE_LINES).encode()
    scanner = _scanner()
    out = scanner.scan(body, 1)
    assert out["line_count"] == len(BASE_LINES) and out["claimed"] == len(HOT_LINES)
    back = np.frombuffer(out["back_lines"], dtype=np.int64).tolist()
    assert back == list(range(len(HOT_LINES) + 1, len(HOT_LINES) + len(BACK_LINES) + 1))
    shapes = {logshapes.SHAPES[i].fast for i in np.frombuffer(scanner.tables()["lines"]["shape"], dtype=np.int64).tolist()}
    assert shapes == {s.fast for s in logshapes.SHAPES if s.fast}
    # and logparse reads the noise as nothing
    for line in NOISE_LINES:
        rec = logparse.Records()
        logparse.parse_line(line, 1, rec, {})
        assert not rec.recognised and not rec.errors, line
    rec = logparse.Records()
    logparse.parse_line(PROSE_LOSS, 1, rec, {})
    assert not rec.recognised and not rec.fields and rec.loss_unread[0] == 0
    assert scanner.scan(PROSE_LOSS.encode(), 1)["back_lines"]


def test_a_shape_only_in_the_grammar_is_read_through_the_hand_back(tmp_path: Path, monkeypatch, same_result):
    """A new shape in logshapes, and no C: the scanner is told its anchors and hands its lines back."""
    shape = logshapes.Shape(
        "test-shape", "log:test", "a test", "my_loss=2.5 at iteration 7", "this test",
        anchors=("at iteration",),
        fields=(logshapes.Field("step", r"at iteration (\d+)", kind="count"),
                logshapes.Field("loss", rf"my_loss=({logshapes.NUM})", tag="loss", raw="my_loss")),
        required=("step",),
        step="global",
    )
    shapes = (shape, *logshapes.SHAPES)
    monkeypatch.setattr(logshapes, "SHAPES", shapes)
    for name, value in zip(("SHAPE_INDEX", "FIELDS", "FIELD_CODE", "N_FIXED"), logshapes.derive(shapes)):
        monkeypatch.setattr(logshapes, name, value)
    path = tmp_path / "train.log"
    path.write_text("step=1 loss=3.0\nmy_loss=2.5 at iteration 7\nstep=8 loss=2.4\n")
    fast, ref = _both(path, monkeypatch)
    _same(fast, ref, same_result)
    loss = fast.tables["scalars"]
    assert list(zip(loss["step"], loss["value"], loss["source"])) == [(1, 3.0, "log:kv"), (7, 2.5, "log:test"), (8, 2.4, "log:kv")]


# Lines of every shape the scanner parses, as the real writers print them (formats.md section 4).
HOT_LINES = [
    "2026-11-30 10:50:06,206 - [mindformers/core/callback/callback.py:529] - INFO - { Epoch:[  1/ 15], "
    "step:[    1/ 1000], loss: 11.194, per_step_time: 16607ms, lr: 2.1126761e-06, overflow cond: False, "
    "loss_scale: 1.0, global_norm: [1.009688], train_throughput_per_npu: 10.359T",
    "{ Epoch:[  1/ 15], step:[    3/ 1000], loss: 10.25, per_step_time: 610ms, lr: 1e-05, overflow cond: False, "
    "loss_scale: 1.0, global_norm: [0.5]",
    # r1.7 - r1.8: the logger's name before the source path, extra losses after the loss
    "2026-11-30 10:50:07,500 - mindformers[mindformers/core/callback/callback.py:350] - INFO - { Epoch:[  1/ 15], "
    "step:[    4/ 1000], loss: 3.141593, lm_loss: 3.000000, load_balancing_loss: 0.100000, mtp_loss: 0.041593, "
    "per_step_time: 1200ms, lr: 2.5e-04, overflow cond: False, loss_scale: 1.0, global_norm: [2.5], "
    "train_throughput_per_npu: 150.5T",
    "2026-11-30 10:50:08,500 - mindformers[mindformers/trainer/base_trainer.py:350] - INFO - { Epoch:[  1/ 15], "
    "step:[    5/ 1000], loss: 3.100000, lm_loss: 3.000000, per_step_time: 1201ms, overflow cond: False, loss_scale: 1.0",
    "epoch: 1 step: 4, loss is 8.61",
    "Train per step time: 608.567 ms mfu:0.08% hfu:0.08%",
    "Train per step time: 135.572 ms, mfu:0.47% hfu:0.47%",
    "2026-11-30 10:50:06,206 - [mindformers/core/callback/callback.py:529] - INFO -    0.0% |      | 1.64320 samples/s/p  0:12:34 }",
    "- INFO -    0.0% |                                                  | 0.00600 samples/s/p  25 days, 2:07:47 }",
    "2026-11-30 10:50:06.206 step=5 epoch=1 loss=11.149484 lr=4.22535e-06 grad_norm=1.054915 step_ms=608.567 "
    "data_ms=2.249 tokens_per_s=6730.6",
    "step=6 global_step=106 loss='2.5' acc=\"0.5\" note=ok rank=1 epoch_step=3",
    '{"step": 7, "loss": 11.149484, "lr": 4.225352112676056e-06, "grad_norm": 1.054915, "step_ms": 608.567}',
    '2026-11-30T10:50:07Z {"global_step": 8, "loss": "3.5", "ok": true, "x": null, "rank": 2, "time": 5}',
    "Train epoch time: 628020.596 ms, per step time: 628.021 ms",
    "epoch time: 440.184 ms, per step time: 110.046 ms (data time: 1.258 ms)",
    "epoch: 1 step: 223, loss is 2.8705792",
    "epoch time: 74139.530 ms, per step time: 332.464 ms",
]
# Lines the scanner hands back: the shapes only logparse reads (every shape's example line, lines
# of the conformance logs), variants of the hot shapes, events and errors.
BACK_LINES = [
    "{ Epoch:[  1/ 15], step:[    2/ 1000], loss: 10.5, per_step_time: 609ms, overflow cond: True, loss_scale: 65536.0",
    "Full model flops is 37748736.0, Full hardware flops is 37748736.0, Shard model flops is 37748736.0, "
    "Shard hardware flops is 37748736.0.",
    "2026-11-30 10:50:09,000 - [mindformers/core/callback/callback.py:529] - ERROR - step=9 loss=1.0",
    "Traceback (most recent call last):",
    "RuntimeError: device lost",
    *(s.example for s in logshapes.SHAPES if not s.fast),
    logshapes.SHAPES[logshapes.SHAPE_INDEX["mindformers"]].example,  # "global_norm [10.579812]": no colon
    "2025-04-07 15:34:27,308 - [mindformers/core/callback/callback.py:529] - INFO - { Epoch:[  1/  2], step:[    1/   19], "
    "loss: 10.649, per_step_time: 103328ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [1 31049], "
    "train_throughput_per_npu: 2.896T",
    "epoch: 0, current epoch percent: 0.037, step: 20, outputs are (Tensor(shape=[1], dtype=Float32, value= [ 2.03702718e-01]), "
    "Tensor(shape=[], dtype=Bool, value= False), Tensor(shape=[], dtype=Float32, value= 131072))",
    "2024-12-25 09:58:42,800 [INFO] Epoch 1/200, Step 200/3995, step time: 654.40 ms",
    "Eval result: epoch 2, metrics: {'mae': np.float32(0.79317355)}",
    "2023-02-20 10:03:02,711:INFO:epoch: [2/90] loss: 4.446517, epoch time: 103.711 s, per step time: 332.408 ms",
]
# Lines the scanner drops: no anchor, or anchors but no shape.
NOISE_LINES = [
    "[WARNING] ME(16790:140355945024384,MainProcess):2026-11-30-10:50:06.206.000 [mindspore/context.py:1343] noise",
    "2026-11-30 10:50:06,815 - [mindformers/dataset/blended_dataset.py:211] - INFO - Prefetching shard 2",
    "[WARNING] ME(22768:140521647119232,MainProcess):2026-11-30-11:39:24.829.000 [mindspore/context.py:1343] the scale is fine",
]
# A loss word in prose: handed back (the loss words anchor the lines read by their fields), read as nothing.
PROSE_LOSS = "[WARNING] ME(22768:140521647119232,MainProcess):2026-11-30-11:39:24.829.000 [mindspore/context.py:1343] the loss is fine"
BASE_LINES = HOT_LINES + BACK_LINES + NOISE_LINES

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NUMBERS = [
    "nan", "NaN", "-inf", "inf", "Infinity", "-Infinity", "1e999", "-1e999", "-0", "-0.0", "0", "1e-999",
    "12345678901234567890123", "0.1234567890123456789", "9007199254740993", ".5", "5.", "+3", "1e", "1e+5",
    "0x10", "\u0663", "\uff11", "1_000", "3.0", "2.5", "1e22", "1e23", "123456789012345.6", "4e-320",
]
_INSERTS = [
    " ", "  ", "\u00a0", "\u3000", "\u00e9", "\t", ",", ";", "=", '"', "'", "{", "}", "[", "]", ":", "\r", "ERROR",
    "loss is", "step=", 'step"', "samples/s/p", "epoch:", "mfu:", "flops is", "epoch time:", "step:[", "loss",
    "Traceback", "KeyError", "\\", "\x01", "nan", " samples/s/p", "e", "-", "+", "_", "/",
    "Epoch ", "Step ", "outputs are", "epoch: [", "overflow, ", "is_skip:", "Eval result:", "global norm ", '":',
    "[", "]", "(", ")", "True", "False", "ms", " s,", "T", "%",
]
_STAMPS = [
    "2024-05-08T10:36:53.123456+05:30 ", "[2024-05-08 10:36:53.5-0700] ", "2024-02-29 10:00:00 ", "2023-02-29 10:00:00 ",
    "2024-05-08 10:36:60 ", "2024-13-01 00:00:00 ", "0000-01-01 00:00:00 ", "2024-05-08 24:00:00 ",
    "   2024-05-08 10:36:53Z ", "\u00a02024-05-08 10:36:53 ", "2024-05-08 10:36:53,1234567891 ",
    "2024-05-08 10:36:53+0\u0665:30 ", "2024-05-08 10:36:53+08:0 ", "2024-05-08 10:36:53+0800", "1970-01-01 00:00:00.5 ",
    "2024-05-08 10:36:53,12\u0663 ", " " * 20 + "2024-05-08 10:36:53 ", "2024-05-0810:36:53 ", "2024-05-08 10:36:53\u00e9 ",
]
_KEYS = ["step", "global_step", "rank", "epoch_step", "time", "ts", "loss", "step_ms", "tokens_per_s", "\u00e9t\u00e9"]


def _mutate(line: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        what = rng.randrange(8)
        if what == 0 and _NUMBER.search(line):
            spans = [m.span() for m in _NUMBER.finditer(line)]
            a, b = rng.choice(spans)
            line = line[:a] + rng.choice(_NUMBERS) + line[b:]
        elif what == 1:
            i = rng.randint(0, len(line))
            line = line[:i] + rng.choice(_INSERTS) + line[i:]
        elif what == 2 and line:
            i = rng.randrange(len(line))
            line = line[:i] + line[i + rng.randint(1, 4) :]
        elif what == 3:
            line = rng.choice(_STAMPS) + line
        elif what == 4:
            tokens = line.split(" ")
            i = rng.randrange(len(tokens))
            tokens.insert(i, tokens[i])
            line = " ".join(tokens)
        elif what == 5:
            key = rng.choice(_KEYS)
            line = re.sub(r'\b(step|loss|lr|rank)(?==|":)', key, line, count=1)
        elif what == 6:
            line += "\r"
        else:
            line = line.replace("step", "global_step", 1) if rng.random() < 0.5 else line.replace(" ", "", 1)
    return line


def _mutated_log(seed: int, n: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        line = rng.choice(BASE_LINES)
        line = _NUMBER.sub(lambda m: str(i + 1) if m.group() in ("5", "6", "7", "8") else m.group(), line, count=0)
        out.append(_mutate(line, rng) if rng.random() < 0.7 else line)
    data = "\n".join(out).encode("utf-8")
    if seed % 2:  # a few lines with bytes that are not UTF-8
        cut = data.split(b"\n")
        for j in rng.sample(range(len(cut)), 5):
            cut[j] = cut[j][:10] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]) + cut[j][10:]
        data = b"\n".join(cut)
    return data


@pytest.mark.parametrize("seed", range(8))
def test_mutated_lines_read_the_same(seed: int, tmp_path: Path, monkeypatch, same_result):
    path = tmp_path / "train.log"
    path.write_bytes(_mutated_log(seed, 3000))
    fast, ref = _both(path, monkeypatch)
    _same(fast, ref, same_result)
    assert ref.tables["scalars"].height > 3000  # the mutations left plenty to read


def test_small_chunks_read_the_same(tmp_path: Path, monkeypatch, same_result):
    path = tmp_path / "train.log"
    path.write_bytes(_mutated_log(11, 2000))
    monkeypatch.setattr(textlog, "CHUNK_BYTES", 4096)
    fast, ref = _both(path, monkeypatch)
    same_result(fast, ref)


def test_bad_utf8_line_number_is_the_same(tmp_path: Path, monkeypatch, same_result):
    path = tmp_path / "train.log"
    path.write_bytes(b"step=1 loss=1\nnoise \xff here\nstep=2 loss=\xc3\n")
    fast, ref = _both(path, monkeypatch)
    same_result(fast, ref)
    assert [d.offset for d in fast.diagnostics if d.slug == "log-encoding"] == [2]


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_byte_level_damage_reads_the_same(tmp_path: Path, monkeypatch, data, same_result):
    """Random bytes written over, inserted into and cut out of a real mixed log: same tables."""
    raw = bytearray(_mutated_log(3, 400))
    for _ in range(data.draw(st.integers(1, 12))):
        at = data.draw(st.integers(0, len(raw) - 1))
        what = data.draw(st.sampled_from(["flip", "insert", "cut"]))
        chunk = data.draw(st.binary(min_size=1, max_size=6))
        if what == "flip":
            raw[at : at + len(chunk)] = chunk
        elif what == "insert":
            raw[at:at] = chunk
        else:
            del raw[at : at + len(chunk)]
    path = tmp_path / "train.log"
    path.write_bytes(bytes(raw))
    same_result(*_both(path, monkeypatch))


@pytest.mark.parametrize("seed", [0, 5])
def test_anchor_search_without_the_byte_shuffle_finds_the_same(seed: int):
    """The byte-table search (CPUs without SSSE3 / NEON) finds what the nibble shuffle finds."""
    body = b"\n".join([_mutated_log(seed, 2000), "\n".join(BASE_LINES).encode()])
    args = (*textlog._compiled().scanner_args, logshapes.N_FIXED, len(logshapes.PAIR_SLOTS))
    outs = []
    for shuffle in (True, False):
        scanner = textlog._logscan.Scanner({}, *args, shuffle=shuffle)
        out = scanner.scan(body, 1)
        outs.append((out["claimed"], out["back"], out["back_lines"], scanner.tables()))
    assert outs[0] == outs[1] and outs[0][0] > 250  # (a few hundred lines claimed: the comparison is not vacuous)


def test_the_bench_log_reads_the_same(tmp_path: Path, monkeypatch, same_result):
    """The generated log the speed is measured on (bench/generate.py), small."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_generate", ROOT / "bench" / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    path = tmp_path / "mixed.log"
    generate.write_mixed_log(path, 20_000)
    fast, ref = _both(path, monkeypatch)
    _same(fast, ref, same_result)
    assert fast.tables["scalars"].height > 60_000
