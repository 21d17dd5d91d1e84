"""The statistics behind the report, computed with runners.statistics.intervals on stored per-query scores.

Why here and not in stats_report: the report compares every candidate with ONE baseline (a forest plot),
so its Holm family is "candidates vs baseline within one subset", while `stats` tests every pair.
The summary's "best vs runner-up" verdict uses the all-pairs family, as `stats` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...config.benchmark import StatsOptions
from ...statistics import stats_frames as frames
from ...statistics.intervals import holm
from .data import TaskData, quiet

MIN_SUBSET = 5  # smaller tag subsets give intervals too wide to read; they are listed as skipped


@dataclass
class Subset:
    """A named slice of the queries: "all" or "tag=value"."""

    name: str
    scores: dict[str, pd.Series]


def subsets(td: TaskData, metric: str) -> tuple[list[Subset], list[str]]:
    """All queries, then one subset per tag value (in tag order); also the names of subsets too small to use."""
    per_query = td.scores[metric]
    out, skipped = [Subset("all", per_query)], []
    if td.tags is None:
        return out, skipped
    for col in td.tags.columns:
        for value, sub in quiet(frames.by_tag, per_query, td.tags, col).items():
            n = len(quiet(frames.align, sub)) if all(len(s) for s in sub.values()) else 0
            (out.append(Subset(f"{col}={value}", sub)) if n >= MIN_SUBSET else skipped.append(f"{col}={value}"))
    return out, skipped


def intervals(td: TaskData, metric: str, opts: StatsOptions) -> pd.DataFrame:
    """Mean and bootstrap CI of every candidate on the common queries (frames.ci_table)."""
    return quiet(frames.ci_table, td.scores[metric], opts.resamples, opts.confidence, opts.method, opts.seed)


def vs_baseline(sub: Subset, baseline: str, opts: StatsOptions, metric: str) -> pd.DataFrame:
    """candidate - baseline per candidate: diff, paired bootstrap CI, randomization p, Holm over this subset.

    The baseline goes last so every pair frames.paired_tests forms with it reads (candidate, baseline).
    """
    order = [c for c in sub.scores if c != baseline] + [baseline]
    if len(order) < 2 or baseline not in sub.scores:
        return pd.DataFrame()
    pairs = quiet(frames.paired_tests, {c: sub.scores[c] for c in order}, opts.resamples, opts.seed,
                  1 - opts.confidence, metric, opts.method)
    pairs = pairs[pairs["candidate_b"] == baseline].copy()
    pairs["p_holm"] = holm(pairs["p_randomization"].to_numpy())
    pairs["significant"] = pairs["p_holm"] < 1 - opts.confidence
    pairs.insert(0, "subset", sub.name)
    return pairs.reset_index(drop=True)


def all_pairs(td: TaskData, metric: str, opts: StatsOptions) -> pd.DataFrame:
    """Every pair, Holm over all pairs: the family `private-mteb stats` uses."""
    if len(td.scores[metric]) < 2:
        return pd.DataFrame()
    return quiet(frames.paired_tests, td.scores[metric], opts.resamples, opts.seed, 1 - opts.confidence,
                 metric, opts.method)


def pair_row(pairs: pd.DataFrame, a: str, b: str) -> dict[str, Any] | None:
    """The all-pairs row of (a, b) oriented as a - b, whichever order stats used."""
    if pairs.empty:
        return None
    hit = pairs[(pairs.candidate_a == a) & (pairs.candidate_b == b)]
    if len(hit):
        return hit.iloc[0].to_dict()
    hit = pairs[(pairs.candidate_a == b) & (pairs.candidate_b == a)]
    if not len(hit):
        return None
    r = hit.iloc[0].to_dict()
    r.update(candidate_a=a, candidate_b=b, mean_a=r["mean_b"], mean_b=r["mean_a"], diff=-r["diff"],
             diff_ci_low=-r["diff_ci_high"], diff_ci_high=-r["diff_ci_low"])
    return r


def power_line(td: TaskData, metric: str) -> str:
    return quiet(frames.power_report, td.scores[metric], metric)[1]


def win_tie_loss(a: pd.Series, b: pd.Series, tol: float = 1e-9) -> tuple[int, int, int]:
    """Queries where a scores higher / the same / lower than b (common queries only)."""
    d = (a - b).dropna()
    return int((d > tol).sum()), int((d.abs() <= tol).sum()), int((d < -tol).sum())


def first_relevant_rank(ranking: dict[str, float], relevant: dict[str, int]) -> int | None:
    """1-based rank of the first document with grade > 0 in a stored top-k (None: not in the top-k)."""
    order = sorted(ranking.items(), key=lambda kv: (-kv[1], kv[0]))
    for i, (doc, _) in enumerate(order, 1):
        if relevant.get(doc, 0) > 0:
            return i
    return None


def worst_queries(scores: pd.Series, k: int, ranks: dict[str, int | None] | None = None) -> list[tuple[str, float]]:
    """The k lowest-scoring queries; ties broken by how deep the first relevant document sits, then id."""
    ranks = ranks or {}
    depth = {q: (ranks.get(q) or 10**6) for q in scores.index}
    order = sorted(scores.index, key=lambda q: (float(scores[q]), -depth[q], str(q)))
    return [(str(q), float(scores[q])) for q in order[:k]]
