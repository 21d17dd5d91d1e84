"""An anytime-valid lower bound of the mean drop: a confidence sequence over the queries, however often looked at.

The fixed-sample gate (gate.regression_check) holds its 5% false-alarm rate for ONE look. Re-checked after every
batch of new questions, or re-run until it passes, the chance that some look raises a false alarm grows with the
number of looks. A confidence sequence (CS) is a sequence of intervals (L_t, inf) that holds for every t AT ONCE
with probability >= 1 - alpha, so a gate that fails when L_t > 0 keeps its error rate over any number of looks
(and any rule for when to stop looking).

Construction: the predictable plug-in empirical-Bernstein confidence sequence (PrPl-EB) of
Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 86(1), 2024,
Theorem 2 and eq. (13)-(15), one-sided (log(1/alpha) where the two-sided CS has log(2/alpha)), with the running
intersection (the bound at t is the largest L_s, s <= t: also a CS, Sec. 3 of the paper). For X_i in [0, 1]:

    mu_t = (1/2 + sum_{i<=t} X_i) / (t + 1)                 sigma2_t = (1/4 + sum_{i<=t} (X_i - mu_i)^2) / (t + 1)
    lambda_t = min(sqrt(2 log(1/alpha) / (sigma2_{t-1} t log(1 + t))), c)           (c = 1/2, mu_0 = 1/2, sigma2_0 = 1/4)
    v_t = 4 (X_t - mu_{t-1})^2                              psi_E(l) = (-log(1 - l) - l) / 4
    L_t = (sum lambda_i X_i - log(1/alpha) - sum v_i psi_E(lambda_i)) / sum lambda_i

Per-query differences of a metric in [0, 1] lie in [-1, 1]: X = (d + 1) / 2 and the drop's bound is 2 L - 1.
Empirical Bernstein adapts to the differences' variance (most queries tie or move little), which a Hoeffding CS
would not; it needs no resampling, so the same data give the same bound on every machine.

The order of the queries is part of the sequence and must not depend on their scores: `arrival_order` puts
the queries of earlier looks first, in the order they were first looked at (the order questions arrived), and
orders those new at a look by a seeded hash of their id (a fixed permutation that does not change when other
questions are added, unlike a permutation of the whole set). Pure numpy: analysis never imports torch.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["TRUNCATION", "arrival_order", "drop_lower_bounds", "lower_bounds", "queries_to_detect"]

#: c, the largest bet (the paper's suggestion, 1/2 or 3/4): a smaller c loses little power and keeps log(1 - l) tame
TRUNCATION = 0.5


def lower_bounds(x: np.ndarray, alpha: float, c: float = TRUNCATION) -> np.ndarray:
    """L_t for t = 1..n of X_i in [0, 1] (PrPl-EB, one-sided, running intersection): P(some L_t > mean) <= alpha."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or not x.size:
        return np.empty(0)
    if np.any((x < 0) | (x > 1)) or not np.all(np.isfinite(x)):
        raise ValueError("confidence sequence: observations must lie in [0, 1]")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    n = x.size
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(x)) / (t + 1)  # mu_t, t = 1..n
    mu_prev = np.concatenate(([0.5], mu[:-1]))  # mu_{t-1}
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    sigma2_prev = np.concatenate(([0.25], sigma2[:-1]))
    log_a = math.log(1 / alpha)
    lam = np.minimum(np.sqrt(2 * log_a / (sigma2_prev * t * np.log1p(t))), c)
    v = 4 * (x - mu_prev) ** 2
    psi = (-np.log1p(-lam) - lam) / 4
    lam_sum = np.cumsum(lam)
    low = (np.cumsum(lam * x) - log_a - np.cumsum(v * psi)) / lam_sum
    return np.maximum.accumulate(np.clip(low, 0.0, 1.0))


def drop_lower_bounds(d: np.ndarray, alpha: float, c: float = TRUNCATION) -> np.ndarray:
    """The anytime one-sided lower bounds (level 1 - alpha) of the mean of differences d in [-1, 1], in order."""
    d = np.asarray(d, dtype=float)
    if np.any(np.abs(d) > 1 + 1e-12):
        raise ValueError("confidence sequence: per-query differences must lie in [-1, 1] (a metric in [0, 1])")
    return 2 * lower_bounds(np.clip((d + 1) / 2, 0.0, 1.0), alpha, c) - 1


def _rank(qid: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()


def arrival_order(ids: Iterable[str], earlier: Sequence[str] = (), seed: int = 0) -> list[str]:
    """`ids` in sequence order: those in `earlier` (the queries of previous looks, in the order they arrived) first,
    then the new ones by sha256 of "seed:id" (fixed, reproducible, independent of the scores)."""
    wanted = set(ids)
    first = list(dict.fromkeys(q for q in earlier if q in wanted))
    seen = set(first)
    return first + sorted((q for q in wanted if q not in seen), key=lambda q: _rank(q, seed))


def queries_to_detect(d: np.ndarray, alpha: float, max_n: int, seed: int = 0, reps: int = 200) -> np.ndarray:
    """Per stream of `reps`: the number of queries until the anytime bound rises above zero (max_n + 1: not by
    max_n), for queries drawn with replacement from the differences `d` (seeded): the cost of validity."""
    rng = np.random.default_rng(seed)
    d = np.asarray(d, dtype=float)
    hits = []
    for _ in range(reps):
        low = drop_lower_bounds(rng.choice(d, size=max_n, replace=True), alpha)
        above = np.flatnonzero(low > 0)
        hits.append(int(above[0]) + 1 if above.size else max_n + 1)
    return np.array(hits)
