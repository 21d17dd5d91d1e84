"""How far the unjudged pairs could move a paired nDCG@k difference: exact adversarial bounds (issue 39).

mteb scores nDCG@k with pytrec_eval (trec_eval's ``ndcg_cut``): gain = the grade (grades <= 0 add nothing),
discount 1 / log2(rank + 1), divided by the ideal DCG of the query's labels (every labelled document with a
positive grade, best first, cut at k); a query whose labels hold no positive grade scores 0. A document without
a label counts as grade 0. So the nDCG of one query depends on the grades of the unjudged documents twice: in
the candidate's DCG *and* in the ideal DCG, which every candidate shares.

For a pair (A, B) and one query, with the unjudged documents' grades g, the difference is

    d(g) = (c + sum_i w_i g_i) / IDCG(g),   w_i = disc_A(i) - disc_B(i)

where disc_X(i) is the discount at the rank X gives document i (0 outside X's top-k) and c is what the judged
documents give. d is not linear in g (IDCG grows with g), so "grade everything A found 2" is not the worst case
for B. What makes the bound exact and cheap: IDCG depends only on HOW MANY unjudged documents get each grade
(the multiset), not on which. For a fixed multiset, the numerator is largest when the highest grades go to the
largest w_i (rearrangement inequality). So max_g d(g) = the max, over every count vector (n_l per positive grade
l of the scale, sum <= the unjudged documents), of the rearranged numerator over the IDCG of that count vector;
min_g d(g) is the same with w negated. Grades are chosen per (query, document), so the queries are independent
and the bound of the mean difference is the mean of the per-query bounds: every value in between is reached by
some assignment, and no assignment goes outside (tests/test_verdict_bounds.py enumerates every assignment of small
pools and scores each with pytrec_eval).

Scope: the unjudged documents are those in the compared candidates' top-k (the pool `labels pool` writes).
Documents outside every candidate's top-k are taken as non-relevant, the pooling assumption (as in the scores);
one of them graded relevant would only raise that query's ideal DCG, shrinking its differences toward 0 without
flipping their sign, but it could move the mean: the bound holds for the pool the candidates' top-k make.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...statistics.analysis_errors import AnalysisError
from .judged import ranked_ids

#: count vectors enumerated per query at most (a 0-3 scale over 60 unjudged documents is 39,711)
MAX_VECTORS = 400_000


def discounts(k: int) -> np.ndarray:
    """trec_eval's discount of ranks 1..k: 1 / log2(rank + 1)."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def dcg(gains: Sequence[float], k: int) -> float:
    """DCG@k of gains in rank order (gain = grade, non-positive grades add nothing), as trec_eval sums it."""
    total = 0.0
    for rank, g in enumerate(gains[:k]):
        if g > 0:
            total += g / math.log2(rank + 2)
    return total


