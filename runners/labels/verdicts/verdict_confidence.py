"""How likely each nDCG@k verdict is to hold once every pooled pair is judged (issue 47): minimal test collections.

verdict_bounds.py answers the worst case: could ANY grading of the unjudged pairs reverse the sign of A - B? On
sparse labels the answer is nearly always yes. Carterette, Allan & Sitaraman (SIGIR 2006) ask instead how LIKELY
a reversal is, given a probability of relevance for each unjudged pair. Here each unjudged (question, document)
pair gets a categorical distribution over the task's grades (from the LLM judge's grade, calibrated on the pairs
people judged: confidence_stop.py), the pairs are taken as independent, and the mean difference over the questions

    D = (1/N) sum_q d_q,   d_q = (c_q + sum_i w_i g_i) / IDCG_q(g)

(notation of verdict_bounds.py: w_i = disc_A(i) - disc_B(i), c_q what the judged documents give) is a random
variable. Two ways to get P(D > 0) and P(D < 0):

* ``normal`` (the default, and what the stop uses): the EXACT mean and variance of each d_q, then D as normal
  (a sum of independent per-question terms, so the central limit theorem applies as questions grow). Exact because
  IDCG_q depends only on how many unjudged documents get each grade (capped at k: more than k of one grade fill
  the ideal list alike), so one pass over the documents carries, per count vector v, P(v), E[num 1{v}] and
  E[num^2 1{v}]; then E[d_q] = sum_v E[num 1{v}] / IDCG(v) and E[d_q^2] = sum_v E[num^2 1{v}] / IDCG(v)^2.
  tests/test_verdict_confidence.py checks both moments against enumerating every grading, scored by pytrec_eval,
  to 1e-9.
* ``mc``: Monte Carlo over gradings drawn with a seed (``draws`` of them): no shape assumption, sampling error
  about sqrt(p(1-p)/draws). The test and benchmarks/bench_stopping.py check the two agree.

The verdict is the more likely sign and its probability max(P(D > 0), P(D < 0)); when nothing is left uncertain
(sd 0) D is known and the probability is 1. The probabilities are only as good as the relevance probabilities
and their independence: benchmarks/bench_stopping.py measures how often a 95% verdict matches the full labels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import erfc

from ...statistics.analysis_errors import AnalysisError
from ..pool.judged import ranked_ids
from ..pool.verdict_bounds import EPS, discounts

#: (question, document) -> probability of each grade of the scale (aligned with sorted(scale)), summing to 1
GradeProbs = Callable[[str, str], Sequence[float]]
METHODS = ("normal", "mc")


@dataclass
class PairConfidence:
    """A pair's mean nDCG@k difference A - B: today (unjudged = 0), expected, and how likely each sign is."""

    a: str
    b: str
    now: float
    mean: float  # expected difference over the relevance probabilities
    sd: float  # its standard deviation
    p_a: float  # P(D > 0): A ahead on the full labels
    p_b: float  # P(D < 0)

    @property
    def leader(self) -> str | None:
        """'A' or 'B', the more likely winner; None when a tie is the most likely (nothing left uncertain, D = 0)."""
        if max(self.p_a, self.p_b) < 1 - self.p_a - self.p_b:
            return None
        return "A" if self.p_a >= self.p_b else "B"

    @property
    def probability(self) -> float:
        """How likely the more likely verdict (A ahead, B ahead, or an exact tie) holds on the full labels."""
        return max(self.p_a, self.p_b, 1.0 - self.p_a - self.p_b)


