"""Shared by the reader tests that read a file two ways (a C fast path and its reference)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def assert_same_result(fast, ref) -> None:
    """Two ReadResults are the same: diagnostics, settings, every table, floats bit for bit
    (NaN equals NaN, -0.0 differs from 0.0)."""
    assert fast.diagnostics == ref.diagnostics
    assert fast.settings == ref.settings
    assert fast.tables.keys() == ref.tables.keys()
    for name, want in ref.tables.items():
        got = fast.tables[name]
        if want is None:
            assert got is None, name
            continue
        assert got.schema == want.schema and got.height == want.height, name
        for col, dtype in want.schema.items():
            a, b = got[col], want[col]
            if dtype == pl.Float64:
                assert a.is_null().equals(b.is_null()), (name, col)
                bits = lambda s: s.fill_null(0.0).to_numpy().view(np.int64)  # noqa: E731
                mismatch = np.flatnonzero(bits(a) != bits(b))
                assert mismatch.size == 0, (name, col, got[int(mismatch[0])].to_dicts(), want[int(mismatch[0])].to_dicts())
            else:
                assert a.equals(b, null_equal=True), (name, col)


@pytest.fixture
def same_result():
    return assert_same_result
