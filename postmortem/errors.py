"""Expected failures. Each carries a stable slug and, where there is one, the path.

They are caught once, in ``cli.main``, and printed as one line: ``error[slug]: path: message``.
"""

from __future__ import annotations

from pathlib import Path


class PostmortemError(Exception):
    """A failure the user can act on; never shown as a traceback."""

    exit_code = 2

    def __init__(self, slug: str, message: str, path: str | Path | None = None):
        super().__init__(message)
        self.slug = slug
        self.message = message
        self.path = str(path) if path is not None else None

    def __reduce__(self):  # raised in a worker process, re-raised in the parent
        return type(self), (self.slug, self.message, self.path)

    def one_line(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"error[{self.slug}]: {where}{self.message}"


class InputError(PostmortemError):
    """The run folder, a baseline or a flag cannot be used."""


class OutputError(PostmortemError):
    """The report could not be written (disk full, permissions, archive conflict)."""