class _Prepared:
    """Every question padded to the same number of unjudged documents, for vectorized passes over them."""

    def __init__(self, rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                 qrels: Mapping[str, Mapping[str, int]], scale: Sequence[int], probs: GradeProbs, k: int,
                 pairs: Sequence[tuple[int, int]]) -> None:
        grid = sorted(set(int(g) for g in scale))
        self.levels = np.array([g for g in grid if g > 0][::-1], dtype=np.float64)  # highest first
        self.level_cols = [grid.index(int(g)) for g in self.levels]  # their columns in a scale-aligned vector
        if self.levels.size == 0:
            raise AnalysisError(f"the grade scale {grid} has no positive grade: nothing can be relevant")
        col = {g: grid.index(g) for g in grid}
        disc = discounts(k)
        names = list(rankings)
        self.queries = sorted(qrels)
        q_n, m = len(self.queries), self.levels.size
        per_q = []
        self.unjudged: list[list[str]] = []
        for q in self.queries:
            labels = qrels[q]
            tops = [ranked_ids(rankings[n].get(q, {}))[:k] for n in names]
            rank = [{d: float(disc[r]) for r, d in enumerate(t)} for t in tops]
            docs = sorted({d for t in tops for d in t if d not in labels})
            self.unjudged.append(docs)
            p = np.zeros((len(docs), m))
            for i, d in enumerate(docs):
                row = np.asarray(probs(q, d), dtype=np.float64)
                if row.shape != (len(grid),) or np.any(row < -1e-12) or abs(row.sum() - 1) > 1e-6:
                    raise AnalysisError(f"relevance probabilities of ({q}, {d}) must be {len(grid)} numbers >= 0 "
                                        f"summing to 1 (one per grade {grid}), got {row.tolist()}")
                p[i] = [row[col[int(g)]] for g in self.levels]
            w = np.array([[rank[i].get(d, 0.0) - rank[j].get(d, 0.0) for d in docs] for i, j in pairs]).reshape(
                len(pairs), len(docs))
            c = np.array([sum(g * (rank[i].get(d, 0.0) - rank[j].get(d, 0.0)) for d, g in labels.items() if g > 0)
                          for i, j in pairs], dtype=np.float64)
            per_q.append((labels, p, w, c))
        self.n_docs = max([len(x[1]) for x in per_q], default=0)
        self.cap = min(k, self.n_docs)
        n = self.n_docs
        self.p = np.zeros((q_n, n, m))  # padded documents: grade 0 for sure, weight 0
        self.w = np.zeros((q_n, len(pairs), n))
        self.c = np.zeros((q_n, len(pairs)))
        for qi, (labels, p, w, c) in enumerate(per_q):
            self.p[qi, :len(p)], self.w[qi, :, :w.shape[1]], self.c[qi] = p, w, c
        self.idcg = np.stack([self._idcg(labels, k) for labels, *_ in per_q]) if per_q else np.zeros((0,))

    def _idcg(self, labels: Mapping[str, int], k: int) -> np.ndarray:
        """IDCG@k for each capped count vector of the unjudged documents (shape (cap+1,)*m), judged grades too."""
        m, cap = self.levels.size, self.cap
        vectors = np.array(list(itertools.product(range(cap + 1), repeat=m)), dtype=np.int64).reshape(-1, m)
        judged = sorted((float(g) for g in labels.values() if g > 0), reverse=True)
        values = sorted(set(judged) | set(self.levels.tolist()), reverse=True)
        counts = np.zeros((len(vectors), len(values)), dtype=np.int64)
        for j, v in enumerate(values):
            counts[:, j] = judged.count(v)
            hit = np.flatnonzero(self.levels == v)
            if hit.size:
                counts[:, j] += vectors[:, hit[0]]
        cum_disc = np.concatenate([[0.0], np.cumsum(discounts(k))])
        upto = np.minimum(np.cumsum(counts, axis=1), k)
        before = np.concatenate([np.zeros((len(vectors), 1), dtype=np.int64), upto[:, :-1]], axis=1)
        return ((cum_disc[upto] - cum_disc[before]) * np.array(values)).sum(axis=1).reshape((cap + 1,) * m)


    def with_cells(self, tables: np.ndarray, cell_of: Mapping[tuple[str, str], int]) -> list[np.ndarray]:
        """The padded probability array of each draw in ``tables`` [draw, cell, grade of the scale]: each unjudged
        pair takes its cell's row (calibration_posterior.py), the padding stays grade 0 for sure."""
        cells = np.full((len(self.queries), self.n_docs), -1, dtype=np.int64)
        for qi, (q, docs) in enumerate(zip(self.queries, self.unjudged)):
            cells[qi, :len(docs)] = [cell_of[(q, d)] for d in docs]
        pos = tables[:, :, self.level_cols]  # [draw, cell, level]
        return [np.where(cells[..., None] >= 0, pos[b][np.maximum(cells, 0)], 0.0) for b in range(len(tables))]


def _shift(x: np.ndarray, axis: int, cap: int) -> np.ndarray:
    """One more document of the level on ``axis``: counts move up by one, those at the cap stay there."""
    out = np.zeros_like(x)
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    if cap > 0:
        src[axis], dst[axis] = slice(0, cap), slice(1, cap + 1)
        out[tuple(dst)] = x[tuple(src)]
    src[axis] = dst[axis] = slice(cap, cap + 1)
    out[tuple(dst)] += x[tuple(src)]
    return out


