"""Bootstrap and sign-flip resampling: the matrices every interval and p-value is computed from.

All resampling is driven by two matrices that depend only on ``(n_queries, n_resamples, seed)``:
a bootstrap *counts* matrix and a random-sign matrix. Each candidate's / pair's numbers therefore
depend only on its own scores and the seed (adding a candidate changes nothing else), reruns are
bit-identical, and the heavy lifting is two matrix multiplies. Randomization p-values use the
(count + 1) / (n_resamples + 1) correction, so they are never 0 and stay valid (Phipson & Smyth 2010).

numpy only: scipy.special is imported inside the BCa branch, so `check` (percentile intervals)
starts without it.
"""
from __future__ import annotations

import math
import warnings
from typing import Literal, Sequence

import numpy as np

CIMethod = Literal["percentile", "bca"]

__all__ = ["CIMethod", "bootstrap_counts", "sign_flip_matrix", "ci_from_boot", "bootstrap_ci",
           "randomization_test", "drop_bound", "holm"]

# Two floats closer than this are treated as tied in the randomization test, so
# rounding noise in the matrix multiply cannot flip an exact tie (e.g. the
# identity permutation, or zero differences) into a "less extreme" outcome.
_TIE_TOL = 1e-9


def _rng(seed: int, stream: int) -> np.random.Generator:
    """Independent, reproducible stream per purpose (bootstrap vs sign flips)."""
    return np.random.default_rng([int(seed), stream])


def bootstrap_counts(n: int, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """(n_resamples, n) float64 matrix: how often each query is drawn per resample.

    ``counts @ X / n`` gives bootstrap means of every column of X at once, which
    is far faster than fancy-indexing an (n_resamples, n, k) cube.
    """
    idx = _rng(seed, 1).integers(0, n, size=(n_resamples, n), dtype=np.int32)
    flat = idx.astype(np.int64 if n_resamples * n >= 2**31 else np.int32)
    flat += (np.arange(n_resamples, dtype=flat.dtype) * n)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n).astype(np.float64)


def sign_flip_matrix(n: int, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """(n_resamples, n) matrix of random +-1: swaps of A/B labels per query.

    Under H0 (A and B exchangeable per query) each paired difference is equally
    likely to have either sign; ``signs @ D / n`` = permuted mean differences.
    """
    bits = _rng(seed, 2).integers(0, 2, size=(n_resamples, n), dtype=np.int8)
    return (1.0 - 2.0 * bits).astype(np.float64)


def as_2d(x: np.ndarray) -> np.ndarray:
    """(n,) -> (n, 1) float64, so one code path serves one column or many."""
    x = np.asarray(x, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def ci_from_boot(boot: np.ndarray, data: np.ndarray, confidence: float,
                 method: CIMethod) -> tuple[np.ndarray, np.ndarray]:
    """CI bounds per column from bootstrap means ``boot`` (B, k) of ``data`` (n, k).

    BCa follows Efron & Tibshirani (1993) eq. 14.10/14.15 as scipy does: z0 from
    the share of bootstrap means below the observed mean (ties count half),
    acceleration from the jackknife, which is closed-form for the mean.
    """
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    alpha = (1.0 - confidence) / 2.0
    k = data.shape[1]
    if method == "percentile":
        q = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
        return q[0], q[1]
    # lazy: only BCa needs the normal distribution; percentile callers (check) start without scipy
    from scipy.special import ndtr, ndtri

    n = data.shape[0]
    theta = data.mean(axis=0)
    low, high = np.empty(k), np.empty(k)
    for j in range(k):
        b = boot[:, j]
        if np.ptp(b) == 0 or n < 2:  # degenerate: no spread to correct
            low[j] = high[j] = theta[j]
            continue
        pct = (np.count_nonzero(b < theta[j]) + np.count_nonzero(b <= theta[j])) / (2 * b.size)
        z0 = ndtri(pct)
        jack = (data[:, j].sum() - data[:, j]) / (n - 1)  # leave-one-out means
        u = (n - 1) * (jack.mean() - jack)
        den = np.sum(u**2) ** 1.5
        a = np.sum(u**3) / (6.0 * den) if den > 0 else 0.0
        levels = []
        for z in (ndtri(alpha), -ndtri(alpha)):
            levels.append(ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z))))
        if not np.all(np.isfinite(levels)):
            warnings.warn("BCa undefined for this sample; using percentile interval",
                          UserWarning, stacklevel=3)
            levels = [alpha, 1.0 - alpha]
        low[j], high[j] = np.quantile(b, levels)
    return low, high


