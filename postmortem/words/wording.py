"""The one function that words a ``Text``: its key's template in the language, the parameters filled in.

Each key has an English and a Chinese template side by side (``key: (en, zh)``) in ``words.catalog``, in the module of
its area: ``diagnostics.py`` (the slugs of readers and loading), ``analysis.py`` (methods, reasons,
rules), ``checks.py`` (the configuration checks), ``findings.py``, ``triage.py`` (the profiler's verdicts, reasons and the
article's first moves), ``diagnosis.py`` (the verdict-first block). The Chinese follows the
vocabulary of the practitioner's article (稳态吞吐, 显存, 通信占比, 梯度范数; loss, token, step,
checkpoint as it writes them).

Placeholders are ``str.format`` fields whose format spec names how the value is written:
``{n:int}`` 12,345 · ``{s:step}`` · ``{x:pct}`` 12.3% (``pct0``: 12%, ``pctx``: 0.05% below 1%) · ``{t:dur}`` 1.20 s ·
``{v:num}`` 3 significant digits (``num4``: 4, ``numi``: whole numbers whole) · ``{v:loss}`` · ``{b:bytes}`` · ``{r:tps}`` tokens/s ·
``{f:flops}`` FLOP/s (``tflops``: a value in TFLOPS) · ``{v:si}`` 124M · ``{r:rel}`` +3.2% ·
``{r:x}`` 2.00× · ``{s:q}`` quoted as written · ``{v:v}`` a setting's value as a config writes it · ``{s:src}`` where a setting was read · ``{c:@prefix}`` the name of a code (the template or
label ``prefix + code``) · ``{n:int|step|steps}`` a count and its noun (English plurals) · ``{x:opt}`` nothing when None · ``{r:ranks}`` rank 1 / ranks 0, 2 (``Ranks`` at a sentence's start) · ``{r:rankset}`` ranks as ranges, readable at 1,024: ranks 512–519, ranks 1, 3, 5, …, 1,023 (``rankranges``: without the word).
Without a spec a number is written with ``numbers.number`` (integers with separators), a name as
it is. A list is written element by element and joined (``{xs:prod}``: with ×, ``{xs:semi}``: with semicolons); ``None`` is the missing mark; a nested
``Text`` is worded in the same language.
"""

from __future__ import annotations

import json
import string
from enum import Enum
from typing import Any

from ..text import Text
from . import numbers as fmt
from .catalog import LABELS, TEMPLATES


def label(key: str, lang: str, default: str | None = None) -> str:
    """A label in the language; a missing translation falls back to English, then to ``default`` or the key."""
    pair = LABELS.get(key)
    found = pair and (pair[1 if lang == "zh" else 0] or pair[0])
    return found or (default if default is not None else key)


def _quote(value: Any, lang: str) -> str:
    text = " ".join(str(value).split())
    return f"“{text}”" if lang == "zh" else f"'{text}'"


def setting_value(value: Any, lang: str = "en") -> str:
    """A setting's value as people write it in a config: 0.003, 4096, true, AdamWeightDecay."""
    if value is None:
        return fmt.MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple, dict)):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return text if len(text) <= 48 else text[:47] + "…"


def source_text(source: Any, lang: str = "en") -> str:
    """Where a setting was read: as written (config:<file>, lineage, log), a derived one worded."""
    text = str(source)
    if text.startswith("checkpoint:"):  # the model's shape from a checkpoint's tensors (load/checkpoints.py)
        rest = text[len("checkpoint:"):]
        return f"检查点张量 {rest}" if lang == "zh" else f"checkpoint tensors {rest}"
    if text.startswith("strategy:"):  # the layout an auto-parallel strategy file holds (load/strategy.py)
        rest = text[len("strategy:"):]
        return f"并行策略文件 {rest}" if lang == "zh" else f"strategy file {rest}"
    if text.startswith("derived:"):
        rest = text[len("derived:"):]
        if lang == "zh":  # the derivations the readers name in words (readers/callback.py, analysis/identity.py)
            for en, zh in _DERIVED_ZH:
                if rest.startswith(en):
                    rest = zh + rest[len(en):]
                    break
            return f"由 {rest} 推算"
        return f"derived from {rest}"
    return text


# The derivations a source names in English words (the rest, a file, is kept as written).
_DERIVED_ZH = (
    ("first batch", "首个 batch 的形状"),
    ("logged throughput × step time", "日志中的吞吐 × step 耗时"),
)


_SPECS = {
    "int": lambda v, lang: fmt.integer(v),
    "step": lambda v, lang: fmt.step(v),
    "pct": lambda v, lang: fmt.percent(v),
    "pct0": lambda v, lang: fmt.percent(v, 0),
    "pctx": lambda v, lang: fmt.percent(v, 2 if v is not None and 0 < abs(v) < 0.01 else 1),  # a tiny share keeps its digits
    "dur": lambda v, lang: fmt.duration(v),
    "num": lambda v, lang: fmt.number(v),
    "num4": lambda v, lang: fmt.number(v, 4),
    "numi": lambda v, lang: fmt.integer(v) if float(v).is_integer() else fmt.number(v),  # a count stays whole: 0 → 1, not 1.00
    "loss": lambda v, lang: fmt.loss(v),
    "bytes": lambda v, lang: fmt.bytes_(v),
    "tps": lambda v, lang: fmt.tokens_per_s(v),
    "sps": lambda v, lang: fmt.samples_per_s(v),
    "tokens": lambda v, lang: fmt.tokens(v),
    "flops": lambda v, lang: fmt.flops(v),
    "tflops": lambda v, lang: fmt.flops(v * 1e12),
    "si": lambda v, lang: fmt.si_count(v),
    "rel": lambda v, lang: fmt.rel_delta(v),
    "x": lambda v, lang: f"{fmt.number(v)}×",
    "q": _quote,
    "v": setting_value,
    "src": source_text,
}


