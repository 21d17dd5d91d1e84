"""The prediction-powered estimators (runners/statistics/prediction_powered.py) against ppi-python, their reference
implementation (imported here only: it pulls numba), and the human-only interval against statsmodels."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ppi_reference import ppi_reference
from runners.statistics.prediction_powered import (PPIEstimate, clt_doubtful, ppi_mean, ppi_paired_difference,
                                                   projected_half_widths, questions_to_resolve, tuned_lambda)

ppi = ppi_reference()


def _metric_like(rng: np.random.Generator, size: int) -> np.ndarray:
    """Per-question nDCG-like scores: a pile at 0, a pile at 1, the rest in between."""
    u = rng.random(size)
    return np.where(u < 0.25, 0.0, np.where(u > 0.8, 1.0, rng.random(size)))


def _judged(rng: np.random.Generator, n: int, n_u: int, noise: float, bias: float = 0.1):
    """(Y, Yhat) for n labelled and Yhat for n_u unlabelled questions: a judge that is noisy and biased upwards."""
    y = _metric_like(rng, n + n_u)
    yhat = np.clip(y + bias + noise * rng.standard_normal(n + n_u), 0, 1)
    return y[:n], yhat[:n], yhat[n:]


CASES = [(30, 300, 0.1), (60, 1000, 0.3), (100, 200, 0.05), (12, 40, 1.0), (200, 50, 0.2)]


@pytest.mark.parametrize("n,n_u,noise", CASES)
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_mean_equals_ppi_python(n: int, n_u: int, noise: float, lam: float | None) -> None:
    """Point estimate and interval equal ppi_mean_pointestimate / ppi_mean_ci, tuned and fixed lam, to 1e-9."""
    y, yhat, yhat_u = _judged(np.random.default_rng(n * 7 + n_u), n, n_u, noise)
    for alpha in (0.05, 0.1):
        est = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=lam, method="clt")
        ref_point = float(np.asarray(ppi.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)).reshape(-1)[0])
        ref_low, ref_high = (float(np.asarray(v).reshape(-1)[0])
                             for v in ppi.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam))
        assert est.estimate == pytest.approx(ref_point, abs=1e-9)
        assert est.low == pytest.approx(ref_low, abs=1e-9)
        assert est.high == pytest.approx(ref_high, abs=1e-9)
        assert est.method == "clt" and est.n_labelled == n and est.n_unlabelled == n_u
    if lam is not None:
        assert est.lam == lam and not est.tuned
    else:
        assert 0.0 <= est.lam <= 1.0 and est.tuned
        assert est.lam == pytest.approx(tuned_lambda(y, yhat, yhat_u), abs=0)
    assert est.rectifier_sd == pytest.approx(float(np.std(y - est.lam * yhat)), abs=1e-12)


@pytest.mark.parametrize("n,n_u,noise", CASES)
@pytest.mark.parametrize("lam", [None, 1.0])
def test_paired_difference_equals_ppi_python(n: int, n_u: int, noise: float, lam: float | None) -> None:
    """PPI on per-question differences equals ppi-python run on the differences (lam tuned for the difference)."""
    rng = np.random.default_rng(n + 3 * n_u)
    ya, yhat_a, yhat_a_u = _judged(rng, n, n_u, noise)
    yb, yhat_b, yhat_b_u = _judged(rng, n, n_u, noise, bias=0.2)
    est = ppi_paired_difference(ya, yb, yhat_a, yhat_b, yhat_a_u, yhat_b_u, lam=lam, method="clt")
    d, dhat, dhat_u = ya - yb, yhat_a - yhat_b, yhat_a_u - yhat_b_u
    ref_point = float(np.asarray(ppi.ppi_mean_pointestimate(d, dhat, dhat_u, lam=lam)).reshape(-1)[0])
    ref_low, ref_high = (float(np.asarray(v).reshape(-1)[0]) for v in ppi.ppi_mean_ci(d, dhat, dhat_u, alpha=0.05,
                                                                                       lam=lam))
    assert (est.estimate, est.low, est.high) == pytest.approx((ref_point, ref_low, ref_high), abs=1e-9)
    # the human-only figure is the paired mean of the labelled differences
    assert est.human_only[0] == pytest.approx(float(np.mean(d)), abs=1e-12)


def test_human_and_llm_only_equal_statsmodels_and_ppi_classical() -> None:
    """The human-only interval is the classical CLT interval of the labelled sample (ppi-python's lam=0 and
    classical_mean_ci; statsmodels' z interval with the same sd), the LLM-only one the same over all N predictions."""
    from ppi_py.baselines import classical_mean_ci
    from statsmodels.stats.weightstats import _zconfint_generic

    y, yhat, yhat_u = _judged(np.random.default_rng(5), 50, 400, 0.2)
    est = ppi_mean(y, yhat, yhat_u, alpha=0.05, method="clt")
    mean, low, high = est.human_only
    assert mean == pytest.approx(float(y.mean()), abs=1e-12)
    assert (low, high) == pytest.approx(tuple(map(float, classical_mean_ci(y, alpha=0.05))), abs=1e-9)
    assert (low, high) == pytest.approx(_zconfint_generic(y.mean(), y.std() / math.sqrt(y.size), 0.05,
                                                          "two-sided"), abs=1e-9)
    zero = ppi_mean(y, yhat, yhat_u, lam=0.0, method="clt")
    assert (zero.estimate, zero.low, zero.high) == pytest.approx(est.human_only, abs=1e-12)
    everything = np.concatenate([yhat, yhat_u])
    assert est.llm_only == pytest.approx((float(everything.mean()), *map(float, classical_mean_ci(everything,
                                                                                                   alpha=0.05))),
                                         abs=1e-9)


def _welch_t(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lam: float, ddof: int, slope_var: float,
             alpha: float = 0.05) -> tuple[float, float]:
    """The t interval written out from its definition with scipy's t quantile (the test's own arithmetic)."""
    from scipy.stats import t

    n, n_u = y.size, yhat_u.size
    v1 = np.sum((y - lam * yhat - np.mean(y - lam * yhat)) ** 2) / (n - ddof) / n + slope_var
    v2 = lam ** 2 * np.sum((yhat_u - yhat_u.mean()) ** 2) / (n_u - 1) / n_u
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n - ddof) + v2 ** 2 / (n_u - 1))
    point = np.mean(y - lam * yhat) + lam * yhat_u.mean()
    half = t.ppf(1 - alpha / 2, df) * math.sqrt(v1 + v2)
    return point - half, point + half