def query_moments(prep: _Prepared) -> tuple[np.ndarray, np.ndarray]:
    """(mean, variance) of every question's difference d_q, per pair: arrays (questions, pairs); exact (module
    docstring: one pass over the documents carrying P(v), E[num 1{v}], E[num^2 1{v}] per capped count vector v)."""
    q_n, n_pairs = prep.c.shape
    m, cap = prep.levels.size, prep.cap
    shape = (cap + 1,) * m
    prob = np.zeros((q_n, *shape))
    prob[(slice(None),) + (0,) * m] = 1.0
    s1 = np.zeros((q_n, n_pairs, *shape))
    s2 = np.zeros((q_n, n_pairs, *shape))
    pad = (None,) * m  # broadcast over the count axes
    for i in range(prep.n_docs):
        p_i = prep.p[:, i]  # (Q, m)
        p0 = 1.0 - p_i.sum(axis=1)
        w = prep.w[:, :, i][(...,) + pad]  # (Q, P, 1..)
        n_prob = p0[(...,) + pad] * prob
        n_s1 = p0[(slice(None), None) + pad] * s1
        n_s2 = p0[(slice(None), None) + pad] * s2
        for lv in range(m):
            g = prep.levels[lv]
            pl = p_i[:, lv]
            if not np.any(pl):
                continue
            base_p = prob[:, None]
            n_prob += pl[(...,) + pad] * _shift(prob, 1 + lv, cap)
            pl2 = pl[(slice(None), None) + pad]
            n_s1 += pl2 * _shift(s1 + w * g * base_p, 2 + lv, cap)
            n_s2 += pl2 * _shift(s2 + 2 * w * g * s1 + (w * g) ** 2 * base_p, 2 + lv, cap)
        prob, s1, s2 = n_prob, n_s1, n_s2
    idcg = prep.idcg[:, None]  # (Q, 1, ...)
    c = prep.c[(...,) + pad]
    inv = np.where(idcg > 0, 1.0 / np.where(idcg > 0, idcg, 1.0), 0.0)
    axes = tuple(range(2, 2 + m))
    mean = ((c * prob[:, None] + s1) * inv).sum(axis=axes)
    second = ((c ** 2 * prob[:, None] + 2 * c * s1 + s2) * inv ** 2).sum(axis=axes)
    var = second - mean ** 2
    return mean, np.where(var > 1e-15, var, 0.0)  # E[d^2] - E[d]^2 of a certain d leaves float dust


def _sampled(prep: _Prepared, draws: int, seed: int) -> np.ndarray:
    """(draws, pairs) mean differences over gradings drawn from the probabilities (questions in chunks)."""
    rng = np.random.default_rng([int(seed), 47])
    q_n, n_pairs = prep.c.shape
    m, cap = prep.levels.size, prep.cap
    total = np.zeros((draws, n_pairs))
    cum = np.cumsum(prep.p, axis=2)  # (Q, n, m): P(level index <= j)
    for qi in range(q_n):
        u = rng.random((draws, prep.n_docs))
        below = (u[:, :, None] < cum[qi][None]).any(axis=2)  # drew some positive level
        idx = np.where(below, (u[:, :, None] >= cum[qi][None]).sum(axis=2), m)  # m: grade 0
        gains = np.where(idx < m, np.append(prep.levels, 0.0)[idx], 0.0)  # (draws, n)
        num = prep.c[qi][None] + gains @ prep.w[qi].T  # (draws, P)
        counts = np.stack([np.minimum((idx == lv).sum(axis=1), cap) for lv in range(m)], axis=1)
        idcg = prep.idcg[qi][tuple(counts.T)]
        total += np.where(idcg[:, None] > 0, num / np.where(idcg > 0, idcg, 1.0)[:, None], 0.0)
    return total / max(q_n, 1)


