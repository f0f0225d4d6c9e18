"""The labels of one language: the static words of every document (report, summary.md, archive index,
weekly digest, CLI line), looked up by key from ``words.catalog``."""

from __future__ import annotations

from .catalog import LABELS
from .wording import label, render

CATALOGS: dict[str, dict[str, str]] = {
    "en": {k: en for k, (en, _) in LABELS.items()},
    "zh": {k: zh for k, (_, zh) in LABELS.items()},
}
LANGS = tuple(CATALOGS)
HTML_LANG = {"en": "en", "zh": "zh-CN"}


class Labels:
    """Message catalog for one language; unknown keys fall back to English, then to the key."""

    def __init__(self, lang: str) -> None:
        if lang not in CATALOGS:
            raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
        self.lang = lang
        self.html_lang = HTML_LANG[lang]

    def __getitem__(self, key: str) -> str:
        return label(key, self.lang)

    def get(self, key: str, default: str | None = None) -> str:
        return label(key, self.lang, default)

    def name(self, prefix: str, code: object) -> str:
        """A code's name (an exclusion reason, a phase, an event kind...): `prefix + code` in the
        catalogue, else the code as written."""
        return self.get(f"{prefix}{code}", str(code))

    def fmt(self, key: str, /, **values: object) -> str:
        """The catalogue's sentence for `key` with its numbers filled in."""
        return self[key].format(**values)

    def join(self, items) -> str:
        return self["list_sep"].join(items)

    def text(self, text) -> str:
        """A ``Text`` (a sentence as data) in this language; "" for None."""
        return "" if text is None else render(text, self.lang)

    def sentence(self, text) -> str:
        """A Text as a sentence of its own: in English its first letter upper case."""
        s = self.text(text)
        first = s.split(" ", 1)[0]
        if self.lang != "en" or not s[:1].islower() or any(c in first for c in "_.=/"):  # a name (learning_rate) stays as written
            return s
        return s[:1].upper() + s[1:]


def labels(lang: str) -> Labels:
    return Labels(lang)
