"""Text logs: callback and trainer lines of MindSpore, MindFormers, the model zoo and MindYOLO, and
users' own key=value and JSON lines. Every line shape is declared once, in logshapes (the format
notes, docs/formats/textlogs.md, describe each with a real example line).

How a file is read (a 1M-line log must read at 200+ MB/s on one core):

1. The file is read in big binary chunks of whole lines.
2. The C scanner (``_logscan.c``) looks at each line once: it drops lines that hold none of the
   grammar's anchors, parses the few hot shapes (MindFormers monitor and progress, LossMonitor,
   TimeMonitor, per-step flops, key=value, flat JSON) into columns, and hands every other line
   back as text: shapes it does not know, events, anything it is not sure of.
3. The lines handed back (without a compiler: all lines) are read one at a time by logparse, the
   reference, into the same columns.
4. One assembly (here) turns the columns into tables: global steps, steps placed from the lines
   around, values to long rows, events, settings, diagnostics.

tests/readers/test_textlog_fast.py requires 2-3 with and without the C scanner to give identical
results, bit for bit.

Timestamps at the start of a line (``2024-05-08 10:36:53,123``, ISO with ``T`` and an optional
offset or ``Z``, ``[2024-05-08 10:36:53.123456]``) become ``wall_time``. Logs rarely print their
zone: a timestamp without one is read as if it were UTC, which keeps the gaps between lines right
but not the offset, and the file is marked ``ReadResult.clock = "local"`` so the loader can settle
the offset against sources that know it (or say it is unknown). With an offset or ``Z`` the time
is converted to unix time as written.
"""

from __future__ import annotations

import bisect
import re
from fnmatch import fnmatch
from functools import cache
from typing import NamedTuple

import numpy as np
import polars as pl

from .. import diagnostics as dg
from ..model import EVENTS, SCALARS, Artifact, ReadResult, Setting, empty, frame
from . import logfields, logparse
from .logparse import MISSING
from . import logshapes as g
from . import guard
from .base import Reader

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ERROR_EVENTS = 1000  # a crash loop can print millions of ERROR lines; keep the first ones

try:
    from . import _logscan
except ImportError:  # built without a compiler: logparse reads every line, slower, same result
    _logscan = None

_CLAIM_PATTERNS = ("*.log", "*.txt", "*.out", "*.jsonl", "*.log.*", "stdout*", "stderr*")


def _claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1].lower()
    return any(fnmatch(name, p) for p in _CLAIM_PATTERNS)


# --------------------------------------------------------------------------- reading lines

_LINE_INT = ("pos", "shape", "zone", "epoch", "step_in", "steps_total", "step")  # lines' columns (Records)
_LINE_FLOAT = ("wall", "rank")
_RULE = {name: i for i, name in enumerate(g.STEP_RULES)}


class _Compiled(NamedTuple):
    """The grammar as the reader uses it, made once per grammar (tests may add a shape)."""

    shapes: tuple  # the logshapes.SHAPES it was made from
    scanner_args: tuple  # what the C scanner is told: anchors, (anchor mask, parser) per shape, errors' mask, field codes
    rules: np.ndarray  # the step rule (index in STEP_RULES) of each shape


_COMPILED: list[_Compiled] = []


def _compiled() -> _Compiled:
    if not _COMPILED or _COMPILED[0].shapes is not g.SHAPES:
        anchors = g.anchors()
        bit = {a: 1 << i for i, a in enumerate(anchors)}
        _COMPILED[:] = [
            _Compiled(
                g.SHAPES,
                (
                    tuple(a.encode() for a in anchors),
                    tuple((sum(bit[a] for a in s.anchors), s.fast) for s in g.SHAPES),
                    sum(bit[a] for a in g.ERROR_ANCHORS),
                    {f"{s.name}:{f.name}": code for code, (s, f) in enumerate(g.FIELDS) if s.fast},
                ),
                np.array([_RULE[s.step] for s in g.SHAPES], dtype=np.int64),
            )
        ]
    return _COMPILED[0]


class _Scan:
    """One file's lines read: the C scanner's columns (if any) and logparse's."""

    def __init__(self, use_c: bool) -> None:
        self.keys: dict[str, int] = {}  # pair key -> code, shared by both readers
        self.rec = logparse.Records()
        self.scanner = None
        if use_c:
            self.scanner = _logscan.Scanner(self.keys, *_compiled().scanner_args, g.N_FIXED, len(g.PAIR_SLOTS))
        self.handed_back: list[tuple[bytes, bytes]] = []  # (lines, their numbers) per chunk
        self.lines_total = 0
        self.claimed = 0  # lines the C scanner took
        self.bad_encoding: int | None = None
        self.long_line: int | None = None
        self.blank = True  # no line holds anything but spaces


def _grepped(path: str) -> bool:
    """Most lines of the file's head start with a rank's log path (``grep -r`` over the ranks'
    folders): such a file is read line by line by logparse, which takes each line's rank from it."""
    with guard.open_file(path, "rb") as fh:
        head = fh.read(MAX_LINE_BYTES).decode("utf-8", errors="replace").splitlines()
    lines = [t for t in head if t.strip() and not t.lstrip().startswith(("#", "..."))]
    return bool(lines) and sum(1 for t in lines if logparse.GREP_PREFIX.match(t)) >= 0.5 * len(lines)


def _scan(path: str) -> _Scan:
    """Read the file in chunks of whole lines, into one reused buffer (the text is not copied)."""
    grep = _grepped(path)
    scan = _Scan(_logscan is not None and not grep)
    scan.rec.grep = grep
    scan.rec.path = path
    buf = bytearray(CHUNK_BYTES + MAX_LINE_BYTES + 1)
    view = memoryview(buf)
    carry = 0  # bytes of an unfinished line at the start of buf
    skipping = False  # inside a line longer than MAX_LINE_BYTES that spans chunks
    with guard.open_file(path, "rb") as fh:
        while n := fh.readinto(view[carry : carry + CHUNK_BYTES]):
            start, end, carry = 0, carry + n, 0
            if skipping:
                nl = buf.find(b"\n", 0, end)
                if nl < 0:
                    continue
                start = nl + 1
                scan.lines_total += 1
                skipping = False
            last = buf.rfind(b"\n", start, end)
            if last >= 0:
                _take_body(scan, view[start:last])
                start = last + 1
            if end - start > MAX_LINE_BYTES:
                _note_long(scan, scan.lines_total + 1)
                scan.blank = False
                skipping = True
            else:
                carry = end - start
                # the unfinished line (at most MAX_LINE_BYTES) moves to the front; copied first, as
                # the two ranges may overlap and bytearray slice assignment copies with memcpy
                buf[:carry] = bytes(view[start:end])
    if carry and not skipping:
        _take_body(scan, view[:carry])
    if scan.handed_back:
        texts, numbers = zip(*scan.handed_back)
        logparse.parse_lines(b"\n".join(texts), 0, scan.rec, scan.keys, MAX_LINE_BYTES,
                             np.frombuffer(b"".join(numbers), dtype=np.int64).tolist())
    return scan


def _note_long(scan: _Scan, line_no: int) -> None:
    if scan.long_line is None:
        scan.long_line = line_no


_NOT_BLANK = re.compile(rb"[^ \t\n\r\f\v]")


def _take_body(scan: _Scan, body: memoryview) -> None:
    """Whole lines (without the final newline): to the C scanner, or to logparse."""
    if scan.blank and _NOT_BLANK.search(body):
        scan.blank = False
    if scan.scanner is None:
        scan.lines_total += logparse.parse_lines(bytes(body), scan.lines_total + 1, scan.rec, scan.keys, MAX_LINE_BYTES)
        return
    out = scan.scanner.scan(body, scan.lines_total + 1)
    scan.lines_total += out["line_count"]
    scan.claimed += out["claimed"]
    if out["bad_line"] >= 0 and scan.bad_encoding is None:
        scan.bad_encoding = out["bad_line"]
    if out["back_lines"]:  # for logparse, once all chunks are read
        scan.handed_back.append((out["back"], out["back_lines"]))