_JOINS = {"prod": (" × ", " × "), "semi": ("; ", "；")}


def _ranks(value: Any, lang: str, capital: bool = False) -> str:
    """A rank or ranks: "rank 1", "ranks 0, 2"; "卡 1", "卡 0、2"."""
    ranks = list(value) if isinstance(value, (list, tuple)) else [value]
    joined = label("list_sep", lang).join(str(r) for r in ranks)
    if lang == "zh":
        return f"卡 {joined}"
    word = "rank" if len(ranks) == 1 else "ranks"
    return f"{word.capitalize() if capital else word} {joined}"


RANKSET_RUNS = 4  # runs of ranks written out before the rest is elided


def _rankset(value: Any, lang: str, capital: bool = False, bare: bool = False) -> str:
    """Ranks as ranges, readable at 1,024: "ranks 512–519", "ranks 1, 3, 5, …, 1,023" (a stride),
    "rank 7"; "卡 512–519"."""
    ranks = sorted({int(r) for r in (value if isinstance(value, (list, tuple, set)) else [value])})
    sep = label("list_sep", lang)
    runs: list[tuple[int, int]] = []
    for r in ranks:
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    steps = {b - a for a, b in zip(ranks, ranks[1:])}
    if len(ranks) > RANKSET_RUNS + 1 and len(steps) == 1 and steps != {1}:  # every k-th rank
        body = sep.join(fmt.integer(r) for r in ranks[:3]) + f"{sep}…{sep}" + fmt.integer(ranks[-1])
    else:
        parts = [fmt.integer(a) if a == b else f"{fmt.integer(a)}–{fmt.integer(b)}" for a, b in runs]
        if len(parts) > RANKSET_RUNS + 1:
            parts = [*parts[:RANKSET_RUNS], "…", parts[-1]]
        body = sep.join(parts)
    if bare:
        return body
    if lang == "zh":
        return f"卡 {body}"
    word = "rank" if len(ranks) == 1 else "ranks"
    return f"{word.capitalize() if capital else word} {body}"


def _default(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return fmt.integer(value)
    if isinstance(value, float):
        return fmt.number(value)
    return str(value)


class _Formatter(string.Formatter):
    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def format_field(self, value: Any, spec: str) -> str:
        if isinstance(value, Text):
            return render(value, self.lang)
        if spec in ("ranks", "Ranks"):
            return _ranks(value, self.lang, spec == "Ranks")
        if spec in ("rankset", "Rankset", "rankranges"):
            return _rankset(value, self.lang, spec == "Rankset", bare=spec == "rankranges")
        if isinstance(value, (list, tuple)):
            if spec in _JOINS:  # a list joined another way: a product, clauses
                sep, spec = _JOINS[spec][self.lang == "zh"], ""
            else:
                sep = label("list_sep", self.lang)
            return sep.join(self.format_field(v, spec) for v in value)
        if value is None:
            return "" if spec == "opt" else fmt.MISSING
        if spec == "opt":
            spec = ""
        if isinstance(value, Enum):
            value = value.value
        if spec.startswith("@"):
            return name(spec[1:], value, self.lang)
        if "|" in spec:
            how, one, many = spec.split("|")
            return f"{self.format_field(value, how)} {one if value == 1 else many}"
        if spec in _SPECS:
            return _SPECS[spec](value, self.lang)
        if not spec:
            return _default(value)
        return format(value, spec)


def template(key: str, lang: str) -> str | None:
    pair = TEMPLATES.get(key)
    return None if pair is None else pair[1 if lang == "zh" else 0]


def name(prefix: str, code: Any, lang: str) -> str:
    """A code's name in the language: the template ``prefix + code``, else the label, else the code."""
    key = f"{prefix}{code}"
    found = template(key, lang)
    if found is not None:
        return found
    return label(key, lang, str(code))


def render(text: Text | None, lang: str = "en") -> str:
    """The sentence in ``lang``. A key without a template, or parameters that do not fill it (an
    archive written by another version), give the English text it was archived with, else the key."""
    if text is None:
        return ""
    pattern = template(text.key, lang)
    if pattern is not None:
        try:
            return _Formatter(lang).vformat(pattern, (), text.params)
        except (KeyError, IndexError, ValueError, TypeError):
            pass
    message = text.params.get("message")
    return str(message) if message is not None else text.key


def english(text: Text | None) -> str:
    return render(text, "en")


def placeholders(pattern: str) -> list[tuple[str, str]]:
    """(name, spec) of every field of a template."""
    return sorted((f, s or "") for _, f, s, _ in string.Formatter().parse(pattern) if f is not None)
