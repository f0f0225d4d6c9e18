"""Training records read by their fields, not by their line shape: the lexicon of key families.

The shapes of logshapes each read one writer's line. Most logs people have are printed by
something else (a model's own loop, a course's script, a fork of a callback) and differ from the
shapes in a word, a separator or a bracket. This module reads such a line by what it holds: the
keys of a few families (LEXICON), each followed by a separator and a value in one of the forms
writers print. A line is a training record when it holds a loss-family value and a counter (or,
in a file where no line has a counter, when it is one of a run of loss lines: its ordinal). Which
counter is global, how many steps an epoch has, whether epochs count from 0, which rank printed an
interleaved line: textlog settles those per file (``infer``), from all the file's records.

Adding a spelling is one line: a regex alternative in its family's tuple below (lower case; ``_``
``-`` and spaces between words are one separator, written here as ``[ _-]?``). The example lines
of each family are in docs/formats/textlogs.md.

This path is Python only: the C scanner hands these lines back (the shapes ``fields:*`` of
logshapes anchor on the loss words), and a file of the hot shapes never gets here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import lexicon
from .lexicon import S

NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?))"
# after a time's number: a date or a clock goes on ("2021-07-24 02:08:33", "23 09:45:32")
CLOCK_AFTER = re.compile(r"[-:/]\d|\s+\d{1,2}:\d{2}")
# "per step" alone is a time only with a unit after it ("samples per step: 32" is none)
PER_ALONE = re.compile(rf"per{S}(?:step|iter(?:ation)?|batch)", re.IGNORECASE)

# The words that make a line an evaluation's, when they come before its loss: "Eval ...", "[val]".
EVAL_WORDS = re.compile(r"(?<![A-Za-z])(?:eval(?:uat\w*)?|validat\w*|valid|vali|val|test(?:ing)?|inference|metrics)(?![A-Za-z])|验证|测试|评估",
                        re.IGNORECASE)

# ... or that say after it which set they are on: "total loss 26.6921 on valid"
EVAL_AFTER = re.compile(r"(?<![A-Za-z])(?:on|for)\s+(?:the\s+)?(?:valid\w*|val|test\w*|eval\w*|dev)(?:\s+set)?(?![A-Za-z])",
                        re.IGNORECASE)

# ... or that print it in a dict of metrics beside an accuracy (what Model.eval returns: {'acc': 0.5, 'loss': 1.35})
EVAL_DICT = re.compile(r"""['"](?:acc|accuracy|top_?1(?:_accuracy)?|top_?5(?:_accuracy)?|f1|auc|precision|recall|map|bleu)['"]\s*:""",
                       re.IGNORECASE)

# A tqdm bar (``n/N [elapsed<left, rate, postfix]``) whose postfix holds an accuracy: an evaluation's
# (tqdm's set_postfix sorts its keys, so "acc=" before "loss=" says nothing; a training bar prints its
# loss, a learning rate, no accuracy: the MindSpore tutorials' evaluate() prints loss and acc).
TQDM_METRIC_RE = re.compile(r"\d+/\d+ \[[^\]]*?[,\s](?:acc|accuracy|top_?1(?:_acc(?:uracy)?)?|f1|auc)=[-+]?[\d.]", re.IGNORECASE)

# MindSpore Lite's LossMonitor (lite/src/train/loss_monitor.cc): "<epoch>.<step>:\tLoss is X", both 1-based
# (so "1.1000:" is epoch 1 step 1000, no float).
LITE_STEP_RE = re.compile(r"^\s*(\d{1,9})\.(\d{1,9}):\s+loss\b", re.IGNORECASE)

# The speed metrics a Hugging Face-style Trainer (mindnlp's) logs once, at the end of train(), beside
# train_loss (the mean over the run): {'train_runtime': .., 'train_loss': .., 'epoch': 10.0}.
RUN_SUMMARY_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")

