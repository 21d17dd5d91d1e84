"""Power of a test set: the smallest paired difference its queries can detect, and the line that says so.

Why a module of its own: every verdict of `stats`, `check` and the report ends with this resolution limit, and
it is computed from the same aligned scores as intervals.py (which it imports, never the other way round).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from .intervals import Aligned, format_number, metric_label

__all__ = ["min_detectable_difference", "power_warning", "power_line"]


def min_detectable_difference(diffs_or_std: float | np.ndarray | Sequence[float], n: int | None = None,
                              alpha: float = 0.05, power: float = 0.8,
                              dist: Literal["t", "z"] = "t") -> float:
    """Smallest true mean difference a two-sided paired test detects with ``power``.

    MDD = (q_{1-alpha/2} + q_{power}) * sd_diff / sqrt(n), the standard paired-t
    approximation. ``dist="t"`` (default) uses Student-t quantiles with n-1 df
    (slightly conservative for small n, within ~1% of the exact noncentral-t
    answer for n >= 30); ``dist="z"`` uses normal quantiles. Pass the per-query
    differences (sd taken with ddof=1, n defaults to their count) or an SD plus n.
    """
    from scipy.special import ndtri, stdtrit  # lazy, as in ttest_rel_p: = scipy.stats.{t,norm}.ppf

    if np.ndim(diffs_or_std) == 0:
        sd = float(diffs_or_std)  # type: ignore[arg-type]
        if n is None:
            raise ValueError("n is required when passing a standard deviation")
    else:
        arr = np.asarray(diffs_or_std, dtype=np.float64)
        n = arr.size if n is None else n
        sd = float(arr.std(ddof=1))
    if n < 2:
        raise ValueError("need at least 2 queries for a power calculation")
    if dist == "t":
        q = stdtrit(n - 1, 1 - alpha / 2) + stdtrit(n - 1, power)
    elif dist == "z":
        q = ndtri(1 - alpha / 2) + ndtri(power)
    else:
        raise ValueError(f"dist must be 't' or 'z', got {dist!r}")
    return float(q * sd / np.sqrt(n))


def power_warning(mdd: float, n: int, metric: str = "score", power: float = 0.8, pair: str = "") -> str:
    """One line for reports: the resolution limit of this test set (for `pair`, when named)."""
    between = f" between {pair}" if pair else ""
    return (f"with {n} queries, differences smaller than {format_number(mdd)} {metric_label(metric)}{between} "
            f"cannot be detected reliably ({power:.0%} power)")


def power_line(a: Aligned, metric: str = "score", alpha: float = 0.05, power: float = 0.8,
               dist: Literal["t", "z"] = "t") -> tuple[float, str]:
    """MDD for this test set and its warning line -> ``(mdd, text)``, naming the pair it is for.

    With >= 2 candidates: the SD of the per-query differences of the best candidate and the runner-up (by
    mean, ties in input order: the pair `best_sentence` tests). Why that pair, named: the SD depends on which
    two are compared, and a figure pooled over every pair changed with the candidate set without saying which
    comparison it held for. With one candidate only its per-query SD is available: a rough proxy for the SD
    of differences (exact when two systems' scores correlate at 0.5), said as such.
    """
    x = np.asfortranarray(a.x)
    n = len(a.ids)
    if x.shape[1] >= 2:
        i, j = (int(k) for k in np.argsort(-x.mean(axis=0), kind="stable")[:2])
        sd = float((x[:, i] - x[:, j]).std(ddof=1))
        pair = f"{a.names[i]} and {a.names[j]} (the best and the runner-up)"
        if sd == 0 and not np.any(x[:, i] != x[:, j]):
            return 0.0, (f"with {n} queries: {a.names[i]} and {a.names[j]} (the best and the runner-up) score "
                         "the same on every query; there is no difference between them to detect")
    else:
        sd = float(x[:, 0].std(ddof=1))
        mdd = min_detectable_difference(sd, n, alpha, power, dist)
        return mdd, (power_warning(mdd, n, metric, power)
                     + f", judged from the spread of {a.names[0]} alone (no second candidate to pair it with)")
    mdd = min_detectable_difference(sd, n, alpha, power, dist)
    return mdd, power_warning(mdd, n, metric, power, pair)
