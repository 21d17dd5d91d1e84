"""Statistics for per-query retrieval scores: CIs, paired tests, subsets (power: power.py).

Everything here works on per-query scores for ONE task and ONE metric: candidate name ->
{query_id: score} (a dict, or a pandas Series). A private test set has only 100-500 queries,
so a mean alone is not enough to rank models: every number we report comes with its uncertainty.

Design choices (why):
* Queries are aligned by id (inner join, sorted) so paired tests compare the
  same queries and results do not depend on input order.
* Resampling (resampling.py) depends only on ``(n_queries, n_resamples, seed)``, so each
  candidate's / pair's numbers depend only on its own scores and the seed.
* This module computes on plain numpy arrays and returns columns / rows, without pandas:
  `stats` and `check` start fast (pandas + pyarrow cost ~0.4 s to import). The same numbers as
  pandas tables (``ci_table``, ``paired_tests``, ``breakdown``, ...) live in stats_frames.py
  (import them from there: it imports this module, never the other way round).
"""
from __future__ import annotations

import math
import re
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from .resampling import (CIMethod, bootstrap_ci, bootstrap_counts, ci_from_boot, holm, randomization_test,
                         sign_flip_matrix)

#: query id -> score: a dict, or a pandas Series (anything with ``.items()``)
Scores = Mapping[Hashable, float]

__all__ = [
    "metric_label", "format_p", "format_number", "format_diff", "pair_note", "Aligned", "align_scores", "ci_columns", "pair_columns",
    "tag_groups", "tag_subsets",
    "rows_of", "ttest_rel_p",
    "bootstrap_counts", "sign_flip_matrix", "bootstrap_ci", "randomization_test", "holm", "CIMethod",
]

_METRIC_RE = re.compile(r"^(ndcg|mrr|map|recall|precision)_at_(\d+)$", re.IGNORECASE)
_METRIC_NAMES = {"ndcg": "nDCG", "mrr": "MRR", "map": "MAP", "recall": "Recall", "precision": "P"}

PAIR_COLUMNS = ["candidate_a", "candidate_b", "n", "mean_a", "mean_b", "diff", "diff_ci_low",
                "diff_ci_high", "p_randomization", "p_ttest", "p_holm", "cohens_dz",
                "significant", "verdict", "verdict_dz"]


def metric_label(metric: str) -> str:
    """Human label for an MTEB metric key: ``"ndcg_at_10" -> "nDCG@10"``.

    Unknown keys are returned unchanged so labels never hide the real name.
    """
    m = _METRIC_RE.match(metric.strip())
    if not m:
        return metric
    return f"{_METRIC_NAMES[m.group(1).lower()]}@{m.group(2)}"


# --------------------------------------------------------------------------- alignment
@dataclass(frozen=True)
class Aligned:
    """Scores of every candidate on the queries all of them scored, sorted by query id."""

    names: list[str]
    ids: list[Hashable]
    #: (n_queries, n_candidates) float64 in Fortran order, the layout a pandas frame hands out: numpy's
    #: sums depend on memory layout in the last bit, so this keeps both paths bit-identical
    x: np.ndarray


def _number(v: Any) -> float:
    return math.nan if v is None else float(v)


def _duplicates(ids: list[Hashable]) -> list[Hashable]:
    seen: set[Hashable] = set()
    dup: list[Hashable] = []
    for q in ids:
        if q in seen and q not in dup:
            dup.append(q)
        seen.add(q)
    return dup


