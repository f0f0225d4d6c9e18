"""No share outside [0, 1] in any metrics.json (issue 22, item 4): the checker, and the session's
collector of every document the suite builds.

What counts as a share: every field named ``*_share`` (or ``share``), ``checkpoint_tax``, every
value of a profile breakdown's ``shares``, and the numbers (``current``, ``baseline``, ``value``,
``threshold``) of a diagnosis quantity or triage evidence whose ``key`` is a share. A delta's
``{"baseline", "current"}`` of a share figure (``baseline.deltas.checkpoint_tax``) is checked on
those two values (its delta and rel may be negative). MFU is not a share: above 100% it stays a
flagged figure (plausibility).

How the suite's documents are seen (``tests/conftest.py``): at session start ``to_metrics`` in
``postmortem/report/metrics_json.py`` - the one builder every writer and test calls, imported by
name only after the conftest has run - is wrapped so that every document it returns is kept; at
session end the kept documents and every ``metrics.json`` under the session's temporary folders
(those written by CLI subprocesses) are checked, and the session fails if one holds a share
outside [0, 1].
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

SHARE_KEYS = {"checkpoint_tax"}
QUANTITY_FIELDS = ("current", "baseline", "value", "threshold")


def is_share_key(key: str) -> bool:
    return key == "share" or key.endswith("_share") or key in SHARE_KEYS


def _bad(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and (math.isnan(x) or not 0.0 <= x <= 1.0)


def shares_outside(doc: Any, path: str = "") -> list[str]:
    """Every share of a metrics document outside [0, 1], as ``path = value``."""
    out: list[str] = []
    if isinstance(doc, dict):
        key_of_quantity = doc.get("key")
        if isinstance(key_of_quantity, str) and is_share_key(key_of_quantity):
            out += [f"{path}.{f} = {doc[f]!r} ({key_of_quantity})" for f in QUANTITY_FIELDS if _bad(doc.get(f))]
        for k, v in doc.items():
            here = f"{path}.{k}"
            if is_share_key(str(k)):
                if isinstance(v, dict):  # a delta of a share figure: its two values
                    out += [f"{here}.{f} = {v[f]!r}" for f in ("baseline", "current") if _bad(v.get(f))]
                elif _bad(v):
                    out.append(f"{here} = {v!r}")
            if k == "shares" and isinstance(v, dict):
                out += [f"{here}.{p} = {x!r}" for p, x in v.items() if _bad(x)]
            out += shares_outside(v, here)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += shares_outside(v, f"{path}[{i}]")
    return out


class Collector:
    """The documents the session built (in-process), and the folders to walk for written ones."""

    def __init__(self) -> None:
        self.documents: list[tuple[str, dict]] = []
        self.walked = 0

    def wrap(self, build):
        def to_metrics(*args, **kwargs):
            doc = build(*args, **kwargs)
            run = doc.get("run", {}).get("id") if isinstance(doc, dict) else None
            self.documents.append((f"to_metrics({run})", doc))
            return doc

        to_metrics.__wrapped__ = build
        to_metrics.__doc__ = build.__doc__
        return to_metrics

    def written(self, folders: list[Path]) -> list[tuple[str, dict]]:
        docs = []
        for folder in folders:
            for f in sorted(folder.rglob("metrics.json")) if folder.is_dir() else ():
                try:
                    docs.append((str(f), json.loads(f.read_text(encoding="utf-8"))))
                except (OSError, ValueError):
                    continue  # a test's deliberately broken file is not a document
        self.walked = len(docs)
        return docs

    def problems(self, folders: list[Path]) -> list[str]:
        out = []
        for name, doc in [*self.documents, *self.written(folders)]:
            out += [f"{name}: {x}" for x in shares_outside(doc)]
        return out


COLLECTOR = Collector()
