"""The lines read by their fields (logfields, collected by logparse) made records, settled per
file from all of them, each inference said in an info: which lines are training records,
summaries or evaluations, records printed over two lines, ranks (printed, in order of appearance,
pasted in blocks), steps (epochs from 0 or 1, steps per epoch, in-epoch or global), and each
record's step time (on a line beside it, its unit by the evidence of the file). textlog hands them
over as lines of its own columns (``field_lines``) and merges them with the shapes' lines.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ... import diagnostics as dg
from .. import guard
from . import parse as logparse
from . import shapes as g
from . import fields as logfields
from .parse import LINE_INT, MISSING

FIELDS_SHAPE = g.SHAPE_INDEX[f"fields:{g.FIELD_WORDS[0]}"]
_FIELDS_SLOT = g.PAIR_SLOTS.index("fields")
_EVAL_SHAPE = g.SHAPE_INDEX["eval-result"]  # its step rule: the step of the line before
SUMMARY_SHAPE = g.SHAPE_INDEX["timemonitor"]
_TIME_SHAPE = g.SHAPE_INDEX[logparse.TIME_SHAPE]  # its step rule: the step of the line after


class Row(NamedTuple):
    """One line of field_lines' output: a record's, a summary's, an evaluation's or a time line's."""

    pos: int
    wall: float | None
    zone: int
    step: int  # MISSING: the step of the line its shape's rule names
    rank: float  # NaN: none
    values: list  # (tag, raw tag, value in SI units)
    shape: int = FIELDS_SHAPE


_SUMMARY_TAGS = ("epoch_time", "step_time", "lr", "throughput", "fps", "samples_per_s", "tokens_per_s")


def field_lines(rec: logparse.Records, keys: dict[str, int], rel: str, diags: list,
                 stepped: bool = False) -> tuple[dict, dict]:
    """The lines read by their fields as lines of the ``global`` rule, their steps settled from the
    whole file (each inference said in an info): tqdm redraws, ranks, epochs, steps per epoch,
    in-epoch or global steps, ordinals, units of times printed without one. ``stepped``: lines of
    the shapes print steps (the loss lines read here beside them are summaries or evaluations)."""
    own_epoch = {id(f[3]) for f in rec.fields if f[3].epoch is not None}  # (not one an "Epoch 3" header above gave)
    said: dict[str, int] = {}
    found = _join_part_lines(_shapes_settled(_under_headers(rec.fields, said), rec, rel, diags), rel, diags)
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
    train, evals = _validation_bars(train, evals, rel, diags)
    # A tqdm bar redrawn on one physical line at the same counters is one record: its last drawing.
    train = [f for i, f in enumerate(train)
             if not (i + 1 < len(train) and train[i + 1][0] == f[0] and _counters(train[i + 1][3]) == _counters(f[3]))]
    train = _join_networks(train, rel, diags)
    _say_unread_keys(train, rel, diags)
    ranks = _ranks(train, rel, diags, error_positions(rec), rec.path)
    out: list[Row] = []
    totals: dict[int, int] = {}  # a record's printed steps per epoch (s/N), by its line
    for rank in sorted(set(ranks), key=lambda r: (r is None, r)):
        stream = [f for f, r in zip(train, ranks) if r == rank]
        steps = _field_steps([f[3] for f in stream], rel, diags, rank, _printed_per_epoch(rec.fields), _run_steps(summary))
        if steps is None:
            for pos, _, _, r in stream:
                logparse._loss_unread(rec, pos, r.text)
            continue
        steps = _stages(stream, steps, rel, diags)
        _neighbour_times(stream, rec.times, rank, rel, diags)
        values = _cumulative_times(_settle_time_units(stream, steps, rel, diags), steps, rel, diags)
        for (pos, wall, zone, r), step, vals in zip(stream, steps, values):
            if step == MISSING:
                continue
            out.append(Row(pos, wall, zone, step, float("nan") if rank is None else float(rank), vals))
            if r.steps_total is not None:
                totals[pos] = r.steps_total
    # Epoch summaries: their times at the step of the line with a step before them (the mean loss
    # dropped); evaluations likewise, kept apart as eval_* (the step rule of the shapes they stand
    # beside: TimeMonitor's and Eval result's).
    summary_s = _summary_seconds(summary, out, rel, diags)
    for pos, wall, zone, r in summary:
        vals = [(t, raw, v * 1e3) if (id(r), i) in summary_s else (t, raw, v)
                for i, (t, raw, v) in enumerate(r.values) if t not in ("loss", "loss_avg")]
        if vals:
            out.append(Row(pos, wall, zone, MISSING, float("nan") if r.rank is None else float(r.rank), vals, SUMMARY_SHAPE))
    out.extend(_times_beside_shapes(rec.times, bool(train), rel, diags))
    for pos, wall, zone, r in evals:
        vals = _eval_values(r.values)
        out.append(Row(pos, wall, zone, MISSING, float("nan") if r.rank is None else float(r.rank), vals, _EVAL_SHAPE))
    if evals:
        diags.append(dg.info("log-inferred", path=rel, variant="eval", n=len(evals)))
    if summary:
        diags.append(dg.info("log-inferred", path=rel, variant="summary", n=len(summary)))
    out.sort(key=lambda o: o.pos)
    lines = {c: np.full(len(out), MISSING, dtype=np.int64) for c in LINE_INT}
    lines["pos"] = np.array([o.pos for o in out], dtype=np.int64)
    lines["shape"] = np.array([o.shape for o in out], dtype=np.int64)
    lines["zone"] = np.array([o.zone for o in out], dtype=np.int64)
    lines["step"] = np.array([o.step for o in out], dtype=np.int64)
    lines["wall"] = np.array([float("nan") if o.wall is None else o.wall for o in out], dtype=np.float64)
    lines["rank"] = np.array([o.rank for o in out], dtype=np.float64)
    if totals:  # (the N of "step:[s/N]": what a sink or an epoch can hold, textlog._sink_step_times)
        lines["steps_total"] = np.array([totals.get(o.pos, MISSING) for o in out], dtype=np.int64)
    v_line, v_field, v_value = [], [], []
    codes: dict[tuple[str, str], int] = {}  # (a file has few (tag, key) pairs; their codes in the order first seen)
    for row, o in enumerate(out):
        for tag, raw, value in o.values:
            v_line.append(row)
            code = codes.get((tag, raw))
            if code is None:
                code = codes[(tag, raw)] = logparse._pair_code(keys, (tag, raw), _FIELDS_SLOT)
            v_field.append(code)
            v_value.append(value)
    values = {"line": np.array(v_line, dtype=np.uint32), "field": np.array(v_field, dtype=np.uint32),
              "value": np.array(v_value, dtype=np.float64)}
    return lines, values