def bootstrap_ci(scores: np.ndarray | Sequence[float], n_resamples: int = 10_000,
                 confidence: float = 0.95, method: CIMethod = "percentile",
                 seed: int = 0) -> tuple[float, float, float]:
    """Bootstrap CI of the mean of per-query scores -> ``(mean, low, high)``.

    Uses the same counts matrix as ``ci_table``, so a candidate gets the
    same interval whether computed alone or in a table.
    """
    x = as_2d(np.asarray(scores, dtype=np.float64).ravel())
    if x.shape[0] == 0 or not np.all(np.isfinite(x)):
        raise ValueError("scores must be a non-empty array of finite numbers")
    boot = bootstrap_counts(x.shape[0], n_resamples, seed) @ x / x.shape[0]
    low, high = ci_from_boot(boot, x, confidence, method)
    return float(x.mean()), float(low[0]), float(high[0])


def randomization_test(diffs: np.ndarray, n_resamples: int = 10_000, seed: int = 0,
                       alternative: Literal["two-sided", "greater", "less"] = "two-sided",
                       ) -> np.ndarray:
    """Paired sign-flip randomization p-value(s) for mean(diffs) == 0.

    ``diffs`` is (n,) or (n, k) paired differences (one column per pair); all
    columns share one sign matrix (one matmul). p = (count + 1)/(n_resamples + 1)
    where count is the number of sign-flipped means at least as extreme as the
    observed one. Returns an array of shape (k,).
    """
    d = as_2d(diffs)
    n = d.shape[0]
    perm = sign_flip_matrix(n, n_resamples, seed) @ d / n
    obs = d.mean(axis=0)
    tol = _TIE_TOL * max(1.0, float(np.abs(d).max(initial=0.0)))
    if alternative == "two-sided":
        hits = np.abs(perm) >= np.abs(obs) - tol
    elif alternative == "greater":
        hits = perm >= obs - tol
    elif alternative == "less":
        hits = perm <= obs + tol
    else:
        raise ValueError(f"unknown alternative {alternative!r}")
    return (hits.sum(axis=0) + 1.0) / (n_resamples + 1.0)


def drop_bound(diffs: np.ndarray | Sequence[float], alpha: float = 0.05, n_resamples: int = 10_000,
               seed: int = 0) -> tuple[float, float]:
    """One-sided sign-flip test of "mean(diffs) <= 0" and its lower confidence bound -> ``(p, bound)``.

    The bound is the test inverted: the largest shift delta for which the same test on ``diffs - delta``
    (same sign matrix) still rejects at ``alpha``. For each sign row s, the shifted test counts s as at
    least as extreme exactly when delta >= t_s = (mean(d) - s.d/n - tol) / (1 - mean(s)), so p(delta) is
    a step function of delta and the bound is one of the t_s. p and the bound come from the same t_s,
    hence ``p < alpha`` exactly when ``bound > 0``: a gate that fails on p never prints a bound on the
    other side of zero. p equals ``randomization_test(diffs, alternative="greater")``; the bound is -inf
    when no shift can be rejected (too few resamples or queries for this alpha).
    """
    d = np.asarray(diffs, dtype=np.float64).ravel()
    n = d.size
    signs = sign_flip_matrix(n, n_resamples, seed)
    perm = signs @ d / n
    tol = _TIE_TOL * max(1.0, float(np.abs(d).max(initial=0.0)))
    slack = 1.0 - signs.mean(axis=1)  # 0 only for the all-plus row: as extreme as d itself at any shift
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(slack > 0, (d.mean() - perm - tol) / slack, -np.inf)
    p = (np.count_nonzero(t <= 0.0) + 1.0) / (n_resamples + 1.0)
    # the fewest hits at which the test no longer rejects: (h + 1) / (B + 1) >= alpha, the very comparison p faces
    not_rejected = (np.arange(n_resamples + 1) + 1.0) / (n_resamples + 1.0) >= alpha
    m = int(np.argmax(not_rejected))
    bound = float(np.sort(t)[m - 1]) if m > 0 else -math.inf
    return float(p), bound


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (controls family-wise error).

    Sorted ascending, p_(i) is multiplied by (m - i) (i from 0), then a running
    maximum enforces monotonicity and values are capped at 1. NaNs are ignored
    (not counted in m) and stay NaN.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out[order] = adj
    return out
