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

import re
from fnmatch import fnmatch
from functools import cache
from typing import NamedTuple

import numpy as np
import polars as pl

from .. import diagnostics as dg
from ..model import EVENTS, SCALARS, Artifact, ReadResult, Setting, empty, frame
from . import logparse
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


def _scan(path: str) -> _Scan:
    """Read the file in chunks of whole lines, into one reused buffer (the text is not copied)."""
    scan = _Scan(_logscan is not None)
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


def _columns(scan: _Scan) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Lines and values of both readers, in line order (a line's values in their order)."""
    rec = scan.rec
    py_lines = {c: np.array(getattr(rec, c), dtype=np.int64) for c in _LINE_INT}
    py_lines |= {c: np.array(getattr(rec, c), dtype=np.float64) for c in _LINE_FLOAT}
    py_values = {
        "line": np.array(rec.v_line, dtype=np.uint32),
        "field": np.array(rec.v_field, dtype=np.uint32),
        "value": np.array(rec.v_value, dtype=np.float64),
    }
    if scan.scanner is None:
        return py_lines, py_values
    tables = scan.scanner.tables()
    c_lines = {c: np.frombuffer(tables["lines"][c], dtype=np.int64) for c in _LINE_INT}
    c_lines |= {c: np.frombuffer(tables["lines"][c], dtype=np.float64) for c in _LINE_FLOAT}
    c_values = {
        "line": np.frombuffer(tables["values"]["line"], dtype=np.uint32),
        "field": np.frombuffer(tables["values"]["field"], dtype=np.uint32),
        "value": np.frombuffer(tables["values"]["value"], dtype=np.float64),
    }
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


# --------------------------------------------------------------------------- assembling



def read(artifact: Artifact) -> ReadResult:
    scan = _scan(artifact.path)
    lines, values = _columns(scan)
    return _assemble(scan, lines, values, artifact)


def _assemble(scan: _Scan, lines: dict[str, np.ndarray], values: dict[str, np.ndarray], artifact: Artifact) -> ReadResult:
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
    if rec.json_invalid is not None:
        diags.append(dg.warning("log-json-invalid", path=rel, offset=rec.json_invalid))
    _unreadable(rec, rel, diags)
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
        # Steps per epoch as lines print them ("step:[n/N]", "Step n/N", "step: [n/N]").
        printed = (rule == r["epoch_step"]) & (epoch != MISSING) & (total != MISSING)
        per_epoch = int(total[printed].max()) if printed.any() else None
        shape = g.SHAPES[int(lines["shape"][np.argmax(printed)])].name if per_epoch else None
        lm = rule == r["in_epoch"]
        in_epoch = _in_epoch_steps(epoch[lm], step_in[lm], per_epoch, shape, rel, diags)
        ends = rule == r["epoch_end"]
        epoch_end = _epoch_end_steps(total[ends], per_epoch, rel, diags)

        own = np.full(len(rule), MISSING, dtype=np.int64)
        pick = rule == r["epoch_step"]
        own[pick] = _global(epoch[pick], step_in[pick], np.where(total[pick] != MISSING, total[pick], per_epoch or MISSING))
        pick = rule == r["global"]
        own[pick] = lines["step"][pick]
        own[lm] = _global(epoch[lm], step_in[lm], in_epoch or MISSING) if in_epoch else step_in[lm]
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
        diags.append(dg.info("log-steps-per-epoch", path=rel, variant="one-epoch"))
        return None
    spe = int(complete["step_in"].max())
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
