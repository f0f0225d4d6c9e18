"""Text log, profiler (CSV / JSON) and config (YAML / JSON) readers on damaged copies of real files.

Properties: never raises; what was read before the damage is kept; a stable slug says what was
wrong (log-encoding, log-line-too-long, log-json-invalid, profiler-json, config-unparseable).
"""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from postmortem.readers import configfile, profiler, textlog

from .conftest import FIXTURES, SAMPLES, artifact, fuzz, read_bytes, slugs, table_rows

TRAIN_LOG = SAMPLES / "gpt-tiny-base/train.log"
CONFORMANCE_LOGS = sorted(p for p in (FIXTURES / "conformance").rglob("*") if p.suffix in (".log", ".txt"))
STACKING_LOG = FIXTURES / "conformance/mf-stacking-gpu-log/训练日志.txt"
CONFORMANCE = FIXTURES / "conformance"
ASCEND = CONFORMANCE / "msinsight-torchnpu-imagenet-2025/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
MSTT = CONFORMANCE / "mstt-torchnpu-kd-traceview-2023/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT"
CPU_PROF = next((FIXTURES / "profiler/cpu").glob("*_ascend_ms"))
PROFILER_FILES = {
    "step_trace_time.csv": ASCEND / "step_trace_time.csv",
    "memory_record.csv": ASCEND / "memory_record.csv",
    "communication.json": ASCEND / "communication.json",
    "step_trace_raw_0_detail_time.csv": FIXTURES / "conformance/mi-cluster-4rank/profiler/step_trace_raw_0_detail_time.csv",
    "communication_matrix.json": ASCEND / "communication_matrix.json",
    "kernel_details.csv": MSTT / "kernel_details.csv",
    "npu_module_mem.csv": ASCEND / "npu_module_mem.csv",
    "step_trace_raw_1_detail_time.csv": CONFORMANCE / "mi-run2-ascend-profiler/profiler"
                                        / "step_trace_raw_1_detail_time.csv",
    "cpu_ms_memory_record_0.txt": CPU_PROF / "FRAMEWORK/cpu_ms_memory_record_0.txt",
    "trace_view.json": MSTT / "trace_view.json",
}
PROFILER_TABLE = {"step_trace_time.csv": "profile_steps", "step_trace_raw_1_detail_time.csv": "profile_steps",
                  "step_trace_raw_0_detail_time.csv": "profile_steps",
                  "memory_record.csv": "memory", "cpu_ms_memory_record_0.txt": "memory",
                  "npu_module_mem.csv": "memory",
                  "communication.json": "profile_comm", "communication_matrix.json": "profile_comm",
                  "kernel_details.csv": None, "trace_view.json": None}
CONFIGS = [SAMPLES / "gpt-tiny-base/config.yaml", FIXTURES / "configs/run_llama2_7b.yaml",
           FIXTURES / "configs/meta_like.json", FIXTURES / "configs/hf_style_config.json"]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("text")


def _kv_rows(result) -> list[tuple]:
    return [r for r in table_rows(result, "scalars") if "log:kv" in r]


# --------------------------------------------------------------------------- text logs


def test_train_log_reference(work: Path):
    full = read_bytes(textlog, TRAIN_LOG.read_bytes(), work, "train.log")
    assert len({r[0] for r in _kv_rows(full)}) == 300  # 300 key=value step lines in the sample
    assert not slugs(full) & {"log-encoding", "log-line-too-long", "log-json-invalid"}


@fuzz(30)
@given(st.data())
def test_log_truncation_keeps_earlier_lines(work: Path, data):
    raw = TRAIN_LOG.read_bytes()
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    result = read_bytes(textlog, raw[:cut], work, "train.log")
    whole = raw[: raw.rfind(b"\n", 0, cut) + 1]  # the lines that were not cut
    before = _kv_rows(read_bytes(textlog, whole, work, "whole.log"))
    assert _kv_rows(result)[: len(before)] == before