@pytest.mark.parametrize("n,n_u,noise", CASES[:4])
def test_t_interval_is_welch_t_on_the_reference_estimate(n: int, n_u: int, noise: float) -> None:
    """method "t" (the default, "auto"): the point is ppi-python's, the interval Student t with Welch-Satterthwaite
    df (scipy's quantile); a fixed lam: divisor n - 1, no slope term; lam 0 and the human-only / LLM-only figures:
    statsmodels' one-sample t interval."""
    from statsmodels.stats.weightstats import DescrStatsW

    y, yhat, yhat_u = _judged(np.random.default_rng(n * 7 + n_u), n, n_u, noise)
    for alpha in (0.05, 0.1):
        fixed = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=0.4)
        assert fixed.method == "t"
        ref_point = float(np.asarray(ppi.ppi_mean_pointestimate(y, yhat, yhat_u, lam=0.4)).reshape(-1)[0])
        assert fixed.estimate == pytest.approx(ref_point, abs=1e-12)
        assert (fixed.low, fixed.high) == pytest.approx(_welch_t(y, yhat, yhat_u, 0.4, 1, 0.0, alpha), abs=1e-12)
        zero = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=0.0)
        tconf = DescrStatsW(y).tconfint_mean(alpha)
        assert (zero.low, zero.high) == pytest.approx(tconf, abs=1e-12)
        assert zero.human_only[1:] == pytest.approx(tconf, abs=1e-12)
        assert fixed.llm_only[1:] == pytest.approx(DescrStatsW(np.concatenate([yhat, yhat_u])).tconfint_mean(alpha),
                                                   abs=1e-12)
        tuned = ppi_mean(y, yhat, yhat_u, alpha=alpha)
        ref_point = float(np.asarray(ppi.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)).reshape(-1)[0])
        assert tuned.estimate == pytest.approx(ref_point, abs=1e-9) and tuned.tuned
        lam = tuned.lam
        if lam > 0:
            cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
            denominator = (1 + n / n_u) * np.var(np.concatenate([yhat, yhat_u]), ddof=1)
            s2e = np.sum((y - lam * yhat - np.mean(y - lam * yhat)) ** 2) / (n - 2)
            # lam = cov / denominator; cov's variance given the predictions is s2e * Sxx / n^2
            slope_var = s2e * np.sum((yhat - yhat.mean()) ** 2) / n ** 2 / denominator ** 2
            assert lam == pytest.approx(min(cov / denominator, 1.0), abs=1e-12)
            gap = yhat.mean() - yhat_u.mean()
            assert (tuned.low, tuned.high) == pytest.approx(
                _welch_t(y, yhat, yhat_u, lam, 2, slope_var * gap ** 2, alpha), abs=1e-12)
        clt = ppi_mean(y, yhat, yhat_u, alpha=alpha, method="clt")
        assert tuned.high - tuned.low > clt.high - clt.low   # t, unbiased variances, the slope's error: wider


