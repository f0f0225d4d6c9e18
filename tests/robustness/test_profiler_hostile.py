"""Hostile profiler input (issue 23): damaged copies of the real conformance profiles.

One run folder holds every case side by side (each in its own profile folder), and is built
once with ``--format json`` and inspected once, in subprocesses with a generous timeout that
guards against a hang only (never a speed assertion). The promises checked:

- exit 0 or 2, never a traceback; a warning naming each damaged file;
- nothing written in the run folder;
- a FIFO under every name a reader opens (claimed files and the side files it looks up:
  ``profiler_info_*.json``, ``info.json.N``, ``step_trace_time.csv`` beside a trace,
  ``kernel_details.csv`` beside ``op_statistic.csv``, ``*.done``) never blocks;
- NaN / inf / negative / absurd durations dropped and counted per file and column;
- a UTF-8 BOM stripped (CSV header, JSON); bytes that are not UTF-8 counted;
- duplicate and out-of-order steps resolved (the last row of a step wins) and warned;
- a partly malformed communication.json says how many entries it dropped, the good op read;
- a damaged file never makes the sound file beside it count as covered;
- under 2 GB peak for a 1 GB damaged kernel_details.csv.

The per-file table checks read each damaged copy in this process with the profiler reader (the
build already proved they do not hang).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from postmortem.readers import profiler

from .conftest import FIXTURES, ROOT, artifact, tree_state

CONF = FIXTURES / "conformance"
IMAGENET = CONF / "msinsight-torchnpu-imagenet-2025" / "level1"
GPT3 = CONF / "msinsight-torchnpu-gpt3-2023" / "test_rank_0"
KD = CONF / "mstt-torchnpu-kd-traceview-2023" / "worker0_ascend_pt"
TILELANG = next((CONF / "msprof-tilelang-app-prof").glob("PROF_*"))
SUMMARY = next((ROOT / "samples" / "gpt-tiny-base").rglob("*.summary.*_MS"))  # real binary bytes for junk
OUT = "ASCEND_PROFILER_OUTPUT"
HANG_GUARD_S = 300  # a hang guard only: the build takes seconds


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for dirpath, _, files in os.walk(dst):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return dst


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)


def _csv_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _set_cell(line: str, index: int, value: str) -> str:
    """A kernel_details line with one unquoted cell replaced (the cells before Input Shapes are plain)."""
    cells = line.split(",")
    cells[index] = value
    return ",".join(cells)


# --------------------------------------------------------------------------- the damaged run folder


def _values_case(root: Path) -> None:
    """Durations NaN, inf, negative and 1e302 in kernel_details.csv; a NaN elapse in communication.json."""
    prof = _copy(IMAGENET / "rank0_ascend_pt", root / "values" / "rank0_ascend_pt")
    kd = prof / OUT / "kernel_details.csv"
    lines = _csv_lines(kd)
    i_dur = lines[0].split(",").index("Duration(us)")
    for row, value in zip((1, 2, 3, 4), ("NaN", "inf", "-5.0", "1e302")):
        lines[row] = _set_cell(lines[row], i_dur, value)
    kd.write_text("\n".join(lines) + "\n", encoding="utf-8")
    comm = prof / OUT / "communication.json"
    data = json.loads(comm.read_text(encoding="utf-8"))
    ops = data["step50"]["collective"]
    first = next(k for k in ops if not k.startswith("Total"))
    ops[first]["Communication Time Info"]["Elapse Time(ms)"] = float("nan")
    comm.write_text(json.dumps(data), encoding="utf-8")  # json writes NaN, as a Python writer would
    sttc = prof / OUT / "step_trace_time.csv"
    head, row = _csv_lines(sttc)
    cells = row.split(",")
    bad = list(cells)
    bad[0], bad[1] = "51", "-8873.756"  # a second step with a negative Computing
    sttc.write_text("\n".join([head, row, ",".join(bad)]) + "\n", encoding="utf-8")


def _bom_case(root: Path) -> None:
    """A UTF-8 BOM before step_trace_time.csv's header and communication.json; bytes that are not UTF-8."""
    prof = _copy(GPT3, root / "bom" / "rank0_ascend_pt")
    for name in ("step_trace_time.csv", "communication.json"):
        f = prof / OUT / name
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    comm = prof / OUT / "communication.json"
    raw = comm.read_bytes()
    at = raw.index(b"hcom_")  # inside an op name: two bytes that are not UTF-8
    comm.write_bytes(raw[:at] + b"\xff\xfe" + raw[at:])
    kd = prof / OUT / "kernel_details.csv"
    lines = kd.read_bytes().split(b"\n")
    i_name = lines[0].split(b",").index(b"Name")
    cells = lines[1].split(b",")
    cells[i_name] = cells[i_name][:3] + b"\xc3\x28" + cells[i_name][3:]  # an invalid 2-byte sequence
    lines[1] = b",".join(cells)
    kd.write_bytes(b"\n".join(lines))
    msprof = _copy(TILELANG, root / "bom" / "rank_0" / TILELANG.name)
    summary = next((msprof / "mindstudio_profiler_output").glob("op_summary_*.csv"))
    raw = summary.read_bytes()
    at = raw.index(b",", raw.index(b"\n") + 1)  # the first data row: its op name gets a byte that is not UTF-8
    at = raw.index(b",", raw.index(b",", raw.index(b",", at + 1) + 1) + 1) + 1  # after Device_id, Model ID, Task ID, Stream ID
    summary.write_bytes(raw[:at + 4] + b"\xff" + raw[at + 4:])