def pair_confidence(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                    qrels: Mapping[str, Mapping[str, int]], scale: Sequence[int], probs: GradeProbs, k: int = 10,
                    method: str = "normal", draws: int = 4000, seed: int = 0) -> list[PairConfidence]:
    """Every pair of `rankings`' candidates (in order): today's mean nDCG@k difference over the qrels' questions,
    its expected value and sd over the unjudged pairs' grade probabilities `probs`, and how likely each sign is
    (module docstring: ``normal`` exact moments + normal approximation, ``mc`` Monte Carlo with a seed)."""
    if method not in METHODS:
        raise AnalysisError(f"unknown verdict-probability method {method!r} ({' | '.join(METHODS)})")
    names = list(rankings)
    pairs = list(itertools.combinations(range(len(names)), 2))
    prep = _Prepared(rankings, qrels, scale, probs, k, pairs)
    n = max(len(prep.queries), 1)
    origin = (slice(None),) + (0,) * prep.levels.size
    idcg0 = prep.idcg[origin] if len(prep.queries) else np.zeros(0)
    now = (np.where(idcg0[:, None] > 0, prep.c / np.where(idcg0 > 0, idcg0, 1.0)[:, None], 0.0).sum(axis=0) / n
           if len(prep.queries) else np.zeros(len(pairs)))
    mean_q, var_q = query_moments(prep) if len(prep.queries) else (np.zeros((0, len(pairs))),) * 2
    mean, sd = mean_q.sum(axis=0) / n, np.sqrt(var_q.sum(axis=0)) / n
    if method == "mc":
        sample = _sampled(prep, draws, seed)
        p_a, p_b = (sample > EPS).mean(axis=0), (sample < -EPS).mean(axis=0)
    else:
        p_a, p_b = np.zeros(len(pairs)), np.zeros(len(pairs))
        for p in range(len(pairs)):
            if sd[p] <= EPS:
                p_a[p], p_b[p] = float(mean[p] > EPS), float(mean[p] < -EPS)
            else:
                z = mean[p] / sd[p]
                p_a[p] = 0.5 * math.erfc(-z / math.sqrt(2))
                p_b[p] = 1.0 - p_a[p]
    return [PairConfidence(names[i], names[j], float(now[p]), float(mean[p]), float(sd[p]), float(p_a[p]),
                           float(p_b[p])) for p, (i, j) in enumerate(pairs)]


def pair_confidence_averaged(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                             qrels: Mapping[str, Mapping[str, int]], scale: Sequence[int], tables: np.ndarray,
                             cell_of: Mapping[tuple[str, str], int], k: int = 10) -> list[PairConfidence]:
    """As pair_confidence (``normal``), with the grade probabilities themselves uncertain: ``tables`` holds draws of
    each cell's probabilities (calibration_posterior.py), ``cell_of`` each unjudged pair's cell. P(A ahead) is the
    average over the draws of each draw's normal probability (the law of total probability); mean and sd are the
    difference's over both layers (sd: within-draw variance averaged plus the variance of the draws' means)."""
    names = list(rankings)
    pairs = list(itertools.combinations(range(len(names)), 2))
    grid = sorted(set(int(g) for g in scale))
    prep = _Prepared(rankings, qrels, scale, lambda q, d: [1.0] + [0.0] * (len(grid) - 1), k, pairs)
    n = max(len(prep.queries), 1)
    origin = (slice(None),) + (0,) * prep.levels.size
    idcg0 = prep.idcg[origin] if len(prep.queries) else np.zeros(0)
    now = (np.where(idcg0[:, None] > 0, prep.c / np.where(idcg0 > 0, idcg0, 1.0)[:, None], 0.0).sum(axis=0) / n
           if len(prep.queries) else np.zeros(len(pairs)))
    draws = prep.with_cells(np.asarray(tables, dtype=np.float64), cell_of)
    means, sds = np.zeros((max(len(draws), 1), len(pairs))), np.zeros((max(len(draws), 1), len(pairs)))
    if len(prep.queries):
        for i, p_draw in enumerate(draws):  # one pass per draw: stacking draws on the question axis was slower
            prep.p = p_draw  # (3.5x on a generated collection: the arrays outgrow the cache)
            mean_q, var_q = query_moments(prep)
            means[i], sds[i] = mean_q.sum(axis=0) / n, np.sqrt(var_q.sum(axis=0)) / n
    z = np.where(sds > EPS, means / np.where(sds > EPS, sds, 1.0), 0.0)
    up = 0.5 * erfc(-z / math.sqrt(2))
    p_a = np.where(sds > EPS, up, (means > EPS).astype(float))
    p_b = np.where(sds > EPS, 1.0 - up, (means < -EPS).astype(float))
    variances = sds ** 2
    mean_all = np.mean(means, axis=0)
    sd_all = np.sqrt(np.mean(variances, axis=0) + np.var(means, axis=0))
    pa, pb = np.mean(p_a, axis=0), np.mean(p_b, axis=0)
    return [PairConfidence(names[i], names[j], float(now[p]), float(mean_all[p]), float(sd_all[p]), float(pa[p]),
                           float(pb[p])) for p, (i, j) in enumerate(pairs)]
