"""CANN msprof ``PROF_*/`` folders (``device_N`` -> rank; ``mindstudio_profiler_output/``)."""

from __future__ import annotations

from .common import Format

FORMATS: tuple[Format, ...] = ()
