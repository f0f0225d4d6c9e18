"""Recoverable problems found while reading or analysing: shown in the report's data-quality section.

A diagnostic is data: its slug (stable, listed with its meaning in ``slugs.py``) names what
happened, ``params`` hold the numbers and names; the report words it per language from the
slug's template (``words/catalog/diagnostics.py``). A slug with several sentences names the one
meant by ``variant``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .text import Text


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    slug: str  # stable identifier, e.g. "summary-truncated", "summary-crc", "source-conflict"
    path: str | None = None  # relative to the run folder where possible
    offset: int | None = None  # byte offset (binary files) or line number (text files)
    params: dict[str, Any] = field(default_factory=dict)
    variant: str = ""  # which of the slug's sentences, where it has several

    def __hash__(self) -> int:  # the same problem reported twice is one (load dedupes); params hold lists
        return hash((self.severity, self.slug, self.path, self.offset, self.variant, repr(sorted(self.params.items()))))

    @property
    def key(self) -> str:
        return f"{self.slug}/{self.variant}" if self.variant else self.slug

    @property
    def text(self) -> Text:
        return Text(self.key, **self.params)

    @property
    def message(self) -> str:
        """The sentence in English (logs, tests); the report words ``text`` per language."""
        # Imported here, not above: the catalogue takes tens of ms to import, and a reader's worker
        # process never words. The layer contract lists this import as its one exception here.
        from .words import english

        return english(self.text)


def make(severity: Severity, slug: str, path: str | None, offset: int | None, variant: str, params: dict) -> Diagnostic:
    # operator.index: numpy integers are offsets too; a string (a message where the path was) is not
    return Diagnostic(Severity(severity), slug, path, None if offset is None else operator.index(offset), params, variant)


# Path and offset are keyword-only: a call written for the old (slug, message, path) signature
# fails at once instead of showing its message as a path.
def info(slug: str, *, path: str | None = None, offset: int | None = None, variant: str = "", **params: Any) -> Diagnostic:
    return make(Severity.INFO, slug, path, offset, variant, params)


def warning(slug: str, *, path: str | None = None, offset: int | None = None, variant: str = "", **params: Any) -> Diagnostic:
    return make(Severity.WARNING, slug, path, offset, variant, params)


def error(slug: str, *, path: str | None = None, offset: int | None = None, variant: str = "", **params: Any) -> Diagnostic:
    return make(Severity.ERROR, slug, path, offset, variant, params)