@fuzz(30)
@given(st.data())
def test_log_garbage_and_bad_utf8_between_lines(work: Path, data):
    raw = TRAIN_LOG.read_bytes()
    lines = raw.split(b"\n")
    at = data.draw(st.integers(0, len(lines)), label="line")
    garbage = data.draw(st.binary(min_size=1, max_size=200), label="garbage")
    head = b"\n".join(lines[:at]) + (b"\n" if at else b"")
    damaged = head + garbage + b"\n" + b"\n".join(lines[at:])
    result = read_bytes(textlog, damaged, work, "train.log")
    before = _kv_rows(read_bytes(textlog, head, work, "head.log"))
    assert _kv_rows(result)[: len(before)] == before
    try:
        garbage.decode("utf-8")
    except UnicodeDecodeError:
        assert "log-encoding" in slugs(result)


@fuzz(30)
@given(st.data())
def test_log_bit_flips_never_raise(work: Path, data):
    raw = bytearray(TRAIN_LOG.read_bytes())
    for pos, bit in data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=8)):
        raw[pos] ^= 1 << bit
    read_bytes(textlog, bytes(raw), work, "train.log")


def test_log_non_utf8_bytes(work: Path):
    raw = TRAIN_LOG.read_bytes()
    lines = raw.split(b"\n")
    lines[10] = lines[10] + " 损失".encode("gbk") + b"\xff\xfe"
    result = read_bytes(textlog, b"\n".join(lines), work, "train.log")
    assert "log-encoding" in slugs(result)
    diag = next(d for d in result.diagnostics if d.slug == "log-encoding")
    assert diag.offset == 11  # the line number
    assert _kv_rows(result) == _kv_rows(read_bytes(textlog, raw, work, "ref.log"))


def test_log_200mb_single_line(work: Path):
    """A 200 MB line (written in chunks) is skipped with a diagnostic; lines after it are parsed;
    peak Python memory stays far below 200 MB."""
    lines = TRAIN_LOG.read_bytes().split(b"\n")
    kv = [ln for ln in lines if b" step=" in ln]
    path = work / "huge.log"
    filler = (b" ".join(kv[:50]) + b" ") * 4  # real log text, no newline, with anchors in it
    with open(path, "wb") as fh:
        fh.write(b"\n".join(kv[:100]) + b"\n")
        written = 0
        while written < 200 << 20:
            fh.write(filler)
            written += len(filler)
        fh.write(b"\n" + b"\n".join(kv[100:]) + b"\n")
    tracemalloc.start()
    try:
        result = textlog.read(artifact(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        path.unlink()
    assert peak < 64 << 20, f"peak {peak / 1e6:.0f} MB"
    assert "log-line-too-long" in slugs(result)
    steps = {r[0] for r in _kv_rows(result)}
    assert steps == set(range(1, 301))  # 100 before, 200 after the long line


def test_log_windows_line_endings(work: Path):
    raw = TRAIN_LOG.read_bytes()
    lf = read_bytes(textlog, raw, work, "lf.log")
    crlf = read_bytes(textlog, raw.replace(b"\n", b"\r\n"), work, "crlf.log")
    strip = lambda rows: [r[:-1] for r in rows]  # noqa: E731  (drop the file column's twin: none left)
    assert strip(table_rows(crlf, "scalars")) == strip(table_rows(lf, "scalars"))
    assert table_rows(crlf, "scalars")


def test_log_interleaved_ranks(work: Path):
    """Two ranks' real lines interleaved (as two processes appending to one file do)."""
    kv = [ln for ln in TRAIN_LOG.read_bytes().split(b"\n") if b" step=" in ln][:100]
    mixed = []
    for ln in kv:
        date, time_, rest = ln.split(b" ", 2)
        mixed.append(date + b" " + time_ + b" rank=0 " + rest)
        mixed.append(date + b" " + time_ + b" rank=1 " + rest.replace(b"loss=", b"loss=1"))
    result = read_bytes(textlog, b"\n".join(mixed) + b"\n", work, "worker.log")
    df = result.tables["scalars"]
    loss = df.filter(df["tag"] == "loss")
    assert sorted(loss["rank"].unique().to_list()) == [0, 1]
    assert loss.filter(loss["rank"] == 0).height == 100 and loss.filter(loss["rank"] == 1).height == 100


@pytest.mark.parametrize("token,expected", [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf),
                                             ("1e999", math.inf), ("NaN", math.nan), ("-1e999", -math.inf)])
def test_log_non_finite_values_are_kept(work: Path, token: str, expected: float):
    lines = TRAIN_LOG.read_bytes().split(b"\n")
    i = next(i for i, ln in enumerate(lines) if b" step=42 " in ln)
    lines[i] = lines[i].replace(b"loss=", b"loss=" + token.encode() + b" was=")
    result = read_bytes(textlog, b"\n".join(lines), work, "train.log")
    df = result.tables["scalars"]
    row = df.filter((df["tag"] == "loss") & (df["step"] == 42) & (df["source"] == "log:kv"))
    assert row.height == 1
    value = row["value"][0]
    assert (math.isnan(value) and math.isnan(expected)) or value == expected


def test_log_zero_length_and_hostile_json_nesting(work: Path):
    assert read_bytes(textlog, b"", work, "empty.log").rows() == 0
    line = b'{"step": 7, "loss": 1.5, "x": ' + b"[" * 30000 + b"]" * 30000 + b"}"
    result = read_bytes(textlog, TRAIN_LOG.read_bytes() + line + b"\n", work, "train.jsonl")
    assert "log-json-invalid" in slugs(result)  # the line is reported, the rest is read
    assert len({r[0] for r in _kv_rows(result)}) == 300


@fuzz(20)
@given(st.data())
def test_real_multi_launch_log_truncation_keeps_earlier_rows(work: Path, data):
    """The model zoo stacking log (four launches) cut anywhere: the rows of its whole lines stay."""
    raw = STACKING_LOG.read_bytes()
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    whole = raw[: raw.rfind(b"\n", 0, cut) + 1]
    got = table_rows(read_bytes(textlog, raw[:cut], work, "cut.txt"), "scalars")
    want = table_rows(read_bytes(textlog, whole, work, "whole.txt"), "scalars")
    assert got[: len(want)] == want


@pytest.mark.parametrize("path", CONFORMANCE_LOGS, ids=lambda p: p.parent.name)
@fuzz(15)
@given(st.data())
def test_real_logs_bit_flips_never_raise(work: Path, path: Path, data):
    raw = bytearray(path.read_bytes())
    for pos, bit in data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=8)):
        raw[pos] ^= 1 << bit
    result = read_bytes(textlog, bytes(raw), work, path.name)
    assert result.tables["scalars"].schema["step"] == pl.Int64


