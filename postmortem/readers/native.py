"""The readers' C fast paths (_framing.c, _scalars.c, _logscan.c), each optional at install.

Each has one plain Python reference next to it, which is both the path without a compiler and
the oracle the tests compare the C path with, bit for bit. POSTMORTEM_NO_C=1 (read when a reader
is first imported) makes the readers use the references even where the extensions are built.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def extension(name: str) -> ModuleType | None:
    """postmortem.readers.<name>, or None where it was not built or POSTMORTEM_NO_C is set."""
    if os.environ.get("POSTMORTEM_NO_C", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:  # built without a compiler
        return None
