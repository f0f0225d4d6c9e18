"""Text-log lines read one at a time from the grammar (logshapes): the reference.

Without the C scanner every line of a file comes here; with it, only the lines it hands back
(shapes it does not parse itself, events, anything it is not sure of). Both fill the same
columns (Records, and _logscan.c's tables), which textlog assembles into tables; the tests
require both ways to give identical tables.
"""

from __future__ import annotations

import math
import re

from . import logfields
from . import logshapes as g

MISSING = -(2**63)  # an integer column's "no value" (int64 min)

_ASCII_SPACES = " \t\n\r\f\v"
_CANDIDATE: dict[int, tuple[tuple, re.Pattern]] = {}


def _candidate() -> re.Pattern:
    """The grammar's anchors as one pattern: a line holding none of them (and no exception line)
    holds nothing this reader wants. Made once per grammar (tests may add a shape)."""
    hit = _CANDIDATE.get(id(g.SHAPES))
    if hit is None or hit[0] is not g.SHAPES:
        hit = _CANDIDATE[id(g.SHAPES)] = (g.SHAPES, re.compile("|".join(re.escape(a) for a in g.anchors())))
    return hit[1]


class Records:
    """What lines gave, as columns. ``lines`` rows are the lines with values or a step of their own;
    values point at their line's row."""

    def __init__(self) -> None:
        # lines
        self.pos: list[int] = []
        self.shape: list[int] = []
        self.wall: list[float] = []  # NaN: none
        self.zone: list[int] = []  # logshapes.ZONE_*
        self.epoch: list[int] = []  # MISSING: none (and the three below)
        self.step_in: list[int] = []
        self.steps_total: list[int] = []
        self.step: list[int] = []
        self.rank: list[float] = []  # NaN: none
        # values
        self.v_line: list[int] = []
        self.v_field: list[int] = []
        self.v_value: list[float] = []
        # only read here (the C scanner hands such lines back)
        self.events: list[tuple] = []  # (pos, kind, step rule, wall, zone, duration, detail, source)
        self.errors: list[tuple] = []  # (pos, wall, zone, text, traceback header, exception line)
        self.settings: dict[str, float | int] = {}
        self.unreadable_lines: dict[str, list[int]] = {}  # shape -> [lines, first line]
        self.unreadable_fields: dict[str, list[int]] = {}  # "shape field" -> [values, first line]
        self.json_invalid: int | None = None  # first JSON-looking line json.loads refused
        self.recognised: dict[str, int] = {}  # shape -> lines it took, whatever they gave
        self.bad_encoding: int | None = None
        self.long_line: int | None = None
        # lines read by their fields (logfields): textlog settles their steps from all of them
        self.fields: list[tuple[int, float | None, int, logfields.FieldRecord]] = []  # (pos, wall, zone, record)
        self.loss_unread: list = [0, None, ""]
        # ``grep -r`` output of several ranks' logs: each line starts with its file's path, which names the rank
        self.grep = False
        self.line_rank = float("nan")  # lines with a loss key no record took: [count, first pos, its text]
        self.rank_carried = 0  # candidate lines with no prefix, given the rank of the prefixed line above
        self.path = ""  # the file read (textlog looks again at a few of its lines: _quiet_between)


_SHAPES: list = [None, (), {}, {}]  # the grammar; (anchor, its bit); anchors present -> shapes; line form -> shapes