def _columns(scan: _Scan, rel: str = "", diags: list | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Lines and values of both readers, in line order (a line's values in their order)."""
    rec = scan.rec
    py_lines = {c: np.array(getattr(rec, c), dtype=np.int64) for c in _LINE_INT}
    py_lines |= {c: np.array(getattr(rec, c), dtype=np.float64) for c in _LINE_FLOAT}
    py_values = {
        "line": np.array(rec.v_line, dtype=np.uint32),
        "field": np.array(rec.v_field, dtype=np.uint32),
        "value": np.array(rec.v_value, dtype=np.float64),
    }
    tables = scan.scanner.tables() if scan.scanner is not None else None
    if rec.fields or rec.times:
        stepped = _stepped(py_lines) or (tables is not None and _stepped({c: np.frombuffer(tables["lines"][c], dtype=np.int64)
                                                                          for c in ("shape", "step", "step_in")}))
        py_lines, py_values = _merge(py_lines, py_values, *_field_lines(rec, scan.keys, rel, [] if diags is None else diags,
                                                                        stepped))
    if tables is None:
        lines, values = py_lines, py_values
    else:
        c_lines = {c: np.frombuffer(tables["lines"][c], dtype=np.int64) for c in _LINE_INT}
        c_lines |= {c: np.frombuffer(tables["lines"][c], dtype=np.float64) for c in _LINE_FLOAT}
        c_values = {
            "line": np.frombuffer(tables["values"]["line"], dtype=np.uint32),
            "field": np.frombuffer(tables["values"]["field"], dtype=np.uint32),
            "value": np.frombuffer(tables["values"]["value"], dtype=np.float64),
        }
        lines, values = _merge(c_lines, c_values, py_lines, py_values)
    if rec.fields:  # (the summaries it looks at are lines read by their fields)
        values = _sink_step_times(lines, values, scan.keys, rel, [] if diags is None else diags)
    return lines, values


def _sink_step_times(lines: dict[str, np.ndarray], values: dict[str, np.ndarray], keys: dict[str, int], rel: str,
                     diags: list) -> dict[str, np.ndarray]:
    """A record's time that is a sink's, by the summary after it: MindFormers' MFLossMonitor (r0.3-r0.6)
    prints ``time:`` from step_begin to step_end, which in sink mode span sink_size steps, then
    epoch_end's ``Per sink_size step time: T ms, per step time: p ms`` (p = T / sink_size). Where
    the record's time t is at least two of the summary's steps (t >= 2p) and within its sink time
    (t <= 1.1 T), t is the sink's: the record takes p as its per-step time (said in an info)."""
    shape, line, field = lines["shape"], values["line"], values["field"]
    summ = shape[line] == _SUMMARY_SHAPE
    if not summ.any():
        return values
    names = list(keys)
    tag_st, tag_et = np.zeros(int(field.max()) + 1, dtype=bool), np.zeros(int(field.max()) + 1, dtype=bool)
    scale_of = np.ones(len(tag_st), dtype=np.float64)
    for code in np.flatnonzero(np.bincount(field)).tolist():  # (a file has few field codes)
        tag, _, _, scale_of[code] = g.field_label(code, names)
        tag_st[code], tag_et[code] = tag == "step_time", tag == "epoch_time"
    st, et, scale = tag_st[field], tag_et[field], scale_of[field]
    seconds = values["value"] * scale
    n_lines = len(shape)
    per_step, sink = np.full(n_lines, np.nan), np.full(n_lines, np.nan)
    per_step[line[st & summ][::-1]] = seconds[st & summ][::-1]  # (the first of a line's)
    sink[line[et & summ][::-1]] = seconds[et & summ][::-1]
    rows = np.flatnonzero(st & ~summ)  # the records' step times, one row per record line (its first)
    rows = rows[np.concatenate([[True], line[rows][1:] != line[rows][:-1]])] if len(rows) else rows
    ends = np.flatnonzero(~np.isnan(per_step) & ~np.isnan(sink))
    if not len(rows) or not len(ends):
        return values
    before = np.searchsorted(line[rows], ends) - 1  # the record line before each summary
    ok = before >= 0
    ends, r = ends[ok], rows[before[ok]]
    t, p, big = seconds[r], per_step[ends], sink[ends]
    fix = (t >= 2 * p) & (t <= 1.1 * big) & (p > 0)
    if not fix.any():
        return values
    value = values["value"].copy()
    value[r[fix]] = p[fix] / scale[r[fix]]
    diags.append(dg.info("log-inferred", path=rel, variant="sink-time", n=int(fix.sum()),
                         steps=int(np.median(np.round(big[fix] / p[fix])))))
    return {**values, "value": value}


def _merge(c_lines: dict, c_values: dict, py_lines: dict, py_values: dict) -> tuple[dict, dict]:
    """Two sets of lines, each in line order, as one."""
    if not len(py_lines["pos"]):
        return c_lines, c_values
    if not len(c_lines["pos"]):
        return py_lines, py_values
    # Two sets of lines with no line in common, each in order: logparse's go where searchsorted
    # puts them (linear, no sort), and each value follows its line.
    py_at = np.searchsorted(c_lines["pos"], py_lines["pos"]) + np.arange(len(py_lines["pos"]))
    lines = _interleave(c_lines, py_lines, py_at)
    c_at = np.delete(np.arange(len(lines["pos"])), py_at)
    c_values["line"] = c_at[c_values["line"]].astype(np.uint32)
    py_values["line"] = py_at[py_values["line"]].astype(np.uint32)
    at = np.searchsorted(c_values["line"], py_values["line"], side="right") + np.arange(len(py_values["line"]))
    return lines, _interleave(c_values, py_values, at)


def _interleave(first: dict[str, np.ndarray], second: dict[str, np.ndarray], at: np.ndarray) -> dict[str, np.ndarray]:
    """The columns of ``second`` at rows ``at`` of the result, those of ``first`` in the other rows."""
    n = len(first["line" if "line" in first else "pos"]) + len(at)
    rest = np.delete(np.arange(n), at)
    out = {}
    for c in first:
        merged = np.empty(n, dtype=first[c].dtype)
        merged[rest], merged[at] = first[c], second[c]
        out[c] = merged
    return out


# --------------------------------------------------------------------------- lines read by their fields

_FIELDS_SHAPE = g.SHAPE_INDEX[f"fields:{g.FIELD_WORDS[0]}"]
_FIELDS_SLOT = g.PAIR_SLOTS.index("fields")
_EVAL_SHAPE = g.SHAPE_INDEX["eval-result"]  # its step rule: the step of the line before
_SUMMARY_SHAPE = g.SHAPE_INDEX["timemonitor"]
_TIME_SHAPE = g.SHAPE_INDEX[logparse.TIME_SHAPE]  # its step rule: the step of the line after


def _stepped(lines: dict[str, np.ndarray]) -> bool:
    """Some line of a shape's own step rule (a step record: LossMonitor, MindFormers' monitor...) has a step."""
    r = _RULE
    rule = _compiled().rules[lines["shape"]]
    own = (rule == r["epoch_step"]) | (rule == r["global"]) | (rule == r["in_epoch"])
    return bool((own & ((lines["step"] != MISSING) | (lines["step_in"] != MISSING))).any())


_SUMMARY_TAGS = ("epoch_time", "step_time", "lr", "throughput", "fps", "samples_per_s", "tokens_per_s")


def _field_lines(rec: logparse.Records, keys: dict[str, int], rel: str, diags: list,
                 stepped: bool = False) -> tuple[dict, dict]:
    """The lines read by their fields as lines of the ``global`` rule, their steps settled from the
    whole file (each inference said in an info): tqdm redraws, ranks, epochs, steps per epoch,
    in-epoch or global steps, ordinals, units of times printed without one. ``stepped``: lines of
    the shapes print steps (the loss lines read here beside them are summaries or evaluations)."""
    own_epoch = {id(f[3]) for f in rec.fields if f[3].epoch is not None}  # (not one an "Epoch 3" header above gave)
    said: dict[str, int] = {}
    found = _shapes_settled(_under_headers(rec.fields, said), rec, rel, diags)
    for variant, n in said.items():
        diags.append(dg.info("log-inferred", path=rel, variant=variant, n=n))
    # a run's summary by its writer's words (a Trainer's train_runtime beside train_loss): no record
    summary = [f for f in found if f[3].summary]
    if summary:
        found = [f for f in found if not f[3].summary]
    train = [f for f in found if any(t == "loss" for t, _, _ in f[3].values)]
    evals = [f for f in found if f[3].eval and not any(t == "loss" for t, _, _ in f[3].values)]
    # In a file whose records print a step, a loss line with none is a summary printed between
    # them (the tutorials' "Test: Accuracy: 84.7%, Avg loss: 0.527155"): an evaluation's, kept apart.
    fields_stepped = any(f[3].step is not None for f in train)
    if stepped or fields_stepped:
        loose = [f for f in train if f[3].step is None]
        if loose:
            # ... unless it holds an epoch's times (a copy of TimeMonitor with the epoch's mean loss: "Epoch time:
            # 3680.524 ms, per step time: 1.963 ms, avg loss: 0.094"; MindFormers' "Per sink_size step time: ..."),
            # a learning rate or a throughput (no evaluation prints them: CenterFace's "epoch[2], loss:1.906899,
            # 442.33 imgs/sec, lr:0.004"): a summary (or says it is training's: "Average Train Loss: [1.641]")
            # An epoch's line with no eval word is the epoch's mean (MindSpore Lite's LossMonitor::EpochEnd:
            # "Epoch (1):\tLoss is 0.384778" after its "1.1800:\tLoss is 0.0698758"): a summary too.
            summary += [f for f in loose if any(t in _SUMMARY_TAGS for t, _, _ in f[3].values)
                        or ("train" in f[3].text.lower() or id(f[3]) in own_epoch) and not f[3].eval]
            kept = {id(f) for f in summary}  # (by identity: "in" compared each with all, quadratic)
            if fields_stepped:
                evals = sorted(evals + [f for f in loose if id(f) not in kept], key=lambda f: f[0])
                train = [f for f in train if f[3].step is not None]
            else:  # (steps only on the shapes' lines: the rest are read as before, a run of loss lines or unread)
                train = [f for f in train if id(f) not in kept]
    # A tqdm bar redrawn on one physical line at the same counters is one record: its last drawing.
    train = [f for i, f in enumerate(train)
             if not (i + 1 < len(train) and train[i + 1][0] == f[0] and _counters(train[i + 1][3]) == _counters(f[3]))]
    ranks = _ranks(train, rel, diags, _error_positions(rec), rec.path)
    out: list[tuple[int, float | None, int, int, float, list]] = []  # (pos, wall, zone, step, rank, values)
    for rank in sorted(set(ranks), key=lambda r: (r is None, r)):
        stream = [f for f, r in zip(train, ranks) if r == rank]
        steps = _field_steps([f[3] for f in stream], rel, diags, rank, _printed_per_epoch(found))
        if steps is None:
            for pos, _, _, r in stream:
                logparse._loss_unread(rec, pos, r.text)
            continue
        _neighbour_times(stream, rec.times, rank, rel, diags)
        values = _settle_time_units(stream, steps, rel, diags)
        for (pos, wall, zone, _), step, vals in zip(stream, steps, values):
            if step == MISSING:
                continue
            out.append((pos, wall, zone, step, float("nan") if rank is None else float(rank), vals))
    # Epoch summaries: their times at the step of the line with a step before them (the mean loss
    # dropped); evaluations likewise, kept apart as eval_* (the step rule of the shapes they stand
    # beside: TimeMonitor's and Eval result's).
    for pos, wall, zone, r in summary:
        vals = [v for v in r.values if v[0] not in ("loss", "loss_avg")]
        if vals:
            out.append((pos, wall, zone, MISSING, float("nan") if r.rank is None else float(r.rank), vals, _SUMMARY_SHAPE))
    out.extend(_times_beside_shapes(rec.times, bool(train), rel, diags))
    for pos, wall, zone, r in evals:
        vals = _eval_values(r.values)
        out.append((pos, wall, zone, MISSING, float("nan") if r.rank is None else float(r.rank), vals, _EVAL_SHAPE))
    if evals:
        diags.append(dg.info("log-inferred", path=rel, variant="eval", n=len(evals)))
    if summary:
        diags.append(dg.info("log-inferred", path=rel, variant="summary", n=len(summary)))
    out.sort(key=lambda o: o[0])
    lines = {c: np.full(len(out), MISSING, dtype=np.int64) for c in _LINE_INT}
    lines["pos"] = np.array([o[0] for o in out], dtype=np.int64)
    lines["shape"] = np.array([o[6] if len(o) > 6 else _FIELDS_SHAPE for o in out], dtype=np.int64)
    lines["zone"] = np.array([o[2] for o in out], dtype=np.int64)
    lines["step"] = np.array([o[3] for o in out], dtype=np.int64)
    lines["wall"] = np.array([float("nan") if o[1] is None else o[1] for o in out], dtype=np.float64)
    lines["rank"] = np.array([o[4] for o in out], dtype=np.float64)
    v_line, v_field, v_value = [], [], []
    codes: dict[tuple[str, str], int] = {}  # (a file has few (tag, key) pairs; their codes in the order first seen)
    for row, o in enumerate(out):
        for tag, raw, value in o[5]:
            v_line.append(row)
            code = codes.get((tag, raw))
            if code is None:
                code = codes[(tag, raw)] = logparse._pair_code(keys, f"{tag}\x1f{raw}", _FIELDS_SLOT)
            v_field.append(code)
            v_value.append(value)
    values = {"line": np.array(v_line, dtype=np.uint32), "field": np.array(v_field, dtype=np.uint32),
              "value": np.array(v_value, dtype=np.float64)}
    return lines, values


def _eval_values(values: list) -> list:
    """An evaluation record's values as eval_* tags, one eval_loss: where the line prints the
    evaluation's own loss, a training loss beside it is the epoch's mean ("Train Loss: 0.12 Vali Loss:
    0.06 Test Loss: 0.07", Informer's epoch line), dropped like a summary's mean loss."""
    if any(t == "eval_loss" for t, _, _ in values):
        values = [v for v in values if v[0] not in ("loss", "loss_avg")]
    return [(t if t.startswith("eval_") else "eval_" + t, raw, v) for t, raw, v in values]


def _shapes_settled(found: list, rec: logparse.Records, rel: str, diags: list) -> list:
    """How the file lays its records out, settled from all of them (each said in an info): records
    printed over two lines joined (logparse.pair_halves); fractions printed total first."""
    found, n, loss_first = logparse.pair_halves(found, rec.halves)
    if n:  # the counter lines are halves of records here, not time lines of the records beside them
        halves = {h[0] for h in rec.halves}
        rec.times = [t for t in rec.times if t[0] not in halves]
        diags.append(dg.info("log-inferred", path=rel, variant="two-line-loss-first" if loss_first else "two-line", n=n))
    if logparse.totals_first([f[3] for f in found]):
        diags.append(dg.info("log-inferred", path=rel, variant="total-first"))
    return found


def _under_headers(found: list, said: dict | None = None) -> list:
    """Records without an epoch take the epoch of the header line ("Epoch 3") above them; records
    without a rank, the rank of the line above that names only one ("Device ID : 3": their count
    in ``said``, under "ranks-carried")."""
    if not any(f[3].header for f in found):
        return found
    out, epoch, rank = [], None, None
    for f in found:
        r = f[3]
        if r.header:
            if r.rank is not None:
                rank = r.rank
            else:
                epoch = r.epoch
            continue
        if r.epoch is None and epoch is not None:
            r.epoch = epoch
        if r.rank is None and rank is not None:
            r.rank = rank
            if said is not None:
                said["ranks-carried"] = said.get("ranks-carried", 0) + 1
        out.append(f)
    return out


def _counters(r) -> tuple:
    return r.epoch, r.step


def _ranks(train: list, rel: str, diags: list, errors: np.ndarray | None = None, path: str = "") -> list[int | None]:
    """Each record's rank: as the line prints it (a prefix, a rank key, a ``Device ID : 3`` line
    above it), else, where every counter is printed N times in a row, ranks 0..N-1 in order of
    appearance, else, where the counters start again from the first record's, the blocks in order
    (each said so). ``errors``: the positions of the file's error lines; ``path``: the file."""
    if any(f[3].rank is not None for f in train):
        printed = sorted({f[3].rank for f in train if f[3].rank is not None})
        if len(printed) > 1:
            diags.append(dg.info("log-inferred", path=rel, variant="ranks-printed", n=len(printed)))
        return [f[3].rank if f[3].rank is not None else printed[0] for f in train]
    keyed = [_counters(f[3]) for f in train]
    if not train or all(k == (None, None) for k in keyed):
        return [None] * len(train)
    same = np.array([bool(i) and k == keyed[i - 1] for i, k in enumerate(keyed)], dtype=bool)
    by_order = _runs_as_ranks(same)
    if by_order is not None:
        diags.append(dg.info("log-inferred", path=rel, variant="ranks-order", n=int(by_order.max()) + 1))
        return by_order.tolist()
    # the counters as one orderable number (epoch, then step; an absent one as -1)
    order = np.array([(-1 if e is None else e) * (1 << 31) + (-1 if s is None else s) for e, s in keyed], dtype=np.int64)
    wall = np.array([np.nan if f[1] is None else f[1] for f in train], dtype=np.float64)
    pos = np.array([f[0] for f in train], dtype=np.int64)
    blocks = _blocks_as_ranks(order, pos, lambda: np.array([next((v for t, _, v in f[3].values if t == "loss"), np.nan)
                                                            for f in train], dtype=np.float64), wall, errors, path)
    if blocks is None:
        return [None] * len(train)
    _say_blocks(blocks, keyed[0][1] if keyed[0][1] is not None else keyed[0][0], rel, diags)
    return blocks.tolist()


def _error_positions(rec: logparse.Records) -> np.ndarray:
    return np.sort(np.array([e[0] for e in rec.errors], dtype=np.int64))


def _runs_as_ranks(same: np.ndarray) -> np.ndarray | None:
    """Ranks 0..N-1 in order of appearance where nearly every record's counters are printed N times
    in a row (``same[i]``: record i prints the counters of record i-1), else None. The first and the
    last run may be cut short (an excerpt starts and ends anywhere); the runs between are N long."""
    starts = np.flatnonzero(~same)
    if len(starts) < 2 or starts[0] != 0:
        return None
    runs = np.diff(np.append(starts, len(same)))
    n = int(runs.max())
    inner = runs[1:-1]
    if n < 2 or (runs >= 2).sum() < max(2, 0.8 * len(runs)) or (len(inner) and (inner == n).sum() < 0.8 * len(inner)):
        return None
    return np.arange(len(same)) - np.repeat(starts, runs)


def _blocks_as_ranks(order: np.ndarray, pos: np.ndarray, losses, wall: np.ndarray,
                     errors: np.ndarray | None, path: str = "") -> np.ndarray | None:
    """Ranks' outputs pasted one after another (``grep loss LOG*/log.txt``, or one file that several
    ranks wrote in big chunks): the counters (``order``, one number per record in line order) start
    again from the first record's value, and each block repeats the first one's counters. Block b is
    rank b, or None where the bytes say a later launch instead: an error line between two blocks
    (a crash, then a relaunch), a line between them that is no log line of the grammar (a launch's
    banner or settings: ``num_parallel_workers: 16``; "..." elisions and blank lines are quiet,
    _quiet_between), a block that starts after the one before ended by the wall clock
    (ranks run at the same time), or a block whose first loss is nearer the previous block's last
    than the first block's first (a resumed launch carries the loss on; ranks all start alike).
    ``losses()``: each record's loss (NaN: none), asked for only when the counters start again."""
    back = np.flatnonzero((order[1:] < order[:-1]) & (order[1:] == order[0])) + 1
    if not len(back):
        return None
    starts = np.concatenate([[0], back])
    ends = np.append(back, len(order))
    if (ends - starts).min() < 2:
        return None
    first = order[: ends[0]]
    loss = losses()
    for b in range(1, len(starts)):
        lo, hi = starts[b], ends[b]
        block = order[lo:hi]
        if (np.diff(block) < 0).any() or not np.array_equal(block[: len(first)], first[: len(block)]):
            return None
        prev_end = ends[b - 1] - 1
        if errors is not None and len(errors) and np.searchsorted(errors, pos[lo]) > np.searchsorted(errors, pos[prev_end]):
            return None
        if wall[lo] == wall[lo] and wall[prev_end] == wall[prev_end] and wall[lo] > wall[prev_end]:
            return None
        here, start, before = loss[lo], loss[0], loss[prev_end]
        if here == here and start == start and before == before and abs(here - before) < abs(here - start):
            return None
    if (np.diff(first) < 0).any():
        return None
    if path and not _quiet_between(path, [(int(pos[e - 1]), int(pos[s])) for s, e in zip(starts[1:], ends[:-1])]):
        return None
    return np.repeat(np.arange(len(starts)), ends - starts)


_ELISION = re.compile(r"^[\s.…·]*$")


def _quiet_between(path: str, gaps: list[tuple[int, int]]) -> bool:
    """Whether every line strictly between the line numbers of each gap is blank, an elision
    ("...") or a line of the grammar (a TimeMonitor line, an epoch summary). Read again from the
    file, once, up to the last gap (only where the counters start again: rare)."""
    if all(b - a <= 1 for a, b in gaps):
        return True
    gaps = sorted(gaps)
    last = gaps[-1][1]
    k = 0
    with guard.open_file(path, "rb") as fh:
        for no, raw in enumerate(fh, 1):
            if no >= last:
                break
            while k < len(gaps) and no >= gaps[k][1]:
                k += 1
            if k == len(gaps) or no <= gaps[k][0]:
                continue
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if _ELISION.match(text) is None and not logparse.is_candidate(text):
                return False
    return True


def _say_blocks(blocks: np.ndarray, first, rel: str, diags: list) -> None:
    diags.append(dg.info("log-inferred", path=rel, variant="ranks-blocks", n=int(blocks.max()) + 1,
                         first=-1 if first is None else int(first)))


def _printed_per_epoch(found: list) -> list[int]:
    """The steps per epoch any line read by its fields prints, in line order: an epoch's summary
    ("Epoch: 1, Steps: 3741 | Train Loss: ... Vali Loss: ...") prints it for the step lines."""
    return [f[3].per_epoch for f in found if f[3].per_epoch]


def _field_steps(records: list, rel: str, diags: list, rank, elsewhere: list[int] = ()) -> list[int] | None:
    """Global steps of one rank's training records (None: not records, e.g. one loss line with
    no counter). ``elsewhere``: the steps per epoch other lines of the file print."""
    n = len(records)
    epochs = [r.epoch for r in records]
    steps = [r.step for r in records]
    has_epoch = any(e is not None for e in epochs)
    has_step = any(s is not None for s in steps)
    if not has_epoch and not has_step:
        # a run of loss lines: two or more printing the loss under the same key
        keys = [next((raw for t, raw, _ in r.values if t == "loss"), None) for r in records]
        if n < 2 or max(keys.count(k) for k in set(keys)) < 2:
            return None
        diags.append(dg.info("log-inferred", path=rel, variant="ordinal", n=n))
        return list(range(1, n + 1))
    base = 0
    if has_epoch and min(e for e in epochs if e is not None) == 0:
        base = 1
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-0-based"))
    epochs = [e + base if e is not None else None for e in epochs]
    printed = [r.per_epoch for r in records if r.per_epoch] or list(elsewhere)
    if not has_step:  # one line per epoch
        ratios = [round(t / st) for t, st in (_epoch_and_step_time(r) for r in records) if t and st and t > st]
        if printed:
            diags.append(dg.info("log-inferred", path=rel, variant="epoch-end", n=printed[-1]))
            return [e * printed[-1] if e is not None else MISSING for e in epochs]
        if ratios:
            spe = int(np.median(ratios))
            diags.append(dg.info("log-steps-per-epoch", path=rel, variant="ratio", n=spe, lines=len(ratios),
                                 differ=sum(1 for x in ratios if x != spe)))
            return [e * spe if e is not None else MISSING for e in epochs]
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-as-step"))
        return [e if e is not None else MISSING for e in epochs]
    if any(r.global_step for r in records) or not has_epoch:
        return [s if s is not None else MISSING for s in steps]  # (an epoch-only line beside them: a summary)
    # Epoch and step on the lines: is the step within the epoch (it starts again when the epoch
    # changes, or the line prints it as s/N) or global (it goes on)?
    reset = grows = False
    prev = None
    for e, s in zip(epochs, steps):
        if e is None or s is None:
            continue
        if prev is not None and e > prev[0]:
            if s <= prev[1]:
                reset = True
            else:
                grows = True
        prev = (e, s)
    totals = [r.steps_total for r in records if r.steps_total and r.epoch is not None]
    if not (reset or printed or totals):
        if grows:
            diags.append(dg.info("log-inferred", path=rel, variant="step-global"))
        return [s if s is not None else MISSING for s in steps]
    if printed:
        spe, how = printed[-1], "printed"
    elif totals and (not grows or max(x for x in steps if x is not None) <= max(totals)):
        spe, how = max(totals), "printed"
    else:
        spe, how = max(s for s in steps if s is not None), "largest"
        if min(s for s in steps if s is not None) == 0:
            spe += 1
        e_arr = np.array([MISSING if e is None else e for e in epochs], dtype=np.int64)
        s_arr = np.array([MISSING if s is None else s for s in steps], dtype=np.int64)
        parts = _epoch_parts(e_arr, s_arr, rel, diags) if min(s for s in steps if s is not None) > 0 else None
        if parts is not None:
            return np.where(s_arr == MISSING, MISSING, _global(e_arr, s_arr, parts)).tolist()
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="fields-" + how, n=spe))
    # a line with the epoch but no step beside lines with both is the epoch's summary: no record
    return [MISSING if s is None else (e - 1) * spe + s if e is not None else s for e, s in zip(epochs, steps)]