def _validation_bars(train: list, evals: list, rel: str, diags: list) -> tuple[list, list]:
    """Progress bars of the validation loop between the epochs' (``Epoch: 3: 100%|...| 226/226 [...,
    loss=2.91]`` then ``100%|...| 8/8 [..., loss=2.40]``): bars that print no epoch, after the first
    bar that does, whose totals are none of the epoch bars' totals, are the evaluation's."""
    epochs = [f for f in train if f[3].epoch is not None and f[3].steps_total]
    if not epochs:
        return train, evals
    first, totals = epochs[0][0], {f[3].steps_total for f in epochs}
    bare = [f for f in train if f[3].epoch is None and f[3].steps_total and f[0] >= first]
    if len(bare) < 2 or any(f[3].steps_total in totals for f in bare):
        return train, evals
    moved = {id(f) for f in bare}
    diags.append(dg.info("log-inferred", path=rel, variant="validation-bars", n=len(bare)))
    return [f for f in train if id(f) not in moved], sorted(evals + bare, key=lambda f: f[0])


def _join_part_lines(train: list, rel: str, diags: list) -> list:
    """A record printed over several lines: its loss (a plain or total loss key) on the first, then
    lines of named parts only and no counter ("con_loss: 0.0, sty_loss: 2.4e-05" / "tex_loss: ..."):
    each such line within PAIR_GAP lines of the one before is the record's parts, not a record."""
    out, joined, last = [], 0, None
    for f in train:
        r = f[3]
        head = out[-1][3] if out else None
        if r.parts_only and r.epoch is None and r.step is None and head is not None and not head.parts_only \
                and last is not None and f[0] - last <= logparse.PAIR_GAP:
            for j, (t, raw, v) in enumerate(r.values):
                if t != "loss" and any(x == t for x, _, _ in head.values):
                    continue
                if j in r.unitless:
                    head.unitless.append(len(head.values))
                head.values.append((logfields.GRAMMAR.part_name(raw) if t == "loss" else t, raw, v))
            joined += 1
        else:
            out.append(f)
        last = f[0]
    if joined:
        diags.append(dg.info("log-inferred", path=rel, variant="part-lines", n=joined))
    return out


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[\u4e00-\u9fff]+")