def test_t_slope_term_is_the_tuned_lambdas_variance() -> None:
    """The slope term's variance of the tuned lam, checked by simulation: the predictions held fixed, Y = 0.2 +
    0.5 Yhat + normal noise redrawn 4,000 times; the empirical variance of the tuned lam against the mean of the
    formula's estimate (within 10%). And the term vanishes when the judged and unjudged mean predictions agree."""
    from runners.statistics.prediction_powered import _lam_variance

    rng = np.random.default_rng(21)
    n, n_u = 30, 200
    yhat, yhat_u = rng.random(n), rng.random(n_u)
    lams, formula = [], []
    for _ in range(4000):
        y = 0.2 + 0.5 * yhat + 0.2 * rng.standard_normal(n)
        lam = tuned_lambda(y, yhat, yhat_u)
        assert 0 < lam < 1
        lams.append(lam)
        formula.append(_lam_variance(y, yhat, yhat_u, lam))
    assert np.mean(formula) == pytest.approx(np.var(lams), rel=0.1)
    y = 0.2 + 0.5 * yhat + 0.2 * rng.standard_normal(n)
    even = yhat_u - yhat_u.mean() + yhat.mean()     # no gap: the slope's error does not reach the estimate
    est = ppi_mean(y, yhat, even)
    assert (est.low, est.high) == pytest.approx(_welch_t(y, yhat, even, est.lam, 2, 0.0), abs=1e-12)


def test_t_projection_uses_t_divisors() -> None:
    """A "t" estimate is projected with the t interval's divisors and df: at 0 more questions its own half-width
    less the slope term (equal when the gap is 0), and never below the CLT projection."""
    rng = np.random.default_rng(8)
    y, yhat, yhat_u = _judged(rng, 40, 400, 0.15)
    even = yhat_u - yhat_u.mean() + yhat.mean()
    est = ppi_mean(y, yhat, even)
    assert est.method == "t" and projected_half_widths(est, [0])[0] == pytest.approx(est.half_width, rel=1e-9)
    est = ppi_mean(y, yhat, yhat_u)
    assert projected_half_widths(est, [0])[0] <= est.half_width
    clt = ppi_mean(y, yhat, yhat_u, method="clt")
    ks = [0, 5, 50, 399]
    assert np.all(projected_half_widths(est, ks) > projected_half_widths(clt, ks))
    # everything judged: the human-only t interval of all 440 questions, with the sample's variance
    from scipy.stats import t
    assert projected_half_widths(est, [400])[0] == pytest.approx(t.ppf(0.975, 439) * math.sqrt(np.var(y) / 439),
                                                                 rel=1e-9)


