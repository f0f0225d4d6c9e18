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
   reference, into the same columns; lines of no known shape are read by their fields
   (logfields) and made records per file by logrecords.
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

import io
import re
from fnmatch import fnmatch
from functools import cache
from typing import NamedTuple

import numpy as np
import polars as pl

from ... import diagnostics as dg
from ...model import EVENTS, SCALARS, Artifact, ReadResult, Setting, empty, frame
from . import parse as logparse, records as logrecords
from .parse import LINE_FLOAT, LINE_INT, MISSING
from . import shapes as g
from .. import guard
from ..base import Reader

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ERROR_EVENTS = 1000  # a crash loop can print millions of ERROR lines; keep the first ones

try:
    from .. import _logscan
except ImportError:  # built without a compiler: logparse reads every line, slower, same result
    _logscan = None

_CLAIM_PATTERNS = ("*.log", "*.txt", "*.out", "*.jsonl", "*.log.*", "stdout*", "stderr*")


def _claims(artifact: Artifact) -> bool:
    name = artifact.rel.rsplit("/", 1)[-1].lower()
    return any(fnmatch(name, p) for p in _CLAIM_PATTERNS)


# --------------------------------------------------------------------------- reading lines

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
    with _opened(path) as fh:
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
    if scan.rec.csv_header is not None and not scan.claimed:  # (a CSV logger's file: its header first, no other shape)
        logparse.csv_rows(_opened(path), scan.rec, scan.keys)
    return scan


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _opened(path: str):
    """The file for reading as UTF-8 bytes: as it is, or, written in UTF-16 with its BOM (what
    PowerShell's ``>`` writes on Windows), decoded and re-encoded in memory."""
    fh = guard.open_file(path, "rb")
    if fh.read(2) not in _UTF16_BOMS:
        fh.seek(0)
        return fh
    with fh:
        fh.seek(0)
        text = fh.read().decode("utf-16", errors="replace")
    return io.BytesIO(text.encode("utf-8"))


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
    py_lines = {c: np.array(getattr(rec, c), dtype=np.int64) for c in LINE_INT}
    py_lines |= {c: np.array(getattr(rec, c), dtype=np.float64) for c in LINE_FLOAT}
    py_values = {
        "line": np.array(rec.v_line, dtype=np.uint32),
        "field": np.array(rec.v_field, dtype=np.uint32),
        "value": np.array(rec.v_value, dtype=np.float64),
    }
    tables = scan.scanner.tables() if scan.scanner is not None else None
    if rec.fields or rec.times:
        stepped = _stepped(py_lines) or (tables is not None and _stepped({c: np.frombuffer(tables["lines"][c], dtype=np.int64)
                                                                          for c in ("shape", "step", "step_in")}))
        py_lines, py_values = _merge(py_lines, py_values, *logrecords.field_lines(rec, scan.keys, rel, [] if diags is None else diags,
                                                                        stepped))
    if tables is None:
        lines, values = py_lines, py_values
    else:
        c_lines = {c: np.frombuffer(tables["lines"][c], dtype=np.int64) for c in LINE_INT}
        c_lines |= {c: np.frombuffer(tables["lines"][c], dtype=np.float64) for c in LINE_FLOAT}
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
    summ = shape[line] == logrecords.SUMMARY_SHAPE
    if not summ.any():
        return values
    tag, scale = _field_tags(field, keys)
    st, et = tag == "step_time", tag == "epoch_time"
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
    # a sink or an epoch holds at most the steps an epoch has where the lines print it ([4/125]): a
    # summary's per step time printed without a unit (CycleGAN's "per step time:0.91", seconds) read
    # as ms would make an epoch of a million steps
    totals = lines["steps_total"][lines["steps_total"] != MISSING]
    if len(totals):
        fix &= big <= 1.1 * float(totals.max()) * p
    if not fix.any():
        return values
    value = values["value"].copy()
    value[r[fix]] = p[fix] / scale[r[fix]]
    diags.append(dg.info("log-inferred", path=rel, variant="sink-time", n=int(fix.sum()),
                         steps=int(np.median(np.round(big[fix] / p[fix])))))
    return {**values, "value": value}


