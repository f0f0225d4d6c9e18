"""Text-log lines read one at a time from the grammar (logshapes): the reference.

Without the C scanner every line of a file comes here; with it, only the lines it hands back
(shapes it does not parse itself, events, anything it is not sure of). Both fill the same
columns (Records, and _logscan.c's tables), which textlog assembles into tables; the tests
require both ways to give identical tables.
"""

from __future__ import annotations

import math
import re

from . import fields as logfields
from . import shapes as g

MISSING = -(2**63)  # an integer column's "no value" (int64 min)
LINE_INT = ("pos", "shape", "zone", "epoch", "step_in", "steps_total", "step")  # the lines' columns (Records)
LINE_FLOAT = ("wall", "rank")

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
        # lines of counters and no loss beside a line of a loss and no counter: halves of two-line records
        # (pair_halves joins them, for the whole file); the last such line, until the next line read by its fields
        self.halves: list[tuple[int, float | None, int, logfields.FieldRecord]] = []
        self.pending: tuple | None = None
        # lines with a step's time and no loss (shape fields-time): textlog gives each to the record beside it
        self.times: list[tuple[int, float | None, int, logfields.FieldRecord]] = []  # (pos, wall, zone, record)
        # ``grep -r`` output of several ranks' logs: each line starts with its file's path, which names the rank
        self.grep = False
        self.line_rank = float("nan")  # lines with a loss key no record took: [count, first pos, its text]
        self.rank_carried = 0  # candidate lines with no prefix, given the rank of the prefixed line above
        self.path = ""  # the file read (textlog looks again at a few of its lines: _quiet_between)
        self.csv_header: tuple[int, list[str]] | None = None  # a CSV logger's header, the file's first line: (line, names)


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


# A CSV logger's header (Keras' CSVLogger, a script's csv.writer): "epoch,acc,loss,val_acc,val_loss"
_CSV_HEADER = re.compile(r"^\s*[A-Za-z_][\w./-]*(?:\s*[,;\t]\s*[A-Za-z_][\w./-]*)+\s*$")
_CSV_COUNTERS = ("epoch", "step", "iteration", "iter", "global_step")


def csv_header(text: str) -> list[str] | None:
    """The column names of a CSV logger's header line, when it names a counter and a loss."""
    if _CSV_HEADER.match(text) is None:
        return None
    names = [n.strip() for n in re.split(r"[,;\t]", text.strip())]
    if not any(n.lower() in _CSV_COUNTERS for n in names) or not any("loss" in n.lower() for n in names):
        return None
    return names


def csv_rows(fh, rec: Records, keys: dict) -> None:
    """The rows under a CSV logger's header, each read as the line ``name: value, ...`` it means (the
    C scanner drops them: they hold no anchor). Read once the file's lines are, from the file again."""
    at, names = rec.csv_header
    with fh:
        for no, raw in enumerate(fh, 1):
            if no <= at:
                continue
            line = raw.decode("utf-8", errors="replace").strip()
            cells = line.split("," if "," in line else "\t")
            if len(cells) != len(names) or any(logfields._number(c) is None for c in cells):
                continue
            parse_line(", ".join(f"{n}: {c.strip()}" for n, c in zip(names, cells)), no, rec, keys)


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
    if rec.csv_header is None and not rec.fields and not rec.recognised and (names := csv_header(text)) is not None:
        rec.csv_header = (pos, names)
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
            _not_a_half(rec, pos)
            return


_BY_FIELDS = object()  # _read_shape: not this shape's line, but a record by its fields
_FIELDS_AT = [next(i for i, s in enumerate(g.SHAPES) if s.pairs == "fields")]


def _fields_take(text: str, evaluation: bool = False) -> bool:
    """A line a shape could not read, or read without the loss it prints: is it a record by its
    fields (``evaluation``: an evaluation's)?"""
    if not any(w in text for w in g.FIELD_WORDS):
        return False
    return any(r is not None and r.has_loss and (r.eval if evaluation else not r.eval) for r in _fields_of(text))


_TIME_WORDS = ("time", "Time", "cost", "s/it")


_TIMED: dict[str, bool] = {}  # shape name -> it reads a step time


def _untimed(shape: g.Shape, text: str) -> bool:
    """A line of a shape that reads no step time, holding a word of one."""
    timed = _TIMED.get(shape.name)
    if timed is None:
        timed = _TIMED[shape.name] = any(f.tag == "step_time" for f in shape.fields)
    return not timed and any(w in text for w in _TIME_WORDS)


def _training(text: str):
    """The training records (a loss, no evaluation's) of the line read by its fields."""
    return (r for r in _fields_of(text) if r is not None and r.has_loss and not r.eval)


def _fields_time(text: str) -> bool:
    """Does the line read by its fields give a training record with a step's time?"""
    return any(any(t == "step_time" for t, _, _ in r.values) for r in _training(text))


TIME_SHAPE = "fields-time"
_LAST: list = [None, (), []]  # the last line read by its fields, its records and parts: a line declined by a shape is read once


