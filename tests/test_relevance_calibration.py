"""Calibrated relevance probabilities (runners/statistics/relevance_calibration.py) against scikit-learn's
LogisticRegression on the same one-hot design and penalty (imported here only)."""
from __future__ import annotations

import numpy as np
import pytest

from runners.statistics.relevance_calibration import calibrate_relevance

sklearn_lm = pytest.importorskip("sklearn.linear_model", reason="scikit-learn (the test extra) is the reference fit")


def _pairs(rng: np.random.Generator, n: int, confusion: np.ndarray) -> list[tuple[int, int]]:
    """(LLM grade, human grade) pairs: human grades drawn first, the LLM's from the row of ``confusion``."""
    human = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    llm = np.array([rng.choice(3, p=confusion[h]) for h in human])
    return list(zip(llm.tolist(), human.tolist()))


CONFUSION = np.array([[0.8, 0.15, 0.05], [0.3, 0.5, 0.2], [0.1, 0.3, 0.6]])


def _sklearn_probs(pairs: list[tuple[int, int]], scale: list[int], C: float) -> np.ndarray:
    """P(human grade | LLM grade) from scikit-learn's multinomial logistic regression, one-hot LLM grade."""
    x = np.zeros((len(pairs), len(scale)))
    x[np.arange(len(pairs)), [scale.index(g) for g, _ in pairs]] = 1.0
    y = np.array([h for _, h in pairs])
    model = sklearn_lm.LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(x, y)
    return model.predict_proba(np.eye(len(scale)))


@pytest.mark.parametrize("n,C,seed", [(60, 1.0, 0), (300, 1.0, 1), (300, 0.1, 2), (40, 10.0, 3)])
def test_equals_sklearn(n: int, C: float, seed: int) -> None:
    pairs = _pairs(np.random.default_rng(seed), n, CONFUSION)
    cal = calibrate_relevance(pairs, scale=[0, 1, 2], C=C)
    ref = _sklearn_probs(pairs, [0, 1, 2], C)
    assert cal.human_grades == (0, 1, 2) and cal.n_pairs == n
    for j, g in enumerate([0, 1, 2]):
        assert cal.probabilities[g] == pytest.approx(tuple(ref[j]), abs=1e-6)
        assert cal.p_relevant(g) == pytest.approx(ref[j, 1] + ref[j, 2], abs=1e-6)
        assert cal.p_grade(g, 2) == pytest.approx(ref[j, 2], abs=1e-6)
        assert cal.expected_grade(g) == pytest.approx(ref[j, 1] + 2 * ref[j, 2], abs=1e-6)


def test_small_case_by_hand_and_shrinkage() -> None:
    """A small case, checked against scikit-learn; a thin cell is shrunk towards the pooled rate, not to 0."""
    pairs = [(0, 0)] * 30 + [(0, 1)] * 3 + [(1, 0)] * 5 + [(1, 1)] * 6 + [(1, 2)] * 2 + [(2, 1)] * 2 + [(2, 2)] * 6
    pairs += [(3, 0)] * 2   # a grade the judge gave twice, both irrelevant to people
    cal = calibrate_relevance(pairs, scale=[0, 1, 2, 3])
    ref = _sklearn_probs(pairs, [0, 1, 2, 3], 1.0)
    for j in range(4):
        assert cal.probabilities[j] == pytest.approx(tuple(ref[j]), abs=1e-6)
    raw_3 = 0.0
    assert raw_3 < cal.p_relevant(3) < cal.p_relevant(0) + 0.2
    assert cal.p_relevant(0) < cal.p_relevant(1) < cal.p_relevant(2)
    assert cal.p_grade(2, 0) > 0  # never seen, still possible


def test_unseen_grade_gets_pooled_intercepts() -> None:
    """An LLM grade of the scale no judged pair carries gets the intercepts alone (scikit-learn's prediction for
    an all-zero row of the one-hot design)."""
    pairs = _pairs(np.random.default_rng(5), 200, CONFUSION)
    pairs = [(g, h) for g, h in pairs if g != 1]
    cal = calibrate_relevance(pairs, scale=[0, 1, 2])
    x = np.zeros((len(pairs), 3))
    x[np.arange(len(pairs)), [g for g, _ in pairs]] = 1.0
    model = sklearn_lm.LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000).fit(x, [h for _, h in pairs])
    assert cal.probabilities[1] == pytest.approx(tuple(model.predict_proba(np.zeros((1, 3)))[0]), abs=1e-6)
    assert cal.table()[1]["pairs"] == 0


def test_bad_input_and_degenerate() -> None:
    with pytest.raises(ValueError, match="judge a sample"):
        calibrate_relevance([])
    with pytest.raises(ValueError, match="outside the scale"):
        calibrate_relevance([(3, 1)], scale=[0, 1, 2])
    one = calibrate_relevance([(0, 0), (2, 0)], scale=[0, 1, 2])
    assert one.p_relevant(2) == 0.0 and one.p_grade(2, 0) == 1.0 and one.p_grade(2, 2) == 0.0
    with pytest.raises(KeyError, match="outside the calibrated scale"):
        one.p_relevant(5)