def _duplicate_case(root: Path) -> None:
    """step_trace_time.csv with 8 distinct steps in 9 rows, out of order (step 3 twice: the last differs)."""
    prof = _copy(GPT3, root / "dup" / "rank0_ascend_pt")
    sttc = prof / OUT / "step_trace_time.csv"
    head, row = _csv_lines(sttc)
    cells = row.split(",")
    rows = []
    for step in (2, 1, 3, 4, 5, 3, 6, 7, 8):
        c = list(cells)
        c[0] = str(step)
        rows.append(c)
    rows[5][1] = str(float(cells[1]) * 2)  # the second step 3: its own Computing, the one kept
    sttc.write_text("\n".join([head, *(",".join(c) for c in rows)]) + "\n", encoding="utf-8")


MI_STEPS = CONF / "mi-cluster-4rank" / "profiler" / "step_trace_raw_0_detail_time.csv"
MSPROF_2DEV = FIXTURES / "profcorpus" / "mi-prof-2dev-timeline" / "profiler" / "PROF_000001_20230818142704322_COJGGGCANRMICFBC"
# msprof's step_trace csv header as its writer prints it (msprof's summary test expects this line)
_MSPROF_STEP_HEADER = ("Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
                       "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID")


def _step_files_dup_case(root: Path) -> None:
    """A step written twice inside one file of the other step layouts: MindInsight's
    step_trace_raw (step 2 again after step 4, carrying step 3's row), msprof's per-iteration
    step_trace_*.json (Iteration 3 again, twice as long) and a step_trace_*.csv made from that
    real JSON's iterations (no real msprof step_trace csv could be had) with Iteration 3 twice."""
    lines = _csv_lines(MI_STEPS)
    by_step = {ln.split(",", 1)[0]: ln for ln in lines[1:]}
    again = "2," + by_step["3"].split(",", 1)[1]
    rows = [lines[0], *(by_step[k] for k in ("1", "2", "3", "4")), again, by_step["5"], by_step["-"]]
    mi = root / "stepdup" / "mi" / "profiler"
    mi.mkdir(parents=True)
    (mi / MI_STEPS.name).write_text("\n".join(rows) + "\n", encoding="utf-8")
    src = MSPROF_2DEV / "device_0" / "timeline" / "step_trace_0_2_1.json"
    events = json.loads(src.read_text(encoding="utf-8"))
    third = next(e for e in events if e.get("name") == "Iteration 3")
    longer = {**third, "dur": third["dur"] * 2, "args": {**third["args"], "Iteration Time(ns)": third["args"]["Iteration Time(ns)"] * 2}}
    timeline = root / "stepdup" / "json" / "PROF_000001_x" / "device_0" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / src.name).write_text(json.dumps([*events, longer]), encoding="utf-8")
    its = [e for e in events if e.get("ph") == "X" and re.fullmatch(r"Iteration \d+", str(e.get("name", "")))]
    csv_rows = []
    for e in [*its, longer]:
        a = e["args"]
        fp, bp, end = a.get("FP Start"), a.get("BP End"), a.get("Iteration End", e["ts"] + e["dur"])
        fp_bp = bp - fp if fp is not None and bp is not None else None
        refresh = end - bp if bp is not None else None
        cells = (0, a["Iteration ID"], fp, bp, end, e["dur"], fp_bp, refresh, 0, 2)
        csv_rows.append(",".join("N/A" if v is None else str(v) for v in cells))  # N/A: the writer's empty cell
    out = root / "stepdup" / "csv" / "PROF_000001_y" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    (out / "step_trace_20230818142704.csv").write_text("\n".join([_MSPROF_STEP_HEADER, *csv_rows]) + "\n", encoding="utf-8")