def _join_networks(train: list, rel: str, diags: list) -> list:
    """Several networks' losses of one iteration, each on a line of its own (a GAN's generator and
    discriminator, an actor and its critic): runs of records at the same counters whose lines
    differ in their words (ranks print the same line), the same words in the same order in at
    least one other run (runs of one line, or of other words, stay as they are). Each such run is one record: the first line's loss is the loss, the others' are its parts,
    named by their key (or by the words their line has and the first has not: "critic loss")."""
    if len(train) < 4:
        return train
    keyed = [_counters(f[3]) for f in train]
    starts = [i for i in range(len(train)) if i == 0 or keyed[i] != keyed[i - 1] or keyed[i] == (None, None)]
    bounds = list(zip(starts, starts[1:] + [len(train)]))
    if all(b - a < 2 for a, b in bounds):
        return train
    # a run of lines of different words at one counter (the words: the line with its numbers as #);
    # its words repeated by another such run
    patterns = [tuple(_NUMBER.sub("#", f[3].text) for f in train[a:b]) if b - a >= 2 else () for a, b in bounds]
    seen: dict[tuple, int] = {}
    for (a, b), pat in zip(bounds, patterns):
        if b - a >= 2 and len(set(pat)) == len(pat) and keyed[a] != (None, None):
            seen[pat] = seen.get(pat, 0) + 1
    joined = {pat for pat, n in seen.items() if n >= 2}
    if not joined:
        return train
    pattern = max(joined, key=len)
    out = []
    for (a, b), pat in zip(bounds, patterns):
        first = train[a]
        if pat not in joined:
            out.extend(train[a:b])
            continue
        r = replace(first[3], values=list(first[3].values), unitless=list(first[3].unitless))
        words = set(_WORD.findall(first[3].text.lower()))
        for _, _, _, other in train[a + 1 : b]:
            for j, (t, raw, v) in enumerate(other.values):
                if t == "loss":
                    own = [w for w in _WORD.findall(other.text.lower()) if w not in words]
                    t = logfields.GRAMMAR.part_name(raw) if raw.lower() not in ("loss", "losses") or not own \
                        else "_".join(own + ["loss"])
                elif any(t == x for x, _, _ in r.values):
                    continue
                if j in other.unitless:
                    r.unitless.append(len(r.values))
                r.values.append((t, raw, v))
        out.append((first[0], first[1], first[2], r))
    diags.append(dg.info("log-inferred", path=rel, variant="networks", n=len(pattern),
                         records=sum(seen[p] for p in joined)))
    return out


def _say_unread_keys(train: list, rel: str, diags: list) -> None:
    """Keys printed beside the records that no family of the lexicon takes: their count of lines,
    the keys (each with its count) and the first such line, in one info. Nothing is dropped unsaid."""
    counts: dict[str, int] = {}
    first = None
    for pos, _, _, r in train:
        for key in r.unread:
            counts[key] = counts.get(key, 0) + 1
        if r.unread and first is None:
            first = (pos, r.text)
    if first is not None:
        text = first[1] if len(first[1]) <= 120 else first[1][:117] + "..."
        diags.append(dg.info("log-keys-unread", path=rel, offset=first[0], n=sum(1 for f in train if f[3].unread),
                             keys=", ".join(f"{k} ({n})" for k, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:12]),
                             line=text))