def test_a_garbled_value_in_a_real_line_is_counted_not_read(work: Path):
    """The MindFormers docs log with one per_step_time garbled ("17.5.4ms"): that value is left out
    and counted; the rest of the line and the file are read."""
    raw = (FIXTURES / "conformance/mf-docs-llama2-13b-log/msrun_log/worker_0.log").read_bytes()
    assert raw.count(b"per_step_time: 1754ms") == 1
    result = read_bytes(textlog, raw.replace(b"per_step_time: 1754ms", b"per_step_time: 17.5.4ms"), work, "worker_0.log")
    df = result.tables["scalars"]
    assert df.filter(pl.col("tag") == "step_time")["step"].to_list() == [1, 2, 4, 5]
    assert df.filter(pl.col("tag") == "loss")["step"].to_list() == [1, 2, 3, 4, 5]
    field = next(d for d in result.diagnostics if d.slug == "log-field-unreadable")
    # line 1 and 2: the garbled global_norm "[1 31049]"; line 3: the garbled step time
    assert field.message.startswith("3 values") and "mindformers step_time" in field.message and field.offset == 1


def test_a_file_that_is_not_a_log_says_what_it_holds(work: Path):
    """A real MindSpore profiler text file claimed as *.txt: nothing read, one warning quoting its
    first line (so a user can tell what the file is)."""
    src = next((FIXTURES / "profiler/cpu").glob("*_ascend_ms")) / "FRAMEWORK/cpu_op_execute_timestamp_0.txt"
    first = src.read_text().splitlines()[0]
    result = read_bytes(textlog, src.read_bytes(), work, "notes.txt")
    (d,) = result.diagnostics
    assert result.rows() == 0 and d.slug == "log-unrecognised" and d.offset == 1
    assert repr(first if len(first) <= 120 else first[:117] + "...") in d.message


# --------------------------------------------------------------------------- profiler