def ndcg(ranking: Sequence[str], labels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k of one ranked list (ids best first) on one query's labels: pytrec_eval's ``ndcg_cut_k``."""
    ideal = dcg(sorted((g for g in labels.values() if g > 0), reverse=True), k)
    if ideal <= 0:
        return 0.0
    return dcg([labels.get(d, 0) for d in ranking], k) / ideal


@functools.lru_cache(maxsize=256)
def _count_vectors(n_unjudged: int, n_levels: int) -> np.ndarray:
    """Every (n_1, ..., n_m) >= 0 with sum <= n_unjudged, as rows (m = positive grades of the scale); cached (the
    settle estimate asks for the same sizes thousands of times), read-only."""
    total = math.comb(n_unjudged + n_levels, n_levels)
    if total > MAX_VECTORS:
        raise AnalysisError(f"{n_unjudged} unjudged documents in one question's pool on a {n_levels + 1}-level "
                            f"scale are {total:,} grade counts to check: pool a smaller depth (--k)")
    rows = [c for c in itertools.product(range(n_unjudged + 1), repeat=n_levels) if sum(c) <= n_unjudged]
    out = np.array(rows, dtype=np.int64).reshape(len(rows), n_levels)
    out.flags.writeable = False
    return out


@dataclass
class QueryPool:
    """One query as the bound sees it: the unjudged documents, every possible grade count and its ideal DCG."""

    unjudged: list[str]  # ids, sorted
    levels: np.ndarray  # positive grades of the scale, highest first
    vectors: np.ndarray  # (V, m): how many unjudged documents get each level (same order as `levels`)
    idcg: np.ndarray  # (V,): the ideal DCG@k for each count vector


def query_pool(unjudged: Sequence[str], judged: Mapping[str, int], scale: Sequence[int], k: int) -> QueryPool:
    """The count vectors of a query's unjudged documents and the ideal DCG@k of each (judged grades included)."""
    levels = np.array(sorted({g for g in scale if g > 0}, reverse=True), dtype=np.float64)
    if levels.size == 0:
        raise AnalysisError(f"the grade scale {sorted(scale)} has no positive grade: nothing can be relevant")
    docs = sorted(set(unjudged))
    vectors = _count_vectors(len(docs), levels.size)
    values = sorted({float(g) for g in judged.values() if g > 0} | set(levels.tolist()), reverse=True)
    counts = np.zeros((len(vectors), len(values)), dtype=np.int64)
    for j, v in enumerate(values):
        counts[:, j] = sum(1 for g in judged.values() if float(g) == v)
        hit = np.flatnonzero(levels == v)
        if hit.size:
            counts[:, j] += vectors[:, hit[0]]
    cum_disc = np.concatenate([[0.0], np.cumsum(discounts(k))])
    upto = np.minimum(np.cumsum(counts, axis=1), k)
    before = np.concatenate([np.zeros((len(vectors), 1), dtype=np.int64), upto[:, :-1]], axis=1)
    idcg = ((cum_disc[upto] - cum_disc[before]) * np.array(values)).sum(axis=1)
    return QueryPool(docs, levels, vectors, idcg)


def _gain_weights(ranking: Sequence[str], k: int) -> dict[str, float]:
    d = discounts(k)
    return {doc: float(d[r]) for r, doc in enumerate(ranking[:k])}


def diff_range(pool: QueryPool, judged: Mapping[str, int], top_a: Sequence[str], top_b: Sequence[str],
               k: int) -> tuple[float, float, float]:
    """(now, lowest, highest) of nDCG@k(A) - nDCG@k(B) on one query over every grading of its unjudged documents
    (now: the unjudged graded 0, what mteb scores today)."""
    wa, wb = _gain_weights(top_a, k), _gain_weights(top_b, k)
    const = sum(g * (wa.get(d, 0.0) - wb.get(d, 0.0)) for d, g in judged.items() if g > 0)
    w = np.array([wa.get(d, 0.0) - wb.get(d, 0.0) for d in pool.unjudged], dtype=np.float64)
    now = const / pool.idcg[0] if pool.idcg[0] > 0 else 0.0  # row 0 is the all-zero count vector
    return now, -_best(pool, -const, -w), _best(pool, const, w)


def _best(pool: QueryPool, const: float, w: np.ndarray) -> float:
    """max over count vectors of (const + sum w_i g_i, the highest grades on the largest w) / IDCG (0 where
    IDCG is 0): the max over every grading (the min: pass -const and -w, negate the result)."""
    order = np.sort(w)[::-1]
    prefix = np.concatenate([[0.0], np.cumsum(order)])
    ends = np.cumsum(pool.vectors, axis=1)  # level j fills sorted slots [ends[j-1], ends[j])
    starts = np.concatenate([np.zeros((len(ends), 1), dtype=np.int64), ends[:, :-1]], axis=1)
    num = const + ((prefix[ends] - prefix[starts]) * pool.levels).sum(axis=1)
    safe = np.where(pool.idcg > 0, pool.idcg, 1.0)
    ratio = np.where(pool.idcg > 0, num / safe, 0.0)
    return float(ratio.max())


#: a bound within this of 0 is not called a win (float sums differ from trec_eval's in the last bits)
EPS = 1e-12


@dataclass
class PairBound:
    """The mean nDCG@k difference of A minus B over the queries: now, and its range over the unjudged grades."""

    a: str
    b: str
    now: float
    low: float
    high: float
    unjudged: int  # unjudged (query, document) pairs in A's or B's top-k
    queries: int

    @property
    def verdict(self) -> str:
        """'A' or 'B' when the sign holds for every grading, 'tie' when every grading gives 0, else 'open'."""
        if self.low > EPS:
            return "A"
        if self.high < -EPS:
            return "B"
        return "tie" if self.low >= -EPS and self.high <= EPS else "open"


def pair_bounds(rankings: Mapping[str, Mapping[str, Mapping[str, float]]], qrels: Mapping[str, Mapping[str, int]],
                scale: Sequence[int], k: int = 10) -> list[PairBound]:
    """Every pair of `rankings`' candidates (name -> query -> {doc: score}, in the order given): the mean over the
    qrels' queries of nDCG@k(A) - nDCG@k(B), now and at its adversarial bounds (module docstring)."""
    names = list(rankings)
    pairs = list(itertools.combinations(range(len(names)), 2))
    sums = np.zeros((len(pairs), 3))
    unjudged = np.zeros(len(pairs), dtype=np.int64)
    queries = sorted(qrels)
    for q in queries:
        labels = qrels[q]
        tops = [ranked_ids(rankings[n].get(q, {}))[:k] for n in names]
        pool = query_pool([d for t in tops for d in t if d not in labels], labels, scale, k)
        for p, (i, j) in enumerate(pairs):
            sums[p] += diff_range(pool, labels, tops[i], tops[j], k)
            unjudged[p] += len({d for d in tops[i] + tops[j] if d not in labels})
    n = max(len(queries), 1)
    return [PairBound(names[i], names[j], *(sums[p] / n).tolist(), int(unjudged[p]), len(queries))
            for p, (i, j) in enumerate(pairs)]