def _shapes_in(text: str) -> tuple:
    """The shapes whose anchors all occur in ``text``, in the grammar's order (by the set of anchors
    present: a file repeats a few such sets). No anchor holds a digit, so a line with its digits
    as 0 holds the same anchors: the lines of one writer's form are looked up once."""
    if _SHAPES[0] is not g.SHAPES:  # made once per grammar (tests may add a shape)
        anchors = tuple(dict.fromkeys(a for s in g.SHAPES for a in s.anchors))
        _SHAPES[:] = [g.SHAPES, tuple((a, 1 << i) for i, a in enumerate(anchors)), {},
                      None if any(c.isdigit() for a in anchors for c in a) else {}]
    forms = _SHAPES[3] if len(text) <= logfields.FORM_MAX else None
    if forms is not None:
        form = text.translate(logfields.DIGITS_0)
        hit = forms.get(form)
        if hit is not None:
            return hit
    mask = 0
    for a, bit in _SHAPES[1]:
        if a in text:
            mask |= bit
    hit = _SHAPES[2].get(mask)
    if hit is None:
        if len(_SHAPES[2]) > 4096:
            _SHAPES[2].clear()
        bits = dict(_SHAPES[1])
        hit = _SHAPES[2][mask] = tuple((i, s) for i, s in enumerate(g.SHAPES)
                                       if all(bits[a] & mask for a in s.anchors))
    if forms is not None:
        if len(forms) > 20_000:
            forms.clear()
        forms[form] = hit
    return hit


def is_candidate(text: str) -> bool:
    return _candidate().search(text) is not None or g.EXCEPTION_RE.match(text) is not None


# "train_parallel3/log:epoch: 1 step: ..." (grep over the ranks' folders): the path's number is the rank
GREP_PREFIX = re.compile(r"^\s*(?:\./)?[\w.\-]*?(?:parallel|rank|device|worker|node|card)[_-]?(\d{1,6})(?:[/\\][\w.\-]+)*:(?=\S)")


def parse_line(text: str, pos: int, rec: Records, keys: dict[str, int]) -> None:
    """Read one line (decoded, without its line end) into ``rec``. ``keys``: pair keys -> codes,
    extended here (shared with the C scanner)."""
    if rec.grep:
        m = GREP_PREFIX.match(text)
        if m:  # (a line without the prefix continues the file named above it: a pasted excerpt indents it so)
            rec.line_rank = float(m.group(1))
            text = text[m.end():]
    if not is_candidate(text):
        return
    if rec.grep and m is None and rec.line_rank == rec.line_rank:
        rec.rank_carried += 1
    wall, zone = g.stamp(text)
    error = g.error_kind(text)
    if error is not None:
        rec.errors.append((pos, wall, zone, text, *error))
    for index, shape in _shapes_in(text):
        if shape.pairs == "fields":
            if _read_fields(shape.name, text, pos, wall, zone, rec):
                return
            continue
        taken = _read_shape(index, shape, text, pos, wall, zone, rec, keys)
        if taken is _BY_FIELDS:
            _read_fields(g.SHAPES[_FIELDS_AT[0]].name, text, pos, wall, zone, rec)
            return
        if taken:
            return


_BY_FIELDS = object()  # _read_shape: not this shape's line, but a record by its fields
_FIELDS_AT = [next(i for i, s in enumerate(g.SHAPES) if s.pairs == "fields")]


def _fields_take(text: str, evaluation: bool = False) -> bool:
    """A line a shape could not read, or read without the loss it prints: is it a record by its
    fields (``evaluation``: an evaluation's)?"""
    if not any(w in text for w in g.FIELD_WORDS):
        return False
    return any(r is not None and r.has_loss and (r.eval if evaluation else not r.eval) for r in _fields_of(text))


_LAST: list = [None, (), []]  # the last line read by its fields, its records and parts: a line declined by a shape is read once


def _fields_of(text: str) -> tuple:
    if _LAST[0] is not text:
        parts = logfields.segments(text)
        _LAST[:] = [text, tuple(logfields.read(logfields.normalise(p)) for p in parts), parts]
    return _LAST[1]


def _read_fields(name: str, text: str, pos: int, wall: float | None, zone: int, rec: Records) -> bool:
    """A line no shape took, read by its fields: each tqdm redraw (``\r``) on its own. False: it
    is no record (later shapes may read it; a loss-like line is counted as unread)."""
    taken = counters = False  # (a counter line alone is no recognised line: it counts with the records it heads)
    loss_like = False
    records = _fields_of(text)
    for part, r in zip(_LAST[2], records):
        if r is not None and r.rank is None and rec.line_rank == rec.line_rank:
            r.rank = int(rec.line_rank)
        if r is None:
            if (h := logfields.header(part)) is not None:
                rec.fields.append((pos, wall, zone, h))
                if h.step is None and not h.values:
                    taken = True
                else:
                    counters = True
            continue
        loss_like |= r.loss_like
        if r.has_loss:
            r.text = part.strip(_ASCII_SPACES)
            rec.fields.append((pos, wall, zone, r))
            taken = True
    if taken:
        rec.recognised[name] = rec.recognised.get(name, 0) + 1
    elif loss_like:
        _loss_unread(rec, pos, text)
        return True
    return taken or counters


