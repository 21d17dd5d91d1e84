"""Agreement between raters on ordinal relevance grades: Cohen's kappa, Krippendorff's alpha, bootstrap CIs.

A small public module (numpy only) so every place that compares graders uses the same definitions: two
humans (`labels agreement`), a human and an LLM judge, a rater and the task's own labels. The formulas
are the textbook ones and are tested against scikit-learn's ``cohen_kappa_score`` and the ``krippendorff``
package to 1e-9 (tests/test_agreement.py); neither library is a runtime dependency.

* ``cohen_kappa``: chance-corrected agreement of two raters on the same items; ``weights="quadratic"``
  counts a 0-vs-2 disagreement four times a 0-vs-1 one (the grades are ordinal), as scikit-learn does
  (weights on the positions of the sorted labels).
* ``krippendorff_alpha_ordinal``: any number of raters, missing grades allowed (raters x items, NaN =
  not graded); items with fewer than two grades carry no information and are left out, as in the package.
* ``bootstrap_ci``: percentile interval over items (the unit a team would re-sample: the pairs it judged).
  A resample on which a statistic is undefined (e.g. every item graded 0 by both: kappa is 0/0) is dropped
  and counted rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["Weights", "confusion_matrix", "cohen_kappa", "krippendorff_alpha_ordinal", "bootstrap_ci", "Interval",
           "share_differing_by"]

Weights = Literal["linear", "quadratic"] | None


def _labels(a: np.ndarray, b: np.ndarray, labels: Sequence[int] | None) -> np.ndarray:
    return np.asarray(sorted(labels) if labels is not None else np.union1d(a, b))


def confusion_matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None) -> np.ndarray:
    """Counts C[i, j] of items rater A graded ``labels[i]`` and rater B graded ``labels[j]`` (rows: A)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"two equal-length grade vectors needed, got shapes {a.shape} and {b.shape}")
    lab = _labels(a, b, labels)
    ia, ib = np.searchsorted(lab, a), np.searchsorted(lab, b)
    if len(a) and ((ia >= len(lab)).any() or (ib >= len(lab)).any() or (lab[ia] != a).any() or (lab[ib] != b).any()):
        raise ValueError(f"a grade outside the labels {lab.tolist()}")
    out = np.zeros((len(lab), len(lab)), dtype=np.int64)
    np.add.at(out, (ia, ib), 1)
    return out


def _kappa_from_confusion(c: np.ndarray, weights: Weights) -> float:
    k = c.shape[0]
    n = c.sum()
    if n == 0:
        return float("nan")
    expected = np.outer(c.sum(axis=1), c.sum(axis=0)) / n
    idx = np.arange(k)
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights == "linear":
        w = np.abs(idx[:, None] - idx[None, :]).astype(float)
    elif weights == "quadratic":
        w = ((idx[:, None] - idx[None, :]) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    denom = float((w * expected).sum())
    if denom == 0.0:  # both raters used one and the same grade: agreement by chance is total, kappa undefined
        return float("nan")
    return 1.0 - float((w * c).sum()) / denom


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: Weights = None,
                labels: Sequence[int] | None = None) -> float:
    """Cohen's kappa of two raters' grades on the same items (NaN when undefined: one grade used by both)."""
    return _kappa_from_confusion(confusion_matrix(a, b, labels), weights)


def _ordinal_distances(n_v: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric: (sum of the marginals from c to k, minus half of both ends) squared."""
    cum = np.concatenate([[0.0], np.cumsum(n_v)])
    i = np.arange(len(n_v))
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    between = cum[hi + 1] - cum[lo]
    return (between - (n_v[lo] + n_v[hi]) / 2.0) ** 2


def krippendorff_alpha_ordinal(matrix: np.ndarray | Sequence[Sequence[float]],
                               value_domain: Sequence[int] | None = None) -> float:
    """Krippendorff's alpha, ordinal, of a raters x items matrix (NaN = that rater did not grade that item).

    ``value_domain``: the ordered grades (default: those that occur). NaN when fewer than two grades are
    pairable or every pairable grade is the same value (no variation: alpha is 0/0).
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a raters x items matrix needed, got shape {m.shape}")
    values = np.asarray(sorted(value_domain) if value_domain is not None else np.unique(m[~np.isnan(m)]), float)
    if len(values) == 0:
        return float("nan")
    counts = (m.T[..., None] == values[None, None, :]).sum(axis=1).astype(float)  # items x values
    m_u = counts.sum(axis=1)
    use = m_u >= 2
    counts, m_u = counts[use], m_u[use]
    if not len(counts):
        return float("nan")
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(len(values))[None]
    o = (pairs / (m_u - 1)[:, None, None]).sum(axis=0)  # coincidence matrix
    n_v = o.sum(axis=0)
    n = n_v.sum()
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n - 1)
    d = _ordinal_distances(n_v)
    expected = float((e * d).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - float((o * d).sum()) / expected


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile bootstrap interval over items."""

    estimate: float
    low: float
    high: float
    n_items: int
    n_resamples: int  # resamples on which the statistic was defined (the others are dropped)

    def as_dict(self) -> dict[str, float | int]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n_items": self.n_items,
                "n_resamples": self.n_resamples}


def bootstrap_ci(statistic: Callable[[np.ndarray], float], n_items: int, n_resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> Interval:
    """Percentile bootstrap over items: ``statistic(indices)`` on the full set and on ``n_resamples`` draws
    of ``n_items`` item indices with replacement. Undefined (NaN) resamples are dropped and counted."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    full = float(statistic(np.arange(n_items)))
    if n_items == 0:
        return Interval(full, float("nan"), float("nan"), 0, 0)
    rng = np.random.default_rng([int(seed), 31])
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    boot = np.array([statistic(idx) for idx in draws], dtype=float)
    boot = boot[~np.isnan(boot)]
    if not len(boot):
        return Interval(full, float("nan"), float("nan"), n_items, 0)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return Interval(full, float(low), float(high), n_items, int(len(boot)))


def share_differing_by(a: Sequence[int], b: Sequence[int], steps: int = 2) -> float:
    """Share of items on which two raters' grades differ by at least ``steps`` grades."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.mean(np.abs(a - b) >= steps)) if len(a) else float("nan")
