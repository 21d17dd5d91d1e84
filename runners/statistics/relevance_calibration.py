"""Calibrated relevance probabilities: P(human grade | LLM grade), learnt on the pairs people judged (issue 47).

The stopping rule (minimal test collections, Carterette et al. 2006) needs, for every pair nobody judged, the
probability that a person would call it relevant, and the probability of each grade (nDCG weighs a 2 above a 1).
The LLM's grade is the evidence; its meaning is learnt where both grades exist, since a judge's "1" may be a person's
"2" for one prompt and a person's "0" for another.

The model (why this one for a few hundred pairs): a multinomial logistic regression of the human grade on the LLM
grade **one-hot encoded**, with an L2 penalty on the coefficients and a free intercept per class.
* One-hot, not the grade as a number: nothing is assumed of the shape (no monotone or proportional-odds
  constraint that a judge with a useless middle grade would break); with three LLM grades and three human grades the
  model has six free parameters, and a few hundred pairs fill each cell with tens of observations.
* The L2 penalty shrinks each LLM grade's human-grade distribution towards the pooled one, in proportion to how few
  pairs that grade has: a grade the judge gave to 4 pairs, all 0 by people, gets a probability of relevance below
  the pooled rate but not 0, and a grade the judge never gave on the judged pairs gets the pooled rates exactly.
  Raw per-grade frequencies would give 0 and 1 probabilities on thin cells, which a stopping rule turns into
  certainty. ``C`` is scikit-learn's (inverse penalty strength; 1.0 by default, as theirs).
* The estimates are scikit-learn's ``LogisticRegression(C=C)`` on the same one-hot design (checked in the tests to
  1e-6), fitted here with scipy's L-BFGS so the product does not depend on scikit-learn.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

__all__ = ["RelevanceCalibration", "calibrate_relevance"]


@dataclass(frozen=True)
class RelevanceCalibration:
    """P(human grade | LLM grade) for every LLM grade of the scale, fitted on ``n_pairs`` human-judged pairs."""

    llm_grades: tuple[int, ...]                 # the LLM grades covered (the scale, whether seen or not)
    human_grades: tuple[int, ...]               # the human grades seen on the judged pairs (the classes)
    probabilities: dict[int, tuple[float, ...]] # LLM grade -> P(human grade = h) for h in human_grades
    counts: dict[tuple[int, int], int]          # (LLM grade, human grade) -> pairs
    n_pairs: int
    relevant_from: int = 1                      # a human grade >= this is "relevant"
    C: float = 1.0

    def p_grade(self, llm_grade: int, human_grade: int) -> float:
        """P(a person grades the pair ``human_grade`` | the LLM graded it ``llm_grade``); 0 for a grade never seen."""
        probs = self._row(llm_grade)
        return probs[self.human_grades.index(human_grade)] if human_grade in self.human_grades else 0.0

    def p_relevant(self, llm_grade: int) -> float:
        """P(a person grades the pair ``relevant_from`` or above | the LLM's grade)."""
        probs = self._row(llm_grade)
        return float(sum(p for h, p in zip(self.human_grades, probs) if h >= self.relevant_from))

    def expected_grade(self, llm_grade: int) -> float:
        """E[human grade | LLM grade]: the expected gain of the pair, for nDCG's graded gains."""
        return float(sum(h * p for h, p in zip(self.human_grades, self._row(llm_grade))))

    def _row(self, llm_grade: int) -> tuple[float, ...]:
        if llm_grade not in self.probabilities:
            raise KeyError(f"LLM grade {llm_grade} is outside the calibrated scale {list(self.llm_grades)}")
        return self.probabilities[llm_grade]

    def table(self) -> list[dict[str, float | int]]:
        """One row per LLM grade: its pairs, P(relevant) and P(each human grade) (for `labels status` and docs)."""
        rows: list[dict[str, float | int]] = []
        for g in self.llm_grades:
            row: dict[str, float | int] = {"llm_grade": g, "pairs": sum(c for (lg, _), c in self.counts.items()
                                                                          if lg == g),
                                           "p_relevant": self.p_relevant(g)}
            row.update({f"p_grade_{h}": p for h, p in zip(self.human_grades, self._row(g))})
            rows.append(row)
        return rows


def _fit_multinomial(counts: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    """Minimise sum_i -log softmax(W x_i + b)[y_i] + ||W||^2 / (2C), intercepts b unpenalised (scikit-learn's
    multinomial objective, its ``C``), for one-hot x_i: the loss depends on the pairs only through ``counts``
    [LLM grade j, human class h] (pairs with x_i = e_j and y_i = h), so it is summed over that table, not over the
    pairs: the same objective and optimum, with no per-pair matrix product (fast, and free of BLAS threading, which
    on a small problem costs more than the sums). L-BFGS on the exact gradient. Returns (W [classes x grades], b)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    n_grades, n_classes = counts.shape
    per_grade = counts.sum(axis=1)                              # pairs with each LLM grade

    def loss_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[: n_classes * n_grades].reshape(n_classes, n_grades)
        b = theta[n_classes * n_grades:]
        logits = w.T + b                                        # [grade j, class h]
        lse = logsumexp(logits, axis=1)
        loss = float(np.sum(per_grade * lse) - np.sum(counts * logits) + np.sum(w * w) / (2 * C))
        resid = per_grade[:, None] * np.exp(logits - lse[:, None]) - counts   # d loss / d logits, summed per grade
        grad_w = resid.T + w / C
        return loss, np.concatenate([grad_w.ravel(), resid.sum(axis=0)])

    res = minimize(loss_grad, np.zeros(n_classes * (n_grades + 1)), jac=True, method="L-BFGS-B",
                   options={"maxiter": 10_000, "gtol": 1e-11, "ftol": 1e-15})
    theta = res.x
    return theta[: n_classes * n_grades].reshape(n_classes, n_grades), theta[n_classes * n_grades:]


def calibrate_relevance(pairs: Iterable[tuple[int, int]], *, scale: Sequence[int] | None = None,
                        relevant_from: int = 1, C: float = 1.0) -> RelevanceCalibration:
    """Fit P(human grade | LLM grade) on ``pairs`` of (LLM grade, human grade), one per pair both judged.

    ``scale``: every LLM grade to give probabilities for (default: those seen); a grade never seen among the
    pairs gets the pooled distribution (the intercepts alone). Raises ValueError on no pairs, or a pair whose
    LLM grade is outside ``scale``.
    """
    data = [(int(g), int(h)) for g, h in pairs]
    if not data:
        raise ValueError("no pair carries both an LLM and a human grade: judge a sample by people first")
    if C <= 0:
        raise ValueError(f"C must be positive, got {C}")
    llm_grades = tuple(sorted(set(scale) if scale is not None else {g for g, _ in data}))
    outside = sorted({g for g, _ in data} - set(llm_grades))
    if outside:
        raise ValueError(f"LLM grade(s) {outside} outside the scale {list(llm_grades)}")
    human_grades = tuple(sorted({h for _, h in data}))
    counts = Counter(data)
    if len(human_grades) == 1:   # people gave one grade only: nothing to learn beyond it
        probs = {g: (1.0,) for g in llm_grades}
    else:
        col = {g: j for j, g in enumerate(llm_grades)}
        cls = {h: k for k, h in enumerate(human_grades)}
        table = np.zeros((len(llm_grades), len(human_grades)))
        for (g, h), c in counts.items():
            table[col[g], cls[h]] += c
        w, b = _fit_multinomial(table, C)
        logits = w.T + b                                        # row j: the logits for LLM grade llm_grades[j]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        probs = {g: tuple(float(v) for v in p[j]) for j, g in enumerate(llm_grades)}
    return RelevanceCalibration(llm_grades=llm_grades, human_grades=human_grades, probabilities=probs,
                                counts=dict(counts), n_pairs=len(data), relevant_from=relevant_from, C=C)