def _fields_of(text: str) -> tuple:
    if _LAST[0] is not text:
        parts = logfields.segments(text)
        _LAST[:] = [text, tuple(logfields.read(logfields.normalise(p)) for p in parts), parts]
    return _LAST[1]


def _loss_beside(shape: g.Shape, text: str) -> bool:
    """A shape with no loss of its own (TimeMonitor, MindYOLO's step time) took a line that prints a
    training loss beside a counter (the model zoo's ``epoch 1: epoch time: 1301358.75, per step time:
    2082.174, avg loss: 5.814``; yolov7_mindspore's ``Epoch 300/1, Step 924/800, ..., loss: 23.1380, ...,
    step time: 1225.23 ms``): the line is a record by its fields. Only for shapes the C scanner does
    not parse or parses whole lines of (which print no loss), so both read such a line alike."""
    if shape.loss_field or shape.pairs or shape.fast not in _WHOLE_LINE_FAST or not any(w in text for w in _LOSS_WORDS):
        return False
    return any(r.epoch is not None or r.step is not None for r in _training(text))


_LOSS_WORDS = ("loss", "Loss", "LOSS", "损失")
_WHOLE_LINE_FAST = (None, "timemonitor", "flops")  # (_logscan.c's parse_tm and parse_fs claim a whole line or none)
PAIR_GAP = 4  # the most lines from a record's counters to its loss: MindChemistry prints an lr line between


def _read_fields(name: str, text: str, pos: int, wall: float | None, zone: int, rec: Records) -> bool:
    """A line no shape took, read by its fields: each tqdm redraw (``\r``) on its own. False: it
    is no record (later shapes may read it; a loss-like line is counted as unread)."""
    taken = False
    loss_like = False
    records = _fields_of(text)
    parts = _LAST[2]
    for part, r in zip(parts, records):
        if r is not None and r.rank is None and rec.line_rank == rec.line_rank:
            r.rank = int(rec.line_rank)
        if r is None or r.counters_only():
            if (h := logfields.header(part)) is not None:
                rec.fields.append((pos, wall, zone, h))
                taken = True
            elif r is not None and "\r" not in text:  # (a tqdm bar's redraws are never half a record; glued lines may be)
                r.text = part.strip(_ASCII_SPACES)
                _counters_line(rec, (pos, wall, zone, r))
            if r is None or not r.time_line:  # (counters and a step's time: also offered as a time line below)
                continue
        if r.time_line:
            if name == TIME_SHAPE and not taken:  # (the last shape: no other took the line)
                r.text = part.strip(_ASCII_SPACES)
                rec.times.append((pos, wall, zone, r))
                if (h := logfields.header(part)) is not None:  # (a time line may also head the records under it)
                    rec.fields.append((pos, wall, zone, h))
                taken = True
            continue
        loss_like |= r.loss_like
        if r.has_loss:
            r.text = part.strip(_ASCII_SPACES)
            if r.loss_only() and rec.pending is not None and rec.pending[1] == len(rec.fields) \
                    and pos - rec.pending[0][0] <= PAIR_GAP:
                rec.halves.append(rec.pending[0])  # counters, then this loss: maybe one record
            rec.pending = None
            rec.fields.append((pos, wall, zone, r))
            taken = True
    if taken:
        rec.recognised[name] = rec.recognised.get(name, 0) + 1
    elif loss_like:
        _loss_unread(rec, pos, text)
        return True
    return taken


def _counters_line(rec: Records, line: tuple) -> None:
    """A line of counters and no loss: kept when a loss line with no counter is next to it, before
    (kept now) or after it (kept when that line comes)."""
    last = rec.fields[-1] if rec.fields else None
    if last is not None and last[3].loss_only() and line[0] - last[0] <= PAIR_GAP \
            and (rec.pending is None or rec.pending[1] != len(rec.fields)):
        rec.halves.append(line)
    rec.pending = (line, len(rec.fields))


def _not_a_half(rec: Records, pos: int) -> None:
    """A shape took the line after its fields gave only counters: it is that shape's, not half a record."""
    if rec.pending is not None and rec.pending[0][0] == pos:
        rec.pending = None
    if rec.halves and rec.halves[-1][0] == pos:
        rec.halves.pop()


