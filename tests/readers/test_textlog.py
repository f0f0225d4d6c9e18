"""textlog reader on callback lines in the shapes of formats.md section 4.

mindspore_train.log is the stdout of a real MindSpore 2.10 run (make_mindspore_log.py); the other
fixtures are written line by line by make_text_logs.py.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import EVENTS, SCALARS, Artifact
from postmortem.readers import textlog

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def read(path: Path, rank: int | None = 0):
    a = Artifact(path=str(path), rel=f"logs/{path.name}", size=path.stat().st_size, mtime=0.0, rank=rank)
    return textlog.READER.read(a)


def series(r, tag: str, source: str | None = None) -> list[tuple[int, float]]:
    df = r.tables["scalars"].filter(pl.col("tag") == tag)
    if source:
        df = df.filter(pl.col("source") == source)
    return list(zip(df["step"].to_list(), df["value"].to_list()))


def utc(s: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


def test_claims():
    c = textlog.READER.claims
    for rel in ("output/log/rank_0/info.log", "worker_3.log", "run.txt", "nohup.out", "m.jsonl", "stdout", "stderr.txt"):
        assert c(Artifact(path="/x", rel=rel, size=1, mtime=0)), rel
    for rel in ("a.yaml", "events.out.events.summary.1.0.h_MS", "x.ckpt"):
        assert not c(Artifact(path="/x", rel=rel, size=1, mtime=0)), rel


def test_real_lossmonitor_timemonitor_run():
    r = read(FIX / "mindspore_train.log")
    df = r.tables["scalars"]
    assert df.schema == SCALARS
    # 3 epochs x 4 steps: "epoch: 2 step: 1" is global step 5
    loss = series(r, "loss", "log:lossmonitor")
    assert [s for s, _ in loss] == list(range(1, 13))
    assert loss[4][1] == pytest.approx(1.4261876344680786)
    # TimeMonitor averages sit at the last step of each epoch, in seconds
    st = series(r, "step_time", "log:timemonitor")
    assert st == [(4, pytest.approx(0.110046)), (8, pytest.approx(0.000824)), (12, pytest.approx(0.000868))]
    assert series(r, "epoch_time")[0] == (4, pytest.approx(0.440184))
    assert series(r, "data_time")[2] == (12, pytest.approx(0.000105))
    d = [d for d in r.diagnostics if d.slug == "log-steps-per-epoch"]
    assert d and "4" in d[0].message
    assert set(df["rank"].to_list()) == {0} and set(df["file"].to_list()) == {"logs/mindspore_train.log"}


def test_single_epoch_keeps_step_in_epoch_and_1x_timemonitor():
    r = read(FIX / "ms1x.log")
    assert series(r, "loss") == [(1, 2.5), (2, 2.4)]
    assert series(r, "step_time") == [(2, pytest.approx(0.215968))]
    assert any("one epoch only" in d.message for d in r.diagnostics)


def test_mindformers_r03():
    r = read(FIX / "mf_r03.log")
    assert series(r, "loss") == [(1, 10.649), (2, 10.5), (3, 10.2), (4, 9.9)]  # epoch 2 step 1 -> 4
    assert series(r, "step_time")[0] == (1, pytest.approx(103.328))
    assert series(r, "lr")[1] == (2, pytest.approx(1e-5))
    assert series(r, "overflow") == [(1, 0.0), (2, 1.0), (3, 0.0), (4, 0.0)]
    assert series(r, "loss_scale")[1] == (2, 65536.0)
    wt = r.tables["scalars"].filter(pl.col("step") == 1)["wall_time"][0]
    assert wt == pytest.approx(utc("2024-05-08 10:36:53.123"))
    ev = r.tables["events"]
    assert ev.schema == EVENTS
    assert ev.filter(pl.col("kind") == "overflow")["step"].to_list() == [2]


def test_mindformers_r07_sink_and_progress():
    r = read(FIX / "mf_r07.log")
    assert series(r, "samples_per_s") == [(1, 0.07742), (2, 1.23456)]  # unicode and '#' bars
    assert series(r, "lr") == [(1, 0.0)]  # line 2 has no lr: nothing invented
    assert series(r, "step_time") == [(1, pytest.approx(103.328)), (2, pytest.approx(0.812))]
    r = read(FIX / "mf_r07_nonsink.log")
    assert series(r, "loss") == [(5, 10.649)]  # current value of [current/mean]


@pytest.mark.parametrize(
    "name,expected",
    [
        ("mf_r13.log", {"grad_norm": [(7, 1.31049)], "loss": [(7, 8.123)]}),
        ("mf_r14.log", {"tflops_per_device": [(8, 2.896)], "samples_per_s": [(8, 3.5)]}),
        (
            "mf_r17.log",
            {
                "loss": [(60, 3.141593)],  # epoch 2 of 50-step epochs, step 10
                "lm_loss": [(60, 3.0)],
                "load_balancing_loss": [(60, 0.1)],
                "mtp_loss": [(60, 0.041593)],
                "lr": [(60, 2.5e-4)],
                "tflops_per_device": [(60, 150.5)],
            },
        ),
        ("pynative.log", {"grad_norm": [(5, 1.234567), (6, -math.inf)], "lr": [(5, 1e-4), (6, 1e-4)]}),
    ],
)
def test_mindformers_releases(name, expected):
    r = read(FIX / name)
    for tag, values in expected.items():
        assert series(r, tag) == [(s, pytest.approx(v)) for s, v in values], tag
    assert set(r.tables["scalars"]["source"].to_list()) == {"log:mindformers"}


def test_nan_kept_as_data():
    r = read(FIX / "mf_r14.log")
    (_, v), = series(r, "grad_norm")
    assert math.isnan(v)
    r = read(FIX / "pynative.log")
    assert series(r, "loss")[1] == (6, math.inf)


def test_flops_collector():
    r = read(FIX / "flops.log")
    assert r.settings["full_model_flops"].value == 1.2e15
    assert r.settings["shard_hardware_flops"].value == 1.875e14 and r.settings["full_model_flops"].source == "log"
    assert series(r, "mfu") == [(1, pytest.approx(0.0047)), (2, pytest.approx(0.0048))]  # fractions
    assert series(r, "hfu")[0] == (1, pytest.approx(0.0059))
    assert series(r, "step_time", "log:flops") == [(1, pytest.approx(0.135572)), (2, pytest.approx(0.135))]


def test_key_value_lines():
    r = read(FIX / "user_kv.log")
    assert [s for s, _ in series(r, "loss")] == [100, 101, 102, 103]  # "step=abc" and no-step lines dropped
    assert series(r, "step_time")[0] == (100, pytest.approx(0.8124))  # _ms -> s
    assert series(r, "data_time") == [(100, pytest.approx(0.0031))]
    assert series(r, "tokens_per_s") == [(100, 40000.0)]
    losses = dict(series(r, "loss"))
    assert math.isnan(losses[101]) and math.isnan(losses[102])
    gn = dict(series(r, "grad_norm"))
    assert gn[101] == math.inf and gn[102] == -math.inf
    assert dict(series(r, "step_time"))[102] == math.inf  # 1e999
    assert "optimizer" not in r.tables["scalars"]["tag"].to_list()  # not a number
    wt = dict(zip(r.tables["scalars"]["step"], r.tables["scalars"]["wall_time"]))
    assert wt[100] is None
    assert wt[101] == pytest.approx(utc("2024-05-08 10:36:53.5"))  # Z
    assert wt[102] == pytest.approx(utc("2024-05-08 10:36:54.25"))  # [..] naive -> UTC
    assert wt[103] == pytest.approx(utc("2024-05-08 10:36:55"))  # +08:00 offset applied
    assert set(r.tables["scalars"]["source"].to_list()) == {"log:kv"}


def test_json_lines():
    r = read(FIX / "user.jsonl")
    assert [s for s, _ in series(r, "loss")] == [200, 201, 203]
    assert math.isnan(dict(series(r, "grad_norm"))[200])
    assert dict(series(r, "loss"))[201] == math.inf
    assert dict(series(r, "step_time")) == {200: pytest.approx(0.5), 201: pytest.approx(0.5)}
    (d,) = [d for d in r.diagnostics if d.slug == "log-json-invalid"]
    assert d.offset == 4 and d.path == "logs/user.jsonl"


def test_errors_become_events():
    r = read(FIX / "errors.log")
    ev = r.tables["events"]
    errs = ev.filter(pl.col("kind") == "log_error")
    assert errs.height == 2  # the ERROR line and the traceback (one event, named by its exception)
    assert errs["step"].to_list() == [3, 3]
    assert len(errs["detail"][0]) == 300 and "ERROR - out of memory" in errs["detail"][0]
    assert errs["detail"][1] == "RuntimeError: boom"
    assert ev.filter(pl.col("kind") == "overflow")["step"].to_list() == [3]


def test_crlf_same_as_lf():
    a = read(FIX / "crlf.log").tables["scalars"].drop("file")
    lf_text = (FIX / "crlf.log").read_bytes().replace(b"\r\n", b"\n")
    assert b"\r" not in lf_text
    assert series(read(FIX / "crlf.log"), "grad_norm") == [(7, 1.31049), (100, 1.2)]
    assert a.filter(pl.col("tag") == "loss")["value"].to_list() == [8.123, 2.31]


def test_non_utf8_reported_once_with_line():
    r = read(FIX / "latin.log")
    assert series(r, "loss") == [(1, 3.0), (2, 2.9)]
    (d,) = [d for d in r.diagnostics if d.slug == "log-encoding"]
    assert d.offset == 2 and d.path == "logs/latin.log"


def test_interleaved_ranks_use_their_own_rank_key():
    r = read(FIX / "interleaved.log", rank=None)
    df = r.tables["scalars"]
    assert df.filter(pl.col("rank") == 1)["step"].to_list() == [1, 2, 3]
    assert df.filter(pl.col("rank") == 0)["value"].to_list() == pytest.approx([4.9, 4.8, 4.7])


def _long_line_log(tmp_path: Path) -> Path:
    good = (FIX / "user_kv.log").read_bytes().splitlines()[0]  # a real-shaped line
    p = tmp_path / "long.log"
    p.write_bytes(good + b"\n" + b"step=99 loss=" + b"9" * 100_000 + b"\n" + good.replace(b"step=100", b"step=101") + b"\n")
    return p


def test_long_line_skipped_within_chunk(tmp_path: Path):
    r = read(_long_line_log(tmp_path))
    assert [s for s, _ in series(r, "loss")] == [100, 101]
    (d,) = [d for d in r.diagnostics if d.slug == "log-line-too-long"]
    assert d.offset == 2


def test_long_line_spanning_chunks(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(textlog, "CHUNK_BYTES", 4096)
    r = read(_long_line_log(tmp_path))
    assert [s for s, _ in series(r, "loss")] == [100, 101]
    (d,) = [d for d in r.diagnostics if d.slug == "log-line-too-long"]
    assert d.offset == 2


def test_small_chunks_give_same_result(monkeypatch):
    whole = read(FIX / "mf_r03.log").tables["scalars"]
    monkeypatch.setattr(textlog, "CHUNK_BYTES", 64)
    assert read(FIX / "mf_r03.log").tables["scalars"].equals(whole)


def test_empty_and_noise_files(tmp_path: Path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    r = read(p)
    assert r.tables["scalars"].height == 0 and r.tables["scalars"].schema == SCALARS
    p.write_bytes(b"hello\nworld without newline")
    assert read(p).tables["scalars"].height == 0


# --------------------------------------------------------------------------- fast paths == reference paths


def _frame_of(lines: list[str], wall: float | None = None) -> pl.DataFrame:
    n = len(lines)
    return pl.DataFrame(
        {"lineno": range(1, n + 1), "line": lines, "pos": range(1, n + 1), "wall_time": [wall] * n},
        schema={"lineno": pl.Int64, "line": pl.Utf8, "pos": pl.Int64, "wall_time": pl.Float64},
    )


_JSON_LINES = [
    '{"step": 1, "loss": 2.5, "lr": 1e-4, "rank": 3, "note": "ok", "flag": true, "x": null}',
    '{"step":2,"loss":-0,"a":-0.0,"b":1E5,"c":5e-324,"d":1e400,"e":123456789012345678901234567890}',
    'prefix "k": 1 {"global_step": 3, "step": "4", "loss": "nan", "s": "1e-4", "r": "2"} tail',
    '{"step": 5, "loss": 1, "loss": 2}',  # repeated key: json keeps the last value at the first place
    '{"step": 6, "loss": NaN, "g": Infinity}',
    '{"step": 7, "n": {"a": 1}, "l": [1], "loss": 3}',
    '{"step": 8, "esc": "a\\"b", "\\u00e9": 1, "loss": 4}',
    '{"step": 9, "loss": 01}',  # invalid JSON
    '{"step": 10, "loss": 1, "time": 1700000000123}',
    '{"step": 11, "loss": 1, "ts": "2024-05-08T10:36:53+02:00"}',
    '{"step": 12, "loss": 1, "rank": 2.0, "step_ms": 812, "data_s": 0.5, "tok\u00e9n": 3}',
    '{"step": 13, "big": %s}' % ("9" * 4301),  # json.loads refuses ints this long
    '{"step": 14, "tab": "a\tb"}',  # control character in a string: invalid JSON
    "{}  step\"",
    '  {"step" : 15 ,"loss" :\t0.25 }  ',
]


@pytest.mark.parametrize("wall", [None, 5.0])
def test_json_fast_path_matches_json_loads(wall):
    df = _frame_of(_JSON_LINES, wall)
    fast, bad = textlog._json(df)
    pairs, ref_bad = textlog._json_lines(df)
    assert bad == ref_bad == 8
    # raw texts of floats differ by design (the line's text vs repr): compare what is read from them
    keys: dict[str, int] = {}
    fast, _ = textlog._with_step(textlog._numeric_pairs(fast, keys), keys)
    ref, _ = textlog._with_step(textlog._numeric_pairs(pairs, keys), keys)
    labels = textlog._Labels()  # one numbering for both, so their label codes compare
    got = textlog._pairs_to_long(fast, "log:json", labels, keys).with_columns(sign=pl.col("value").cast(pl.Utf8))  # -0.0 vs 0.0
    want = textlog._pairs_to_long(ref, "log:json", labels, keys).with_columns(sign=pl.col("value").cast(pl.Utf8))
    assert got.equals(want, null_equal=True) and got.height == want.height > 20


_NEVER = r"(?P<never>$x)"  # no line matches: every line takes the per-pattern path


@pytest.mark.parametrize(
    "lines, specs, fast_re",
    [
        (
            [
                "2026-11-30 10:50:06,206 - [mindformers/core/callback/callback.py:529] - INFO - { Epoch:[  1/ 15], "
                "step:[    1/ 1000], loss: 11.194, per_step_time: 16607ms, lr: 2.1e-06, overflow cond: True, "
                "loss_scale: 1.0, global_norm: [1.009688], train_throughput_per_npu: 10.359T",
                "{ Epoch:[1/2], step:[3/10], loss: nan, per_step_time: 1e3ms, overflow cond: False, loss_scale: -inf",
                "{ Epoch:[1/2], step:[3/10], loss: .5, per_step_time: 1ms, lr: 1e, overflow cond: False, loss_scale: 1",
                "[a/lm_loss:5] - INFO - { Epoch:[1/2], step:[4/10], loss: 1, per_step_time: 1ms, overflow cond: False, loss_scale: 1",
                "{ Epoch:[1/2], step:[5/10], loss: 1, per_step_time: 1ms, overflow cond: False, loss_scale: 1, global_norm: [--inf]",
                "{ Epoch:[  1/  2], step:[    1/  100], loss:[10.649/10.649], time:103328.000 ms, lr:0.0, overflow cond: False",
                "{ step:[    5/  100], loss: 2.345678, per_step_time: 812ms, lr: 1.000000e-04, grad_norm: 1.2, throughput: 123.45T }",
            ],
            textlog._MF_SPECS,
            textlog._MF_FAST_RE,
        ),
        (
            ["epoch: 1 step: 2, loss is 8.61", "epoch: 2 step: 3, loss is 1e", "epoch:  1 step: 2, loss is -Infinity",
             "epoch: 1 step: 2, loss is Tensor(shape=[], dtype=Float32, value= 2.5)"],
            textlog._LM_SPECS,
            textlog._LM_FAST_RE,
        ),
        (
            ["Train per step time: 135.572 ms mfu:0.47% hfu:0.47%", "Train per step time: 1 ms, mfu:1e-3% hfu:inf%",
             "Train per step time: 5 ms mfu:1% hfu:2% extra", "per step time: 5 ms, mfu:1% hfu:2%"],
            textlog._FS_SPECS,
            textlog._FS_FAST_RE,
        ),
    ],
)
def test_fast_regex_matches_per_pattern_path(lines, specs, fast_re):
    df = _frame_of(lines)
    got = textlog._fields(df, specs, fast_re)
    want = textlog._fields(df, specs, _NEVER)
    assert got.equals(want, null_equal=True)
    assert df["line"].str.extract_groups(fast_re).struct.unnest().to_series(0).null_count() < len(lines)


def test_wall_time_ascii_path_matches_unicode_regex():
    lines = pl.Series(
        [
            "2024-05-08 10:36:53,123 x",
            "2024-05-08T10:36:53.123456+05:30 x",
            " " * 16 + "[2024-05-08 10:36:53.5-0700] x",
            " " * 20 + "2024-05-08 10:36:53.5Z x",  # more leading space than the ASCII path takes
            " " * 50 + "2024-05-08 10:36:53,12\u0663 x",  # ... and a Unicode digit past char 64
            "2024-05-0810:36:53 x",
            "\u00a02024-05-08 10:36:53 x",  # Unicode space
            "2024-05-08 10:36:53,12\u0663 x",  # Unicode digit in the fraction
            "2024-05-08 10:36:53+0\u0665:30 x",
            "2024-05-08 10:36:53.1234567891234 x",
            "2024-13-40 99:99:99 x",
            "\u00e9" * 70 + " 2024-05-08 10:36:53",
            "no stamp",
            "",
        ]
    )
    want = textlog._stamp_seconds(lines.str.extract_groups(textlog._TS_RE).struct.unnest())
    assert textlog._wall_time(lines).equals(want.alias("wall_time"), null_equal=True)


def test_absurd_step_values_are_ignored_not_fatal(tmp_path):
    from postmortem.model import Artifact
    from postmortem.readers import textlog

    log = tmp_path / "train.log"
    log.write_text('{"step": 1e20, "loss": 1.0}\nstep=99999999999999999999999 loss=2.0\nstep=3 loss=3.0\n{"step": 4, "loss": 4.0}\n')
    result = textlog.READER.read(Artifact(str(log), "train.log", log.stat().st_size, 0.0, None))
    loss = result.tables["scalars"].filter(result.tables["scalars"]["tag"] == "loss")
    assert loss["step"].to_list() == [3, 4] and loss["value"].to_list() == [3.0, 4.0]


def test_kv_split_path_matches_extract_all():
    lines = [
        "2026-11-30 10:50:06.206 step=1 epoch=1 loss=11.19 lr=2.1e-06 step_ms=16606.973",
        "a=1 b=2", "x:loss=1 step=2", "a=b=c step=1", "step=1\tloss=2", "step=1  loss=2 ", "\u00e9=1 step=2",
        "step=1 loss=2,3", "step=1 loss=;", "2024-01-01T10:00:00 step=3 lr=1e-3", "step=1 'x'='y'",
        "step=1 a=\u00a0b", "step=1 =3 b=", "step=1 _a.b-c/d=5", "", "no pairs here", "step=1 k=\"v w\"",
    ]
    df = pl.DataFrame({"pos": range(len(lines)), "wall_time": [0.0] * len(lines), "line": lines})
    simple = df["line"].str.contains(textlog._KV_SIMPLE_RE)
    assert 0 < simple.sum() < len(lines)  # both paths taken
    want = (
        df.select("pos", "wall_time", pl.col("line").str.extract_all(textlog._KV_RE).alias("kv"))
        .explode("kv")
        .filter(pl.col("kv").is_not_null())
    )
    assert textlog._kv_tokens(df).equals(want)
    assert textlog._kv_tokens(df.filter(simple)).equals(want.filter(pl.col("pos").is_in(df.filter(simple)["pos"].implode())))
