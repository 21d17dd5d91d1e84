"""Prediction-powered estimates of a mean and of a paired difference (PPI++, issue 47).

The setting: a test set of N questions; ``Y`` is a question's metric (nDCG@10, ...) under human grades, ``Yhat`` the
same metric under the LLM judge's grades. People judged every pooled pair of a random sample of n questions; the LLM
graded the pool of all N. The prediction-powered estimate (Angelopoulos et al., Science 2023; PPI++, Angelopoulos,
Duchi & Zrnic 2024) is

    theta = lam * mean(Yhat_unlabelled) + mean(Y - lam * Yhat)        (over the labelled sample)

unbiased whatever the judge's errors (the second term corrects them, measured where both grades exist), with a CLT
interval whose variance is ``var(Y - lam*Yhat)/n + lam^2 var(Yhat_unlabelled)/N_u``. ``lam`` is PPI++'s power tuning:
the variance-optimal weight, clipped to [0, 1]; 1 is plain PPI, 0 the human sample alone, so a judge that helps
narrows the interval and one that does not is switched off instead of widening it.

Which predictions are "unlabelled" (the convention of ``ppi_py.ppi_mean_ci``, whose numbers these equal): the
**N - n questions people did not judge**, not all N. ppi-python's variance adds the two parts as independent samples
(and its own examples split one data set into a labelled part and the rest), which holds exactly when the two sets
are disjoint. The estimand is the mean over the population the questions were drawn from (the same estimand as the
human-only interval and `stats`' per-question intervals); for the mean of the N questions themselves the interval is
conservative (its variance exceeds the sampling variance by var(Y)/N, see docs/statistics.md).

Small samples (``method="t"``, what the default "auto" uses at every n). ppi-python's CLT interval (``"clt"``, kept
and tested equal to it) uses z, variances with divisor n, and treats the tuned ``lam`` as known; at 30 judged
questions per-question nDCG@10 (piles at 0 and 1) left it covering 92-97% (benchmarks/bench_ppi.py). The "t"
interval is the regression estimator's small-sample interval (PPI++ with a tuned ``lam`` is that estimator): the
rectifier's variance with divisor n - 2 (n - 1 for a fixed ``lam``), the tuned ``lam``'s own error carried to the
gap between the judged and unjudged questions' mean prediction, Student t with Welch-Satterthwaite degrees of
freedom. Measured at 30 questions, every simulated judge, means and differences: 94-98% (docs/statistics.md has
the table); at 60 it is 3-4.5% wider than "clt" (the demo's draws) and converges to it. A BCa bootstrap did no better
(92-96% at 30, 89-94% on differences at 20); a studentized bootstrap over-covered means (13% wider than the
human-only CLT interval) and missed differences; Hall's (1992) skewness correction helped means and hurt
differences. Below 30 questions nothing measured reached 94% on the demo's means (the human-only t interval
included): plan at least 30.

Everything assumes the n questions were drawn at random (`labels plan` draws them, seeded) and that the LLM graded
every pooled pair of every question, sampled or not. Variances are ppi-python's (ddof 0; the pooled prediction
variance of the power tuning ddof 1), so the "clt" numbers match the reference to rounding. numpy only at import:
scipy is imported for the t quantile and the bootstrap alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, Sequence

import numpy as np

__all__ = ["PPIEstimate", "PPIMoments", "ppi_mean", "ppi_paired_difference", "questions_to_resolve",
           "clt_doubtful", "tuned_lambda", "projected_half_widths", "Method"]

#: "clt": ppi-python's normal interval; "t": the small-sample interval (``_t_interval``); "bootstrap": BCa;
#: "auto": "t" (measured below: it is the one that holds 94% at 30 questions)
Method = Literal["clt", "t", "bootstrap", "auto"]
#: below this many labelled questions ``clt_doubtful`` calls the normal approximation doubtful (the textbook rule).
#: It no longer picks the interval: benchmarks/bench_ppi.py (per-question nDCG@10, 30 questions) measured the CLT
#: interval at 92-97% coverage, the BCa bootstrap at 92-96% and at 20 questions 89-94% on differences, the "t"
#: interval at 94-98% (docs/statistics.md, docs/measured.md); it stays as a diagnostic
MIN_CLT_N = 30


@dataclass(frozen=True)
class PPIMoments:
    """The sample moments an estimate was made of (ddof 0 unless said): what ``questions_to_resolve`` projects from."""

    y_var: float                   # var(Y), labelled
    yhat_var: float                # var(Yhat), labelled
    cov: float                     # cov(Y, Yhat), labelled
    yhat_var_unlabelled: float     # var(Yhat), unlabelled
    yhat_var_pooled: float         # var(Yhat) over labelled + unlabelled, ddof 1 (the power tuning's denominator)


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate with the two figures it improves on, made from the same sample."""

    estimate: float          # prediction-powered point estimate of the mean of Y over the population
    low: float               # (1 - alpha) interval
    high: float
    lam: float               # the PPI++ power-tuning weight used (1.0 = plain PPI, 0.0 = human-only)
    n_labelled: int
    n_unlabelled: int
    human_only: tuple[float, float, float]   # (mean, low, high) of the labelled sample alone
    llm_only: tuple[float, float, float]     # (mean, low, high) of all N predictions as if they were truth
    rectifier_sd: float      # sd of Y - lam*Yhat on the labelled sample
    method: str              # "clt" or "bootstrap"
    alpha: float = 0.05
    tuned: bool = True       # lam was power-tuned (False: the caller fixed it)
    moments: PPIMoments | None = None

    @property
    def half_width(self) -> float:
        """Half the interval's width (the bootstrap's may be asymmetric: half its length)."""
        return (self.high - self.low) / 2

    @property
    def width_ratio(self) -> float:
        """This interval's width over the human-only interval's on the same sample (< 1: the judge helped)."""
        human = self.human_only[2] - self.human_only[1]
        return (self.high - self.low) / human if human > 0 else math.nan


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1 - alpha / 2)


