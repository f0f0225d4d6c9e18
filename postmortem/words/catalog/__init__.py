"""The catalogue: every word the documents show, English and Chinese side by side, in modules by area.

A module of this package holds ``TEMPLATES`` (sentences with typed placeholders, worded by
``words.render``) and / or ``LABELS`` (the static words of the documents, ``str.format`` strings shown
through ``words.Labels``), each ``key: (en, zh)``. Every module is found by itself: a new area is a new
module here, and no list names them. A key defined twice, in one table or across modules, is an error.
"""

from __future__ import annotations

import importlib
import pkgutil

TEMPLATES: dict[str, tuple[str, str]] = {}
LABELS: dict[str, tuple[str, str]] = {}


def _collect() -> None:
    seen: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for table, into in ((getattr(module, "TEMPLATES", {}), TEMPLATES), (getattr(module, "LABELS", {}), LABELS)):
            for key, pair in table.items():
                if key in seen:
                    raise ValueError(f"catalogue key {key!r} is defined twice ({seen[key]} and {info.name})")
                seen[key] = info.name
                into[key] = pair


_collect()