def _half_json_case(root: Path) -> None:
    """communication.json whose ops are half the wrong shape (lists, strings, numbers)."""
    prof = _copy(IMAGENET / "rank1_ascend_pt", root / "half" / "rank1_ascend_pt")
    comm = prof / OUT / "communication.json"
    data = json.loads(comm.read_text(encoding="utf-8"))
    ops = data["step50"]["collective"]
    names = [k for k in ops if not k.startswith("Total")]
    for k, junk in zip(names[1::2], ([1, 2], "x", 3.5, None)):
        ops[k] = junk
    data["step51"] = "not a step"
    comm.write_text(json.dumps(data), encoding="utf-8")


def _junk_beside_case(root: Path) -> None:
    """Binary junk in step_trace_time.csv beside a sound trace_view.json, and in kernel_details.csv
    beside a sound op_statistic.csv: the sound files are read, never set aside as covered."""
    prof = _copy(KD, root / "junk" / "worker0_ascend_pt")
    junk = SUMMARY.read_bytes()[:4096]
    (prof / OUT / "step_trace_time.csv").write_bytes(junk)
    (prof / OUT / "kernel_details.csv").write_bytes(junk)
    shutil.copy(IMAGENET / "rank0_ascend_pt" / OUT / "op_statistic.csv", prof / OUT / "op_statistic.csv")
    msprof = _copy(TILELANG, root / "junk" / "rank_0" / TILELANG.name)
    summary = next((msprof / "mindstudio_profiler_output").glob("op_summary_*.csv"))
    summary.write_bytes(junk)  # beside a sound op_statistic_*.csv


def _fifo_case(root: Path) -> None:
    """A FIFO under every name a reader claims or looks up beside a file it reads."""
    # side files beside real data files
    prof = _copy(IMAGENET / "rank0_ascend_pt", root / "fifo" / "rank0_ascend_pt")
    _fifo(prof / "profiler_info_0.json")
    kd_prof = _copy(KD, root / "fifo" / "worker0_ascend_pt")
    _fifo(kd_prof / OUT / "step_trace_time.csv")  # beside trace_view.json
    shutil.copy(IMAGENET / "rank0_ascend_pt" / OUT / "op_statistic.csv", kd_prof / OUT / "op_statistic.csv")
    _fifo(kd_prof / OUT / "kernel_details.csv")  # beside op_statistic.csv
    msprof = _copy(TILELANG, root / "fifo" / "rank_0" / TILELANG.name)
    for device in (0, 1):
        _fifo(msprof / f"device_{device}" / f"info.json.{device}")
    _fifo(msprof / "device_0" / "collection.done")
    # every file of real profiles as a FIFO of the same name
    for src, dst in ((IMAGENET / "rank1_ascend_pt", root / "fifo" / "all" / "rank1_ascend_pt"),
                     (TILELANG, root / "fifo" / "all" / "rank_1" / TILELANG.name),
                     (CONF / "mi-run2-ascend-profiler" / "profiler", root / "fifo" / "all" / "profiler"),
                     (CONF / "mstt-cluster-analysis-output", root / "fifo" / "all" / "cluster"),
                     (KD, root / "fifo" / "all" / "worker1_ascend_pt")):
        for f in src.rglob("*"):
            if f.is_file() and f.name != "PROVENANCE.md":
                _fifo(dst / f.relative_to(src))
    _fifo(root / "fifo" / "all" / "rank_1" / TILELANG.name / "device_1" / "info.json.1")
    _fifo(root / "fifo" / "all" / "rank_1" / TILELANG.name / "device_1" / "data" / "x.done")