def align_scores(per_query: Mapping[str, Scores], on_mismatch: Literal["warn", "raise"] = "warn") -> Aligned:
    """Inner-join candidates on query_id.

    Paired statistics are only meaningful on the same queries, so queries not
    scored by every candidate (or with NaN scores) are dropped, loudly: a
    ``UserWarning`` by default, ``ValueError`` with ``on_mismatch="raise"``.
    The ids are sorted so resampling does not depend on input order.
    """
    if not per_query:
        raise ValueError("per_query is empty: need at least one candidate")
    cols: dict[str, dict[Hashable, float]] = {}
    for name, s in per_query.items():
        items = list(s.items())
        col = {q: _number(v) for q, v in items}
        if len(col) != len(items):
            raise ValueError(f"candidate {name!r} has duplicate query ids, e.g. {_duplicates([q for q, _ in items])[:5]}")
        cols[str(name)] = col
    if len(cols) != len(per_query):
        raise ValueError("candidate names collide after conversion to str")
    union = list(dict.fromkeys(q for col in cols.values() for q in col))
    ok = {name: {q for q, v in col.items() if not math.isnan(v)} for name, col in cols.items()}
    common = [q for q in union if all(q in have for have in ok.values())]
    if len(common) < len(union):
        missing = {name: len(union) - len(have) for name, have in ok.items() if len(have) < len(union)}
        msg = (f"query sets differ between candidates: {len(union) - len(common)} of {len(union)} "
               f"queries lack a score for some candidate (missing/NaN per candidate: {missing}); "
               f"using the {len(common)} common queries")
        if on_mismatch == "raise":
            raise ValueError(msg)
        warnings.warn(msg, UserWarning, stacklevel=3)
    if not common:
        raise ValueError("no query is scored by every candidate")
    try:
        ids = sorted(common)
    except TypeError:  # mixed id types: fall back to string order
        ids = sorted(common, key=str)
    x = np.array([[col[q] for q in ids] for col in cols.values()], dtype=np.float64).T
    return Aligned(list(cols), ids, x)


def _n_common(per_query: Mapping[str, Mapping[Hashable, float]]) -> int:
    sets = [{q for q, v in s.items() if not math.isnan(_number(v))} for s in per_query.values()]
    return len(set.intersection(*sets)) if sets else 0


# --------------------------------------------------------------------------- intervals and pairs
def _counts(n: int, n_resamples: int, seed: int, counts: np.ndarray | None) -> np.ndarray:
    return bootstrap_counts(n, n_resamples, seed) if counts is None else counts


def ci_columns(a: Aligned, n_resamples: int = 10_000, confidence: float = 0.95,
               method: CIMethod = "percentile", seed: int = 0, *, counts: np.ndarray | None = None) -> dict[str, Any]:
    """Mean and bootstrap CI per candidate: columns candidate, n_queries, mean, ci_low, ci_high,
    std (per-query SD, ddof=1). ``counts``: ``bootstrap_counts(n_queries, n_resamples, seed)`` when the
    caller already has it (pair_columns on the same queries uses the same matrix)."""
    x = np.asfortranarray(a.x)
    n = x.shape[0]
    boot = _counts(n, n_resamples, seed, counts) @ x / n
    low, high = ci_from_boot(boot, x, confidence, method)
    return {"candidate": list(a.names), "n_queries": n, "mean": x.mean(axis=0), "ci_low": low, "ci_high": high,
            "std": x.std(axis=0, ddof=1) if n > 1 else np.nan}


def format_number(x: float | None, decimals: int = 3, signed: bool = False) -> str:
    """A figure at `decimals` digits (`signed`: always with its sign), as every verdict prints it: never
    "-0.000" (a value that rounds to zero is zero, "+0.000" when signed) and never "nan" ("n/a")."""
    if x is None or math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "-inf" if x < 0 else "+inf" if signed else "inf"
    text = f"{x:+.{decimals}f}" if signed else f"{x:.{decimals}f}"
    if float(text) == 0:  # -0.0001 rounds to "-0.000": the sign of noise below the printed digits
        text = ("+" if signed else "") + f"{0:.{decimals}f}"
    return text


def format_score(x: float) -> str:
    """A metric's value as every table prints it (`run`, `stats`, `history`...): 4 decimals, from the mean of
    the stored per-query scores (mteb's own JSON keeps 5 rounded decimals, which can round the other way)."""
    return format_number(x, 4)