def _summary_seconds(summary: list, out: list, rel: str, diags: list) -> set[tuple[int, int]]:
    """The per step times that summaries print without a unit and that are seconds: read as
    seconds (not as ms) they agree with the records' own step times, within 0.3-3x of their
    median (the CycleGAN tutorial's "epoch time:923.28s, per step time:0.91" beside records of
    "time:0.784652s"). (id of the record, index of the value) of each, said in an info."""
    mine = [(id(r), i, r.values[i][2]) for _, _, _, r in summary for i in r.unitless if r.values[i][0] == "step_time"]
    if not mine:
        return set()
    own = [v for o in out for t, _, v in o.values if t == "step_time" and v > 0]
    if not own:
        return set()
    ref = float(np.median(own))
    printed = float(np.median([v for _, _, v in mine]))  # (as ms, in s)
    if not _near(printed * 1e3, ref) or _near(printed, ref):
        return set()
    diags.append(dg.info("log-inferred", path=rel, variant="unit-s-summary", n=len(mine), median=ref))
    return {(k, i) for k, i, _ in mine}


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
            elif r.per_epoch is None:
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
    if not train or all(k == (None, None) for k in keyed) or _fractional([f[3] for f in train]):
        # (a fraction of epochs printed to two decimals repeats over many steps: no sign of ranks)
        return [None] * len(train)
    same = np.array([bool(i) and k == keyed[i - 1] for i, k in enumerate(keyed)], dtype=bool)
    by_order = runs_as_ranks(same)
    if by_order is not None:
        diags.append(dg.info("log-inferred", path=rel, variant="ranks-order", n=int(by_order.max()) + 1))
        return by_order.tolist()
    # the counters as one orderable number (epoch, then step; an absent one as -1)
    order = np.array([(-1 if e is None else e) * (1 << 31) + (-1 if s is None else s) for e, s in keyed], dtype=np.int64)
    wall = np.array([np.nan if f[1] is None else f[1] for f in train], dtype=np.float64)
    pos = np.array([f[0] for f in train], dtype=np.int64)
    blocks = blocks_as_ranks(order, pos, lambda: np.array([next((v for t, _, v in f[3].values if t == "loss"), np.nan)
                                                            for f in train], dtype=np.float64), wall, errors, path)
    if blocks is None:
        return [None] * len(train)
    say_blocks(blocks, keyed[0][1] if keyed[0][1] is not None else keyed[0][0], rel, diags)
    return blocks.tolist()


def error_positions(rec: logparse.Records) -> np.ndarray:
    return np.sort(np.array([e[0] for e in rec.errors], dtype=np.int64))


def runs_as_ranks(same: np.ndarray) -> np.ndarray | None:
    """Ranks 0..N-1 in order of appearance where nearly every record's counters are printed N times
    in a row (``same[i]``: record i prints the counters of record i-1), else None. The first and the
    last run may be cut short (an excerpt starts and ends anywhere); the runs between are N long."""
    starts = np.flatnonzero(~same)
    if len(starts) == 1 and len(same) >= 2:  # one step printed by each rank, and nothing else
        return np.arange(len(same))
    if len(starts) < 2 or starts[0] != 0:
        return None
    runs = np.diff(np.append(starts, len(same)))
    n = int(runs.max())
    inner = runs[1:-1]
    if n < 2 or (runs >= 2).sum() < max(2, 0.8 * len(runs)) or (len(inner) and (inner == n).sum() < 0.8 * len(inner)):
        return None
    return np.arange(len(same)) - np.repeat(starts, runs)


def blocks_as_ranks(order: np.ndarray, pos: np.ndarray, losses, wall: np.ndarray,
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


def say_blocks(blocks: np.ndarray, first, rel: str, diags: list) -> None:
    diags.append(dg.info("log-inferred", path=rel, variant="ranks-blocks", n=int(blocks.max()) + 1,
                         first=-1 if first is None else int(first)))


def _printed_per_epoch(found: list) -> list[int]:
    """The steps per epoch any line read by its fields prints, in line order: an epoch's summary
    ("Epoch: 1, Steps: 3741 | Train Loss: ... Vali Loss: ...") prints it for the step lines."""
    return [f[3].per_epoch for f in found if f[3].per_epoch]


def _field_steps(records: list, rel: str, diags: list, rank, elsewhere: list[int] = (),
                 run: tuple[int, float] | None = None) -> list[int] | None:
    """Global steps of one rank's training records (None: not records, e.g. one loss line with
    no counter). ``elsewhere``: the steps per epoch other lines of the file print; ``run``: the
    steps and epochs of the whole run, as its closing summary prints them."""
    n = len(records)
    if _fractional(records, run):
        return _epoch_fraction_steps(records, run, rel, diags)
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
    if has_epoch:
        known = [e for e in epochs if e is not None]
        shifted = iter(one_based(np.array(known, dtype=np.int64), rel, diags).tolist())
        epochs = [None if e is None else next(shifted) for e in epochs]
    printed = [r.per_epoch for r in records if r.per_epoch] or list(elsewhere)
    if not has_step:  # one line per epoch
        ratios = [round(t / st) for t, st in (_epoch_and_step_time(r) for r in records) if t and st and t > st]
        if printed:
            diags.append(dg.info("log-inferred", path=rel, variant="epoch-end", n=printed[-1]))
            return [e * printed[-1] if e is not None else MISSING for e in epochs]
        if ratios:
            spe = ratio_steps_per_epoch(ratios, rel, diags)
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
        parts = epoch_parts(e_arr, s_arr, rel, diags) if min(s for s in steps if s is not None) > 0 else None
        if parts is not None:
            return np.where(s_arr == MISSING, MISSING, global_steps(e_arr, s_arr, parts)).tolist()
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="fields-" + how, n=spe))
    # a line with the epoch but no step beside lines with both is the epoch's summary: no record
    return [MISSING if s is None else (e - 1) * spe + s if e is not None else s for e, s in zip(epochs, steps)]