CASES = (_values_case, _bom_case, _duplicate_case, _step_files_dup_case, _half_json_case, _junk_beside_case, _fifo_case)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-profiler")
    run = base / "run"
    run.mkdir()
    for case in CASES:
        case(run)
    before = tree_state(run)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outcomes = {}
    for name, args in (("build", ["build", str(run), "--format", "json", "--out", str(base / "out"),
                                  "--experiment", "hostile", "--run-id", "r1"]),
                       ("inspect", ["inspect", str(run), "--json"])):
        proc = subprocess.run([sys.executable, "-m", "postmortem", *args], capture_output=True, text=True,
                              timeout=HANG_GUARD_S, env=env, stdin=subprocess.DEVNULL)
        outcomes[name] = proc
    metrics = json.loads((base / "out" / "hostile" / "r1" / "metrics.json").read_text(encoding="utf-8"))
    return {"run": run, "before": before, "after": tree_state(run), "metrics": metrics, **outcomes}


def _warnings(metrics: dict, path_part: str, slug: str) -> list[dict]:
    return [d for d in metrics["data_quality"] if d["slug"] == slug and path_part in (d["path"] or "")]


def test_the_build_and_inspect_end_and_write_nothing_in_the_run(hostile):
    for name in ("build", "inspect"):
        proc = hostile[name]
        assert proc.returncode in (0, 2), (name, proc.stderr[-2000:])
        assert "Traceback" not in proc.stdout + proc.stderr
    assert hostile["after"] == hostile["before"]
    inspected = json.loads(hostile["inspect"].stdout)
    assert inspected  # inspect's JSON parses


