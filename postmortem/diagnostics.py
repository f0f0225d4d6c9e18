"""Recoverable problems found while reading or analysing: shown in the report's data-quality section."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    slug: str  # stable identifier, e.g. "summary-truncated", "summary-crc", "log-conflict"
    message: str
    path: str | None = None  # relative to the run folder where possible
    offset: int | None = None  # byte offset (binary files) or line number (text files)

    def to_dict(self) -> dict:
        return {
            "severity": str(self.severity),
            "slug": self.slug,
            "message": self.message,
            "path": self.path,
            "offset": self.offset,
        }


def info(slug: str, message: str, path: str | None = None, offset: int | None = None) -> Diagnostic:
    return Diagnostic(Severity.INFO, slug, message, path, offset)


def warning(slug: str, message: str, path: str | None = None, offset: int | None = None) -> Diagnostic:
    return Diagnostic(Severity.WARNING, slug, message, path, offset)


def error(slug: str, message: str, path: str | None = None, offset: int | None = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, slug, message, path, offset)
