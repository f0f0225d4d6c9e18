"""A sentence as data: a key and its parameters, worded per language only in the report layer.

Every layer (readers, loading, analysis) says what it has to say as a ``Text``; the report's
catalogues (``report/catalog/``) hold each key's template in English and Chinese, and
``report.catalog.render`` fills in the parameters, formatted for the language (numbers, steps,
durations, percentages through ``report/format.py``). A parameter is a number, a name (a path,
a tag, a setting's value: input data, shown as written), a list of them, an enum member, another
``Text`` (a clause that is itself worded per language) or None (unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, init=False)
class Text:
    key: str
    params: dict[str, Any]

    def __init__(self, key: str, /, **params: Any) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "params", params)

    def __getstate__(self):  # pickled into and out of worker processes
        return (self.key, self.params)

    def __setstate__(self, state) -> None:
        object.__setattr__(self, "key", state[0])
        object.__setattr__(self, "params", state[1])

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Text({self.key!r}{args})"

    def with_params(self, **params: Any) -> Text:
        return Text(self.key, **{**self.params, **params})


def texts_in(value: Any):
    """Every ``Text`` inside a parameter value, nested ones too (for the catalogue checks)."""
    if isinstance(value, Text):
        yield value
        for v in value.params.values():
            yield from texts_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from texts_in(v)