def test_durations_are_checked_at_the_door(hostile):
    m = hostile["metrics"]
    kd = _warnings(m, "values/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", "profiler-bad-duration")
    assert [(d["params"]["column"], d["params"]["non_finite"], d["params"]["negative"], d["params"]["absurd"])
            for d in kd] == [("Duration(us)", 2, 1, 1)]
    assert "Duration(us)" in kd[0]["message"] and "4" in kd[0]["message"]
    st = _warnings(m, "values/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "profiler-bad-duration")
    assert [(d["params"]["column"], d["params"]["negative"]) for d in st] == [("Computing", 1)]
    comm = _warnings(m, "values/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", "profiler-bad-duration")
    assert [(d["params"]["column"], d["params"]["non_finite"]) for d in comm] == [("Elapse Time(ms)", 1)]
    top = m["profile"]["top_ops"]
    assert top and all(math.isfinite(op["total_s"]) and 0 <= op["total_s"] < 86400 for op in top)
    assert all(op["share"] <= 1 for op in top)


def test_the_damaged_values_leave_the_real_rows(tmp_path):
    _values_case(tmp_path)
    prof = tmp_path / "values" / "rank0_ascend_pt" / OUT
    real = profiler.READER.read(artifact(IMAGENET / "rank0_ascend_pt" / OUT / "kernel_details.csv",
                                         "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    damaged = profiler.READER.read(artifact(prof / "kernel_details.csv", "values/x/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
    assert damaged.tables["profile_ops"]["calls"].sum() == real.tables["profile_ops"]["calls"].sum() - 4
    assert damaged.tables["profile_ops"]["max_s"].max() < 1.0
    steps = profiler.READER.read(artifact(prof / "step_trace_time.csv", "values/x/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"))
    assert steps.tables["profile_steps"]["step"].to_list() == [50]  # the negative step 51 dropped
    comm = profiler.READER.read(artifact(prof / "communication.json", "values/x/ASCEND_PROFILER_OUTPUT/communication.json"))
    real_comm = profiler.READER.read(artifact(IMAGENET / "rank0_ascend_pt" / OUT / "communication.json", "real/r/ASCEND_PROFILER_OUTPUT/communication.json"))
    assert comm.tables["profile_comm"].height == real_comm.tables["profile_comm"].height - 1


def test_a_bom_is_stripped_and_bad_utf8_counted(hostile, tmp_path):
    m = hostile["metrics"]
    utf8 = _warnings(m, "bom/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", "profiler-utf8")
    assert [d["params"]["n"] for d in utf8] == [2]
    names = _warnings(m, "bom/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", "profiler-utf8")
    assert [(d["variant"], d["params"]["n"]) for d in names] == [("names", 1)]
    msprof = [d for d in m["data_quality"] if d["slug"] == "profiler-utf8" and "bom/rank_0/" in d["path"]]
    assert [(d["variant"], d["params"]["n"]) for d in msprof] == [("names", 1)]
    _bom_case(tmp_path)
    prof = tmp_path / "bom" / "rank0_ascend_pt" / OUT
    steps = profiler.READER.read(artifact(prof / "step_trace_time.csv", "bom/r/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"))
    assert steps.tables["profile_steps"]["step"].to_list() == [2]  # the Step column is seen
    comm = profiler.READER.read(artifact(prof / "communication.json", "bom/r/ASCEND_PROFILER_OUTPUT/communication.json"))
    real = profiler.READER.read(artifact(GPT3 / OUT / "communication.json", "real/r/ASCEND_PROFILER_OUTPUT/communication.json"))
    assert comm.tables["profile_comm"].height == real.tables["profile_comm"].height > 0


def test_duplicate_steps_keep_the_last_row_and_say_so(hostile, tmp_path):
    dup = _warnings(hostile["metrics"], "dup/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                    "profiler-duplicate-steps")
    assert [(d["params"]["n"], d["params"]["steps"]) for d in dup] == [(1, 8)]
    _duplicate_case(tmp_path)
    r = profiler.READER.read(artifact(tmp_path / "dup" / "rank0_ascend_pt" / OUT / "step_trace_time.csv",
                                      "dup/r/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"))
    steps = r.tables["profile_steps"]
    assert steps["step"].to_list() == [1, 2, 3, 4, 5, 6, 7, 8]
    c = steps["computing_s"].to_list()
    assert c[2] == pytest.approx(2 * c[0])  # the last row of step 3


def test_duplicate_steps_of_the_other_step_files_keep_the_last_row_and_say_so(hostile, tmp_path):
    m = hostile["metrics"]
    for part, n, steps in (("stepdup/mi/profiler/step_trace_raw_0_detail_time.csv", 1, 5),
                           ("stepdup/json/PROF_000001_x/device_0/timeline/step_trace_0_2_1.json", 1, 10),
                           ("stepdup/csv/PROF_000001_y/mindstudio_profiler_output/step_trace_20230818142704.csv", 1, 10)):
        dup = _warnings(m, part, "profiler-duplicate-steps")
        assert [(d["params"]["n"], d["params"]["steps"]) for d in dup] == [(n, steps)], part
        assert part.rsplit("/", 1)[-1] in dup[0]["path"]
    _step_files_dup_case(tmp_path)
    real = profiler.READER.read(artifact(MI_STEPS, "real/profiler/" + MI_STEPS.name))
    mi = profiler.READER.read(artifact(tmp_path / "stepdup" / "mi" / "profiler" / MI_STEPS.name, "d/profiler/" + MI_STEPS.name))
    rs, ds = real.tables["profile_steps"], mi.tables["profile_steps"]
    assert sorted(ds["step"].to_list()) == [1, 2, 3, 4, 5]  # one row per step, not six
    total = dict(zip(ds["step"].to_list(), ds["total_s"].to_list()))
    real_total = dict(zip(rs["step"].to_list(), rs["total_s"].to_list()))
    assert total[2] == pytest.approx(real_total[3]) and total[3] == pytest.approx(real_total[3])  # the last row of step 2
    rc, dc = real.tables["profile_comm"], mi.tables["profile_comm"]
    assert dc.filter(pl.col("step") == 2).height == rc.filter(pl.col("step") == 3).height  # that row's ops, not both rows'
    assert dc.height == rc.height
    for rel in ("stepdup/json/PROF_000001_x/device_0/timeline/step_trace_0_2_1.json",
                "stepdup/csv/PROF_000001_y/mindstudio_profiler_output/step_trace_20230818142704.csv"):
        r = profiler.READER.read(artifact(tmp_path / rel, rel))
        st = r.tables["profile_steps"]
        assert sorted(st["step"].to_list()) == list(range(1, 11)), rel
        t = dict(zip(st["step"].to_list(), st["total_s"].to_list()))
        assert t[3] > 1.5 * t[4], rel  # the second, longer Iteration 3 is the one kept


def test_a_half_malformed_json_names_what_it_dropped(hostile):
    dropped = _warnings(hostile["metrics"], "half/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
                        "profiler-entries-dropped")
    assert len(dropped) == 1
    n, kept = dropped[0]["params"]["n"], dropped[0]["params"]["kept"]
    assert n >= 2 and kept >= 1 and str(n) in dropped[0]["message"]


def test_a_damaged_file_never_covers_a_sound_one(hostile):
    m = hostile["metrics"]
    covered = [d for d in m["data_quality"] if d["slug"] == "profiler-covered" and "junk/" in (d["path"] or "")]
    assert covered == []
    junk = {d["slug"] for d in m["data_quality"] if d["path"] == "junk/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"}
    assert junk & {"profiler-columns", "profiler-utf8"}  # the junk file itself is warned about


def test_the_junk_beside_leaves_the_trace_steps_and_the_op_statistic(tmp_path):
    _junk_beside_case(tmp_path)
    prof = tmp_path / "junk" / "worker0_ascend_pt" / OUT
    trace = profiler.READER.read(artifact(prof / "trace_view.json", "junk/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"))
    assert trace.tables["profile_steps"]["step"].to_list() == [1]
    assert "profiler-covered" not in {d.slug for d in trace.diagnostics}
    stats = profiler.READER.read(artifact(prof / "op_statistic.csv", "junk/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv"))
    assert stats.tables["profile_ops"].height > 0
    out = tmp_path / "junk" / "rank_0" / TILELANG.name / "mindstudio_profiler_output"
    stat_csv = next(out.glob("op_statistic_*.csv"))
    msprof = profiler.READER.read(artifact(stat_csv, stat_csv.relative_to(tmp_path).as_posix()))
    assert "profiler-covered" not in {d.slug for d in msprof.diagnostics}
    assert msprof.tables["profile_ops"].height > 0


def test_fifos_under_every_name_are_said(hostile):
    m = hostile["metrics"]
    special = {d["path"] for d in m["data_quality"] if d["slug"] == "special-file"}
    assert "fifo/rank0_ascend_pt/profiler_info_0.json" in special
    assert f"fifo/rank_0/{TILELANG.name}/device_1/info.json.1" in special
    assert f"fifo/all/rank_1/{TILELANG.name}/device_1/data/x.done" in special
    every = {p.relative_to(hostile["run"]).as_posix() for p in (hostile["run"] / "fifo" / "all").rglob("*")
             if p.is_fifo()}
    assert len(every) > 30 and every <= special  # each said, none opened
    # the real files beside the FIFOs are read: rank 0's kernels, the kd trace's step
    assert _warnings(m, "fifo/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv", "profiler-covered")
    assert not _warnings(m, "fifo/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", "profiler-covered")
    assert not _warnings(m, "fifo/worker0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv", "profiler-covered")


_PEAK = r"""
import json, resource, sys
from pathlib import Path
from postmortem.model import Artifact
from postmortem.readers import profiler
p = Path(sys.argv[1])
r = profiler.READER.read(Artifact(str(p), "big/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", p.stat().st_size, 0.0))
bad = [d.params for d in r.diagnostics if d.slug == "profiler-bad-duration"]
print(json.dumps({"calls": int(r.tables["profile_ops"]["calls"].sum()), "bad": bad,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def test_a_damaged_1gb_kernel_details_reads_under_2gb(tmp_path):
    """Real rows of the imagenet profile repeated to 1 GB, one in 1000 blocks with a NaN and a
    negative duration: the bad values are counted, the peak stays under 2 GB."""
    lines = _csv_lines(IMAGENET / "rank0_ascend_pt" / OUT / "kernel_details.csv")
    header, rows = lines[0], lines[1:]
    i_dur = header.split(",").index("Duration(us)")
    block = ("\n".join(rows) + "\n").encode()
    damaged = ("\n".join([_set_cell(rows[0], i_dur, "nan"), _set_cell(rows[1], i_dur, "-1"), *rows[2:]]) + "\n").encode()
    blocks = (1 << 30) // len(block) + 1
    big = tmp_path / "kernel_details.csv"
    with open(big, "wb") as fh:
        fh.write(header.encode() + b"\n")
        for i in range(blocks):
            fh.write(damaged if i % 1000 == 0 else block)
    assert big.stat().st_size >= 1 << 30
    n_damaged = (blocks + 999) // 1000
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(big)], capture_output=True, text=True, timeout=HANG_GUARD_S,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["calls"] == blocks * len(rows) - 2 * n_damaged
    assert got["bad"] == [{"column": "Duration(us)", "n": 2 * n_damaged, "non_finite": n_damaged,
                           "negative": n_damaged, "absurd": 0}]
    assert got["rss"] < 2 << 30
    big.unlink()
