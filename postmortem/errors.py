"""Expected failures. Each carries a stable slug, its parameters and, where there is one, the path.

They are caught once, in ``cli.main``, and printed as one line in the reader's language:
``error[slug]: path: message``. The message is a ``Text`` (key ``error.<slug>`` or
``error.<slug>/<variant>``), worded from ``words/catalog/errors.py`` like every other sentence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .text import Text


class PostmortemError(Exception):
    """A failure the user can act on; never shown as a traceback."""

    exit_code = 2

    def __init__(self, slug: str, path: str | Path | None = None, /, *, variant: str = "", **params: Any):
        self.slug = slug
        self.path = str(path) if path is not None else None
        self.variant = variant
        self.params = params
        super().__init__(slug)

    def __reduce__(self):  # raised in a helper process, re-raised in this one
        return _rebuild, (type(self), self.slug, self.path, self.variant, self.params)

    def __str__(self) -> str:
        return self.message

    @property
    def text(self) -> Text:
        return Text(f"error.{self.slug}" + (f"/{self.variant}" if self.variant else ""), **self.params)

    @property
    def message(self) -> str:
        """The sentence in English (logs, tests); the CLI words ``text`` in the reader's language."""
        return self.worded("en")

    def worded(self, lang: str) -> str:
        # Imported here, not above: the catalogue takes tens of ms to import, and the CLI starts
        # before anything fails. The layer contract lists this import as its one exception here.
        from .words import render

        return render(self.text, lang)

    def one_line(self, lang: str = "en") -> str:
        where = f"{self.path}: " if self.path else ""
        return f"error[{self.slug}]: {where}{self.worded(lang)}"


def _rebuild(kind: type, slug: str, path: str | None, variant: str, params: dict) -> PostmortemError:
    return kind(slug, path, variant=variant, **params)


class InputError(PostmortemError):
    """The run folder, a baseline or a flag cannot be used."""


class OutputError(PostmortemError):
    """The report could not be written (disk full, permissions, archive conflict)."""