def pair_halves(found: list, halves: list, max_gap: int = PAIR_GAP) -> tuple[list, int, bool]:
    """Records printed over two or more lines (the MindSpore CycleGAN tutorial prints ``Epoch:[  1/ 7],
    step:[   0/1019], time:6.202873s,`` then ``loss_g:22.88, loss_d:0.95, ...``; U-GAT-IT a counter
    line, then ``d_loss: x``, then ``g_loss: y``): a line of counters with no loss, next to lines of a
    loss with no counter (each at most ``max_gap`` lines from the one before, no other record between),
    is one record with them. Only where this is the file's layout: no training line holds a step and a
    loss together, and at least half of the loss lines with no counter join a record. Which comes first
    (counters, or one loss line) is the order that joins more lines (counters first on a tie). Returns
    the records (a joined one at its first line), the number of records joined, and whether the loss
    came first."""
    if not halves or any(f[3].has_loss and not f[3].eval and f[3].step is not None for f in found):
        return found, 0, False
    seq = sorted(found + halves, key=lambda f: f[0])
    counters = [f[3].counters_only() for f in seq]
    losses = [f[3].loss_only() for f in seq]
    near = [i + 1 < len(seq) and seq[i + 1][0] - seq[i][0] <= max_gap for i in range(len(seq))]  # i and i + 1

    def groups(loss_first: bool) -> list[tuple[int, int]]:
        out, i = [], 0
        while i + 1 < len(seq):
            if loss_first and losses[i] and counters[i + 1] and near[i]:
                end = i + 2
            elif not loss_first and counters[i] and losses[i + 1] and near[i]:
                end = i + 2
                keys = {_loss_key(seq[i + 1][3])}
                # more loss lines under the counters, each a loss of its own (one record prints each once)
                while end < len(seq) and losses[end] and near[end - 1] and _loss_key(seq[end][3]) not in keys:
                    keys.add(_loss_key(seq[end][3]))
                    end += 1
            else:
                i += 1
                continue
            head = i + 1 if loss_first else i
            if not logfields.EVAL_WORDS.search(seq[head][3].text):  # an evaluation's counters: not training's
                out.append((i, end))
            i = end
        return out

    after, before = groups(False), groups(True)
    joined, loss_first = (before, True) if sum(b - a for a, b in before) > sum(b - a for a, b in after) else (after, False)
    alone = sum(losses)
    if not joined or 2 * sum(b - a - 1 for a, b in joined) < alone:
        return found, 0, False
    out, i, g = [], 0, 0
    while i < len(seq):
        if g < len(joined) and joined[g][0] == i:
            out.append(_joined(seq[i:joined[g][1]]))
            i, g = joined[g][1], g + 1
            continue
        if not counters[i]:
            out.append(seq[i])
        i += 1
    return out, len(joined), loss_first


def _loss_key(r: logfields.FieldRecord) -> str:
    return next((raw for t, raw, _ in r.values if t == "loss"), "")


def _joined(lines: list) -> tuple:
    """One record of a line of counters and lines of a loss: the counters' fields, then the values of
    all in line order (a later line's loss is a part, under its own name: U-GAT-IT's g_loss)."""
    c = next(f[3] for f in lines if f[3].counters_only())
    first_loss = next(f[3] for f in lines if f[3].has_loss)
    r = logfields.FieldRecord(epoch=c.epoch, epochs_total=c.epochs_total, step=c.step, steps_total=c.steps_total,
                              global_step=c.global_step, rank=c.rank if c.rank is not None else first_loss.rank,
                              per_epoch=c.per_epoch, text=first_loss.text, loss_like=True, has_loss=True)
    for _, _, _, part in lines:
        r.unitless.extend(j + len(r.values) for j in part.unitless)
        r.values.extend(v if v[0] != "loss" or part is first_loss else (logfields.GRAMMAR.part_name(v[1]), v[1], v[2])
                        for v in part.values)
    pos, wall, zone, _ = lines[0]
    if wall is None:
        wall, zone = next(((f[1], f[2]) for f in lines if f[1] is not None), (None, zone))
    return pos, wall, zone, r


def totals_first(records: list) -> bool:
    """Counters printed as total/current (yolov7_mindspore: ``Epoch 300/1, Step 924/800`` is epoch 1 of
    300, step 800 of 924): where, over the file's records, the number before the slash stays the
    same and is never below the one after it, and above it somewhere, the two are swapped (in place).
    True when some were."""
    swapped = False
    for cur, total in (("epoch", "epochs_total"), ("step", "steps_total")):
        both = [r for r in records if getattr(r, cur) is not None and getattr(r, total) is not None]
        firsts = {getattr(r, cur) for r in both}
        if len(firsts) != 1 or all(getattr(r, cur) <= getattr(r, total) for r in both):
            continue
        if any(getattr(r, cur) < getattr(r, total) for r in both):
            continue
        for r in both:
            a, b = getattr(r, cur), getattr(r, total)
            setattr(r, cur, b)
            setattr(r, total, a)
        swapped = True
    return swapped


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
    lossy = shape.loss_field and "loss" not in values or _loss_beside(shape, text)
    if (lossy or any(name in shape.required for name in unreadable)) and _fields_take(text):
        return _BY_FIELDS
    # ... and so is a line that prints a step's time its shape does not read ("epoch: 1 step: 1 , loss is
    # 76.25, average time per step is 0.235177839748392712": CNN-CTC's copy of LossMonitor)
    if shape.loss_field and "loss" in values and _untimed(shape, text) and _fields_time(text):
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


def _pair_code(keys: dict, key: str | tuple[str, str], slot: int) -> int:
    """A pair key's field code (a key=value, JSON or MindYOLO key; a field line's (tag, raw tag))."""
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