# A Trainer's closing summary: {'train_runtime': 1664.7, 'train_steps_per_second': 0.267, ..., 'epoch': 0.07}
_RUN_KEYS = re.compile(r"""['"]?(train_runtime|train_steps_per_second|epoch)['"]?\s*:\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)""")


def _fractional(records: list, run: tuple[int, float] | None = None) -> bool:
    """The records count a fraction of epochs and no step ("'epoch': 0.66"; "'epoch': 1.0" where the
    run's summary says how many steps its epochs took)."""
    if any(r.step is not None for r in records):
        return False
    if any(r.epoch_frac is not None and r.epoch_frac != int(r.epoch_frac) for r in records):
        return True
    return run is not None and all(r.epoch_frac is not None for r in records)


def _run_steps(summary: list) -> tuple[int, float] | None:
    """(steps, epochs) of the run by its closing summary: runtime x steps per second, its epoch."""
    for _, _, _, r in reversed(summary):
        got = dict(_RUN_KEYS.findall(r.text))
        if len(got) == 3 and float(got["epoch"]) > 0 and (steps := round(float(got["train_runtime"])
                                                                            * float(got["train_steps_per_second"]))) > 0:
            return steps, float(got["epoch"])
    return None


def _epoch_fraction_steps(records: list, run: tuple[int, float] | None, rel: str, diags: list) -> list[int]:
    """Records whose only counter is the fraction of the run's epochs done (a Trainer's ``'epoch':
    0.66``): step = epoch x steps per epoch, the steps per epoch from the run's summary (its steps
    over its epochs). The fraction is printed to two decimals, so records that print the same one
    are told apart in order: each at least one step after the one before, and none after the
    run's last step (counted back from it). Without a summary, the ordinal."""
    if run is None:
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-fraction-ordinal", n=len(records)))
        return list(range(1, len(records) + 1))
    total, epochs = run
    per_epoch = total / epochs
    fracs = [r.epoch_frac if r.epoch_frac is not None else r.epoch for r in records]
    guess = [None if e is None else e * per_epoch for e in fracs]
    every = _logging_interval(guess)
    steps, prev = [], 0
    for g in guess:
        prev = max(prev + 1, prev + 1 if g is None else round(g) if every is None else every * round(g / every))
        steps.append(prev)
    cap = total + 1
    for i in range(len(steps) - 1, -1, -1):
        cap = steps[i] = max(1, min(steps[i], cap - 1))
    diags.append(dg.info("log-inferred", path=rel, variant="epoch-fraction", n=round(per_epoch), total=total))
    return steps


# The writer naming the part of the loop a record is in: "Stage 2 Epoch 1/30", "phase 3", "第 2 阶段"
_STAGE = re.compile(r"(?<![A-Za-z])(?:stage|phase|curriculum|round)[ _\-:=]*(\d{1,4})(?!\d)|第\s*(\d{1,4})\s*阶段|阶段\s*(\d{1,4})",
                    re.IGNORECASE)


def _stages(stream: list, steps: list[int], rel: str, diags: list) -> list[int]:
    """A loop of stages (a curriculum, a pre-training then a fine-tuning in one launch) whose epoch
    counter starts again in each: where the lines name the stage ("Stage 2 Epoch 1/30") and the
    steps go back as it changes, each stage's steps follow the last one's on one axis (an info)."""
    if len(steps) < 2 or not any("tage" in f[3].text or "hase" in f[3].text or "阶段" in f[3].text or "ound" in f[3].text
                                 for f in stream):
        return steps
    names = []
    for f in stream:
        m = _STAGE.search(f[3].text)
        names.append(next((g for g in m.groups() if g), None) if m else None)
    cuts = [i for i in range(1, len(steps)) if names[i] != names[i - 1] and steps[i] != MISSING
            and (last := max((s for s in steps[:i] if s != MISSING), default=None)) is not None and steps[i] <= last]
    if not cuts:
        return steps
    out = list(steps)
    for i in cuts:  # (each stage's counter as printed, after the last step of the stages before it)
        offset = max(s for s in out[:i] if s != MISSING) + (1 if steps[i] == 0 else 0)
        out[i:] = [s if s == MISSING else s + offset for s in steps[i:]]
    diags.append(dg.info("log-inferred", path=rel, variant="stages", n=len(cuts) + 1))
    return out


