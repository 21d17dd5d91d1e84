"""Statistics for per-query retrieval scores: CIs, paired tests, power, subsets.

Everything here works on per-query score vectors for ONE task and ONE metric:
``dict[str, pd.Series]`` mapping candidate name -> Series indexed by query_id.
A private test set has only 100-500 queries, so a mean alone is not enough to
rank models: every number we report comes with its uncertainty.

Design choices (why):
* Queries are aligned by id (inner join, sorted) so paired tests compare the
  same queries and results do not depend on input order.
* All resampling is driven by two matrices that depend only on
  ``(n_queries, n_resamples, seed)``: a bootstrap *counts* matrix and a
  random-sign matrix. Each candidate's / pair's numbers therefore depend only
  on its own scores and the seed (adding a candidate changes nothing else),
  reruns are bit-identical, and the heavy lifting is two matrix multiplies.
* Randomization p-values use the (count + 1) / (n_resamples + 1) correction,
  so they are never 0 and stay valid (Phipson & Smyth 2010).
"""
from __future__ import annotations

import re
import warnings
from itertools import combinations
from typing import Any, Callable, Hashable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
# scipy.special rather than scipy.stats: the very functions scipy.stats evaluates the t and normal
# distributions with (identical numbers, tested), without its ~0.9 s import — analysis commands start fast
from scipy.special import ndtr, ndtri, stdtr, stdtrit

PerQuery = Mapping[str, pd.Series]
CIMethod = Literal["percentile", "bca"]

__all__ = [
    "metric_label", "align", "bootstrap_counts", "sign_flip_matrix", "bootstrap_ci",
    "randomization_test", "holm", "ci_table", "paired_tests",
    "min_detectable_difference", "power_warning", "power_report", "by_tag", "breakdown",
]

_METRIC_RE = re.compile(r"^(ndcg|mrr|map|recall|precision)_at_(\d+)$", re.IGNORECASE)
_METRIC_NAMES = {"ndcg": "nDCG", "mrr": "MRR", "map": "MAP", "recall": "Recall", "precision": "P"}
# Two floats closer than this are treated as tied in the randomization test, so
# rounding noise in the matrix multiply cannot flip an exact tie (e.g. the
# identity permutation, or zero differences) into a "less extreme" outcome.
_TIE_TOL = 1e-9


def metric_label(metric: str) -> str:
    """Human label for an MTEB metric key: ``"ndcg_at_10" -> "nDCG@10"``.

    Unknown keys are returned unchanged so labels never hide the real name.
    """
    m = _METRIC_RE.match(metric.strip())
    if not m:
        return metric
    return f"{_METRIC_NAMES[m.group(1).lower()]}@{m.group(2)}"


