"""runners/labels/raters/agreement.py against independent implementations, imported only here: scikit-learn's
cohen_kappa_score and the `krippendorff` package, to 1e-9, on random grade sets with missing grades."""

from __future__ import annotations

import numpy as np
import pytest

from runners.labels.raters.agreement import (bootstrap_ci, cohen_kappa, confusion_matrix, krippendorff_alpha_ordinal,
                                             share_differing_by)

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")


def _pairs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 200))
    levels = int(rng.integers(2, 5))
    a = rng.integers(0, levels, n)
    noise = rng.integers(-1, 2, n) * (rng.random(n) < 0.4)
    return a, np.clip(a + noise, 0, levels - 1)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_scikit_learn(seed: int, weights: str | None) -> None:
    a, b = _pairs(seed)
    ours = cohen_kappa(a, b, weights=weights)
    theirs = sklearn_metrics.cohen_kappa_score(a, b, weights=weights)
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_kappa_with_an_unused_grade_matches_scikit_learn_with_labels() -> None:
    a, b = [0, 0, 2, 2, 0, 2], [0, 2, 2, 2, 0, 0]
    for w in (None, "quadratic"):
        assert cohen_kappa(a, b, w, labels=[0, 1, 2]) == pytest.approx(
            sklearn_metrics.cohen_kappa_score(a, b, weights=w, labels=[0, 1, 2]), abs=1e-9)


def test_confusion_matrix_equals_scikit_learn() -> None:
    a, b = _pairs(3)
    assert (confusion_matrix(a, b) == sklearn_metrics.confusion_matrix(a, b)).all()


@pytest.mark.parametrize("seed", range(25))
def test_alpha_equals_the_krippendorff_package(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    raters, items = int(rng.integers(2, 6)), int(rng.integers(5, 120))
    truth = rng.integers(0, 3, items)
    m = np.clip(truth[None, :] + rng.integers(-1, 2, (raters, items)) * (rng.random((raters, items)) < 0.3), 0, 2)
    m = m.astype(float)
    m[rng.random((raters, items)) < 0.35] = np.nan  # missing grades, some items with one grade only
    ours = krippendorff_alpha_ordinal(m)
    theirs = krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal")
    assert ours == pytest.approx(theirs, abs=1e-9)
    domain = [0, 1, 2, 3]  # a grade nobody used
    assert krippendorff_alpha_ordinal(m, domain) == pytest.approx(
        krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal", value_domain=domain), abs=1e-9)


def test_undefined_statistics_are_nan_not_numbers() -> None:
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert np.isnan(krippendorff_alpha_ordinal([[1, np.nan], [np.nan, 2]]))  # no item with two grades


def test_bootstrap_interval_brackets_the_estimate_and_is_reproducible() -> None:
    a, b = _pairs(7)
    stat = lambda idx: cohen_kappa(a[idx], b[idx], "quadratic")  # noqa: E731
    one, two = bootstrap_ci(stat, len(a), 500, seed=1), bootstrap_ci(stat, len(a), 500, seed=1)
    assert one == two
    assert one.low <= one.estimate <= one.high
    assert one.estimate == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b, weights="quadratic"), abs=1e-9)
    # the interval narrows with more items: the same disagreement rate on 4x the items
    big = bootstrap_ci(lambda idx: cohen_kappa(np.tile(a, 4)[idx], np.tile(b, 4)[idx], "quadratic"), 4 * len(a), 500)
    assert big.high - big.low < one.high - one.low


def test_undefined_resamples_are_dropped_and_counted() -> None:
    a = np.array([0] * 19 + [1])
    iv = bootstrap_ci(lambda idx: cohen_kappa(a[idx], a[idx]), len(a), 400, seed=0)
    assert iv.estimate == 1.0
    assert 0 < iv.n_resamples < 400  # resamples without the single 1 are undefined


def test_share_differing_by_two_grades() -> None:
    assert share_differing_by([0, 2, 1, 2], [2, 2, 0, 0]) == 0.5