def _prof(name: str, data: bytes, work: Path):
    rel = f"x_ascend_ms/ASCEND_PROFILER_OUTPUT/{name}"
    return read_bytes(profiler, data, work, rel, rel)


@pytest.mark.parametrize("name", sorted(PROFILER_FILES))
@fuzz(25)
@given(st.data())
def test_profiler_truncation_keeps_complete_rows(work: Path, name: str, data):
    raw = PROFILER_FILES[name].read_bytes()
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    result = _prof(name, raw[:cut], work)
    table = PROFILER_TABLE[name]
    if table is None:
        return
    full = table_rows(_prof(name, raw, work), table)
    if name.endswith(".csv") or name.endswith(".txt"):
        whole_lines = raw[:cut].count(b"\n")  # rows ending before the cut (the header is line 1)
        complete = max(0, whole_lines - 1)
        got = table_rows(result, table)
        assert got[:complete] == full[:complete]
    elif cut < len(raw.rstrip()):
        assert "profiler-json" in slugs(result)


@pytest.mark.parametrize("name", sorted(PROFILER_FILES))
@fuzz(25)
@given(st.data())
def test_profiler_bit_flips_never_raise(work: Path, name: str, data):
    raw = bytearray(PROFILER_FILES[name].read_bytes())
    for pos, bit in data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=6)):
        raw[pos] ^= 1 << bit
    _prof(name, bytes(raw), work)


@pytest.mark.parametrize("name", sorted(PROFILER_FILES))
def test_profiler_zero_length(work: Path, name: str):
    result = _prof(name, b"", work)
    assert result.rows() == 0


def test_profiler_hostile_json_nesting(work: Path):
    raw = PROFILER_FILES["communication.json"].read_bytes()
    result = _prof("communication.json", b"[" * 100000 + raw, work)  # was a RecursionError
    assert "profiler-json" in slugs(result)


# --------------------------------------------------------------------------- configs


@pytest.mark.parametrize("src", CONFIGS, ids=lambda p: p.name)
@fuzz(30)
@given(st.data())
def test_config_truncation_and_flips_never_raise(work: Path, src: Path, data):
    raw = bytearray(src.read_bytes())
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[: data.draw(st.integers(0, len(raw)), label="cut")]
    else:
        for pos, bit in data.draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1, max_size=4)):
            raw[pos] ^= 1 << bit
    result = read_bytes(configfile, bytes(raw), work, src.name)
    for setting in result.settings.values():
        assert setting.source.startswith(("config:", "derived:config:"))


def test_config_unparseable_has_slug_and_line(work: Path):
    raw = (SAMPLES / "gpt-tiny-base/config.yaml").read_bytes()
    result = read_bytes(configfile, raw + b"\nmodel: [unclosed\n  x: {\n", work, "config.yaml")
    diag = next(d for d in result.diagnostics if d.slug == "config-unparseable")
    assert diag.offset is not None and diag.offset > raw.count(b"\n")


@pytest.mark.parametrize("name,tail", [
    ("config.yaml", b"\nx: " + b"[" * 50000 + b"\n"),
    ("train.json", None),
], ids=["yaml", "json"])
def test_config_hostile_nesting(work: Path, name: str, tail):
    if tail is None:
        raw = (FIXTURES / "configs/meta_like.json").read_bytes().rstrip()
        data = raw[:-1] + b', "deep": ' + b"[" * 50000 + b"]" * 50000 + b"}"
    else:
        data = (SAMPLES / "gpt-tiny-base/config.yaml").read_bytes() + tail
    result = read_bytes(configfile, data, work, name)  # was a RecursionError
    assert "config-unparseable" in slugs(result)


def test_config_unhashable_mode(work: Path):
    raw = (SAMPLES / "gpt-tiny-base/config.yaml").read_bytes()
    result = read_bytes(configfile, raw + b"\ncontext:\n  mode: [0, 1]\n  device_target: CPU\n", work, "config.yaml")
    assert result.settings["mode"].value == [0, 1]  # was a TypeError (unhashable list)
    assert result.settings["device"].value == "CPU"
    ok = read_bytes(configfile, raw + b"\ncontext:\n  mode: 0\n", work, "config.yaml")
    assert ok.settings["mode"].value == "GRAPH_MODE"
