"""Intervals for latency figures: a percentile bootstrap over the timed queries, and the paired difference.

A latency pass (runners/execution/measure/latency.py) stores one time per sampled query (`query_ms`: the fastest of its
repeats, less the null candidate's p50). A p50 or p95 over a dozen queries is itself uncertain, so every one gets a
percentile bootstrap interval with the query as the resampling unit, and a "cheaper" verdict compares two
candidates on the same queries of the same pass: the same resampled queries for both, the difference of their p50s
(`paired_difference`). numpy only; tests/test_latency_stats.py checks both against scipy.stats.bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

N_RESAMPLES = 4000
SEED = 0


def _indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n) query positions drawn with replacement (one reproducible stream per n)."""
    return np.random.default_rng([int(seed), 28, n]).integers(0, n, size=(n_resamples, n))


def _bounds(boots: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    lo, hi = np.percentile(boots, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def percentile_ci(times: Sequence[float], q: float, confidence: float = 0.95, n_resamples: int = N_RESAMPLES,
                  seed: int = SEED) -> tuple[float, float] | None:
    """Percentile-bootstrap interval of the q-th percentile of `times` (one per query); None under 2 queries."""
    x = np.asarray(times, dtype=float)
    if len(x) < 2:
        return None
    boots = np.percentile(x[_indices(len(x), n_resamples, seed)], q, axis=1)
    return _bounds(boots, confidence)


def paired_difference(a: Sequence[float], b: Sequence[float], q: float = 50, confidence: float = 0.95,
                      n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict[str, Any] | None:
    """The q-th percentile of `a` minus that of `b`, both timed on the same queries (same order), with its paired
    percentile-bootstrap interval: the same resampled queries for both. `significant`: the interval excludes 0."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or len(x) < 2:
        return None
    idx = _indices(len(x), n_resamples, seed)
    boots = np.percentile(x[idx], q, axis=1) - np.percentile(y[idx], q, axis=1)
    lo, hi = _bounds(boots, confidence)
    diff = float(np.percentile(x, q) - np.percentile(y, q))
    return {"diff": diff, "ci_low": lo, "ci_high": hi, "significant": bool(lo > 0 or hi < 0), "n": int(len(x))}