def _agree(a, b) -> bool | None:
    """Do two lines' counters name the same step (None: no counter printed by both)?"""
    pairs = [(x, y) for x, y in ((a.epoch, b.epoch), (a.step, b.step)) if x is not None and y is not None]
    return all(x == y for x, y in pairs) if pairs else None


def _neighbour_times(stream: list, times: list, rank, rel: str, diags: list) -> None:
    """A step's time printed on a line of its own (no loss on it) is the time of the record beside
    it: the one whose counters it prints ("epoch 1 cost time = 156.34, train step num: 1562, one
    step time: 100.09 ms" before "epoch: 1 step 1562, loss is 1.50"), or, where the records print
    no counter, the one after it (U-GAT-IT's counter and time line over its loss lines); a line
    with no counter follows its record (Informer's `speed: 0.2837s/iter` after `iters: 3450, ...
    | loss: 0.46`: the time of the step just done). A record that prints its own time keeps it;
    each takes one such line, and each line is given once: with several ranks' records and no rank
    on it, to the first rank's beside it that has none (data-parallel ranks step together: their
    step times agree). The times join the record's values (their units settled with them)."""
    if not times or not stream:
        return
    at = [f[0] for f in stream]
    taken: set[int] = set()
    after = before = 0
    for pos, _, _, t in times:
        if (t.rank is not None and t.rank != rank) or not t.values:
            continue
        i = bisect.bisect_left(at, pos)
        prev, nxt = (i - 1 if i else None), (i if i < len(at) else None)
        if t.epoch is None and t.step is None:
            pick = prev  # the time of the step just printed
        else:
            agree = [j for j in (prev, nxt) if j is not None and _agree(t, stream[j][3])]
            heads = nxt is not None and stream[nxt][3].step is None and _agree(t, stream[nxt][3]) is None
            pick = agree[0] if agree else nxt if heads else None
        if pick is None or pick in taken:
            continue
        r = stream[pick][3]
        if any(tag == "step_time" for tag, _, _ in r.values):
            continue
        taken.add(pick)
        for j, (tag, raw, v) in enumerate(t.values):
            if tag == "step_time":
                if j in t.unitless:
                    r.unitless.append(len(r.values))
                r.values.append((tag, raw, v))
        t.values = []  # given once: with several ranks and no rank on it, to the first rank's record beside it
        if pick == prev:
            after += 1
        else:
            before += 1
    if after:
        diags.append(dg.info("log-inferred", path=rel, variant="time-line-after", n=after))
    if before:
        diags.append(dg.info("log-inferred", path=rel, variant="time-line-before", n=before))