# Chinese and full-width spellings of the separators and brackets.
_WIDTH = str.maketrans({"：": ":", "，": ",", "（": "(", "）": ")", "［": "[", "］": "]", "【": "[", "】": "]", "＝": "=",
                        "；": ";", "　": " ", "／": "/"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# The characters no key holds (the key pattern only looks at them, in its lookaheads): its answer at
# a word depends on the character before it and the text up to the first of them, so it is kept
# per such window (a log repeats its keys; test_no_key_holds_a_stop_character checks the set).
KEY_STOP = ":=,;()[]{}<>'\"|!?#%&*+@^`~$\\"
_KEY_STOP_RE = re.compile("[" + re.escape(KEY_STOP) + "]")
TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[\u4e00-\u9fff]+")


def _longest_first(spellings) -> str:
    """An alternation of literals, the longest first (so "ms" is tried before "s")."""
    return "|".join(re.escape(s) for s in sorted(dict.fromkeys(spellings), key=len, reverse=True))


class Grammar:
    """A lexicon (a module or namespace with FAMILIES and UNITS, see lexicon.py) compiled into the
    patterns the field reader matches, with the memory of what it decided per line form."""

    def __init__(self, lex=lexicon) -> None:
        self.lexicon = lex
        self.family = {f.name: f for f in lex.FAMILIES}
        alts, self.family_of = [], []
        for fam in lex.FAMILIES:
            for sp in fam.spellings:
                alts.append(f"(?P<k{len(self.family_of)}>{sp})")
                self.family_of.append(fam.name)
        # a key is not glued to a word before it (lm_loss is loss_part, never loss), nor after it
        # (a Chinese key may follow a word: "batched平均损失")
        self.key_re = re.compile(r"(?:(?<![A-Za-z0-9_])|(?=[\u4e00-\u9fff]))(?:" + "|".join(alts) + r")(?![A-Za-z0-9_])",
                                 re.IGNORECASE)
        # Where a key may start: a word holding a hint (or equal to a short one), or Chinese. Trying
        # the key pattern only there, not at every character, is what makes this path ~10x faster.
        self.hints = tuple(dict.fromkeys(h for f in lex.FAMILIES for h in f.hints))
        self.hint_re = re.compile("|".join(self.hints))
        self.short_hints = frozenset(w for f in lex.FAMILIES for w in f.words)
        self.loss_families = frozenset(f.name for f in lex.FAMILIES if f.loss)
        self.time_families = frozenset(f.name for f in lex.FAMILIES if f.dimension == "time" and f.role == "value")
        self.weak = frozenset(f.name for f in lex.FAMILIES if f.strength == "weak")
        self.bare = frozenset(f.name for f in lex.FAMILIES if f.bare)
        self.counters = frozenset(f.name for f in lex.FAMILIES if f.role == "counter")
        self.skipped = frozenset(f.name for f in lex.FAMILIES if f.role in ("mark", "ignore"))
        self.tag = {f.name: f.tag for f in lex.FAMILIES}
        times = [u for u in lex.UNITS if u.dimension == "time"]
        self.unit_si = {u.spelling.lower(): u.si for u in times}
        unit = _longest_first(u.spelling for u in times)
        # After a key: a unit in parentheses or brackets, a separator, then a value in one of its forms.
        self.value_re = re.compile(
            rf"\s*(?:\(\s*(?P<punit>{unit})\s*\)|\[\s*(?P<bunit>{unit})\s*\])?"
            r"['\"]?\s*(?P<sep>::?|=|\bis\b(?:\s*[:=])?|->|(?<=[A-Za-z_\]])-(?=\d)|\s|(?=\[))\s*"  # a quote closing the key: a printed dict's 'loss': 0.18
            r"(?:"
            r"\[\s*(?P<pa>\d+)\s*/\s*(?P<pb>\d+)\s*\]"  # [a/b]
            r"|(?P<qa>\d+(?:\.0)?)\s*/\s*(?P<qb>\d+(?:\.\d+)?)(?![\d.])"  # a/b
            r"|\(?\s*(?:Tensor|tensor|array)\((?:[^()]*?value=\s*)?\[*\s*(?P<tv>" + NUM + r")"  # Tensor(shape=[1], ..., value= 2.3)
            r"|[\[(]\s*(?P<lv>" + NUM + r")"  # [2.3], [2.3, 1.1], (2.3, ...)
            r"|(?P<v>" + NUM + r")(?!\.?\d)"  # a number, maybe glued to a unit or the next word (not to more digits: "9.6.7")
            r")"
            rf"(?:\s*(?P<vunit>{unit})(?![A-Za-z])|\s*\(\s*(?P<aunit>{unit})\s*\))?",  # (a unit after: "7.178 (s)")
            re.IGNORECASE,
        )
        # tqdm's rate when slower than one step a second: "0.30s/it"; Informer's "speed: 0.2837s/iter"; "45ms/step"
        self.sec_per_it_re = re.compile(rf"(?<![\w.])({NUM})\s*({unit})/(?:it(?:er(?:ation)?)?|step|batch)(?![A-Za-z])")
        # a rate printed value first: "16.54 img/s", "1234 tokens/s", "0.00600 samples/s/p"
        rates = [u for u in lex.UNITS if u.dimension == "rate"]
        self.rate_tag = {u.spelling.lower(): u.tag for u in rates}
        self.per_step = frozenset(u.spelling.lower() for u in rates if u.tag == "step_time")  # steps a second: 1 / the step's time
        self.rate_re = re.compile(rf"(?<![\w.])({NUM})\s*(?P<u>{_longest_first(u.spelling for u in rates)})(?![A-Za-z])",
                                  re.IGNORECASE)
        # (the literal each holds, looked for before the pattern: "/s", "fps")
        self.rate_hints = tuple(dict.fromkeys((u.spelling[u.spelling.find("/"):][:2] if "/" in u.spelling else u.spelling).lower()
                                              for u in rates))
        # what was decided: per key window, per word, per line form, per part key (a log repeats them)
        self.key_at: dict[str, tuple[int, str] | None] = {}
        self.hinted: dict[str, bool] = {}
        self.forms: dict[tuple, tuple | None] = {}
        self.part_names: dict[str, str] = {}

    def key_at_(self, text: str, at: int) -> tuple[int, str] | None:
        stop = _KEY_STOP_RE.search(text, at)
        end = stop.end() if stop is not None else len(text)
        window = text[at - 1 : end] if at else "\0" + text[:end]  # (the start of the text: no word before, as "\0")
        hit = self.key_at.get(window, False)
        if hit is False:
            km = self.key_re.match(text, at)
            hit = None if km is None else (km.end() - at, self.family_of[int(km.lastgroup[1:])])
            if len(window) <= 256:
                if len(self.key_at) > 100_000:
                    self.key_at.clear()
                self.key_at[window] = hit
        return hit

    def may_start_key(self, word: str) -> bool:
        hit = self.hinted.get(word)
        if hit is None:
            low = word.lower()
            hit = bool(low in self.short_hints or low[0] >= "\u4e00" or self.hint_re.search(low))
            if len(self.hinted) > 100_000:
                self.hinted.clear()
            self.hinted[word] = hit
        return hit

    def keys(self, text: str, at: int = 0):
        """The lexicon's keys in ``text`` from ``at`` on, in order: (start, end, family) of each."""
        end = at
        for tm in TOKEN_RE.finditer(text, at):
            start = tm.start()
            if start < end or not self.may_start_key(tm.group()):
                continue
            hit = self.key_at_(text, start)
            if hit is not None:
                end = start + hit[0]
                yield start, end, hit[1]

    def part_name(self, key: str) -> str:
        name = self.part_names.get(key)
        if name is None:
            if len(self.part_names) > 10_000:
                self.part_names.clear()
            name = self.part_names[key] = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
        return name


GRAMMAR = Grammar()  # the lexicon's; tests may read with another (Grammar(module))


def keys(text: str, at: int = 0, gr: Grammar | None = None):
    return (gr or GRAMMAR).keys(text, at)


# mpirun --tag-output "[1,3]<stdout>:" ; "[rank 3]" / "[Rank 3]" ; "rank3:"
RANK_PREFIX_RE = re.compile(r"^\s*\[1,(\d+)\]<std(?:out|err)>:|^\s*\[\s*rank\s*[:=]?\s*(\d+)\s*\]", re.IGNORECASE)
# a line that only names the rank of the records after it: pix2pix's `Device ID : 3` (the rank family's spellings)
RANK_HEADER_RE = re.compile(r"^\s*(?:device[ _\-.]?id|rank(?:[ _\-.]?id)?|local[ _\-.]?rank)\s*[:=]?\s*(\d{1,6})\s*$", re.IGNORECASE)
# A step with no key: "[ 100/1000]" after the loss ("[0/1563 (0%)]" in PyTorch's MNIST loop); tqdm's "450/1000 [00:10<00:12";
# Keras' "103/103 [==============================] - 128s 1s/step - loss: 0.3013".
BARE_PROGRESS_RE = re.compile(r"(?<![\w/.])\[\s*(\d+)\s*/\s*(\d+)(?:\s*\(\s*\d+(?:\.\d+)?%\s*\))?\s*\]|(?<![\w/.])(\d+)/(\d+) \[(?:\d+:\d+|[=>.]{3,}\])")


# a loss key with a separator and something like a value after it: a line that means to print a loss
_SEP_AFTER = re.compile(r"['\"]?\s*(?:\([^)]{0,8}\)\s*)?(?:::?|=|is\b(?:\s*[:=])?|(?=\[))\s*(?:[-+]?[\d.]|\[|\(|tensor|nan|inf)", re.IGNORECASE)

# a line that only names the epoch the next lines are in (the MindSpore tutorials' loop: "Epoch 1" then dashes)
HEADER_RE = re.compile(r"(?:^|[\]:|]\s)[\s\-=*#]*(?:Epoch|epoch|EPOCH)(?:\s*:\s*|\s+)(\d{1,9})(?:\s*/\s*\d+)?\s*:?[\s\-=*#]*$")
# ... or the steps each epoch has, printed once before the loop: "iters_per_epoch:  5" (a header of the run)
PER_EPOCH_HEADER_RE = re.compile(r"^\s*(?:iters?|steps?|batch(?:es)?)[ _\-.]?per[ _\-.]?epoch\s*[:=]?\s*(\d{1,9})\s*$", re.IGNORECASE)
# "[0/1200][230/937]": epoch then step, with no key (DCGAN-style GAN loops)
DOUBLE_PROGRESS_RE = re.compile(r"\[\s*(\d+)\s*/\s*(\d+)\s*\]\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")
# tqdm's count when the loop has no known total ("{n}it [{elapsed}, {rate}]"): the iterations done, the step
TQDM_COUNT_RE = re.compile(r"(?<![\w.])(\d{1,9})it \[\d+:\d+")
# a counter glued before its key: "1epoch 2iter"
GLUED_COUNTER_RE = re.compile(r"(?<![\w.])(\d{1,9})(epoch|iter|step)s?(?![A-Za-z])", re.IGNORECASE)
# a counter glued after its key: "step_0: loss=3.59"
SUFFIX_COUNTER_RE = re.compile(r"(?<![A-Za-z0-9])(epoch|iter|step)_(\d{1,9})(?![\w.])", re.IGNORECASE)
# Chinese puts the number first: "第 3 轮" (epoch 3), "第 100 步" (step 100).
ZH_EPOCH_RE = re.compile(r"第\s*(\d+)\s*(?:轮|个\s*epoch|epoch|周期)", re.IGNORECASE)
ZH_STEP_RE = re.compile(r"第\s*(\d+)\s*(?:步|次迭代|个\s*step|step|iter)", re.IGNORECASE)


@dataclass
class FieldRecord:
    """What one line (a redraw of a tqdm line: one segment) holds."""

    epoch: int | None = None
    epochs_total: int | None = None
    step: int | None = None
    steps_total: int | None = None
    global_step: bool = False  # the step's key says it is global
    rank: int | None = None
    eval: bool = False
    values: list[tuple[str, str, float]] = field(default_factory=list)  # (tag, raw key, value in SI units)
    unitless: list[int] = field(default_factory=list)  # indexes of time values printed without a unit
    per_epoch: int | None = None  # a printed steps-per-epoch
    epoch_frac: float | None = None  # an epoch printed with a decimal point ("'epoch': 0.66", a Trainer's): the run's fraction
    text: str = ""  # the line as printed (for the unread warning)
    header: bool = False  # an "Epoch 3" line alone: the epoch of the records after it
    loss_like: bool = False  # a loss key with a separator after it, whatever followed
    has_loss: bool = False  # a training (or eval) loss value
    summary: bool = False  # a run's summary by what its writer prints (its loss is the run's mean, no step's)
    time_line: bool = False  # no loss, a step's time: "\tspeed: 0.2837s/iter; left time: ..." (textlog._neighbour_times)
    parts_only: bool = False  # its loss is the first of named parts ("con_loss: 0.0, sty_loss: 2.4e-05"), no loss key
    unread: tuple[str, ...] = ()  # keys with a number after them that no family takes ("acc: 0.91"): listed, never read

    def counters_only(self) -> bool:
        """An epoch or a step and no loss key: one half of a record printed over two lines, maybe."""
        return not (self.has_loss or self.loss_like or self.header) and (self.epoch is not None or self.step is not None)

    def loss_only(self) -> bool:
        """A training loss and no counter: the other half."""
        return self.has_loss and not self.eval and self.epoch is None and self.step is None


def normalise(text: str) -> str:
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if not text.isascii():
        text = text.translate(_WIDTH)
    return text


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _count(text: str | None) -> int | None:
    """A counter: digits, or a whole number printed as a float ("200.0")."""
    if text is not None and text.endswith(".0"):
        text = text[:-2]
    elif text is not None and text.endswith("."):  # "current step num: 154." ends a sentence
        text = text[:-1]
    return int(text) if text is not None and text.isdigit() and len(text) <= 9 else None


def _total(text: str | None) -> int | None:
    """A count printed as a fraction of batches ("692.2578125"): the batches it takes."""
    n = _count(text)
    if n is None and text is not None and re.fullmatch(r"\d{1,9}\.\d+", text):
        n = math.ceil(float(text))
    return n


def header(text: str) -> FieldRecord | None:
    """A line that only names the epoch (or the rank) of the records after it."""
    m = HEADER_RE.search(text)
    if m:
        return FieldRecord(epoch=int(m.group(1)), header=True)
    m = RANK_HEADER_RE.match(text)
    if m:
        return FieldRecord(rank=int(m.group(1)), header=True)
    m = PER_EPOCH_HEADER_RE.match(text)
    if m:
        return FieldRecord(per_epoch=int(m.group(1)), header=True)
    return None


# Two writers' lines glued on one physical line (ranks printing into one stream, no newline between
# them): an epoch key (then ":", "=" or "[") right after a number or a dict's closing brace starts
# the other line ("... 'loss': 0.40286505967378616}Epoch: 0/100, ", "loss is -16.564177epoch: 50 step: 1172, ...").
_GLUED_AFTER = re.compile(r"\s*[:=\[]")


def segments(text: str) -> list[str]:
    """A physical line's parts read one by one: tqdm's redraws (``\r``), lines glued by two writers."""
    parts = text.split("\r") if "\r" in text else [text]
    if "poch" not in text and "POCH" not in text:
        return parts
    out = []
    for p in parts:
        at = 0
        for word in ("poch", "POCH"):  # (str.find, not a regex over the line: this runs on every such line)
            i = p.find(word, 2)
            while i >= 2:
                if p[i - 2] in "0123456789}" and p[i - 1] in "eE" and _GLUED_AFTER.match(p, i + 4):
                    out.append(p[at:i - 1])
                    at = i - 1
                i = p.find(word, i + 4)
        out.append(p[at:] if at else p)
    return out


# A line is read once per form: the lines one writer prints differ in their digits, and what
# _decide makes of a line depends on a digit only where a pattern or a rule spells one (the
# "l1"/"top_1" of a key, after a letter or "_"; mpirun's "[1," prefix; the ".0" of a whole-number
# counter, "200.0"): the form is the line with its other ASCII digits as 0 (each run keeps its
# length), and every line of a form takes its numbers and keys from the same spans.
DIGITS_0 = str.maketrans("123456789", "000000000")
_AFTER_WORD = re.compile(r"(?<=[A-Za-z_])[0-9]+")
_DOT_0 = re.compile(r"\.0(?![0-9])")
FORM_MAX = 1024  # longer lines are not kept as forms (the caches' memory stays a few MB)


def read(text: str, gr: Grammar | None = None) -> FieldRecord | None:
    """The fields of one line (normalised: no ANSI, ASCII separators), or None when it holds no
    loss-family key."""
    m = RANK_PREFIX_RE.match(text)
    form = (text.translate(DIGITS_0), m is not None, tuple(_AFTER_WORD.findall(text)),
            tuple(x.start() for x in _DOT_0.finditer(text)) if ".0" in text else ())
    gr = gr or GRAMMAR
    d = gr.forms.get(form, False)
    if d is False:
        d = _plan(_decide(text, m, gr))
        if len(text) <= FORM_MAX:  # (longer lines are not kept: the caches' memory stays a few MB)
            if len(gr.forms) > 20_000:
                gr.forms.clear()
            gr.forms[form] = d
    if d is None:
        return None
    fixed, counters, specs, unitless = d
    rec = object.__new__(FieldRecord)  # (FieldRecord(...) without its __init__: the same fields)
    f = rec.__dict__
    f.update(fixed)
    for name, a, b, conv in counters:
        f[name] = conv(text[a:b])
    values = []
    for tag, k, v in specs:
        key = k if k.__class__ is str else text[k[0]:k[1]].strip(" _-.") if k[2] else text[k[0]:k[1]]
        x = float(text[v[0]:v[1]])  # (a value's conversion is float, or its inverse: a rate of steps)
        if v[2] is _per_step:
            x = 1.0 / x if x > 0 else math.nan
        values.append((gr.part_name(key) if tag.__class__ is _Part else tag, key, x if v[3] is None else x * v[3]))
    f["values"] = values
    f["unitless"] = list(unitless)
    return rec


_COUNTERS = ("epoch", "epochs_total", "step", "steps_total", "rank", "per_epoch", "epoch_frac")


def _plan(d: FieldRecord | None) -> tuple | None:
    """A decided line as what each line of its form is made of: (its fields that hold no number,
    (field, start, end, conversion) of those that do, its values' specs, its unitless indexes)."""
    if d is None:
        return None
    fixed = {k: v for k, v in d.__dict__.items() if k not in _COUNTERS and k not in ("values", "unitless")}
    fixed |= {k: None for k in _COUNTERS}
    counters = tuple((k, spec[0], spec[1], spec[2]) for k in _COUNTERS if (spec := getattr(d, k)) is not None)
    return fixed, counters, tuple(d.values), tuple(d.unitless)


class _Part(str):
    """A named part's tag (lm_loss): made from each line's own key."""


def _taken(m: re.Match, group, conv, factor: float | None = None) -> tuple:
    """Where a number is: (start, end, conversion, factor)."""
    return (*m.span(group), conv, factor)


def _counted(m: re.Match, group: int) -> tuple | None:
    return None if _count(m.group(group)) is None else _taken(m, group, _count)


def _decide(text: str, m: re.Match | None, gr: Grammar) -> FieldRecord | None:
    """What ``read`` makes of a line, as a FieldRecord whose numbers and keys are where to take
    them from (_taken: a span of the line and a conversion): the same for every line of its form.
    ``m``: RANK_PREFIX_RE's match."""
    rec = FieldRecord()
    if m:
        rec.rank = _taken(m, 1 if m.group(1) else 2, int)
    taken: list[tuple[int, int]] = []  # spans of the keys' values: a bare [a/b] is none of them
    known: list[tuple[int, int]] = []  # spans of the lexicon's keys
    loss_kind = None  # the spelling's rank that gave the loss: total < plain < modified
    eval_kind = None  # the same for the evaluation's loss: one per line, the others its parts
    open_key = None  # (end, spelling) of a loss key with no value after it: "avg_loss:" of "avg_loss:loss:1.9"
    for k_start, k_end, fam in gr.keys(text):
        key = text[k_start:k_end].strip(" _-.")
        kspec = (k_start, k_end, True)
        known.append((k_start, k_end))
        vm = gr.value_re.match(text, k_end)
        if fam in gr.loss_families and _SEP_AFTER.match(text, k_end):
            rec.loss_like = True
        outer = None
        if open_key is not None and fam == "loss" and text[open_key[0]:k_start].strip(" ") in (":", "="):
            outer = open_key[1]  # a meter printed after a key ("loss:<avg>" as the value of avg_loss): the outer key's kind
        open_key = (k_end, key) if vm is None and fam == "loss" else None
        if vm is None:
            continue
        # a key then a space then a value reads only for counters and losses ("Epoch 3", "loss 0.2")
        if vm.group("sep").strip() == "" and fam not in gr.bare \
                and vm.group("v") is None and vm.group("lv") is None:
            continue
        if vm.group("sep") == "->":
            continue
        taken.append((k_start, vm.end()))
        if fam in gr.counters:
            ga = next((x for x in ("pa", "qa", "v", "lv") if vm.group(x)), None)
            gb = "pb" if vm.group("pb") else "qb" if vm.group("qb") else None
            a, b = vm.group(ga) if ga else None, vm.group(gb) if gb else None
            n, total = _count(a), _total(b)
            if fam == "epoch" and b is None and a is not None and "." in a and rec.epoch_frac is None:
                rec.epoch_frac = _taken(vm, ga, float)
            if n is None:
                continue
            n, total = _taken(vm, ga, _count), None if total is None else _taken(vm, gb, _total)
            if fam == "epoch":
                if rec.epoch is None:
                    rec.epoch, rec.epochs_total = n, total
            elif fam == "rank":
                if rec.rank is None:
                    rec.rank = n
            elif fam == "steps_per_epoch" and b is None:
                rec.per_epoch = n
            elif fam == "steps_per_epoch":  # "Steps: [  1/196]": a step and its total, not a count
                if rec.step is None:
                    rec.step, rec.steps_total = n, total
            elif rec.step is None or (fam == "global_step" and not rec.global_step):
                rec.step, rec.steps_total, rec.global_step = n, total, fam == "global_step"
            continue
        graw = next((x for x in ("tv", "lv", "v") if vm.group(x)), None)
        raw = vm.group(graw) if graw else None
        if raw is None:
            continue
        value = _number(raw)
        if value is None:
            continue
        if fam in gr.skipped:
            continue  # True/False: read by the shapes that print it; a run's best / last loss; the time left
        unit = vm.group("punit") or vm.group("bunit") or vm.group("vunit") or vm.group("aunit")
        if unit is None and fam == "step_time" and re.match(r"(?i)m?s[ _\-.]?per", key):
            unit = key.split()[0][:2].rstrip(" _-.").lower() if key[:2].lower() == "ms" else "s"
        if fam in gr.time_families:
            if fam in gr.weak and unit is None and vm.group("v") is None:
                continue
            if unit is None and CLOCK_AFTER.match(text, vm.end()):
                continue  # "time: 2021-07-24 02:08:33", "time is 23 09:45:32": when, not how long
            if unit is None and fam == "step_time" and PER_ALONE.fullmatch(key):
                continue
            if unit is not None:
                value = _taken(vm, graw, float, gr.unit_si[unit.lower()])
            else:
                rec.unitless.append(len(rec.values))
                value = _taken(vm, graw, float, 1e-3)  # MindSpore's callbacks print ms; settled by evidence in textlog
            rec.values.append((gr.tag[fam], fam if fam in gr.weak else kspec, value))
            continue
        value = _taken(vm, graw, float)
        if fam == "loss_part" and not any(t == "loss" for t, _, _ in rec.values) and not _plain_loss_later(text, k_end, gr):
            fam, key = "loss", key  # no loss of its own: the first named loss is the line's (G_loss beside D_loss)
            rec.parts_only = True
        kind = _loss_kind(outer or key) if fam in ("loss", "eval_loss") else None
        if fam == "loss":
            if (EVAL_WORDS.search(text, 0, k_start) and not _train_word(text, k_start)) or EVAL_AFTER.search(text, k_end):
                fam = "eval_loss"
            else:
                rec.has_loss = True
                loss_kind = _best_loss(rec, "loss", kind, loss_kind, kspec, value)
                continue
        if fam == "eval_loss":  # ("rating loss | text loss | total loss on valid": one record, the total)
            rec.eval = True
            rec.has_loss = True
            eval_kind = _best_loss(rec, "eval_loss", kind, eval_kind, kspec, value)
            continue
        if fam == "loss_part":
            rec.values.append((_Part(gr.part_name(key)), kspec, value))  # (the name: of each line's key)
            continue
        if fam == "throughput":
            rec.values.append(("fps" if key.lower() == "fps" else "throughput", kspec, value))
            continue
        rec.values.append((gr.tag[fam], kspec, value))
    # (each pattern below only where its literal is: a full scan of the line costs more than the keys)
    low = text.lower()
    for rm in gr.rate_re.finditer(text) if any(h in low for h in gr.rate_hints) else ():
        tag = gr.rate_tag.get(rm.group("u").lower())
        value = _number(rm.group(1))
        if tag and value is not None and not any(t == tag for t, _, _ in rec.values):
            rec.values.append((tag, (*rm.span("u"), False), _taken(rm, 1, _per_step if rm.group("u").lower() in gr.per_step
                                                                      else float)))
    if not text.isascii():
        if rec.epoch is None and (zm := ZH_EPOCH_RE.search(text)):
            rec.epoch = _counted(zm, 1)
        if rec.step is None and (zm := ZH_STEP_RE.search(text)):
            rec.step = _counted(zm, 1)
    if rec.epoch is None and rec.step is None and text.lstrip()[:1].isdigit():
        if lm := LITE_STEP_RE.match(text):
            rec.epoch, rec.step = _counted(lm, 1), _counted(lm, 2)
    slash = "/" in text
    if slash and rec.step is None and rec.epoch is None and (dm := DOUBLE_PROGRESS_RE.search(text)):
        rec.epoch, rec.epochs_total = _counted(dm, 1), _counted(dm, 2)
        rec.step, rec.steps_total = _counted(dm, 3), _counted(dm, 4)
    tqdm_count = rec.step is None and "it [" in text and (tm := TQDM_COUNT_RE.search(text)) is not None
    if tqdm_count:
        rec.step = _counted(tm, 1)
    if slash and (rec.step is None or (tqdm_count and rec.epoch is None)):
        for bm in BARE_PROGRESS_RE.finditer(text):
            if not any(a <= bm.start() < b for a, b in taken):
                a, b = _counted(bm, 1 if bm.group(1) else 3), _counted(bm, 2 if bm.group(2) else 4)
                if tqdm_count:  # the bar counts the inner loop's steps: a bracket beside it is the outer loop, the epoch
                    rec.epoch, rec.epochs_total = a, b  # ("14it [00:11,  1.63it/s][1/200]  Loss_net:: 6.1110")
                else:
                    rec.step, rec.steps_total = a, b
                break
    glued = rec.step is None or rec.epoch is None
    for gm in SUFFIX_COUNTER_RE.finditer(text) if glued and "_" in text else ():
        n = _counted(gm, 2)
        if gm.group(1).lower() == "epoch":
            rec.epoch = n if rec.epoch is None else rec.epoch
        elif rec.step is None:
            rec.step = n
    for gm in GLUED_COUNTER_RE.finditer(text) if glued else ():
        n = _counted(gm, 1)
        if gm.group(2).lower().startswith("epoch") and rec.epoch is None:
            rec.epoch = n
        elif not gm.group(2).lower().startswith("epoch") and rec.step is None:
            rec.step = n
    if slash and not any(t == "step_time" for t, _, _ in rec.values) and (sm := gr.sec_per_it_re.search(text)):
        rec.values.append(("step_time", text[sm.end(1):sm.end()].strip(), _taken(sm, 1, float, gr.unit_si[sm.group(2).lower()])))
    _weak_after_strong(rec)
    if (rec.has_loss and rec.epoch is None and rec.step is None and "{" in text and EVAL_DICT.search(text)
            and any(t == "loss" for t, _, _ in rec.values)):
        rec.values = [("eval_loss" if t == "loss" else t, r, v) for t, r, v in rec.values]
        rec.eval = True  # a dict of metrics with no counter: an evaluation's result
    _summary_or_eval(text, rec)
    if rec.has_loss:
        rec.unread = _unread_keys(text, known + taken)
    if not rec.has_loss and not rec.loss_like:
        # a line with a step's time and no loss: the time of a record on a line beside it (textlog pairs them);
        # counters and no loss: maybe the first half of a record printed over two lines (logparse pairs them)
        if any(t == "step_time" and r != "time" for t, r, _ in rec.values):
            rec.time_line = True
            return rec
        return rec if rec.counters_only() else None
    return rec


# a key of a line's own, a separator and a number: "acc: 0.91", "EPS=4765.57" (never a path's "train.py:529")
ANY_KEY_RE = re.compile(r"(?<![\w.\-/])([A-Za-z][A-Za-z0-9_]*)['\"]?\s*(?::|=|\bis\b)\s*\[?\s*[-+]?\.?\d", re.ASCII)


def _per_step(text: str) -> float:
    """A rate of steps (tqdm's "3.40it/s") as the step's time."""
    x = float(text)
    return 1.0 / x if x > 0 else math.nan


def _unread_keys(text: str, spans: list[tuple[int, int]]) -> tuple[str, ...]:
    """The keys with a number after them that are none of the lexicon's and hold no value it read."""
    if ":" not in text and "=" not in text and " is " not in text:
        return ()
    out = []
    for km in ANY_KEY_RE.finditer(text):
        a, b = km.span(1)
        if not any(x < b and a < y for x, y in spans) and km.group(1) not in out:
            out.append(km.group(1))
    return tuple(out)


def _best_loss(rec: FieldRecord, tag: str, kind: int, best: int | None, kspec, value) -> int:
    """One ``tag`` a line: the best spelling's (_loss_kind: total, else the first plain one); the
    others are kept as ``tag``_avg, parts of it. The best kind so far, after this value."""
    if best is not None and kind >= best:
        rec.values.append((tag + "_avg", kspec, value))
        return best
    if best is not None:  # a better spelling of the loss: the one before is a part
        rec.values = [(t if t != tag else tag + "_avg", r, v) for t, r, v in rec.values]
    rec.values.append((tag, kspec, value))
    return kind


def _loss_kind(key: str) -> int:
    """The rank of a loss spelling: total 0 < plain 1 < a mean or running value 3."""
    low = key.lower()
    return (0 if low.startswith(("total", "overall")) else
            3 if low.startswith(("avg", "aver", "average", "mean", "running", "smooth", "epoch")) else 1)


def _summary_or_eval(text: str, rec: FieldRecord) -> None:
    """What the writer's own words say the line is, beyond its keys: a run's closing summary
    (a Trainer's train_runtime beside train_loss), or an evaluation's tqdm bar (an accuracy in
    its postfix, no learning rate, no "train")."""
    if not rec.has_loss or rec.eval:
        return
    if "_runtime" in text and any(k in text for k in RUN_SUMMARY_KEYS):
        rec.summary = True
        return
    if "=" in text and "/" in text and TQDM_METRIC_RE.search(text) and "train" not in text.lower() \
            and not any(t == "lr" for t, _, _ in rec.values):
        rec.values = [("eval_loss" if t == "loss" else t, r, v) for t, r, v in rec.values]
        rec.eval = True



def _weak_after_strong(rec: FieldRecord) -> None:
    """A time with no "step" in its key is not the step's time where a step-time key is on the line:
    "iter[56] cost: 8033.059, per step time: 143.447" (the cost is the epoch's). On a line of one
    epoch with no step it is the epoch's time: the model zoo's GAN Reporter prints "Epoch [1] total
    cost: 220538.81 ms, per step: 22053.88 ms, G_loss: 18.95" (its steps per epoch: their ratio)."""
    kinds = [t == "step_time" and (r == "time") for t, r, _ in rec.values]
    if not any(kinds) or not any(t == "step_time" and r != "time" for t, r, _ in rec.values):
        return
    if rec.epoch is not None and rec.step is None:
        rec.values = [("epoch_time", r, v) if weak else (t, r, v) for (t, r, v), weak in zip(rec.values, kinds)]
        rec.unitless = [j for j in rec.unitless if not kinds[j]]  # (the unit settled for step times only)
        return
    keep = [i for i, weak in enumerate(kinds) if not weak]
    rec.unitless = [keep.index(i) for i in rec.unitless if i in keep]
    rec.values = [rec.values[i] for i in keep]


def _plain_loss_later(text: str, at: int, gr: Grammar) -> bool:
    for _, _, fam in gr.keys(text, at):
        if fam == "loss":
            return True
    return False


def _train_word(text: str, at: int) -> bool:
    """'train' nearer the loss than the eval word: 'val acc 0.9, train loss 0.3' is training."""
    e = None
    for m in EVAL_WORDS.finditer(text, 0, at):
        e = m.end()
    t = text.lower().rfind("train", 0, at)
    return t >= 0 and (e is None or t > e)
