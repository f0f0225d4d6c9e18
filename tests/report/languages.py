"""What a reader sees in a document, and the English words left in a Chinese one.

A Chinese document may keep the article's own Latin words (loss, token, step, checkpoint, MFU),
units and numbers, and what the run itself names (run ids, tags, files, settings); the analysis's
own sentences (findings, diagnostics, methods, rules) are translated by a later pass and are
taken out here by walking the analysis for its strings."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from typing import Any

import polars as pl

from postmortem.text import Text

# Latin words a Chinese reader sees in the article or in any Chinese tool: its terms, units, symbols.
ALLOWED = {
    "loss", "token", "tokens", "step", "steps", "checkpoint", "MFU", "FLOPs", "FLOP", "FLOPS", "TFLOPS", "GFLOPS",
    "PFLOPS", "batch", "size", "micro", "embedding", "Profiler", "NaN", "Inf", "NaN/Inf", "UTC", "ms", "µs", "s", "min",
    "h", "B", "KiB", "MiB", "GiB", "TiB", "k", "M", "G", "T", "P", "p10", "p50", "p90", "p99", "MAD", "n", "N", "z",
    "L", "H", "Q", "PaLM", "postmortem", "HTML", "metrics.json", "tokens/s", "samples/s", "steps/s", "W",
    # names of methods and tools the Chinese text cites as they are written
    "Tukey", "bootstrap", "msprof", "analyze", "max", "AllReduce", "MindSpore", "MindFormers", "MindInsight", "CANN",
    "BF16", "FP16", "FP32", "TopN", "callback", "summary", "lr", "warmup", "CPU", "GPU", "NPU", "Ascend", "JSON", "json",
    "host", "inf", "scale",  # the article's "host 侧", "inf 值", "loss scale"
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[./][A-Za-z0-9_]+)*")


class VisibleText(HTMLParser):
    """Text a reader sees (not scripts or styles), with tooltips and image descriptions."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        self.parts += [v for k, v in attrs if k in ("title", "aria-label", "alt") and v]

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    # paper's line-break helpers (html.breakable) are not text
    html = re.sub(r'<wbr>|<span class="nw">([^<]*)</span>', lambda m: m.group(1) or "", html)
    parser = VisibleText()
    parser.feed(html)
    return "\n".join(parser.parts)


def strings_of(obj: Any, out: set[str] | None = None, keys: bool = True) -> set[str]:
    """Every string in a value: dataclass fields, mappings (`keys`: their keys too), sequences
    (data frames: their text columns)."""
    out = set() if out is None else out
    if isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, Text):  # a sentence as data: its key and parameter names are not shown, its values are data
        strings_of(list(obj.params.values()), out, keys)
    elif isinstance(obj, pl.DataFrame):
        for name, dtype in obj.schema.items():
            if dtype == pl.Utf8:
                out.update(v for v in obj[name].unique().to_list() if v)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            strings_of(getattr(obj, f.name), out, keys)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if keys:
                strings_of(k, out, keys)
            strings_of(v, out, keys)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            strings_of(v, out, keys)
    return out


# Codes the analysis writes and the report names (phases, exclusion reasons, events, ...): their
# names are UI text, so they are never taken out as the run's own strings.
CODE_PREFIXES = ("phase_", "reason_", "event_", "recovery_", "triage_", "part_", "family_", "v_")


def codes() -> set[str]:
    from postmortem.words import CATALOGS

    return {k[len(p):] for k in CATALOGS["en"] for p in CODE_PREFIXES if k.startswith(p)}


def english_words(text: str, dynamic: set[str]) -> list[str]:
    """The Latin words of `text` once the run's own strings are taken out, less the allowed ones."""
    dynamic = dynamic - codes()
    for s in sorted((d for d in dynamic if len(d) > 1), key=len, reverse=True):
        if s in text:  # whole names only: a tag "at" leaves "batch" alone
            text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(s)}(?![A-Za-z0-9_])", " ", text)
    text = re.sub(r"(?<![A-Za-z0-9])--[a-z][a-z0-9-]*", " ", text)  # a command-line option is a name
    # an identifier (a metrics.json key, a setting, a file) is a name, not a word to translate
    return [w for w in _WORD.findall(text) if w not in ALLOWED and "_" not in w and "." not in w]


def chart_texts(spec: Any, out: list[str] | None = None) -> list[str]:
    """Titles (chart, axes, legends, tooltips) and the names a legend shows, of a Vega-Lite spec."""
    out = [] if out is None else out
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "title" and isinstance(value, str):
                out.append(value)
            elif key == "domain" and isinstance(value, list):
                out += [v for v in value if isinstance(v, str)]
            elif key in ("marker", "label", "phase", "reason", "recovery", "part") and isinstance(value, str):
                out.append(value)  # a data row's name that a tooltip shows
            else:
                chart_texts(value, out)
    elif isinstance(spec, list):
        for v in spec:
            chart_texts(v, out)
    return out