def _times_beside_shapes(times: list, fields: bool, rel: str, diags: list) -> list:
    """In a file whose records a shape reads (LossMonitor's), a step's time on a line of its own that
    prints a counter: at the step of the record after it, the one it announces (rows of _field_lines,
    their steps settled with the shapes'). One with no counter is left: the records before it may
    print their time (TimeMonitor's lines; a run's closing "per step time: 3.455")."""
    if fields or not times:
        return []
    out = [(pos, wall, zone, MISSING, float("nan") if t.rank is None else float(t.rank),
            [v for v in t.values if v[0] == "step_time"], _TIME_SHAPE)
           for pos, wall, zone, t in times if t.epoch is not None or t.step is not None]
    if out:
        diags.append(dg.info("log-inferred", path=rel, variant="time-line-shapes", n=len(out)))
    return out


def _epoch_and_step_time(r) -> tuple[float | None, float | None]:
    vals = {t: v for t, _, v in reversed(r.values)}
    return vals.get("epoch_time"), vals.get("step_time")


def _settle_time_units(stream: list, steps: list[int], rel: str, diags: list) -> list[list]:
    """Times printed without a unit were read as ms (MindSpore's callbacks print ms); the wall
    clock between records says whether they are seconds instead."""
    values = [list(f[3].values) for f in stream]
    unitless = [(i, j) for i, f in enumerate(stream) for j in f[3].unitless if f[3].values[j][0] == "step_time"]
    if not unitless:
        return values
    walls = np.array([np.nan if f[1] is None else f[1] for f in stream], dtype=np.float64)
    st = np.array(steps, dtype=np.float64)
    ok = ~np.isnan(walls) & (st != MISSING)
    gap = None
    if ok.sum() >= 3:
        dw, ds = np.diff(walls[ok]), np.diff(st[ok])
        good = (ds > 0) & (dw > 0)
        if good.any():
            gap = float(np.median(dw[good] / ds[good]))
    printed = float(np.median([values[i][j][2] for i, j in unitless]))  # as ms, in s
    if gap is not None and 0.3 <= (printed * 1e3) / gap <= 3.0 and not 0.3 <= printed / gap <= 3.0:
        for i, j in unitless:
            t, raw, v = values[i][j]
            values[i][j] = (t, raw, v * 1e3)
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s", gap=gap))
    elif gap is not None and 0.3 <= printed / gap <= 3.0:
        diags.append(dg.info("log-inferred", path=rel, variant="unit-ms-clock", gap=gap))
    elif gap is None and printed * 1e3 < 1.0:
        for i, j in unitless:
            t, raw, v = values[i][j]
            values[i][j] = (t, raw, v * 1e3)
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s-small", median=printed * 1e3))
    elif gap is None and _compile_step_in_seconds(values, unitless, printed):
        # MindSpore compiles the graph in the first step (seconds to minutes): a first step many times
        # the others that would, as ms, be a compile under a second is printed in seconds
        first = values[unitless[0][0]][unitless[0][1]][2] * 1e3  # (as printed)
        for i, j in unitless:
            t, raw, v = values[i][j]
            values[i][j] = (t, raw, v * 1e3)
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s-compile", first=first, median=printed * 1e3))
    else:
        diags.append(dg.info("log-inferred", path=rel, variant="unit-ms"))
    return values