def _loss_unread(rec: Records, pos: int, text: str) -> None:
    u = rec.loss_unread
    u[0] += 1
    if u[1] is None or pos < u[1]:
        u[1], u[2] = pos, text.strip(_ASCII_SPACES)


_ABSENT, _UNREADABLE = object(), object()


def _field(f: g.Field, where: str):
    """A field's value in ``where``; _ABSENT when its key does not occur (or is followed by one of
    its spellings of "no value"), _UNREADABLE when the key occurs without a readable value."""
    m = f.regex.search(where)
    if m is not None:
        value = g.CONVERT[f.kind](next(v for v in m.groups() if v is not None))
        return _UNREADABLE if value is None else value
    key = f.key_regex.search(where) if f.key_regex is not None else None
    if key is None or (f.nones and where[key.end():].lstrip(_ASCII_SPACES).startswith(f.nones)):
        return _ABSENT
    return _UNREADABLE


def _read_shape(index: int, shape: g.Shape, text: str, pos: int, wall: float | None, zone: int,
                rec: Records, keys: dict[str, int]):
    """Read ``text`` as ``shape``; False when it is not that shape (a required key is missing)."""
    body = text[text.find(shape.fields_from):] if shape.fields_from else text
    values: dict[str, float | int] = {}
    unreadable: list[str] = []
    for f in shape.fields:
        value = _field(f, text if f.whole_line else body)
        if value is _ABSENT:
            if f.name in shape.required:
                return False
        elif value is _UNREADABLE:
            unreadable.append(f.name)
        else:
            values[f.name] = value
    # A line this shape cannot read, or reads without the loss it prints ("loss is loss:0.09", a copy
    # with another counter form), is left to the lines read by their fields when they make it a record.
    lossy = shape.loss_field and "loss" not in values
    if (lossy or any(name in shape.required for name in unreadable)) and _fields_take(text):
        return _BY_FIELDS
    # ... and so is a line in a training shape that an evaluation printed ("step:[ 2/ 1242], metrics:[...], loss:")
    if shape.loss_field and "loss" in values and _fields_take(text, evaluation=True):
        return _BY_FIELDS
    rec.recognised[shape.name] = rec.recognised.get(shape.name, 0) + 1
    if any(name in shape.required for name in unreadable):
        _count(rec.unreadable_lines, shape.name, pos)
        return True
    for name in unreadable:
        _count(rec.unreadable_fields, f"{shape.name} {name}", pos)
    _add_line(index, shape, text, pos, wall, zone, values, rec, keys)
    for event in shape.events:
        if event.when(values):
            duration = values[event.duration] * _scale(shape, event.duration) if event.duration in values else None
            rec.events.append((pos, event.kind, event.step, wall, zone, duration, event.detail(values, text), shape.source))
    for rule in shape.settings:
        m = rule.regex.search(text)
        if m is None:
            continue
        key, value = (rule.key, float(m.group(1))) if rule.key is not None else (m.group(1), float(m.group(2)))
        if (rule.key is not None or key in rule.keys) and math.isfinite(value):  # a NaN count is no setting
            rec.settings[key] = int(value) if rule.key is None and value.is_integer() else value
    return True


