"""Real logs of other writers (tests/fixtures/conformance/*/PROVENANCE.md), read with the values
worked out by hand from the files. Each test states the arithmetic.

Also the real MindSpore 2.10 Model.fit log with its eval lines (fixtures/logs/mindspore_fit.log,
made by make_mindspore_fit_log.py).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from statistics import median

import polars as pl
import pytest

from postmortem.model import Artifact
from postmortem.readers import textlog

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def read(path: Path, rank: int | None = 0):
    return textlog.READER.read(Artifact(path=str(path), rel=path.name, size=path.stat().st_size, mtime=0.0, rank=rank))


def rows(r, tag: str, source: str | None = None) -> list[tuple[int, float]]:
    df = r.tables["scalars"].filter(pl.col("tag") == tag)
    if source:
        df = df.filter(pl.col("source") == source)
    return list(zip(df["step"].to_list(), df["value"].to_list()))


def events(r, kind: str) -> pl.DataFrame:
    return r.tables["events"].filter(pl.col("kind") == kind)


def naive(s: str) -> float:
    """A zone-less clock time read as if UTC (ReadResult.clock = "local")."""
    return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()


def diag(r, slug: str):
    (d,) = [d for d in r.diagnostics if d.slug == slug]
    return d


# --------------------------------------------------------------------------- model zoo, MindSpore 1.x GPU


@pytest.fixture(scope="module")
def stacking():
    return read(CONF / "mf-stacking-gpu-log" / "训练日志.txt")


def test_stacking_steps_as_printed_in_four_launches(stacking):
    loss = rows(stacking, "loss", "log:modelzoo")
    steps = [s for s, _ in loss]
    # 287 "outputs are" lines. "step" is cur_step_num, global within a launch, every sink_size = 10
    # steps; each launch counts from 10 again: 10..210 (21 lines), 10..530 (53), 10..530 (53),
    # 10..1600 over epochs 0..2 (160). 21 + 53 + 53 + 160 = 287. Emitted in file order.
    assert len(loss) == 287
    assert steps == list(range(10, 211, 10)) + 2 * list(range(10, 531, 10)) + list(range(10, 1601, 10))
    # the first tensor of each tuple is the loss: "value= [ 1.85208678e-01]" -> 0.185208678
    assert loss[0] == (10, pytest.approx(0.185208678)) and loss[20] == (210, pytest.approx(0.100572549))
    assert loss[21] == (10, pytest.approx(10.3571587)) and loss[73] == (530, pytest.approx(0.0822033063))
    assert loss[127] == (10, pytest.approx(0.101663359)) and loss[-1] == (1600, pytest.approx(0.0902149752))
    assert stacking.clock == "utc"  # no step line has a timestamp: nothing placed in time


def test_stacking_overflow_flag_and_loss_scale(stacking):
    overflow = rows(stacking, "overflow")
    # the Bool tensor is True on two lines: launch 1's and launch 2's first (both step 10)
    assert sum(v for _, v in overflow) == 2 and len(overflow) == 287
    ev = events(stacking, "overflow")
    assert ev["step"].to_list() == [10, 10] and ev["source"].to_list() == ["log:modelzoo"] * 2
    # the third tensor is the loss scale: "value= 4.1943e+06" -> 4194300.0, then 131072 at step 20
    assert ev["detail"].to_list() == ["loss_scale=4194300.0"] * 2
    assert rows(stacking, "loss_scale")[:2] == [(10, 4194300.0), (20, 131072.0)]


def test_stacking_timemonitor_per_sink_of_ten_steps(stacking):
    st = rows(stacking, "step_time", "log:timemonitor")
    # each "Train epoch time: ... per step time: X ms" follows a step line: it is the mean of the
    # sink's 10 steps, placed at that step. 287 lines, the first 2357.534 ms.
    assert len(st) == 287 and st[0] == (10, pytest.approx(2.357534))
    assert rows(stacking, "epoch_time")[0] == (10, pytest.approx(23.575337))  # 23575.337 ms
    # medians of the launches (sorted values, the middle one): 21 -> 11th, 53 -> 27th
    assert median(v for _, v in st[:21]) == pytest.approx(1.361078)
    assert median(v for _, v in st[21:74]) == pytest.approx(0.517118)


def test_stacking_settings_from_the_printed_arguments(stacking):
    got = {k: s.value for k, s in stacking.settings.items()}
    # the "Training Arguments" / "Model config" JSON blocks, one key per line (strings of numbers)
    assert {k: got[k] for k in ("hidden_size", "num_layers", "num_heads", "seq_length", "global_batch_size")} == {
        "hidden_size": 768, "num_layers": 24, "num_heads": 12, "seq_length": 511, "global_batch_size": 16}
    assert got["sink_size"] == 10 and got["vocab_size"] == 50257
    # "The number of parameters :8.2E+07" (launch 1), 6.0E+07, 8.2E+07, 1.2E+08: the last launch's
    assert got["num_parameters"] == 1.2e8 and got["trainable_parameters"] == 1.2e8
    assert {s.source for s in stacking.settings.values()} == {"log"}


# --------------------------------------------------------------------------- model zoo ResNet, sink mode


def test_resnet_epoch_summary():
    r = read(CONF / "ms-models-resnet50-8p-log" / "log.txt")
    # steps per epoch = round(epoch time / per step time): 183647/588.613 = 312.0,
    # 103711/332.408 = 312.0, 99554/319.804 = 311.3, 94192/301.897 = 312.0, 87943/281.867 = 312.0;
    # the median, 312. The loss of epoch e is at its last step, e x 312.
    assert rows(r, "loss") == [(312, 5.282135), (624, 4.446517), (936, 3.916948), (1248, 3.510729), (1560, 3.402662)]
    assert diag(r, "log-steps-per-epoch").message.startswith("312 steps per epoch, from epoch time / per-step time")
    assert "the median of 5 epoch lines; 1 give another ratio" in diag(r, "log-steps-per-epoch").message
    # the times are epoch averages: the source the loader treats as such
    st = rows(r, "step_time", "log:timemonitor")
    assert st == [(312, pytest.approx(0.588613)), (624, pytest.approx(0.332408)), (936, pytest.approx(0.319804)),
                  (1248, pytest.approx(0.301897)), (1560, pytest.approx(0.281867))]
    assert rows(r, "epoch_time")[0] == (312, 183.647)  # seconds as printed
    assert set(r.tables["scalars"]["source"].to_list()) == {"log:modelzoo", "log:timemonitor"}
    assert r.tables["scalars"]["wall_time"][0] == naive("2023-02-20 10:01:18.405") and r.clock == "local"


def test_resnet_non_sink_step_line(tmp_path: Path):
    # a line pasted in mindspore-lab/mindocr issue 77 (the ResNet callback's copy, with fps)
    p = tmp_path / "log.txt"
    p.write_text("2023-02-17 11:43:14,405:INFO:epoch: [1/10] step: [10/85], lr: 0.001000, loss: 1.487435, "
                 "per step time: 3096.616 ms, fps: 16.54 img/s\n"
                 "2023-02-17 11:43:37,711:INFO:epoch: [2/10] step: [10/85], lr: 0.001000, loss: 1.251532, "
                 "per step time: 751.433 ms, fps: 14.97 img/s\n")
    r = read(p)
    # epoch 2, step 10 of 85: (2 - 1) x 85 + 10 = 95
    assert rows(r, "loss") == [(10, 1.487435), (95, 1.251532)]
    assert rows(r, "step_time") == [(10, pytest.approx(3.096616)), (95, pytest.approx(0.751433))]
    assert rows(r, "fps")[0] == (10, 16.54) and rows(r, "lr")[0] == (10, 0.001)


# --------------------------------------------------------------------------- MindSpore LossMonitor + TimeMonitor


def test_c3d_lossmonitor_timemonitor():
    r = read(CONF / "ms-models-c3d-lossmonitor-log" / "train.log")
    # sink mode prints the epoch's last step, 223; epochs 1, 2, 3, 29, 30 ("..." in between):
    # the complete epochs end at step 223 -> global (epoch - 1) x 223 + 223 = epoch x 223
    assert rows(r, "loss") == [(223, 2.8705792), (446, 1.8403366), (669, 1.4866445), (6467, 0.3037338), (6690, 0.2176594)]
    assert diag(r, "log-steps-per-epoch").message == "223 steps per epoch: the longest epoch the LossMonitor lines show."
    assert rows(r, "step_time") == [(223, pytest.approx(0.332464)), (446, pytest.approx(0.269439)),
                                    (669, pytest.approx(0.273972)), (6467, pytest.approx(0.271018)),
                                    (6690, pytest.approx(0.269644))]
    assert rows(r, "epoch_time")[0] == (223, pytest.approx(74.13953)) and rows(r, "epoch_time")[-1][1] == pytest.approx(60.130695)


# --------------------------------------------------------------------------- MindYOLO


def test_mindyolo_issue402():
    r = read(CONF / "mindyolo-issue402-log" / "train.log")
    # "Epoch 1/200, Step s/3995": global step (1 - 1) x 3995 + s = s
    assert rows(r, "loss") == [(100, 11.6707), (200, 8.8465), (300, 8712.5938), (400, 15806.3818)]
    assert rows(r, "lcls") == [(100, 5.5689), (200, 3.895), (300, 8705.2168), (400, 15799.6025)]
    assert rows(r, "lr")[0] == (100, 0.09924906492233276)  # cur_lr
    assert {t for t in r.tables["scalars"]["raw_tag"].to_list()} == {"loss", "lbox", "lcls", "dfl", "cur_lr", "step time"}
    assert rows(r, "step_time") == [(100, pytest.approx(5.73671)), (200, pytest.approx(0.6544)),
                                    (300, pytest.approx(0.69417)), (400, pytest.approx(0.66074))]
    # each overflow warning comes just before its step's loss line: it belongs to the next step
    ev = events(r, "overflow")
    assert ev["step"].to_list() == [100, 200, 300, 400]
    assert ev["detail"].to_list() == ["the update was not skipped (overflow_still_update); loss scale adjusted to 1024.0"] * 4
    assert ev["wall_time"][0] == naive("2024-12-25 09:58:34.125") and r.clock == "local"
    assert set(r.tables["scalars"]["source"].to_list()) == {"log:mindyolo"} and not r.diagnostics


# --------------------------------------------------------------------------- MindFormers


def test_mindformers_llama2_docs_lines():
    r = read(CONF / "mf-docs-llama2-13b-log" / "msrun_log" / "worker_0.log")
    # Epoch 1/2, step s/19: global step s
    assert rows(r, "loss") == [(1, 10.649), (2, 10.633), (3, 9.673), (4, 9.287), (5, 8.867)]
    assert rows(r, "step_time") == [(1, pytest.approx(103.328)), (2, pytest.approx(1.752)), (3, pytest.approx(1.754)),
                                    (4, pytest.approx(1.756)), (5, pytest.approx(1.758))]
    assert [v for _, v in rows(r, "lr")] == [0.0, 1e-05, 9.981987e-06, 9.928079e-06, 9.8386645e-06]
    assert [v for _, v in rows(r, "tflops_per_device")] == [2.896, 170.738, 170.523, 170.319, 170.173]
    # "global_norm [10.579812]" (no colon) is read; "global_norm: [1 31049]" is two numbers, no norm
    assert rows(r, "grad_norm") == [(3, 10.579812), (4, 21.932272), (5, 16.986555)]
    d = diag(r, "log-field-unreadable")
    assert d.severity == "info" and d.offset == 1 and d.message.startswith("2 values could not be read")
    assert rows(r, "overflow") == [(s, 0.0) for s in range(1, 6)] and rows(r, "loss_scale")[0] == (1, 1.0)
    assert r.tables["scalars"]["wall_time"][0] == naive("2025-04-07 15:34:27.308") and r.clock == "local"
    assert r.tables["events"].is_empty()


def test_mindformers_skip_data_and_stop():
    r = read(CONF / "mf-docs-skipdata-log" / "worker_0.log")
    assert rows(r, "loss") == [(1, 0.0), (2, 0.0)]
    assert rows(r, "step_time") == [(1, pytest.approx(166.756)), (2, pytest.approx(7.637))]
    assert rows(r, "grad_norm") == [(1, 44.313248), (2, 47.329006)]
    assert rows(r, "tflops_per_device") == [(1, 2.849), (2, 62.211)]
    # the progress line after each monitor line: samples/s/p at that step
    assert rows(r, "samples_per_s") == [(1, 0.006), (2, 0.006)]
    # "is_skip: [ True]" after each step: both updates were skipped
    skip = events(r, "skip")
    assert skip["step"].to_list() == [1, 2] and skip["source"].to_list() == ["log:mindformers"] * 2
    assert "skip_data_grad_norm_threshold 3.0" in skip["detail"][0]
    # the second spike stops the run: "ValueError: ... stop training..." is the error
    err = events(r, "log_error")
    assert err["step"].to_list() == [2] and err["detail"][0].startswith("ValueError: Current global norm [47.329006]")
    assert r.tables["scalars"]["wall_time"].null_count() == r.tables["scalars"].height  # no timestamps pasted
    assert not r.diagnostics


# --------------------------------------------------------------------------- MindSpore Model.fit with eval


def test_mindspore_fit_eval_lines():
    r = read(LOGS / "mindspore_fit.log")
    # 3 epochs of 4 steps; after each epoch's steps: "Eval epoch time: ..." then "Eval result: ..."
    ev = events(r, "eval")
    assert ev["step"].to_list() == [4, 4, 8, 8, 12, 12]
    durations = ev["duration_s"].to_list()
    assert durations[0::2] == [pytest.approx(1.052435), pytest.approx(0.00383), pytest.approx(0.003638)]
    assert durations[1::2] == [None, None, None]  # LossMonitor's line has no time
    assert rows(r, "eval_mae") == [(4, pytest.approx(0.8844678)), (8, pytest.approx(0.79317355)), (12, pytest.approx(0.7950071))]
    assert rows(r, "step_time", "log:timemonitor") == [(4, pytest.approx(0.264672)), (8, pytest.approx(0.001078)),
                                                      (12, pytest.approx(0.001046))]  # "Train epoch time" only
    assert [s for s, _ in rows(r, "loss")] == list(range(1, 13))