COMPILE_RATIO = 10  # a first step this many times the median of the others is the graph compile's


def _compile_step_in_seconds(values: list, unitless: list, median_s: float) -> bool:
    """The first of the unitless per-step times (as ms, in s) is the first step's, COMPILE_RATIO times
    the median or more, and under a second as ms (no MindSpore graph compiles that fast): seconds."""
    if len(unitless) < 3:
        return False
    first = values[unitless[0][0]][unitless[0][1]][2]
    return first < 1.0 and median_s > 0 and first >= COMPILE_RATIO * median_s


# --------------------------------------------------------------------------- assembling



def read(artifact: Artifact) -> ReadResult:
    scan = _scan(artifact.path)
    inferred: list = []
    lines, values = _columns(scan, artifact.rel, inferred)
    return _assemble(scan, lines, values, artifact, inferred)


def _assemble(scan: _Scan, lines: dict[str, np.ndarray], values: dict[str, np.ndarray], artifact: Artifact,
              inferred: list | None = None) -> ReadResult:
    result = ReadResult(reader="textlog")
    diags = result.diagnostics
    rel, rec = artifact.rel, scan.rec
    bad = [x for x in (scan.bad_encoding, rec.bad_encoding) if x is not None]
    if bad:
        diags.append(dg.warning("log-encoding", path=rel, offset=min(bad)))
    long_line = min((x for x in (scan.long_line, rec.long_line) if x is not None), default=None)
    if long_line is not None:
        diags.append(dg.warning("log-line-too-long", path=rel, offset=long_line, limit=MAX_LINE_BYTES))

    steps = _Steps(lines, rel, diags)
    lines = _ranks_by_order(lines, steps, rel, diags, values, scan.keys, _error_positions(rec), rec.path)
    if rec.json_invalid is not None:
        diags.append(dg.warning("log-json-invalid", path=rel, offset=rec.json_invalid))
    _unreadable(rec, rel, diags)
    if rec.rank_carried:
        diags.append(dg.info("log-inferred", path=rel, variant="ranks-carried", n=rec.rank_carried))
    diags.extend(inferred or ())
    if rec.loss_unread[0]:
        n, first, text = rec.loss_unread
        diags.append(dg.warning("log-loss-unread", path=rel, offset=first, n=n,
                                line=text if len(text) <= 120 else text[:117] + "..."))
    result.tables["scalars"] = _scalars(lines, values, steps, scan.keys, artifact, diags)
    result.tables["events"] = _events(rec, steps, artifact.rank, rel, diags)
    for key, value in rec.settings.items():
        result.settings[key] = Setting(value, "log")
    zones = np.concatenate([lines["zone"], [e[4] for e in rec.events], [e[2] for e in rec.errors]])
    if (zones == g.ZONE_NAIVE).any():
        result.clock = "local"
    _nothing_taken(scan, result, artifact)
    return result


