"""textlog reader on callback lines in the shapes of formats.md section 4, the grammar itself, and
what a file says when it gives nothing.

mindspore_train.log is the stdout of a real MindSpore 2.10 run (make_mindspore_log.py); the other
fixtures are written line by line by make_text_logs.py. The real logs of other writers are in
test_textlog_conformance.py.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from postmortem.model import EVENT_KINDS, EVENTS, SCALARS, Artifact
from postmortem.readers import textlog
from postmortem.readers.textlog import parse as logparse, shapes as logshapes

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
    assert any("One epoch only" in d.message for d in r.diagnostics)


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


def slugs(r) -> dict[str, object]:
    return {d.slug: d for d in r.diagnostics}


def test_empty_file_says_so(tmp_path: Path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    r = read(p)
    assert r.tables["scalars"].height == 0 and r.tables["scalars"].schema == SCALARS
    assert slugs(r)["log-empty"].message == "The file is empty."
    p.write_bytes(b"\n  \n\t\r\n")
    assert slugs(read(p))["log-empty"].message == "The file holds only blank lines."


def test_unrecognised_file_shows_its_first_line(tmp_path: Path):
    p = tmp_path / "notes.txt"
    long = "a line no writer prints " * 10  # 240 characters: shortened to 117 + "..."
    p.write_text("\n   \n" + long + "\nworld without newline")
    r = read(p)
    (d,) = r.diagnostics
    assert d.slug == "log-unrecognised" and d.severity == "warning" and d.offset == 3
    assert repr(long[:117] + "...") in d.message


def test_recognised_lines_that_give_nothing_say_so(tmp_path: Path):
    # a TimeMonitor line with no step anywhere, and a key=value line without a usable step
    p = tmp_path / "train.log"
    p.write_text("Train epoch time: 431.937 ms, per step time: 53.992 ms\nstep=abc loss=1.0 lr=0.1\n")
    r = read(p)
    assert r.rows() == 0
    assert slugs(r)["log-no-step"].message.startswith("2 values had no step")
    assert slugs(r)["log-nothing-kept"].message.startswith("2 lines are in known log shapes")


def test_a_file_with_only_errors_is_not_silent(tmp_path: Path):
    p = tmp_path / "error.log"
    p.write_text("2024-05-08 10:36:54,000 - [mindformers/trainer/base_trainer.py:99] - ERROR - out of memory\n")
    r = read(p)
    assert r.tables["events"]["kind"].to_list() == ["log_error"]
    assert not {"log-empty", "log-unrecognised", "log-nothing-kept"} & set(slugs(r))


def test_unreadable_lines_and_values_are_counted_once_per_file(tmp_path: Path):
    p = tmp_path / "train.log"
    good = "{ Epoch:[  1/  2], step:[    %d/   19], loss: 9.673, per_step_time: 1754ms, overflow cond: False, loss_scale: 1.0"
    p.write_text(
        "\n".join([
            good % 1,
            good.replace("loss: 9.673", "loss: 9.6.7") % 2,  # the loss is required: the line is unreadable
            good.replace("loss: 9.673", "loss: nine") % 3,
            good.replace("loss_scale: 1.0", "loss_scale: 1.0.0") % 4,  # an optional value: left out
            "epoch: 1 step: 1, loss is Tensor(",  # LossMonitor with no readable loss
        ])
    )
    r = read(p)
    d = slugs(r)
    assert d["log-line-unreadable"].offset == 2 and d["log-line-unreadable"].severity == "warning"
    assert d["log-line-unreadable"].message.startswith("3 lines look like lossmonitor, mindformers lines")
    assert d["log-field-unreadable"].offset == 4 and d["log-field-unreadable"].severity == "info"
    assert "1 values" in d["log-field-unreadable"].message and "mindformers loss_scale" in d["log-field-unreadable"].message
    assert [s for s, _ in series(r, "loss")] == [1, 4]
    assert [s for s, _ in series(r, "loss_scale")] == [1]


def test_absurd_step_values_are_ignored_not_fatal(tmp_path):
    from postmortem.model import Artifact
    from postmortem.readers import textlog

    log = tmp_path / "train.log"
    log.write_text('{"step": 1e20, "loss": 1.0}\nstep=99999999999999999999999 loss=2.0\nstep=3 loss=3.0\n{"step": 4, "loss": 4.0}\n')
    result = textlog.READER.read(Artifact(str(log), "train.log", log.stat().st_size, 0.0, None))
    loss = result.tables["scalars"].filter(result.tables["scalars"]["tag"] == "loss")
    assert loss["step"].to_list() == [3, 4] and loss["value"].to_list() == [3.0, 4.0]




# --------------------------------------------------------------------------- the grammar


@pytest.mark.parametrize("shape", logshapes.SHAPES, ids=lambda s: s.name)
def test_every_shape_reads_its_own_example_line(shape):
    rec = logparse.Records()
    logparse.parse_line(shape.example, 1, rec, {})
    assert rec.recognised == {shape.name: 1}  # this shape takes it, no earlier one
    assert not rec.unreadable_lines and not rec.unreadable_fields
    assert rec.v_value or rec.events or rec.settings or rec.fields or rec.times or shape.name == "mindformers-norm-check"
    assert shape.writer and shape.example_from
    assert {e.kind for e in shape.events} <= set(EVENT_KINDS)


def test_grammar_fields_are_numbered_once():
    codes = [logshapes.FIELD_CODE[(s.name, f.name)] for s, f in logshapes.FIELDS]
    assert codes == list(range(logshapes.N_FIXED))
    # the C scanner's hot shapes are all in the grammar
    assert {s.fast for s in logshapes.SHAPES if s.fast} == {
        "mindformers", "progress", "lossmonitor", "timemonitor", "flops", "json", "kv"}


def test_numbers_are_plain_ascii_numbers():
    assert logshapes.number("1e-05") == 1e-05 and logshapes.number("1.e-05") == 1e-05
    assert math.isnan(logshapes.number("NaN")) and logshapes.number("-Infinity") == -math.inf
    for text in ("1_000", "0x10", "\u0663", "--inf", "1.2.3", "", " 1"):
        assert logshapes.number(text) is None, text
    assert logshapes.count("123456789") == 123456789 and logshapes.count("1234567890") is None


@pytest.mark.parametrize(
    "text, wall, zone",
    [
        ("2024-05-08 10:36:53,123 x", utc("2024-05-08 10:36:53.123"), logshapes.ZONE_NAIVE),
        ("  [2024-05-08T10:36:53.5-0700] x", utc("2024-05-08 17:36:53.5"), logshapes.ZONE_GIVEN),  # 10:36 at -7h is 17:36 UTC
        ("2024-05-08T18:36:55+08:00", utc("2024-05-08 10:36:55"), logshapes.ZONE_GIVEN),
        ("2024-05-08 10:36:53Z", utc("2024-05-08 10:36:53"), logshapes.ZONE_GIVEN),
        ("2024-05-08 10:36:53+08:0 x", utc("2024-05-08 10:36:53"), logshapes.ZONE_NAIVE),  # not an offset
        ("2024-02-29 10:00:00", utc("2024-02-29 10:00:00"), logshapes.ZONE_NAIVE),
        ("2023-02-29 10:00:00", None, logshapes.ZONE_NONE),  # no such day
        ("2024-05-08 10:36:60", None, logshapes.ZONE_NONE),  # no leap seconds
        ("0000-01-01 00:00:00", None, logshapes.ZONE_NONE),
        ("2024-05-08 24:00:00", None, logshapes.ZONE_NONE),
        ("2024-05-0810:36:53", None, logshapes.ZONE_NONE),
        ("\u00a02024-05-08 10:36:53", None, logshapes.ZONE_NONE),  # the grammar is ASCII
    ],
)
def test_timestamps(text, wall, zone):
    got = logshapes.stamp(text)
    assert got[1] == zone and (got[0] == pytest.approx(wall) if wall is not None else got[0] is None)


def test_zone_less_timestamps_mark_the_file_local(tmp_path: Path):
    assert read(FIX / "mf_r03.log").clock == "local"  # "2024-05-08 10:36:53,123": no zone
    p = tmp_path / "zoned.log"
    p.write_text("2024-05-08T10:36:53.500Z step=101 loss=2.0\n2024-05-08T18:36:55+08:00 step=102 loss=2.1\n")
    assert read(p).clock == "utc"
    p.write_text("step=1 loss=2.0\n")  # no timestamps at all: nothing to place
    assert read(p).clock == "utc"
    p.write_text('{"step": 1, "loss": 2.0, "time": "2024-05-08T10:36:53"}\n')  # a naive ISO time key
    assert read(p).clock == "local"


def test_the_format_notes_describe_every_shape():
    notes = (Path(__file__).resolve().parents[2] / "docs" / "formats" / "textlogs.md").read_text()
    for shape in logshapes.SHAPES:
        assert f"**`{shape.name}`**" in notes, shape.name
        assert shape.example in notes, shape.name  # the same example line, verbatim


@pytest.mark.parametrize(
    "line, tag, value",
    [
        # LossMonitor 0.x / 1.x print the loss as a Tensor; the tutorials' loops add a comma after the epoch
        ("epoch: 1 step: 2, loss is Tensor(shape=[], dtype=Float32, value= 2.5)", "loss", 2.5),
        ("epoch: 1 step: 2, loss is Tensor(shape=[1], dtype=Float32, value= [ 2.30258512e+00])", "loss", 2.30258512),
        ("epoch: 1, step: 2, loss is 2.25", "loss", 2.25),
        # TimeMonitor with no mode (2.x "{} epoch time" of mode ""), and 1.x
        (" epoch time: 431.937 ms, per step time: 53.992 ms", "step_time", 0.053992),
        # MFLossMonitor prints an lr array with np.array2string
        ("{ Epoch:[  1/  2], step:[    2/   19], loss: 10.5, per_step_time: 812ms, lr: [1.e-05], overflow cond: False, "
         "loss_scale: 1.0", "lr", 1e-05),
        # MFLossMonitor r0.3 prints loss_scale "unavailable" without loss scaling: no value, not unreadable
        ("Epoch:[  1/  2], step:[    2/    3], loss:[10.500/10.574], time:812.500 ms, lr:1e-05, overflow cond: False, "
         "loss_scale: unavailable", "step_time", 0.8125),
    ],
)
def test_writer_variants(tmp_path: Path, line: str, tag: str, value: float):
    p = tmp_path / "train.log"
    p.write_text("step=1 note=start\n" + line + "\n")  # a step before, for the lines placed after one
    r = read(p)
    assert [v for _, v in series(r, tag)] == [pytest.approx(value)]
    assert not [d for d in r.diagnostics if d.slug.endswith("unreadable")]