def test_good_judge_narrows_and_tuning_never_hurts() -> None:
    """A judge that tracks people narrows the interval well below the human-only one; a useless judge (noise
    unrelated to Y) gets lam near 0 and an interval no wider than human-only (plain PPI's would be wider)."""
    rng = np.random.default_rng(11)
    y, yhat, yhat_u = _judged(rng, 80, 2000, 0.05, bias=0.0)
    good = ppi_mean(y, yhat, yhat_u)
    assert good.width_ratio < 0.5 and good.lam > 0.8
    junk_lab, junk_unl = rng.random(80), rng.random(2000)
    bad = ppi_mean(y, junk_lab, junk_unl)
    plain = ppi_mean(y, junk_lab, junk_unl, lam=1.0)
    assert bad.lam < 0.3
    assert bad.width_ratio < 1.02
    assert plain.width_ratio > bad.width_ratio


def test_bootstrap_close_to_clt_when_clt_holds_and_auto_is_t() -> None:
    """The bootstrap (BCa, same lam) agrees with the CLT interval on a large, mildly skewed sample; "auto" is the t
    interval, small sample or large; ``clt_doubtful`` flags a small or very skewed sample (Cochran's rule)."""
    y, yhat, yhat_u = _judged(np.random.default_rng(2), 300, 3000, 0.2)
    clt = ppi_mean(y, yhat, yhat_u, method="clt")
    boot = ppi_mean(y, yhat, yhat_u, method="bootstrap", resamples=4000, seed=1)
    assert boot.method == "bootstrap" and boot.lam == clt.lam and boot.estimate == clt.estimate
    assert boot.low == pytest.approx(clt.low, abs=0.1 * clt.half_width)
    assert boot.high == pytest.approx(clt.high, abs=0.1 * clt.half_width)
    assert ppi_mean(y, yhat, yhat_u, method="auto").method == "t" == ppi_mean(y, yhat, yhat_u).method
    small = _judged(np.random.default_rng(3), 20, 300, 0.2)
    assert ppi_mean(*small).method == "t" and clt_doubtful(small[0] - 0.5 * small[1])
    skewed = np.zeros(60)
    skewed[:2] = 1.0   # two relevant hits among 60: skewness ~5.3, Cochran asks for n > 700
    assert clt_doubtful(skewed) and not clt_doubtful(np.random.default_rng(0).random(60))
    est = ppi_mean(skewed, skewed * 0.9, np.zeros(500), method="bootstrap", resamples=2000)
    assert est.low <= est.estimate <= est.high


def test_bootstrap_seeded() -> None:
    y, yhat, yhat_u = _judged(np.random.default_rng(4), 25, 200, 0.2)
    a = ppi_mean(y, yhat, yhat_u, method="bootstrap", resamples=2000, seed=7)
    b = ppi_mean(y, yhat, yhat_u, method="bootstrap", resamples=2000, seed=7)
    assert (a.low, a.high) == (b.low, b.high)


def test_projection_matches_variance_formula() -> None:
    """The projected half-width at 0 more questions is the estimate's own; at k more it is the PPI++ variance
    formula with n + k labelled, N_u - k unlabelled and lam re-tuned, written out here from ppi-python's pieces."""
    y, yhat, yhat_u = _judged(np.random.default_rng(8), 40, 400, 0.15)
    est = ppi_mean(y, yhat, yhat_u, method="clt")
    assert projected_half_widths(est, [0])[0] == pytest.approx(est.half_width, rel=1e-12)
    z = 1.959963984540054
    for k in (1, 10, 100, 399):
        n, n_u = 40 + k, 400 - k
        pooled_var = np.var(np.concatenate([yhat, yhat_u]), ddof=1)
        cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
        lam = min(max(cov / ((1 + n / n_u) * pooled_var), 0), 1)
        var = np.var(y - lam * yhat) / n + lam ** 2 * np.var(yhat_u) / n_u
        assert projected_half_widths(est, [k])[0] == pytest.approx(z * math.sqrt(var), rel=1e-9)
    # everything judged: the human-only interval of all N
    assert projected_half_widths(est, [400])[0] == pytest.approx(z * math.sqrt(np.var(y) / 440), rel=1e-12)
    widths = projected_half_widths(est, np.arange(401))
    assert np.all(np.diff(widths) <= 1e-12)   # judging more never widens it (lam re-tuned)