class _Steps:
    """The step of every line (``at``; MISSING: none) by its shape's step rule: the line's own
    step (``own``), or the step of the closest line with one of its own before / after it."""

    def __init__(self, lines: dict[str, np.ndarray], rel: str, diags: list) -> None:
        r = _RULE
        rule = _compiled().rules[lines["shape"]]
        epoch, step_in, total = lines["epoch"], lines["step_in"], lines["steps_total"]
        epoch = _one_based(epoch, lines["shape"], (rule == r["epoch_step"]) | (rule == r["in_epoch"]), rel, diags)
        # Steps per epoch as lines print them ("step:[n/N]", "Step n/N", "step: [n/N]").
        printed = (rule == r["epoch_step"]) & (epoch != MISSING) & (total != MISSING)
        per_epoch = int(total[printed].max()) if printed.any() else None
        shape = g.SHAPES[int(lines["shape"][np.argmax(printed)])].name if per_epoch else None
        lm = rule == r["in_epoch"]
        parts = None if per_epoch else _epoch_parts(epoch[lm], step_in[lm], rel, diags)
        in_epoch = None if parts is not None else _in_epoch_steps(epoch[lm], step_in[lm], per_epoch, shape, rel, diags)
        ends = rule == r["epoch_end"]
        epoch_end = _epoch_end_steps(total[ends], per_epoch, rel, diags)

        own = np.full(len(rule), MISSING, dtype=np.int64)
        pick = rule == r["epoch_step"]
        own[pick] = _global(epoch[pick], step_in[pick], np.where(total[pick] != MISSING, total[pick], per_epoch or MISSING))
        pick = rule == r["global"]
        own[pick] = lines["step"][pick]
        own[lm] = _global(epoch[lm], step_in[lm], in_epoch or MISSING) if in_epoch else step_in[lm]
        if parts is not None:
            own[lm] = _global(epoch[lm], step_in[lm], parts)
        if epoch_end:
            own[ends] = np.where(epoch[ends] != MISSING, epoch[ends] * epoch_end, MISSING)
        self.pos, self.own = lines["pos"], own
        stepped = own != MISSING
        self.stepped_pos, self.stepped_step = self.pos[stepped], own[stepped]

        at = own.copy()
        before = (rule == r["before"]) | (rule == r["before_or_epoch"])
        at[before] = self.before(self.pos[before])
        after = rule == r["next"]
        at[after] = self.after(self.pos[after])
        # A TimeMonitor line with no step before it ends the n-th epoch: step n x steps per epoch.
        tm = rule == r["before_or_epoch"]
        if in_epoch and tm.any():
            fill = tm & (at == MISSING)
            at[fill] = np.cumsum(tm)[fill] * in_epoch
        self.at = at

    def before(self, pos: np.ndarray) -> np.ndarray:
        """The step of the closest line with a step of its own at or before each of ``pos``."""
        out = np.full(len(pos), MISSING, dtype=np.int64)
        i = np.searchsorted(self.stepped_pos, pos, side="right") - 1
        ok = i >= 0
        out[ok] = self.stepped_step[i[ok]]
        return out

    def after(self, pos: np.ndarray) -> np.ndarray:
        """The step of the closest line with a step of its own at or after each of ``pos``."""
        out = np.full(len(pos), MISSING, dtype=np.int64)
        i = np.searchsorted(self.stepped_pos, pos, side="left")
        ok = i < len(self.stepped_pos)
        out[ok] = self.stepped_step[i[ok]]
        return out

    def of_line(self, pos: np.ndarray) -> np.ndarray:
        """The own step of the lines at ``pos`` (MISSING where there is none)."""
        out = np.full(len(pos), MISSING, dtype=np.int64)
        if len(self.pos):
            i = np.minimum(np.searchsorted(self.pos, pos), len(self.pos) - 1)
            hit = self.pos[i] == pos
            out[hit] = self.own[i[hit]]
        return out