def _logging_interval(guess: list) -> int | None:
    """The steps between records logged every k steps (a Trainer's logging_steps), where the
    fractions, two decimals each, place every record about k after the one before (within a
    quarter of k): k from their whole span; None where they do not (records of one printed
    fraction, an elision between them)."""
    if len(guess) < 2 or any(g is None for g in guess):
        return None
    every = (guess[-1] - guess[0]) / (len(guess) - 1)
    if every < 2 or any(abs(b - a - every) > 0.25 * every for a, b in zip(guess, guess[1:])):
        return None
    return round(every)


def one_based(epochs: np.ndarray, rel: str, diags: list, shape: str | None = None) -> np.ndarray:
    """Epochs counted from 0 (an epoch 0 among them) as 1-based, said in an info (which lines:
    ``shape``'s, or the lines read by their fields). The one place the file's epochs are shifted."""
    if not len(epochs) or epochs.min() != 0:
        return epochs
    if shape is None:
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-0-based"))
    else:
        diags.append(dg.info("log-inferred", path=rel, variant="epoch-0-based-lines", shape=shape))
    return epochs + 1


def interval_steps_per_epoch(epoch: np.ndarray, step_in: np.ndarray, rel: str, diags: list) -> int | None:
    """Steps per epoch of in-epoch steps printed every k global steps (LossMonitor(75) over epochs of
    2831 steps: 75 ... 2775, then 19, 94, ...): where the steps within each epoch go up by k and an
    epoch's first printed step is not k, the epoch before ended k - that step after its last print.
    Every epoch boundary must say the same length (said in an info); None where none is shifted."""
    ok = (epoch != MISSING) & (step_in != MISSING)
    e, s = epoch[ok], step_in[ok]
    if len(e) < 4:
        return None
    same = e[1:] == e[:-1]
    gaps = (s[1:] - s[:-1])[same]
    if not len(gaps):
        return None
    values, counts = np.unique(gaps, return_counts=True)
    k = int(values[counts.argmax()])
    if k < 2 or counts.max() < 0.8 * len(gaps):
        return None
    at = np.flatnonzero(e[1:] == e[:-1] + 1) + 1  # the first print of each next epoch
    if not len(at) or (s[at] == k).all() or (s[at] > k).any():
        return None
    lengths = s[at - 1] + k - s[at]
    if (lengths != lengths[0]).any() or lengths[0] < s.max():
        return None
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="print-interval", n=int(lengths[0]), every=k))
    return int(lengths[0])