def _estimate(gap: float, rect_sd: float, n: int = 30, n_u: int = 500, lam: float | None = None) -> PPIEstimate:
    """A paired difference with mean ``gap`` whose rectifier has sd ``rect_sd`` (an exactly shaped sample)."""
    rng = np.random.default_rng(0)
    yhat_u = rng.standard_normal(n_u) * 0.1
    yhat = rng.standard_normal(n) * 0.1
    noise = rng.standard_normal(n)
    noise = (noise - noise.mean()) / noise.std()
    y = yhat + gap - yhat_u.mean() + rect_sd * noise   # plain PPI's estimate == gap exactly
    return ppi_mean(y, yhat, yhat_u, lam=lam)


def test_questions_to_resolve() -> None:
    """0 when already settled; more when the gap is smaller or the rectifier noisier; the answer is the first k
    where the projected half-width drops below the gap; None when even all questions would not do."""
    settled = _estimate(0.3, 0.2)
    assert settled.low > 0 and questions_to_resolve(settled) == 0
    counts = [questions_to_resolve(_estimate(gap, 0.3)) for gap in (0.1, 0.07, 0.05, 0.04)]
    assert all(c is not None for c in counts) and counts == sorted(counts) and counts[0] < counts[-1]
    by_sd = [questions_to_resolve(_estimate(0.06, sd)) for sd in (0.2, 0.3, 0.4)]
    assert all(c is not None for c in by_sd) and by_sd == sorted(by_sd) and by_sd[0] < by_sd[-1]
    est = _estimate(0.06, 0.3)
    k = questions_to_resolve(est)
    widths = projected_half_widths(est, [k - 1, k])
    assert widths[0] >= abs(est.estimate) > widths[1]
    assert questions_to_resolve(_estimate(0.001, 0.3)) is None
    assert questions_to_resolve(est, margin=est.estimate) is None
    # plain PPI (lam fixed at 1) is projected at lam 1: slower to resolve than the tuned estimate
    assert questions_to_resolve(_estimate(0.06, 0.3, lam=1.0)) > k
    # a margin other than 0: how many more before the mean is known to clear 0.5
    m = ppi_mean(np.full(30, 0.6) + np.linspace(-0.2, 0.2, 30), np.full(30, 0.6), np.full(300, 0.6), lam=1.0)
    assert questions_to_resolve(m, margin=0.5) == 0 and questions_to_resolve(m, margin=0.58) > 0


def test_bad_input_says_what() -> None:
    with pytest.raises(ValueError, match="both"):
        ppi_mean([0.1, 0.2, 0.3], [0.1, 0.2], [0.5])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([0.1], [0.1], [0.5, 0.2])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([0.1, math.nan], [0.1, 0.2], [0.5])
    with pytest.raises(ValueError, match="same questions"):
        ppi_paired_difference([1, 2], [1, 2], [1, 2], [1, 2], [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="method"):
        ppi_mean([0.1, 0.2], [0.1, 0.2], [0.5], method="exact")  # type: ignore[arg-type]


def test_no_unlabelled_question_is_human_only() -> None:
    """Every question judged: nothing to impute, lam is 0 and the estimate is the human sample's."""
    y = np.array([0.2, 0.5, 0.9, 0.4])
    est = ppi_mean(y, y + 0.1, [])
    assert est.lam == 0.0 and (est.estimate, est.low, est.high) == pytest.approx(est.human_only)
    assert questions_to_resolve(est, margin=0.0) == 0