def _one_based(epoch: np.ndarray, shape: np.ndarray, pick: np.ndarray, rel: str, diags: list) -> np.ndarray:
    """Epochs of the ``epoch_step`` lines of a shape that prints an epoch 0 count from 0 (a model's
    own copy of a callback): moved to 1-based, said so."""
    zero = pick & (epoch == 0)
    if not zero.any():
        return epoch
    epoch = epoch.copy()
    for s in np.unique(shape[zero]).tolist():
        of = pick & (shape == s) & (epoch != MISSING)
        epoch[of] += 1
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-0-based-lines", shape=g.SHAPES[s].name))
    return epoch


def _ranks_by_order(lines: dict[str, np.ndarray], steps: "_Steps", rel: str, diags: list, values: dict[str, np.ndarray],
                    keys: dict[str, int], errors: np.ndarray, path: str) -> dict[str, np.ndarray]:
    """Ranks printed into one stream with no rank on the lines (a grep of 8 ranks' logs, ranks
    writing one file): where nearly every step of the main shape is printed N times in a row, the
    lines are ranks 0..N-1 in order of appearance; where its steps start again from the first one's
    in blocks (ranks' logs pasted one after another), each block's lines are the next rank (both
    said so; _runs_as_ranks, _blocks_as_ranks). Lines that print their rank, and the lines read by
    their fields (settled in _field_lines), are left as they are."""
    own = steps.own
    shape = lines["shape"]
    if not len(own) or not np.isnan(lines["rank"]).all():
        return lines
    stepped = np.flatnonzero((own != MISSING) & (shape != _FIELDS_SHAPE))
    if len(stepped) < 4:
        return lines
    main = np.bincount(shape[stepped]).argmax()
    idx = stepped[shape[stepped] == main]
    seq = own[idx]
    rank = lines["rank"].copy()
    within = _runs_as_ranks(np.concatenate([[False], seq[1:] == seq[:-1]]))
    if within is not None:
        rank[idx] = within.astype(np.float64)
        n = int(within.max()) + 1
        diags.append(dg.info("log-inferred", path=rel, variant="ranks-order", n=n))
        _time_ranks_by_order(rank, lines, steps, lines["pos"][idx[within == 0]], n, rel, diags)
        return {**lines, "rank": rank}
    blocks = _blocks_as_ranks(seq, lines["pos"][idx], lambda: _line_loss(idx, values, keys), lines["wall"][idx], errors, path)
    if blocks is None:
        return lines
    # every line from a block's first record on is that block's (its TimeMonitor lines too)
    first = idx[np.flatnonzero(np.diff(blocks, prepend=-1))]
    of = np.searchsorted(lines["pos"][first], lines["pos"], side="right") - 1
    mine = shape != _FIELDS_SHAPE
    rank[mine] = np.maximum(of[mine], 0).astype(np.float64)
    _say_blocks(blocks, int(seq[0]), rel, diags)
    return {**lines, "rank": rank}


def _line_loss(idx: np.ndarray, values: dict[str, np.ndarray], keys: dict[str, int]) -> np.ndarray:
    """The loss each of the lines ``idx`` prints (NaN: none)."""
    out = np.full(len(idx), np.nan)
    names = list(keys)
    field = values["field"]
    codes = np.unique(field).tolist() if len(field) else []
    is_loss = np.zeros(int(field.max()) + 1 if len(field) else 0, dtype=bool)
    for code in codes:
        is_loss[code] = g.field_label(code, names)[0] == "loss"
    pick = is_loss[field] if len(field) else np.zeros(0, dtype=bool)
    line, value = values["line"][pick].astype(np.int64), values["value"][pick]
    # the first loss value of each line
    line, first = np.unique(line, return_index=True)
    at = np.searchsorted(line, idx)
    ok = (at < len(line)) & (line[np.minimum(at, len(line) - 1)] == idx) if len(line) else np.zeros(len(idx), dtype=bool)
    out[ok] = value[first][at[ok]]
    return out


def _time_ranks_by_order(rank: np.ndarray, lines: dict[str, np.ndarray], steps: "_Steps", group_at: np.ndarray, n: int,
                         rel: str, diags: list) -> None:
    """The epoch-end time lines (TimeMonitor's) of ranks whose records are read in order of appearance:
    after a step's group of records (starting at ``group_at``), the k-th time line is rank k's, as each
    rank prints its time after its own record (8 ranks' `epoch time: 74857.710 ms, per step time:
    603.691 ms` interleaved with their LossMonitor lines: the first is rank 0's). In ``rank``."""
    tm = np.flatnonzero((_compiled().rules[lines["shape"]] == _RULE["before_or_epoch"]) & np.isnan(rank)
                        & (steps.own == MISSING))
    if not len(tm) or not len(group_at):
        return
    group = np.searchsorted(group_at, lines["pos"][tm], side="right") - 1
    ok = group >= 0
    tm, group = tm[ok], group[ok]
    if not len(tm):
        return
    first = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    k = np.arange(len(group)) - np.repeat(first, np.diff(np.concatenate([first, [len(group)]])))
    keep = k < n
    rank[tm[keep]] = k[keep].astype(np.float64)
    diags.append(dg.info("log-inferred", path=rel, variant="ranks-order-times", n=int(keep.sum())))


def _global(epoch: np.ndarray, step_in: np.ndarray, per_epoch) -> np.ndarray:
    """(epoch - 1) x steps per epoch + step in epoch; the step in epoch where no epoch is printed,
    MISSING where a step per epoch is needed and unknown. Counters have at most 9 digits: no
    product overflows."""
    step = np.where(epoch == MISSING, step_in, (epoch - 1) * per_epoch + step_in)
    return np.where((step_in == MISSING) | ((epoch != MISSING) & (per_epoch == MISSING)), MISSING, step)


def _in_epoch_steps(epoch: np.ndarray, step_in: np.ndarray, per_epoch: int | None, shape: str | None, rel: str,
                    diags: list) -> int | None:
    """Steps per epoch for lines that print the step within the epoch (LossMonitor): as printed by
    other lines of the file, else inferred from the epochs the file shows complete."""
    if not len(epoch):
        return None
    if per_epoch:
        diags.append(dg.info("log-steps-per-epoch", path=rel, variant="printed", n=per_epoch, shape=shape))
        return per_epoch
    # An epoch followed by another one is complete: its largest step is the epoch length.
    order = pl.DataFrame({"epoch": epoch, "step_in": step_in}).group_by("epoch", maintain_order=True).agg(pl.col("step_in").max())
    complete = order.head(order.height - 1)
    if complete.is_empty():
        only = int(order["epoch"][0])
        if only > 1:  # a later epoch alone (an excerpt, a resumed launch): its largest step is the best length known
            spe = int(order["step_in"][0])
            diags.append(dg.info("log-steps-per-epoch", path=rel, variant="fields-largest", n=spe))
            return spe
        diags.append(dg.info("log-steps-per-epoch", path=rel, variant="one-epoch"))
        return None
    # the longest epoch seen: a complete epoch's length, or a later one's where an excerpt cut the earlier short
    spe = int(max(complete["step_in"].max(), order["step_in"].max()))
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="lossmonitor", n=spe))
    return spe