def _add_line(index: int, shape: g.Shape, text: str, pos: int, wall: float | None, zone: int, values: dict,
              rec: Records, keys: dict[str, int]) -> None:
    """The line's row (its step columns) and its values, when it has either."""
    counters = {name: values[name] for name in g.COUNTERS if name in values}
    pairs: list[tuple[str, float]] = []
    rank = rec.line_rank
    if shape.pairs == "json":
        pairs, json_wall, json_zone = g.json_pairs(text)
        if pairs is None:
            if rec.json_invalid is None:
                rec.json_invalid = pos
            return
        if wall is None and json_wall is not None:
            wall, zone = json_wall, json_zone
    elif shape.pairs:
        pairs = g.PAIR_READERS[shape.pairs](text)
    if shape.pairs in ("kv", "json"):
        step, rank, pairs = _roles(pairs)
        if step is None:
            return  # no step: nothing to place the values at
        counters["step"] = step
    if shape.steps_per_epoch:
        counters["steps_total"] = _steps_per_epoch(shape, values)
    fixed = [(g.FIELD_CODE[(shape.name, f.name)], float(values[f.name]))
             for f in shape.fields if f.tag is not None and f.name in values]
    if not (fixed or pairs or counters):
        return
    row = len(rec.pos)
    rec.pos.append(pos)
    rec.shape.append(index)
    rec.wall.append(float("nan") if wall is None else wall)
    rec.zone.append(zone)
    for name in g.COUNTERS:
        getattr(rec, name).append(counters.get(name, MISSING))
    rec.rank.append(rank)
    slot = g.PAIR_SLOTS.index(shape.pairs) if shape.pairs else 0
    for code, value in fixed + [(_pair_code(keys, k, slot), v) for k, v in pairs]:
        rec.v_line.append(row)
        rec.v_field.append(code)
        rec.v_value.append(value)


def _scale(shape: g.Shape, name: str) -> float:
    return next(f.scale for f in shape.fields if f.name == name)


def _count(table: dict[str, list[int]], name: str, pos: int) -> None:
    entry = table.setdefault(name, [0, pos])
    entry[0] += 1


def _pair_code(keys: dict[str, int], key: str, slot: int) -> int:
    return g.N_FIXED + len(g.PAIR_SLOTS) * keys.setdefault(key, len(keys)) + slot


def _roles(pairs: list[tuple[str, float]]) -> tuple[int | None, float, list[tuple[str, float]]]:
    """A key=value / JSON line's step (the first usable ``step``, else ``global_step``: a finite
    number below 2^62, truncated), its rank (the first ``rank``, when whole and below 2^31) and
    the other pairs."""
    step = global_step = rank = None
    for key, value in pairs:
        usable = value == value and abs(value) < 2.0**62
        if key == "step" and step is None and usable:
            step = int(value)
        elif key == "global_step" and global_step is None and usable:
            global_step = int(value)
        elif key == "rank" and rank is None:
            rank = value
    if step is None:
        step = global_step
    whole_rank = rank is not None and rank == rank and abs(rank) < 2.0**31 and rank == round(rank)
    return step, (rank if whole_rank else float("nan")), [(k, v) for k, v in pairs if k not in g.ROLE_KEYS]


def _steps_per_epoch(shape: g.Shape, values: dict) -> int:
    """round(epoch time / step time), both in seconds; MISSING when they do not give one."""
    a, b = shape.steps_per_epoch
    if a not in values or b not in values:
        return MISSING
    epoch_s, step_s = values[a] * _scale(shape, a), values[b] * _scale(shape, b)
    ratio = epoch_s / step_s if step_s > 0 and epoch_s > 0 else float("nan")
    return int(round(ratio)) if 0 < ratio < 10.0**g.MAX_COUNT_DIGITS else MISSING


def parse_lines(body: bytes, first_line: int, rec: Records, keys: dict[str, int], max_line: int,
                numbers: list[int] | None = None) -> int:
    """Every line of ``body`` (whole lines, without the final newline); ``numbers``: the lines'
    numbers when they are not consecutive from ``first_line``. Returns the number of lines."""
    lines = body.split(b"\n")
    for i, raw in enumerate(lines):
        pos = numbers[i] if numbers is not None else first_line + i
        if len(raw) > max_line:
            if rec.long_line is None:
                rec.long_line = pos
            continue
        raw = raw.rstrip(b"\r")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            if rec.bad_encoding is None or pos < rec.bad_encoding:
                rec.bad_encoding = pos
            text = raw.decode("utf-8", errors="replace")
        parse_line(text, pos, rec, keys)
    return len(lines)