def ratio_steps_per_epoch(ratios: list[int], rel: str, diags: list) -> int:
    """Steps per epoch as the lines' epoch time / per step time say it (each line's ratio rounded):
    their median, said with how many lines differ. The one place this ratio is taken."""
    spe = int(round(float(np.median(ratios))))
    diags.append(dg.info("log-steps-per-epoch", path=rel, variant="ratio", n=spe, lines=len(ratios),
                         differ=sum(1 for x in ratios if x != spe)))
    return spe


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
    prints a counter: at the step of the record after it, the one it announces (rows of field_lines,
    their steps settled with the shapes'). One with no counter is left: the records before it may
    print their time (TimeMonitor's lines; a run's closing "per step time: 3.455")."""
    if fields or not times:
        return []
    out = [Row(pos, wall, zone, MISSING, float("nan") if t.rank is None else float(t.rank),
            [v for v in t.values if v[0] == "step_time"], _TIME_SHAPE)
           for pos, wall, zone, t in times if t.epoch is not None or t.step is not None]
    if out:
        diags.append(dg.info("log-inferred", path=rel, variant="time-line-shapes", n=len(out)))
    return out


def _epoch_and_step_time(r) -> tuple[float | None, float | None]:
    vals = {t: v for t, _, v in reversed(r.values)}
    return vals.get("epoch_time"), vals.get("step_time")


def _near(x: float, ref: float) -> bool:
    """Two measures of one step time agree: within 0.3-3x (a unit's factor of 1000 never is)."""
    return 0.3 <= x / ref <= 3.0


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
    seconds = True
    if gap is not None and _near(printed * 1e3, gap) and not _near(printed, gap):
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s", gap=gap))
    elif gap is not None and _near(printed, gap):
        seconds = False
        diags.append(dg.info("log-inferred", path=rel, variant="unit-ms-clock", gap=gap))
    elif gap is None and printed * 1e3 < 1.0:
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s-small", median=printed * 1e3))
    elif gap is None and _compile_step_in_seconds(values, unitless, printed):
        # MindSpore compiles the graph in the first step (seconds to minutes): a first step many times
        # the others that would, as ms, be a compile under a second is printed in seconds
        first = values[unitless[0][0]][unitless[0][1]][2] * 1e3  # (as printed)
        diags.append(dg.info("log-inferred", path=rel, variant="unit-s-compile", first=first, median=printed * 1e3))
    else:
        seconds = False
        diags.append(dg.info("log-inferred", path=rel, variant="unit-ms"))
    if seconds:  # (read as ms: a thousand times more)
        for i, j in unitless:
            t, raw, v = values[i][j]
            values[i][j] = (t, raw, v * 1e3)
    return values


def _cumulative_times(values: list[list], steps: list[int], rel: str, diags: list) -> list[list]:
    """Step times that are the time elapsed since the start (``Epoch 2:\tLoss ...\tTime 110s`` after
    ``Time 56s``; whatever unit the key claims): they grow at every record, by about the first
    record's time each (0.3-3x of it; a per-step time that drifts up grows by a small fraction of
    itself), to at least twice it. Each record's step time is then the difference from the record
    before over the steps between; the first keeps its own (over its steps, where it counts from 1)."""
    at = []
    for i, vals in enumerate(values):
        j = next((j for j, v in enumerate(vals) if v[0] == "step_time"), None)
        if j is not None and steps[i] != MISSING:
            if at and vals[j][2] <= values[at[-1][0]][at[-1][1]][2]:
                return values  # (not growing: no cumulative time; most files stop here, at their second time)
            at.append((i, j))
    if len(at) < 3:
        return values
    t = np.array([values[i][j][2] for i, j in at])
    s = np.array([steps[i] for i, _ in at], dtype=np.float64)
    dt, ds = np.diff(t), np.diff(s)
    if (dt <= 0).any() or (ds <= 0).any() or t[-1] < 2 * t[0] or not 0.3 <= float(np.median(dt)) / t[0] <= 3.0:
        return values
    out = [list(v) for v in values]
    per = np.concatenate([[t[0] / s[0] if s[0] >= 1 else t[0]], dt / ds])
    for (i, j), x in zip(at, per.tolist()):
        tag, raw, _ = out[i][j]
        out[i][j] = (tag, raw, x)
    diags.append(dg.info("log-inferred", path=rel, variant="time-cumulative", n=len(at)))
    return out


COMPILE_RATIO = 10  # a first step this many times the median of the others is the graph compile's


def _compile_step_in_seconds(values: list, unitless: list, median_s: float) -> bool:
    """The first of the unitless per-step times (as ms, in s) is the first step's, COMPILE_RATIO times
    the median or more, and under a second as ms (no MindSpore graph compiles that fast): seconds."""
    if len(unitless) < 3:
        return False
    first = values[unitless[0][0]][unitless[0][1]][2]
    return first < 1.0 and median_s > 0 and first >= COMPILE_RATIO * median_s


def global_steps(epoch: np.ndarray, step_in: np.ndarray, per_epoch) -> np.ndarray:
    """(epoch - 1) x steps per epoch + step in epoch; the step in epoch where no epoch is printed,
    MISSING where a step per epoch is needed and unknown. Counters have at most 9 digits: no
    product overflows."""
    step = np.where(epoch == MISSING, step_in, (epoch - 1) * per_epoch + step_in)
    return np.where((step_in == MISSING) | ((epoch != MISSING) & (per_epoch == MISSING)), MISSING, step)


def epoch_parts(epoch: np.ndarray, step_in: np.ndarray, rel: str, diags: list) -> np.ndarray | None:
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