def _epoch_parts(epoch: np.ndarray, step_in: np.ndarray, rel: str, diags: list) -> np.ndarray | None:
    """Steps per epoch of each line (LossMonitor's in-epoch step), where the file holds parts with
    different epoch lengths: one line per epoch, at its end (sink mode, or a print interval of an
    epoch), so its step is the epoch's length; the epochs jump (90..95, then 245..250: another
    run's lines pasted after, or a run on another dataset size) and the length is the same within
    each part and differs between them (12, then 129). Each part keeps its own length (said so);
    None: one length for the file. (Epochs printing several lines show only their largest step
    seen, which an excerpt may cut: no parts from those.)"""
    ok = (epoch != MISSING) & (step_in != MISSING)
    e, s = epoch[ok], step_in[ok]
    if len(e) < 4 or (np.diff(e) <= 0).any():
        return None  # (an epoch printing two lines, or epochs going back: ranks' blocks or launches)
    cut = np.flatnonzero(np.diff(e) > 1) + 1  # where the epochs jump
    bounds = np.concatenate([[0], cut, [len(e)]])
    if not len(cut) or np.diff(bounds).min() < 2:
        return None  # no jump, or a part of one epoch (its length unknown)
    lengths = s[bounds[:-1]]
    if (lengths == lengths[0]).all() or (s != np.repeat(lengths, np.diff(bounds))).any():
        return None
    part_of = np.searchsorted(e[bounds[1:-1]], epoch, side="right")
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="parts", n=len(lengths),
                         counts=", ".join(str(int(x)) for x in lengths), epoch=int(e[cut[0]])))
    return np.where(epoch != MISSING, lengths[part_of], MISSING)


def _epoch_end_steps(ratios: np.ndarray, per_epoch: int | None, rel: str, diags: list) -> int | None:
    """Steps per epoch for lines that end an epoch (the model zoo's epoch summary): as printed by
    step lines of the file, else the median of the lines' round(epoch time / per step time)."""
    if not len(ratios):
        return None
    if per_epoch:
        diags.append(dg.info("log-steps-per-epoch", path=rel, variant="step-counts", n=per_epoch))
        return per_epoch
    ratios = ratios[ratios != MISSING]
    if not len(ratios):
        return None
    spe = int(round(float(np.median(ratios))))
    differ = int((ratios != spe).sum())
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="ratio", n=spe, lines=len(ratios), differ=differ))
    return spe


def _scalars(lines: dict[str, np.ndarray], values: dict[str, np.ndarray], steps: _Steps, keys: dict[str, int],
             artifact: Artifact, diags: list) -> pl.DataFrame:
    """One row per value, in line order (a line's values in their order); values with no step
    are dropped and counted."""
    line, field = values["line"], values["field"]
    step = steps.at[line]
    kept = step != MISSING
    dropped = len(step) - int(kept.sum())
    if dropped:
        diags.append(dg.info("log-no-step", path=artifact.rel, n=dropped))
        line, field, step = line[kept], field[kept], step[kept]
    labels: dict[tuple[str, str, str], int] = {}
    label_of = np.zeros(int(field.max()) + 1 if len(field) else 0, dtype=np.uint32)
    scale_of = np.ones(len(label_of), dtype=np.float64)
    names = list(keys)  # codes number the keys in insertion order
    for code in np.flatnonzero(np.bincount(field)).tolist() if len(field) else ():
        tag, raw, source, scale = g.field_label(code, names)
        label_of[code], scale_of[code] = labels.setdefault((tag, raw, source), len(labels)), scale
    label = pl.Series(label_of[field])
    if np.isnan(lines["rank"]).all():  # the usual case: no line names its rank
        rank = pl.repeat(artifact.rank, len(line), dtype=pl.Int32, eager=True)
    else:
        rank = lines["rank"][line]
        if artifact.rank is not None:
            rank = np.where(np.isnan(rank), float(artifact.rank), rank)
        rank = pl.Series(rank, nan_to_null=True).cast(pl.Int32)

    def text(item: int) -> pl.Series:  # a text column, gathered from the few labels
        return pl.Series([k[item] for k in labels], dtype=pl.Categorical).gather(label)

    return frame(
        {
            "step": step,
            "tag": text(0),
            "raw_tag": text(1),
            "value": values["value"][kept] * scale_of[field] if dropped else values["value"] * scale_of[field],
            "wall_time": pl.Series(lines["wall"][line], nan_to_null=True),
            "rank": rank,
            "source": text(2),
            "file": artifact.rel,
        },
        SCALARS,
    )


def _unreadable(rec: logparse.Records, rel: str, diags: list) -> None:
    if rec.unreadable_lines:
        n = sum(c for c, _ in rec.unreadable_lines.values())
        first = min(p for _, p in rec.unreadable_lines.values())
        diags.append(dg.warning("log-line-unreadable", path=rel, offset=first, n=n, shapes=sorted(rec.unreadable_lines)))
    if rec.unreadable_fields:
        n = sum(c for c, _ in rec.unreadable_fields.values())
        first = min(p for _, p in rec.unreadable_fields.values())
        diags.append(dg.info("log-field-unreadable", path=rel, offset=first, n=n, fields=sorted(rec.unreadable_fields)))


def _events(rec: logparse.Records, steps: _Steps, rank: int | None, rel: str, diags: list) -> pl.DataFrame:
    """Error lines (one per traceback: its exception line) and the shapes' events."""
    errors = rec.errors
    # A traceback is one error: keep its exception line ("RuntimeError: ..."), which says what
    # happened, and drop the "Traceback (most recent call last):" header when one follows.
    errors = [e for i, e in enumerate(errors) if not (e[4] and i + 1 < len(errors) and errors[i + 1][5])]
    if len(errors) > MAX_ERROR_EVENTS:
        diags.append(dg.info("log-errors-capped", path=rel, n=len(errors), kept=MAX_ERROR_EVENTS))
        errors = errors[:MAX_ERROR_EVENTS]
    rows = [(pos, "log_error", "before", wall, None, text.strip(" \t\n\r\f\v")[:300], "log") for pos, wall, _, text, _, _ in errors]
    rows += [(pos, kind, rule, wall, duration, detail, source) for pos, kind, rule, wall, _, duration, detail, source in rec.events]
    if not rows:
        return empty(EVENTS)
    pos = np.array([r[0] for r in rows], dtype=np.int64)
    by_rule = {"before": steps.before(pos), "next": steps.after(pos), "own": steps.of_line(pos)}
    step = [None if (s := int(by_rule[r[2]][i])) == MISSING else s for i, r in enumerate(rows)]
    return frame(
        {
            "kind": [r[1] for r in rows],
            "step": step,
            "rank": rank,
            "wall_time": [r[3] for r in rows],
            "duration_s": [r[4] for r in rows],
            "detail": [r[5] for r in rows],
            "source": [r[6] for r in rows],
            "file": rel,
        },
        EVENTS,
    )


def _nothing_taken(scan: _Scan, result: ReadResult, artifact: Artifact) -> None:
    """A claimed file that gave nothing says why."""
    if result.rows() or result.settings:
        return
    rel = artifact.rel
    recognised = scan.claimed + sum(scan.rec.recognised.values())
    if scan.blank:
        result.diagnostics.append(dg.warning("log-empty", path=rel, variant="blank" if scan.lines_total else ""))
    elif not recognised:
        line_no, text = _first_line(artifact.path)
        shown = text if len(text) <= 120 else text[:117] + "..."
        result.diagnostics.append(
            dg.warning("log-unrecognised", path=rel, offset=line_no, line=shown)
        )
    else:
        result.diagnostics.append(
            dg.warning("log-nothing-kept", path=rel, n=recognised)
        )


def _first_line(path: str) -> tuple[int | None, str]:
    """The first line that is not blank (number, text), from the file's first 64 KiB."""
    with guard.open_file(path, "rb") as fh:
        head = fh.read(MAX_LINE_BYTES)
    for i, raw in enumerate(head.split(b"\n")):
        text = raw.decode("utf-8", errors="replace").strip(" \t\n\r\f\v")
        if text:
            return i + 1, text
    return None, ""


@cache
def _nothing_handed_back() -> None:
    """Warm-up (load.warm_up, in a worker started ahead of its work): reading a tiny file costs
    the imports and polars' first calls of every step of the assembly."""
    scan = _Scan(use_c=False)
    _assemble(scan, *_columns(scan), Artifact(path="", rel="", size=0, mtime=0.0))


READER = Reader(name="textlog", claims=_claims, read=read)

__all__ = ["READER", "read", "MAX_LINE_BYTES", "CHUNK_BYTES"]