def format_diff(diff: float, lo: float, hi: float, decimals: int = 3) -> str:
    """A paired difference and its interval: ``+0.012 [+0.003, +0.021]`` (no negative zero)."""
    return (f"{format_number(diff, decimals, True)} [{format_number(lo, decimals, True)}, "
            f"{format_number(hi, decimals, True)}]")


def mean_score(scores: Scores) -> float:
    """The mean `stats` prints for one candidate: the same alignment (sorted ids, NaN left out) and sum."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return float(align_scores({"x": scores}).x.mean(axis=0)[0])


def format_p(p: float | None) -> str:
    """THE p-value format of every command (stats, check, experiments, history, the report):
    ``p<0.001``, ``p=0.004``, ``p=0.03``; ``p=n/a`` when there is none (never "nan")."""
    if p is None or np.isnan(p):
        return "p=n/a"
    if p < 0.001:
        return "p<0.001"
    return f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def _from_winner_side(diff: float, significant: bool) -> bool:
    """A significant win of b is reported as "b beats a", so its numbers change sign."""
    return bool(significant and diff < 0)


def identical_text(a: str, b: str, label: str, n: int) -> str:
    """What a pair whose scores agree on every query is (no test has anything to test: its t statistic and
    d_z are 0/0, which printed as "p=nan, d_z=+nan")."""
    return f"no difference between {a} and {b} on {label}: identical on every one of the {n} queries"


def _verdict(a: str, b: str, label: str, diff: float, lo: float, hi: float,
             p: float, significant: bool, identical: bool = False, n: int = 0) -> str:
    if identical:
        return identical_text(a, b, label, n)
    if not significant:
        return (f"no detectable difference between {a} and {b} on {label} "
                f"(diff {format_diff(diff, lo, hi)}, {format_p(p)} Holm)")
    if _from_winner_side(diff, significant):
        a, b, diff, lo, hi = b, a, -diff, -hi, -lo
    return f"{a} beats {b} on {label} by {format_diff(diff, lo, hi)}, {format_p(p)} (Holm)"


def pair_note(row: Mapping[str, Any]) -> str:
    """The t-test and effect size beside a pair's verdict: ``(t-test p=0.004, d_z=+0.41)``; '' for a pair
    identical on every query; a constant non-zero difference has no d_z (its SD is 0) and says so."""
    diff, p_t, dz = row.get("diff"), row.get("p_ttest"), row.get("verdict_dz")
    if _is_missing(p_t) and _is_missing(dz) and (diff is None or diff == 0):
        return ""
    if _is_missing(dz):
        return f"(t-test {format_p(p_t)}; every query differs by the same amount, so no d_z)"
    return f"(t-test {format_p(p_t)}, d_z={format_number(dz, 2, True)})"


def ttest_rel_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value, computed step by step as scipy.stats.ttest_rel does (the test
    suite checks equality to the last bit); NaN when the differences are constant."""
    # scipy.special rather than scipy.stats: the very function scipy.stats evaluates the t distribution
    # with, without its ~0.9 s import; lazy, so commands that need no t-test (check) skip it too
    from scipy.special import stdtr

    d = np.ascontiguousarray(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    n = d.shape[0]
    if n < 2:
        return float("nan")
    var = np.mean((d - np.mean(d, keepdims=True)) ** 2) * (n / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(np.mean(d), np.sqrt(var / n))
    return float(2 * stdtr(n - 1, -np.abs(t)))


def pair_columns(a: Aligned, n_resamples: int = 10_000, seed: int = 0, alpha: float = 0.05,
                 metric: str = "score", method: CIMethod = "percentile", *,
                 counts: np.ndarray | None = None) -> dict[str, Any] | None:
    """Every pair of candidates (a before b in input order), diff = a - b; None with one candidate.
    ``counts``: as in ci_columns.

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
    names, x = list(a.names), np.asfortranarray(a.x)
    n = x.shape[0]
    pairs = list(combinations(range(len(names)), 2))
    if not pairs:
        return None
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    d = x[:, ia] - x[:, ib]
    boot = _counts(n, n_resamples, seed, counts) @ x / n  # diff of means is linear
    low, high = ci_from_boot(boot[:, ia] - boot[:, ib], d, 1.0 - alpha, method)
    p_rand = randomization_test(d, n_resamples, seed)
    p_t = np.array([ttest_rel_p(x[:, i], x[:, j]) for i, j in pairs], dtype=float)
    p_holm = holm(p_rand)
    mean_d = d.mean(axis=0)
    sd_d = d.std(axis=0, ddof=1) if n > 1 else np.full(len(pairs), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.where(sd_d > 0, mean_d / sd_d, np.nan)
    sig = p_holm < alpha
    label = metric_label(metric)
    cols: dict[str, Any] = {
        "candidate_a": [names[i] for i in ia], "candidate_b": [names[j] for j in ib], "n": n,
        "mean_a": x[:, ia].mean(axis=0), "mean_b": x[:, ib].mean(axis=0), "diff": mean_d,
        "diff_ci_low": low, "diff_ci_high": high, "p_randomization": p_rand, "p_ttest": p_t,
        "p_holm": p_holm, "cohens_dz": dz, "significant": sig,
    }
    same = ~np.any(d != 0, axis=0)  # identical on every query: nothing to test, said as such
    cols["verdict"] = [_verdict(cols["candidate_a"][p], cols["candidate_b"][p], label, mean_d[p], low[p], high[p],
                                p_holm[p], sig[p], bool(same[p]), n) for p in range(len(pairs))]
    cols["verdict_dz"] = [float(-dz[p]) if _from_winner_side(mean_d[p], sig[p]) else float(dz[p])
                          for p in range(len(pairs))]
    return cols


def rows_of(columns: Mapping[str, Any], subset: str | None = None) -> list[dict[str, Any]]:
    """Columns (arrays, lists or one scalar for all) -> one plain-Python dict per row, ``subset`` first."""
    n = next(len(v) for v in columns.values() if isinstance(v, (list, np.ndarray)))

    def cell(v: Any, i: int) -> Any:
        v = v[i] if isinstance(v, (list, np.ndarray)) else v
        return v.item() if isinstance(v, np.generic) else v

    head = {"subset": subset} if subset is not None else {}
    return [{**head, **{k: cell(v, i) for k, v in columns.items()}} for i in range(n)]


# --------------------------------------------------------------------------- subsets
def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def tag_groups(tagged: Iterable[tuple[Hashable, Any]]) -> list[tuple[Any, set[Hashable]]]:
    """The subset rule of one tag column, for tag_subsets and stats_frames.by_tag: ``(query id, value)``
    pairs -> ``(value, ids with that value)`` per distinct value, missing values (None, NaN) left out,
    values in sorted order (by ``str`` when they do not compare)."""
    groups: dict[Any, set[Hashable]] = {}
    for q, v in tagged:
        if not _is_missing(v):
            groups.setdefault(v, set()).add(q)
    values: list[Any] = list(groups)
    try:
        values = sorted(values)
    except TypeError:
        values = sorted(values, key=str)
    return [(v, groups[v]) for v in values]


def tag_subsets(per_query: Mapping[str, Scores], query_tags: Mapping[Hashable, Mapping[str, Any]],
                columns: Sequence[str], min_queries: int = 2, skipped: list[tuple[str, int]] | None = None
                ) -> list[tuple[str, dict[str, dict[Hashable, float]]]]:
    """``("topic=billing", scores of those queries)`` for every value of every tag column, in
    sorted value order; subsets with fewer than ``min_queries`` common queries are left out
    (intervals on 1 query mean nothing), each appended to ``skipped`` as (name, queries) so a caller
    can say so. Same subsets as stats_frames.breakdown."""
    out = []
    for c in columns:
        for v, ids in tag_groups((q, t[c]) for q, t in query_tags.items() if c in t):
            sub = {name: {q: s for q, s in scores.items() if q in ids} for name, scores in per_query.items()}
            n = _n_common(sub)
            if n >= min_queries:
                out.append((f"{c}={v}", sub))
            elif n and skipped is not None:
                skipped.append((f"{c}={v}", n))
    return out
