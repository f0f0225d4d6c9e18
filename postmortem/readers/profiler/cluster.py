"""msprof-analyze cluster outputs (``cluster_analysis_output/``): one file for all ranks."""

from __future__ import annotations

from .common import Format

FORMATS: tuple[Format, ...] = ()