def _field_tags(field: np.ndarray, keys: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Each value's tag and the factor to its SI unit, by its field code (a file has few codes)."""
    tags = np.empty(int(field.max()) + 1 if len(field) else 0, dtype=object)
    scale = np.ones(len(tags), dtype=np.float64)
    names = list(keys)  # codes number the keys in insertion order
    for code in np.flatnonzero(np.bincount(field)).tolist() if len(field) else ():
        tags[code], _, _, scale[code] = g.field_label(code, names)
    return tags[field], scale[field]


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

def _stepped(lines: dict[str, np.ndarray]) -> bool:
    """Some line of a shape's own step rule (a step record: LossMonitor, MindFormers' monitor...) has a step."""
    r = _RULE
    rule = _compiled().rules[lines["shape"]]
    own = (rule == r["epoch_step"]) | (rule == r["global"]) | (rule == r["in_epoch"])
    return bool((own & ((lines["step"] != MISSING) | (lines["step_in"] != MISSING))).any())


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
    lines = _ranks_by_order(lines, steps, rel, diags, values, scan.keys, logrecords.error_positions(rec), rec.path)
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
        parts = None if per_epoch else logrecords.epoch_parts(epoch[lm], step_in[lm], rel, diags)
        in_epoch = None if parts is not None else _in_epoch_steps(epoch[lm], step_in[lm], per_epoch, shape, rel, diags)
        ends = rule == r["epoch_end"]
        epoch_end = _epoch_end_steps(total[ends], per_epoch, rel, diags)

        own = np.full(len(rule), MISSING, dtype=np.int64)
        pick = rule == r["epoch_step"]
        own[pick] = logrecords.global_steps(epoch[pick], step_in[pick], np.where(total[pick] != MISSING, total[pick], per_epoch or MISSING))
        pick = rule == r["global"]
        own[pick] = lines["step"][pick]
        own[lm] = logrecords.global_steps(epoch[lm], step_in[lm], in_epoch or MISSING) if in_epoch else step_in[lm]
        if parts is not None:
            own[lm] = logrecords.global_steps(epoch[lm], step_in[lm], parts)
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
        epoch[of] = logrecords.one_based(epoch[of], rel, diags, g.SHAPES[s].name)
    return epoch


def _ranks_by_order(lines: dict[str, np.ndarray], steps: "_Steps", rel: str, diags: list, values: dict[str, np.ndarray],
                    keys: dict[str, int], errors: np.ndarray, path: str) -> dict[str, np.ndarray]:
    """Ranks printed into one stream with no rank on the lines (a grep of 8 ranks' logs, ranks
    writing one file): where nearly every step of the main shape is printed N times in a row, the
    lines are ranks 0..N-1 in order of appearance; where its steps start again from the first one's
    in blocks (ranks' logs pasted one after another), each block's lines are the next rank (both
    said so; logrecords.runs_as_ranks, logrecords.blocks_as_ranks). Lines that print their rank, and the lines read by
    their fields (settled in logrecords.field_lines), are left as they are."""
    own = steps.own
    shape = lines["shape"]
    if not len(own) or not np.isnan(lines["rank"]).all():
        return lines
    stepped = np.flatnonzero((own != MISSING) & (shape != logrecords.FIELDS_SHAPE))
    if len(stepped) < 4:
        return lines
    main = np.bincount(shape[stepped]).argmax()
    idx = stepped[shape[stepped] == main]
    seq = own[idx]
    rank = lines["rank"].copy()
    within = logrecords.runs_as_ranks(np.concatenate([[False], seq[1:] == seq[:-1]]))
    if within is not None:
        rank[idx] = within.astype(np.float64)
        n = int(within.max()) + 1
        diags.append(dg.info("log-inferred", path=rel, variant="ranks-order", n=n))
        _time_ranks_by_order(rank, lines, steps, lines["pos"][idx[within == 0]], n, rel, diags)
        return {**lines, "rank": rank}
    blocks = logrecords.blocks_as_ranks(seq, lines["pos"][idx], lambda: _line_loss(idx, values, keys), lines["wall"][idx], errors, path)
    if blocks is None:
        return lines
    # every line from a block's first record on is that block's (its TimeMonitor lines too)
    first = idx[np.flatnonzero(np.diff(blocks, prepend=-1))]
    of = np.searchsorted(lines["pos"][first], lines["pos"], side="right") - 1
    mine = shape != logrecords.FIELDS_SHAPE
    rank[mine] = np.maximum(of[mine], 0).astype(np.float64)
    logrecords.say_blocks(blocks, int(seq[0]), rel, diags)
    return {**lines, "rank": rank}


def _line_loss(idx: np.ndarray, values: dict[str, np.ndarray], keys: dict[str, int]) -> np.ndarray:
    """The loss each of the lines ``idx`` prints (NaN: none)."""
    out = np.full(len(idx), np.nan)
    pick = _field_tags(values["field"], keys)[0] == "loss"
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
    shifted = logrecords.interval_steps_per_epoch(epoch, step_in, rel, diags)
    if shifted is not None:
        return shifted
    # the longest epoch seen: a complete epoch's length, or a later one's where an excerpt cut the earlier short
    spe = int(max(complete["step_in"].max(), order["step_in"].max()))
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="lossmonitor", n=spe))
    return spe


def _epoch_end_steps(ratios: np.ndarray, per_epoch: int | None, rel: str, diags: list) -> int | None:
    """Steps per epoch for lines that end an epoch (the model zoo's epoch summary): as printed by
    step lines of the file, else the median of the lines' round(epoch time / per step time)."""
    if not len(ratios):
        return None
    if per_epoch:
        diags.append(dg.info("log-steps-per-epoch", path=rel, variant="step-counts", n=per_epoch))
        return per_epoch
    ratios = ratios[ratios != MISSING]
    return logrecords.ratio_steps_per_epoch(ratios.tolist(), rel, diags) if len(ratios) else None


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