# --------------------------------------------------------------------------- alignment
def align(per_query: PerQuery, on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Inner-join candidates on query_id -> float frame (queries x candidates).

    Paired statistics are only meaningful on the same queries, so queries not
    scored by every candidate (or with NaN scores) are dropped, loudly: a
    ``UserWarning`` by default, ``ValueError`` with ``on_mismatch="raise"``.
    The index is sorted so resampling does not depend on input order.
    """
    if not per_query:
        raise ValueError("per_query is empty: need at least one candidate")
    cols = {}
    for name, s in per_query.items():
        s = pd.Series(s)
        if s.index.has_duplicates:
            dup = s.index[s.index.duplicated()].unique()[:5].tolist()
            raise ValueError(f"candidate {name!r} has duplicate query ids, e.g. {dup}")
        cols[str(name)] = pd.to_numeric(s, errors="raise").astype(float)
    if len(cols) != len(per_query):
        raise ValueError("candidate names collide after conversion to str")
    df = pd.concat(cols, axis=1, join="outer")
    complete = df.notna().all(axis=1)
    if not complete.all():
        missing = {c: int(df[c].isna().sum()) for c in df.columns if df[c].isna().any()}
        msg = (f"query sets differ between candidates: {int((~complete).sum())} of {len(df)} "
               f"queries lack a score for some candidate (missing/NaN per candidate: {missing}); "
               f"using the {int(complete.sum())} common queries")
        if on_mismatch == "raise":
            raise ValueError(msg)
        warnings.warn(msg, UserWarning, stacklevel=3)
        df = df[complete]
    if len(df) == 0:
        raise ValueError("no query is scored by every candidate")
    try:
        df = df.sort_index()
    except TypeError:  # mixed id types: fall back to string order
        df = df.iloc[np.argsort(df.index.astype(str), kind="stable")]
    return df


# --------------------------------------------------------------------------- resampling
def _rng(seed: int, stream: int) -> np.random.Generator:
    """Independent, reproducible stream per purpose (bootstrap vs sign flips)."""
    return np.random.default_rng([int(seed), stream])


def bootstrap_counts(n: int, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """(n_resamples, n) float64 matrix: how often each query is drawn per resample.

    ``counts @ X / n`` gives bootstrap means of every column of X at once, which
    is far faster than fancy-indexing an (n_resamples, n, k) cube.
    """
    idx = _rng(seed, 1).integers(0, n, size=(n_resamples, n), dtype=np.int32)
    flat = idx.astype(np.int64 if n_resamples * n >= 2**31 else np.int32)
    flat += (np.arange(n_resamples, dtype=flat.dtype) * n)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n).astype(np.float64)


def sign_flip_matrix(n: int, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """(n_resamples, n) matrix of random +-1: swaps of A/B labels per query.

    Under H0 (A and B exchangeable per query) each paired difference is equally
    likely to have either sign; ``signs @ D / n`` = permuted mean differences.
    """
    bits = _rng(seed, 2).integers(0, 2, size=(n_resamples, n), dtype=np.int8)
    return (1.0 - 2.0 * bits).astype(np.float64)


def _as_2d(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def _ci_from_boot(boot: np.ndarray, data: np.ndarray, confidence: float,
                  method: CIMethod) -> tuple[np.ndarray, np.ndarray]:
    """CI bounds per column from bootstrap means ``boot`` (B, k) of ``data`` (n, k).

    BCa follows Efron & Tibshirani (1993) eq. 14.10/14.15 as scipy does: z0 from
    the share of bootstrap means below the observed mean (ties count half),
    acceleration from the jackknife, which is closed-form for the mean.
    """
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    alpha = (1.0 - confidence) / 2.0
    k = data.shape[1]
    if method == "percentile":
        q = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
        return q[0], q[1]
    n = data.shape[0]
    theta = data.mean(axis=0)
    low, high = np.empty(k), np.empty(k)
    for j in range(k):
        b = boot[:, j]
        if np.ptp(b) == 0 or n < 2:  # degenerate: no spread to correct
            low[j] = high[j] = theta[j]
            continue
        pct = (np.count_nonzero(b < theta[j]) + np.count_nonzero(b <= theta[j])) / (2 * b.size)
        z0 = ndtri(pct)
        jack = (data[:, j].sum() - data[:, j]) / (n - 1)  # leave-one-out means
        u = (n - 1) * (jack.mean() - jack)
        den = np.sum(u**2) ** 1.5
        a = np.sum(u**3) / (6.0 * den) if den > 0 else 0.0
        levels = []
        for z in (ndtri(alpha), -ndtri(alpha)):
            levels.append(ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z))))
        if not np.all(np.isfinite(levels)):
            warnings.warn("BCa undefined for this sample; using percentile interval",
                          UserWarning, stacklevel=3)
            levels = [alpha, 1.0 - alpha]
        low[j], high[j] = np.quantile(b, levels)
    return low, high


def bootstrap_ci(scores: np.ndarray | pd.Series, n_resamples: int = 10_000,
                 confidence: float = 0.95, method: CIMethod = "percentile",
                 seed: int = 0) -> tuple[float, float, float]:
    """Bootstrap CI of the mean of per-query scores -> ``(mean, low, high)``.

    Uses the same counts matrix as :func:`ci_table`, so a candidate gets the
    same interval whether computed alone or in a table.
    """
    x = _as_2d(np.asarray(scores, dtype=np.float64).ravel())
    if x.shape[0] == 0 or not np.all(np.isfinite(x)):
        raise ValueError("scores must be a non-empty array of finite numbers")
    boot = bootstrap_counts(x.shape[0], n_resamples, seed) @ x / x.shape[0]
    low, high = _ci_from_boot(boot, x, confidence, method)
    return float(x.mean()), float(low[0]), float(high[0])


def randomization_test(diffs: np.ndarray, n_resamples: int = 10_000, seed: int = 0,
                       alternative: Literal["two-sided", "greater", "less"] = "two-sided",
                       ) -> np.ndarray:
    """Paired sign-flip randomization p-value(s) for mean(diffs) == 0.

    ``diffs`` is (n,) or (n, k) paired differences (one column per pair); all
    columns share one sign matrix (one matmul). p = (count + 1)/(n_resamples + 1)
    where count is the number of sign-flipped means at least as extreme as the
    observed one. Returns an array of shape (k,).
    """
    d = _as_2d(diffs)
    n = d.shape[0]
    perm = sign_flip_matrix(n, n_resamples, seed) @ d / n
    obs = d.mean(axis=0)
    tol = _TIE_TOL * max(1.0, float(np.abs(d).max(initial=0.0)))
    if alternative == "two-sided":
        hits = np.abs(perm) >= np.abs(obs) - tol
    elif alternative == "greater":
        hits = perm >= obs - tol
    elif alternative == "less":
        hits = perm <= obs + tol
    else:
        raise ValueError(f"unknown alternative {alternative!r}")
    return (hits.sum(axis=0) + 1.0) / (n_resamples + 1.0)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (controls family-wise error).

    Sorted ascending, p_(i) is multiplied by (m - i) (i from 0), then a running
    maximum enforces monotonicity and values are capped at 1. NaNs are ignored
    (not counted in m) and stay NaN.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


# --------------------------------------------------------------------------- tables
def ci_table(per_query: PerQuery, n_resamples: int = 10_000, confidence: float = 0.95,
             method: CIMethod = "percentile", seed: int = 0,
             on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Mean and bootstrap CI per candidate (input order), on the common queries.

    Columns: candidate, n_queries, mean, ci_low, ci_high, std (per-query SD, ddof=1).
    """
    df = align(per_query, on_mismatch)
    x = df.to_numpy()
    n = x.shape[0]
    boot = bootstrap_counts(n, n_resamples, seed) @ x / n
    low, high = _ci_from_boot(boot, x, confidence, method)
    return pd.DataFrame({
        "candidate": list(df.columns), "n_queries": n, "mean": x.mean(axis=0),
        "ci_low": low, "ci_high": high,
        "std": x.std(axis=0, ddof=1) if n > 1 else np.nan,
    })


def _fmt_p(p: float) -> str:
    if np.isnan(p):
        return "p=nan"
    if p < 0.001:
        return "p<0.001"
    return f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def _from_winner_side(diff: float, significant: bool) -> bool:
    """A significant win of b is reported as "b beats a", so its numbers change sign."""
    return bool(significant and diff < 0)


def _verdict(a: str, b: str, label: str, diff: float, lo: float, hi: float,
             p: float, significant: bool) -> str:
    if not significant:
        return (f"no detectable difference between {a} and {b} on {label} "
                f"(diff {diff:+.3f} [{lo:+.3f}, {hi:+.3f}], {_fmt_p(p)} Holm)")
    if _from_winner_side(diff, significant):
        a, b, diff, lo, hi = b, a, -diff, -hi, -lo
    return f"{a} beats {b} on {label} by {diff:+.3f} [{lo:+.3f}, {hi:+.3f}], {_fmt_p(p)} (Holm)"


_PAIR_COLUMNS = ["candidate_a", "candidate_b", "n", "mean_a", "mean_b", "diff", "diff_ci_low",
                 "diff_ci_high", "p_randomization", "p_ttest", "p_holm", "cohens_dz",
                 "significant", "verdict", "verdict_dz"]


def ttest_rel_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value, computed step by step as scipy.stats.ttest_rel does (the test
    suite checks equality to the last bit); NaN when the differences are constant."""
    d = np.ascontiguousarray(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    n = d.shape[0]
    if n < 2:
        return float("nan")
    var = np.mean((d - np.mean(d, keepdims=True)) ** 2) * (n / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(np.mean(d), np.sqrt(var / n))
    return float(2 * stdtr(n - 1, -np.abs(t)))


def paired_tests(per_query: PerQuery, n_resamples: int = 10_000, seed: int = 0,
                 alpha: float = 0.05, metric: str = "score", method: CIMethod = "percentile",
                 on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Compare every pair of candidates (a before b in input order), diff = a - b.

    * diff CI: paired bootstrap (same resampled queries for a and b), level 1-alpha,
      not adjusted for multiplicity.
    * p_randomization: two-sided paired sign-flip test, (count+1)/(n_resamples+1).
    * p_ttest: ``scipy.stats.ttest_rel`` (NaN when all diffs are equal).
    * p_holm: Holm over all pairs of the randomization p-values; ``significant``
      is ``p_holm < alpha``, so the 45 comparisons of 10 models do not yield
      spurious "wins".
    * cohens_dz: mean diff / SD of diffs (NaN if SD is 0), sign of a - b.
    * verdict_dz: d_z with the sign of the difference the verdict reports (a significant win
      of b reads "b beats a by +x", so its d_z is positive too): print this one beside it.
    """
    df = align(per_query, on_mismatch)
    names, x = list(df.columns), df.to_numpy()
    n = x.shape[0]
    pairs = list(combinations(range(len(names)), 2))
    if not pairs:
        return pd.DataFrame(columns=_PAIR_COLUMNS)
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    d = x[:, ia] - x[:, ib]
    boot = bootstrap_counts(n, n_resamples, seed) @ x / n  # diff of means is linear
    low, high = _ci_from_boot(boot[:, ia] - boot[:, ib], d, 1.0 - alpha, method)
    p_rand = randomization_test(d, n_resamples, seed)
    p_t = np.array([ttest_rel_p(x[:, i], x[:, j]) for i, j in pairs], dtype=float)
    p_holm = holm(p_rand)
    mean_d = d.mean(axis=0)
    sd_d = d.std(axis=0, ddof=1) if n > 1 else np.full(len(pairs), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(sd_d > 0, mean_d / sd_d, np.nan)
    sig = p_holm < alpha
    label = metric_label(metric)
    out = pd.DataFrame({
        "candidate_a": [names[i] for i in ia], "candidate_b": [names[j] for j in ib], "n": n,
        "mean_a": x[:, ia].mean(axis=0), "mean_b": x[:, ib].mean(axis=0), "diff": mean_d,
        "diff_ci_low": low, "diff_ci_high": high, "p_randomization": p_rand, "p_ttest": p_t,
        "p_holm": p_holm, "cohens_dz": dz, "significant": sig,
    })
    out["verdict"] = [
        _verdict(r.candidate_a, r.candidate_b, label, r.diff, r.diff_ci_low, r.diff_ci_high,
                 r.p_holm, r.significant) for r in out.itertuples(index=False)]
    out["verdict_dz"] = [-r.cohens_dz if _from_winner_side(r.diff, r.significant) else r.cohens_dz
                         for r in out.itertuples(index=False)]
    return out


# --------------------------------------------------------------------------- power
def min_detectable_difference(diffs_or_std: float | np.ndarray | pd.Series, n: int | None = None,
                              alpha: float = 0.05, power: float = 0.8,
                              dist: Literal["t", "z"] = "t") -> float:
    """Smallest true mean difference a two-sided paired test detects with ``power``.

    MDD = (q_{1-alpha/2} + q_{power}) * sd_diff / sqrt(n), the standard paired-t
    approximation. ``dist="t"`` (default) uses Student-t quantiles with n-1 df
    (slightly conservative for small n, within ~1% of the exact noncentral-t
    answer for n >= 30); ``dist="z"`` uses normal quantiles. Pass the per-query
    differences (sd taken with ddof=1, n defaults to their count) or an SD plus n.
    """
    if np.ndim(diffs_or_std) == 0:
        sd = float(diffs_or_std)
        if n is None:
            raise ValueError("n is required when passing a standard deviation")
    else:
        arr = np.asarray(diffs_or_std, dtype=np.float64)
        n = arr.size if n is None else n
        sd = float(arr.std(ddof=1))
    if n < 2:
        raise ValueError("need at least 2 queries for a power calculation")
    if dist == "t":
        q = stdtrit(n - 1, 1 - alpha / 2) + stdtrit(n - 1, power)  # = scipy.stats.t.ppf
    elif dist == "z":
        q = ndtri(1 - alpha / 2) + ndtri(power)  # = scipy.stats.norm.ppf
    else:
        raise ValueError(f"dist must be 't' or 'z', got {dist!r}")
    return float(q * sd / np.sqrt(n))


def power_warning(mdd: float, n: int, metric: str = "score", power: float = 0.8) -> str:
    """One line for reports: the resolution limit of this test set."""
    return (f"with {n} queries, differences smaller than {mdd:.3f} {metric_label(metric)} "
            f"cannot be detected reliably ({power:.0%} power)")


def power_report(per_query: PerQuery, metric: str = "score", alpha: float = 0.05,
                 power: float = 0.8, dist: Literal["t", "z"] = "t") -> tuple[float, str]:
    """MDD for this test set and its warning line -> ``(mdd, text)``.

    With >= 2 candidates the SD is the median SD of all pairwise per-query
    differences (what the paired tests actually face). With one candidate only
    its per-query SD is available: a rough proxy for the SD of differences
    (exact when the two systems' scores correlate at 0.5).
    """
    df = align(per_query)
    x = df.to_numpy()
    if x.shape[1] >= 2:
        i, j = np.triu_indices(x.shape[1], 1)
        sd = float(np.median((x[:, i] - x[:, j]).std(axis=0, ddof=1)))
    else:
        sd = float(x[:, 0].std(ddof=1))
    mdd = min_detectable_difference(sd, len(df), alpha, power, dist)
    return mdd, power_warning(mdd, len(df), metric, power)


# --------------------------------------------------------------------------- subsets
def by_tag(per_query: PerQuery, tags: pd.DataFrame, tag_column: str
           ) -> dict[Hashable, dict[str, pd.Series]]:
    """Split per-query scores by the values of one tag column (NaN tags skipped).

    Queries absent from ``tags`` belong to no subset; that is warned about so a
    typo'd id type (int vs str) cannot silently empty every subset.
    """
    if tag_column not in tags.columns:
        raise KeyError(f"tag column {tag_column!r} not in tags {list(tags.columns)}")
    col = tags[tag_column]
    all_ids = pd.Index([]).append([pd.Series(s).index for s in per_query.values()]).unique()
    unknown = all_ids.difference(tags.index)
    if len(unknown):
        warnings.warn(f"{len(unknown)} of {len(all_ids)} scored queries have no row in tags "
                      f"(e.g. {list(unknown[:3])}); they are in no {tag_column!r} subset",
                      UserWarning, stacklevel=2)
    values = col.dropna().unique()
    try:
        values = sorted(values)
    except TypeError:
        values = sorted(values, key=str)
    out: dict[Hashable, dict[str, pd.Series]] = {}
    for v in values:
        ids = col.index[col == v]
        out[v] = {name: s[s.index.isin(ids)] for name, s in per_query.items()}
    return out


def breakdown(per_query: PerQuery, tags: pd.DataFrame | None,
              func: Callable[..., pd.DataFrame], tag_columns: Sequence[str] | None = None,
              min_queries: int = 2, **kwargs: Any) -> pd.DataFrame:
    """Run a table function (``ci_table``, ``paired_tests``...) on all queries and
    on every tag subset; concatenate with a leading ``subset`` column
    ("all", "source=human", "topic=billing", ...).

    Subsets with fewer than ``min_queries`` queries are skipped with a warning
    rather than reported with meaningless intervals.
    """
    frames = [func(per_query, **kwargs).assign(subset="all")]
    cols = list(tags.columns) if tags is not None and tag_columns is None else (tag_columns or [])
    for c in cols:
        for v, sub in by_tag(per_query, tags, c).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                n_common = len(align(sub)) if all(len(s) for s in sub.values()) else 0
            if n_common < min_queries:
                warnings.warn(f"subset {c}={v} has {n_common} queries (< {min_queries}); skipped",
                              UserWarning, stacklevel=2)
                continue
            frames.append(func(sub, **kwargs).assign(subset=f"{c}={v}"))
    out = pd.concat(frames, ignore_index=True)
    return out[["subset"] + [c for c in out.columns if c != "subset"]]
