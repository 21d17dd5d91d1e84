"""The fixed-sample decision on one comparison: GateResult and regression_check (the gate's test, gate.py).

Fails only when the drop exceeds max_drop AND a one-sided paired sign-flip randomization test of "the candidate
is worse" gives p < alpha; the printed bound is that test inverted (resampling.drop_bound), so a FAIL's bound is
always above zero. Its error rate holds for ONE look: gate_looks.py counts the looks, confseq.py gives the
anytime alternative.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...statistics.intervals import Scores, align_scores, format_number, format_p, format_score, metric_label
from ...statistics.resampling import drop_bound

__all__ = ["QUESTION", "GateResult", "query_counts", "regression_check"]


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`regression_check`; ``reason`` is the line to print."""

    passed: bool
    drop: float  # baseline mean - candidate mean (> 0 means the candidate is worse)
    #: one-sided lower confidence bound (level 1 - alpha) of the drop, from the test the decision uses
    #: (resampling.drop_bound): > 0 exactly when p < alpha; -inf when no bound can be given
    bound: float
    p_value: float  # one-sided randomization p for "candidate is worse"
    reason: str
    n_queries: int = 0
    metric: str = ""
    max_drop: float = 0.0
    alpha: float = 0.05
    improved: int = 0  # queries the candidate scores higher than the baseline (as PyTerrier counts them)
    degraded: int = 0  # ... lower
    tied: int = 0  # ... exactly the same
    #: the two means on the compared queries, as `stats` prints them (format_score): what a reader of a FAIL
    #: wants beside the change
    mean_baseline: float = math.nan
    mean_candidate: float = math.nan
    #: which test decided: "fixed" (this one, valid for one look) or "anytime" (the confidence sequence, confseq.py)
    mode: str = "fixed"
    #: how many times this comparison (candidate, task, baseline) has been looked at, this look included (gate_looks.py)
    looks: int = 1


#: the question the gate's p-value and bound answer (stats asks another: two-sided, Holm over every pair)
QUESTION = "one-sided test: is the candidate worse?"


def _bound_text(bound: float, alpha: float) -> str:
    if not math.isfinite(bound):
        return "no one-sided bound: too few queries or resamples for this --alpha"
    return f"{1 - alpha:.0%} one-sided bound"


def query_counts(improved: int, degraded: int, tied: int) -> str:
    """``+12 improved, -30 degraded, 205 tied`` (queries; PyTerrier's wins/losses)."""
    return f"+{improved} improved, -{degraded} degraded, {tied} tied"


def regression_check(baseline: Scores, candidate: Scores, metric: str,
                     max_drop: float = 0.01, alpha: float = 0.05,
                     n_resamples: int = 10_000, seed: int = 0) -> GateResult:
    """Compare per-query scores of ``candidate`` against ``baseline`` (same queries; dicts or Series).

    Queries are aligned by id (inner join, warning if the sets differ). Fails
    only if drop > max_drop AND the one-sided paired randomization p < alpha. The printed bound is
    that test inverted (resampling.drop_bound), so a FAIL's bound is always above zero.
    """
    if max_drop < 0:
        raise ValueError("max_drop must be >= 0")
    x = align_scores({"baseline": baseline, "candidate": candidate}).x
    d = x[:, 0] - x[:, 1]
    n = d.size
    drop = float(d.mean())
    p, bound = drop_bound(d, alpha, n_resamples, seed)
    improved, degraded = int(np.count_nonzero(d < 0)), int(np.count_nonzero(d > 0))
    counts = query_counts(improved, degraded, n - improved - degraded)
    label = metric_label(metric)
    b_txt = _bound_text(bound, alpha)
    f3 = format_number  # 3 decimals, never "-0.000"
    least = f"at least {f3(bound)} ({b_txt})" if math.isfinite(bound) else b_txt
    too_big = drop > max_drop
    significant = p < alpha
    means = x.mean(axis=0)  # the same alignment and sum as stats' means (stats.mean_score)
    head = f"{label} {format_score(means[0])} → {format_score(means[1])}"
    if too_big and significant:
        passed = False
        reason = (f"FAIL: {head}, dropped by {f3(drop)} (> allowed {f3(max_drop)}), {least}; the drop is "
                  f"significant ({format_p(p)}, {QUESTION}); queries {counts}")
    elif too_big:
        passed = True
        reason = (f"PASS: {head}, drop {f3(drop)} exceeds {f3(max_drop)} but is not significant "
                  f"({format_p(p)}, {QUESTION}; the drop could be as small as "
                  + (f"{f3(bound)} ({b_txt})" if math.isfinite(bound) else f"any ({b_txt})")
                  + f"): could be noise; queries {counts}")
    elif drop > 0:
        passed = True
        reason = (f"PASS: {head}, drop {f3(drop)} is within the allowed {f3(max_drop)} "
                  f"({format_p(p)}, {QUESTION}; {least}); queries {counts}")
    elif not np.any(d != 0):  # nothing changed on any query: no test to speak of
        passed = True
        reason = f"PASS: {head}, did not drop (identical on every one of the {n} queries)"
    else:
        passed = True
        reason = (f"PASS: {head}, did not drop (change {f3(0.0 - drop, signed=True)}, {format_p(p)}, {QUESTION}); "
                  f"queries {counts}")
    return GateResult(passed=passed, drop=drop, bound=bound, p_value=float(p), reason=reason, n_queries=int(n),
                      metric=metric, max_drop=float(max_drop), alpha=float(alpha), improved=improved,
                      degraded=degraded, tied=n - improved - degraded, mean_baseline=float(means[0]),
                      mean_candidate=float(means[1]))
