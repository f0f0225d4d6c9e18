"""A sentence as data: a key and its parameters, worded per language only by ``words``.

Every layer (readers, loading, analysis) says what it has to say as a ``Text``; the catalogue
(``words/catalog/``) holds each key's template in English and Chinese, and ``words.render`` fills
in the parameters, formatted for the language (numbers, steps, durations, percentages through
``words/numbers.py``). A parameter is a number, a name (a path,
a tag, a setting's value: input data, shown as written), a list of them, an enum member, another
``Text`` (a clause that is itself worded per language) or None (unknown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
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


def jsonable(value: Any) -> Any:
    """Parameters as JSON: a nested Text as {key, params}, enums as their value, non-finite numbers as null."""
    if isinstance(value, Text):
        return {"key": value.key, "params": jsonable(value.params)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int):
        return value
    return str(value)


def from_jsonable(value: Any) -> Any:
    """The inverse of ``jsonable`` for parameters read back from an archive."""
    if isinstance(value, dict) and set(value) == {"key", "params"} and isinstance(value["params"], dict):
        return Text(str(value["key"]), **{k: from_jsonable(v) for k, v in value["params"].items()})
    if isinstance(value, dict):
        return {k: from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    return value
