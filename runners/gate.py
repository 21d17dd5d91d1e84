"""Regression gate: should a candidate run block a merge/deploy vs. a baseline?

A gate that fails on every dip would fail on noise (a 300-query test set has
~0.01-0.03 of sampling noise on nDCG@10); a gate that ignores significance
would be flaky. So the gate fails ONLY when both hold:

1. the observed drop (baseline mean - candidate mean) is larger than
   ``max_drop`` (practically relevant), and
2. the drop is statistically significant: a ONE-SIDED paired sign-flip
   randomization test of H0 "mean(baseline - candidate) <= 0" gives p < alpha.
   (The decision uses this p-value; the bootstrap CI of the drop is reported
   for context only.)

Note that (2) tests drop > 0, not drop > max_drop: the margin is a
practical-relevance filter on the point estimate. All metrics are assumed
higher-is-better (true for nDCG, MRR, MAP, recall, precision).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from runners.stats import align, bootstrap_ci, metric_label, randomization_test

__all__ = ["GateResult", "regression_check"]


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`regression_check`; ``reason`` is the line to print."""

    passed: bool
    drop: float  # baseline mean - candidate mean (> 0 means the candidate is worse)
    ci: tuple[float, float]  # two-sided percentile bootstrap CI of the drop, level 1 - alpha
    p_value: float  # one-sided randomization p for "candidate is worse"
    reason: str
    n_queries: int = 0
    metric: str = ""
    max_drop: float = 0.0
    alpha: float = 0.05


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def regression_check(baseline: pd.Series, candidate: pd.Series, metric: str,
                     max_drop: float = 0.01, alpha: float = 0.05,
                     n_resamples: int = 10_000, seed: int = 0) -> GateResult:
    """Compare per-query scores of ``candidate`` against ``baseline`` (same queries).

    Queries are aligned by id (inner join, warning if the sets differ). Fails
    only if drop > max_drop AND the one-sided paired randomization p < alpha.
    """
    if max_drop < 0:
        raise ValueError("max_drop must be >= 0")
    df = align({"baseline": baseline, "candidate": candidate})
    d = (df["baseline"] - df["candidate"]).to_numpy()
    n = d.size
    drop, lo, hi = bootstrap_ci(d, n_resamples, 1.0 - alpha, "percentile", seed)
    p = float(randomization_test(d, n_resamples, seed, alternative="greater")[0])
    label = metric_label(metric)
    ci_txt = f"{1 - alpha:.0%} CI [{lo:.3f}, {hi:.3f}]"
    too_big = drop > max_drop
    significant = p < alpha
    if too_big and significant:
        passed = False
        reason = (f"FAIL: {label} dropped by {drop:.3f} (> allowed {max_drop:.3f}) and the "
                  f"drop is significant ({_p(p)}, {ci_txt})")
    elif too_big:
        passed = True
        reason = (f"PASS: {label} drop {drop:.3f} exceeds {max_drop:.3f} but is not "
                  f"significant ({_p(p)}, {ci_txt}): could be noise")
    elif drop > 0:
        passed = True
        reason = (f"PASS: {label} drop {drop:.3f} is within the allowed {max_drop:.3f} "
                  f"({_p(p)}, {ci_txt})")
    else:
        passed = True
        reason = f"PASS: {label} did not drop (change {0.0 - drop:+.3f}, {ci_txt} on the drop)"
    return GateResult(passed=passed, drop=float(drop), ci=(float(lo), float(hi)),
                      p_value=p, reason=reason, n_queries=int(n), metric=metric,
                      max_drop=float(max_drop), alpha=float(alpha))
