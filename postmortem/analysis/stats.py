"""Robust statistics shared by the analyzers (numpy, vectorised, seeded)."""

from __future__ import annotations

import numpy as np

from .types import RobustStats

MAD_SCALE = 1.4826  # MAD x 1.4826 estimates the standard deviation of a normal sample
BOOTSTRAP_CAP = 2000  # larger samples are bootstrapped on a seeded subsample of this size


def finite(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    return values[np.isfinite(values)]


def mad(values: np.ndarray) -> float:
    """Raw (unscaled) median absolute deviation; 0.0 for an empty sample."""
    if values.size == 0:
        return 0.0
    return float(np.median(np.abs(values - np.median(values))))


def trimmed_mean(values: np.ndarray, cut: float = 0.1) -> float:
    s = np.sort(values)
    k = int(len(s) * cut)
    return float(s[k : len(s) - k].mean()) if len(s) - 2 * k > 0 else float(s.mean())


def _subsample(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Bootstrapping 250k points 1000 times is too slow; a subsample only widens the interval.
    if values.size <= BOOTSTRAP_CAP:
        return values
    return rng.choice(values, size=BOOTSTRAP_CAP, replace=False)


def bootstrap_median_ci(values: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the median (seeded, so deterministic)."""
    rng = np.random.default_rng(seed)
    x = _subsample(values, rng)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    medians = np.median(x[idx], axis=1)
    lo, hi = np.percentile(medians, [2.5, 97.5])
    return float(lo), float(hi)


def bootstrap_median_diff_ci(
    current: np.ndarray, baseline: np.ndarray, resamples: int, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of median(current) - median(baseline)."""
    rng = np.random.default_rng(seed)
    a, b = _subsample(current, rng), _subsample(baseline, rng)
    ma = np.median(a[rng.integers(0, a.size, size=(resamples, a.size))], axis=1)
    mb = np.median(b[rng.integers(0, b.size, size=(resamples, b.size))], axis=1)
    lo, hi = np.percentile(ma - mb, [2.5, 97.5])
    return float(lo), float(hi)


def robust_stats(values: np.ndarray, resamples: int = 1000, seed: int = 0) -> RobustStats | None:
    x = finite(values)
    if x.size == 0:
        return None
    p10, q1, q3, p90, p99 = np.percentile(x, [10, 25, 75, 90, 99])
    lo, hi = bootstrap_median_ci(x, resamples, seed)
    return RobustStats(
        count=int(x.size),
        median=float(np.median(x)),
        trimmed_mean=trimmed_mean(x),
        mean=float(x.mean()),
        mad=mad(x),
        iqr=float(q3 - q1),
        p10=float(p10),
        p90=float(p90),
        p99=float(p99),
        min=float(x.min()),
        max=float(x.max()),
        median_ci_low=lo,
        median_ci_high=hi,
    )