def _as_vector(x: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds a missing or infinite value: every question needs a finite score")
    return arr


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s variance-optimal ``lam`` for a mean, clipped to [0, 1] (``ppi_py.ppi._calc_lam_glm``'s formula).

    ``cov(Y, Yhat) / ((1 + n/N_u) var(Yhat))``, the covariance on the labelled sample (ddof 0), the prediction
    variance over labelled and unlabelled together (ddof 1). No unlabelled question, or constant predictions: 0
    (the predictions can add nothing).
    """
    n, n_u = y.size, yhat_unlabelled.size
    pooled = np.concatenate([yhat, yhat_unlabelled])
    if n_u == 0 or pooled.size < 2:
        return 0.0
    var_pooled = float(np.var(pooled, ddof=1))
    if var_pooled <= 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    return float(np.clip(cov / ((1 + n / n_u) * var_pooled), 0.0, 1.0))


def _moments(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> PPIMoments:
    pooled = np.concatenate([yhat, yhat_u])
    return PPIMoments(
        y_var=float(np.var(y)), yhat_var=float(np.var(yhat)),
        cov=float(np.mean((y - y.mean()) * (yhat - yhat.mean()))),
        yhat_var_unlabelled=float(np.var(yhat_u)) if yhat_u.size else 0.0,
        yhat_var_pooled=float(np.var(pooled, ddof=1)) if pooled.size > 1 else 0.0)


def clt_doubtful(rectifier: np.ndarray) -> bool:
    """Whether the normal approximation of the rectifier's mean is doubtful: a diagnostic (``method="auto"`` used to
    bootstrap there; it now takes the "t" interval everywhere, which held its level where the bootstrap did not).

    Two rules: fewer than ``MIN_CLT_N`` (30) labelled questions, or Cochran's (1977) rule for a skewed variable,
    n <= 25 g1^2 with g1 the sample skewness: per-question nDCG is often a pile at 1 (or 0) and a tail, and a mean of few such values is skewed itself. (The
    unlabelled term's mean is over many more questions.)
    """
    n = rectifier.size
    if n < MIN_CLT_N:
        return True
    sd = float(np.std(rectifier))
    if sd == 0:
        return False
    g1 = float(np.mean((rectifier - rectifier.mean()) ** 3)) / sd ** 3
    return n <= 25 * g1 ** 2


def _bootstrap_interval(labelled: np.ndarray, unlabelled: np.ndarray, alpha: float, resamples: int,
                        seed: int) -> tuple[float, float]:
    """BCa bootstrap of ``mean(labelled) + mean(unlabelled)``, the two samples resampled independently.

    ``labelled`` is the per-question rectifier ``Y - lam*Yhat`` (a question's two grades stay together),
    ``unlabelled`` the weighted predictions ``lam*Yhat`` (empty or all zero when lam is 0), as ppi-python's
    ``ppboot`` resamples them, with scipy's BCa correction for skew.
    """
    from scipy.stats import bootstrap  # only here: the CLT path stays numpy-only

    def mean_sum(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return sum(s.mean(axis=axis) for s in samples)

    data = (labelled,) if unlabelled.size == 0 or not np.any(unlabelled) else (labelled, unlabelled)
    if all(np.ptp(d) == 0 for d in data):   # nothing varies: the interval is the point
        point = float(mean_sum(*data, axis=0))
        return point, point
    res = bootstrap(data, mean_sum, n_resamples=resamples, confidence_level=1 - alpha, method="BCa",
                    vectorized=True, rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):   # BCa degenerate (e.g. all but one value equal)
        res = bootstrap(data, mean_sum, n_resamples=resamples, confidence_level=1 - alpha, method="percentile",
                        vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return low, high


def _t_interval(labelled: np.ndarray, unlabelled: np.ndarray, alpha: float, fitted: bool,
                lam_var: float = 0.0, gap: float = 0.0) -> tuple[float, float]:
    """(low, high) of ``mean(labelled) + mean(unlabelled)`` for a small sample: Student t, unbiased variances.

    With a tuned ``lam`` (``fitted``), PPI++ is the survey-sampling regression estimator (Cochran 1977, ch. 7: the
    judged questions' metric regressed on the prediction, read at the unjudged questions' mean prediction), and its
    small-sample variance is that estimator's: the rectifier's variance with divisor n - 2 (an intercept and a slope
    were fitted to the same n questions), plus the slope's own error carried to the gap between the judged and
    unjudged mean prediction, ``lam_var * gap^2`` (the conditional variance of a fitted line's value away from the
    sample mean; 0 when the judged questions' predictions average what the others' do). A fixed ``lam``: divisor
    n - 1 and no slope term. The unlabelled part: divisor N_u - 1. Quantile: Student t with Welch-Satterthwaite's
    degrees of freedom for the two parts (n - 2 or n - 1 for the labelled one). As n grows every correction
    vanishes and this is ppi-python's CLT interval.
    """
    from scipy.stats import t as student_t   # only here: the CLT path stays numpy-only

    n, n_u = labelled.size, unlabelled.size
    dd = min(2 if fitted else 1, n - 1)
    v_lab = float(np.var(labelled, ddof=dd)) / n + (lam_var * gap ** 2 if fitted else 0.0)
    v_unl = float(np.var(unlabelled, ddof=1)) / n_u if n_u > 1 else 0.0
    point = float(labelled.mean() + (unlabelled.mean() if n_u else 0.0))
    if v_lab + v_unl <= 0:
        return point, point
    df = (v_lab + v_unl) ** 2 / (v_lab ** 2 / (n - dd) + (v_unl ** 2 / (n_u - 1) if v_unl > 0 else 0.0))
    half = float(student_t.ppf(1 - alpha / 2, df)) * math.sqrt(v_lab + v_unl)
    return point - half, point + half


def _lam_variance(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lam: float) -> float:
    """The tuned ``lam``'s variance given the predictions (delta method on ``tuned_lambda``'s formula): its numerator
    cov(Y, Yhat) varies as s_e^2 Sxx / n^2 (s_e^2 the rectifier's variance, divisor n - 2; Sxx the labelled
    predictions' sum of squares), its denominator ``(1 + n/N_u) var(Yhat pooled)`` is taken as fixed."""
    n, n_u = y.size, yhat_u.size
    if n < 3 or n_u == 0:
        return 0.0
    var_pooled = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if var_pooled <= 0:
        return 0.0
    s2e = float(np.var(y - lam * yhat, ddof=2))
    sxx = float(np.sum((yhat - yhat.mean()) ** 2))
    return s2e * sxx / (n * (1 + n / n_u) * var_pooled) ** 2


def _interval(labelled: np.ndarray, unlabelled: np.ndarray, alpha: float, method: str, resamples: int,
              seed: int, fitted: bool = False, lam_var: float = 0.0, gap: float = 0.0) -> tuple[float, float, float]:
    """(point, low, high) of ``mean(labelled) + mean(unlabelled)``: CLT (ppi-python's), t or bootstrap."""
    point = float(labelled.mean() + (unlabelled.mean() if unlabelled.size else 0.0))
    if method == "bootstrap":
        low, high = _bootstrap_interval(labelled, unlabelled, alpha, resamples, seed)
        return point, low, high
    if method == "t":
        low, high = _t_interval(labelled, unlabelled, alpha, fitted, lam_var, gap)
        return point, low, high
    var = float(np.var(labelled)) / labelled.size
    if unlabelled.size:
        var += float(np.var(unlabelled)) / unlabelled.size
    half = _z(alpha) * math.sqrt(var)
    return point, point - half, point + half


def ppi_mean(y_labelled: Sequence[float] | np.ndarray, yhat_labelled: Sequence[float] | np.ndarray,
             yhat_unlabelled: Sequence[float] | np.ndarray, *, alpha: float = 0.05, lam: float | None = None,
             method: Method = "auto", resamples: int = 10_000, seed: int = 0) -> PPIEstimate:
    """The prediction-powered estimate of the mean of Y, with its (1 - alpha) interval.

    ``y_labelled`` / ``yhat_labelled``: the human and the LLM metric of the n questions people judged (aligned);
    ``yhat_unlabelled``: the LLM metric of the other N - n questions (not all N: see the module docstring).
    ``lam=None`` power-tunes (PPI++); a number fixes it (1: plain PPI, 0: human-only).

    ``method``: "clt" is ppi-python's normal interval (equal to ``ppi_mean_ci`` to rounding); "t" the small-sample
    interval of the same estimate (``_t_interval``: Student t, unbiased variances, the tuned ``lam``'s own error);
    "bootstrap" a BCa bootstrap of the same estimator with the same ``lam`` (``resamples`` draws, ``seed``); "auto"
    (the default) is "t", the one measured to hold its level at 30 questions (module docstring). The human-only and
    LLM-only intervals beside it use the same method, so widths compare like with like.
    """
    y = _as_vector(y_labelled, "y_labelled")
    yhat = _as_vector(yhat_labelled, "yhat_labelled")
    yhat_u = _as_vector(yhat_unlabelled, "yhat_unlabelled")
    if y.size != yhat.size:
        raise ValueError(f"{y.size} human scores but {yhat.size} LLM scores for the labelled questions: "
                         "each labelled question needs both")
    if y.size < 2:
        raise ValueError(f"{y.size} labelled question(s): an interval needs at least 2")
    tuned = lam is None
    lam_used = tuned_lambda(y, yhat, yhat_u) if tuned else float(lam)  # type: ignore[arg-type]
    if yhat_u.size == 0:
        lam_used = 0.0   # nothing to impute: the human sample is all there is
    rectifier = y - lam_used * yhat
    if method == "auto":
        method = "t"
    if method not in ("clt", "t", "bootstrap"):
        raise ValueError(f"method must be 'clt', 't', 'bootstrap' or 'auto', got {method!r}")
    fitted = tuned and lam_used > 0
    lam_var = _lam_variance(y, yhat, yhat_u, lam_used) if fitted and method == "t" else 0.0
    gap = float(yhat.mean() - yhat_u.mean()) if yhat_u.size else 0.0
    point, low, high = _interval(rectifier, lam_used * yhat_u, alpha, method, resamples, seed, fitted, lam_var, gap)
    human = _interval(y, np.empty(0), alpha, method, resamples, seed)
    llm = _interval(np.concatenate([yhat, yhat_u]), np.empty(0), alpha, method, resamples, seed)
    return PPIEstimate(estimate=point, low=low, high=high, lam=lam_used, n_labelled=int(y.size),
                       n_unlabelled=int(yhat_u.size), human_only=human, llm_only=llm,
                       rectifier_sd=float(np.std(rectifier)), method=method, alpha=alpha, tuned=tuned,
                       moments=_moments(y, yhat, yhat_u))


def ppi_paired_difference(y_a_lab: Sequence[float] | np.ndarray, y_b_lab: Sequence[float] | np.ndarray,
                          yhat_a_lab: Sequence[float] | np.ndarray, yhat_b_lab: Sequence[float] | np.ndarray,
                          yhat_a_unl: Sequence[float] | np.ndarray, yhat_b_unl: Sequence[float] | np.ndarray,
                          **kw: object) -> PPIEstimate:
    """PPI on the per-question differences A - B (a paired design: both candidates on the same questions).

    The difference of two prediction-powered means would ignore that a question hard for A is hard for B; the
    per-question difference cancels it, as `stats`' paired tests do. ``lam`` is tuned for the difference itself.
    Keyword arguments are ``ppi_mean``'s.
    """
    def diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
        a_, b_ = _as_vector(a, f"{name} of A"), _as_vector(b, f"{name} of B")
        if a_.size != b_.size:
            raise ValueError(f"{name}: {a_.size} scores for A but {b_.size} for B; the same questions are needed")
        return a_ - b_

    return ppi_mean(diff(y_a_lab, y_b_lab, "labelled human scores"), diff(yhat_a_lab, yhat_b_lab,
                    "labelled LLM scores"), diff(yhat_a_unl, yhat_b_unl, "unlabelled LLM scores"), **kw)  # type: ignore[arg-type]


def projected_half_widths(est: PPIEstimate, more: Sequence[int] | np.ndarray, *, alpha: float = 0.05) -> np.ndarray:
    """The half-widths expected after ``more`` further questions (each entry one scenario), drawn at random from
    the unlabelled ones, are judged by people: the moments stay, n grows by ``more``, N_u shrinks by it, and ``lam``
    is re-tuned (if the estimate's was tuned) for the new n / N_u. An estimate made with method "t" is projected
    with the t interval's divisors and degrees of freedom (its slope term, which depends on the sample drawn, left
    out), any other with the CLT's. ``more=0`` gives the estimate's own CLT half-width (the t one's, less the slope
    term); judging all N_u leaves the human-only interval of all N questions.
    """
    m = est.moments
    if m is None:
        raise ValueError("this estimate carries no moments to project from")
    k = np.asarray(more, dtype=int).reshape(-1)
    if k.size and (k.min() < 0 or k.max() > est.n_unlabelled):
        raise ValueError(f"more must be in [0, {est.n_unlabelled}]")
    n = (est.n_labelled + k).astype(float)
    n_u = (est.n_unlabelled - k).astype(float)
    safe_u = np.where(n_u > 0, n_u, 1.0)
    if est.tuned and m.yhat_var_pooled > 0:
        lam = np.clip(m.cov / ((1 + n / safe_u) * m.yhat_var_pooled), 0.0, 1.0)
        lam = np.where(k == 0, est.lam, lam)
    else:
        lam = np.full(k.shape, est.lam)
    lam = np.where(n_u > 0, lam, 0.0)
    rect_var = np.maximum(m.y_var - 2 * lam * m.cov + lam ** 2 * m.yhat_var, 0.0)
    unl_var = np.where(n_u > 0, lam ** 2 * m.yhat_var_unlabelled, 0.0)
    if est.method != "t":
        return _z(alpha) * np.sqrt(rect_var / n + unl_var / safe_u)
    from scipy.stats import t as student_t

    dd = np.minimum(np.where(est.tuned & (lam > 0), 2.0, 1.0), n - 1)
    v_lab = rect_var / (n - dd)                                  # var(ddof dd) / n
    v_unl = np.where(n_u > 1, unl_var / np.maximum(n_u - 1, 1.0), 0.0)
    total = v_lab + v_unl
    with np.errstate(invalid="ignore", divide="ignore"):
        df = total ** 2 / (v_lab ** 2 / (n - dd) + np.where(v_unl > 0, v_unl ** 2 / np.maximum(n_u - 1, 1.0), 0.0))
    df = np.where(np.isfinite(df) & (df > 0), df, n - dd)
    return student_t.ppf(1 - alpha / 2, df) * np.sqrt(total)


def questions_to_resolve(est: PPIEstimate, *, alpha: float = 0.05, margin: float = 0.0) -> int | None:
    """How many MORE randomly sampled questions people would likely have to judge before the interval excludes
    ``margin`` (0 for a paired difference: the verdict is settled). 0 when it already does; None when even judging
    every question left would not (the estimate sits too close to ``margin`` for this population).

    "Likely": the point estimate is assumed to stay where it is and the sample moments to hold, as a power
    calculation does; the half-width then follows ``projected_half_widths`` (the rectifier's variance over the
    growing n, the remaining predictions' over the shrinking N_u, ``lam`` re-tuned). A planning figure, not a
    guarantee: half the time the estimate moves towards ``margin``.
    """
    if est.low > margin or est.high < margin:
        return 0
    gap = abs(est.estimate - margin)
    if gap == 0:
        return None
    widths = projected_half_widths(est, np.arange(1, est.n_unlabelled + 1), alpha=alpha)
    ok = np.flatnonzero(widths < gap)
    return int(ok[0]) + 1 if ok.size else None
