"""How likely a verdict is to hold (issue 47): the exact moments of the nDCG@k difference equal enumerating every
grading of the unjudged pairs (each weighted by its probability, scored by pytrec_eval) to 1e-9, the Monte Carlo
probability is within its sampling error of the enumerated one, and the normal and Monte Carlo methods agree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from runners.labels.pool.judged import ranked_ids
from runners.labels.verdicts.verdict_confidence import pair_confidence

pytrec_eval = pytest.importorskip("pytrec_eval")


def _trec_mean(run: dict, qrels: dict, k: int) -> float:
    ev = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    s = {q: v[f"ndcg_cut_{k}"] for q, v in ev.evaluate({q: r for q, r in run.items() if r}).items()}
    return float(np.mean([s.get(q, 0.0) for q in sorted(qrels)]))


def _case(seed: int, n_queries: int = 3, n_docs: int = 7, k: int = 3, scale=(0, 1, 2)):
    """Three candidates' rankings over a small corpus, some labels, and a random grade distribution per pair."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(n_docs)]
    rankings = {f"m{m}": {f"q{q}": {d: float(rng.random()) for d in rng.choice(docs, size=k, replace=False)}
                          for q in range(n_queries)} for m in range(3)}
    qrels = {f"q{q}": {str(d): int(rng.choice(scale)) for d in rng.choice(docs, size=2, replace=False)}
             for q in range(n_queries)}
    table = {(q, d): rng.dirichlet(np.ones(len(scale))) for q in qrels for d in docs}
    return rankings, qrels, list(scale), k, (lambda q, d: table[(q, d)])


def _enumerate(rankings, qrels, scale, k, probs):
    """Every grading of the unjudged pooled pairs with its probability: (pair -> list of (probability, D))."""
    pool = sorted({(q, d) for r in rankings.values() for q in qrels for d in ranked_ids(r.get(q, {}))[:k]
                   if d not in qrels[q]})
    names = list(rankings)
    out = {p: [] for p in itertools.combinations(names, 2)}
    for grades in itertools.product(range(len(scale)), repeat=len(pool)):
        full = {q: dict(v) for q, v in qrels.items()}
        weight = 1.0
        for (q, d), gi in zip(pool, grades):
            full[q][d] = scale[gi]
            weight *= probs(q, d)[gi]
        means = {n: _trec_mean(rankings[n], full, k) for n in names}
        for a, b in out:
            out[(a, b)].append((weight, means[a] - means[b]))
    return out, len(pool)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_moments_equal_enumeration(seed):
    rankings, qrels, scale, k, probs = _case(seed, n_queries=2, n_docs=6, k=2)  # up to 4 unjudged > k per question
    truth, n_pool = _enumerate(rankings, qrels, scale, k, probs)
    assert 3 <= n_pool <= 8
    for pc in pair_confidence(rankings, qrels, scale, probs, k):
        rows = np.array(truth[(pc.a, pc.b)])
        assert rows[:, 0].sum() == pytest.approx(1.0, abs=1e-12)
        mean = float((rows[:, 0] * rows[:, 1]).sum())
        var = float((rows[:, 0] * (rows[:, 1] - mean) ** 2).sum())
        assert pc.mean == pytest.approx(mean, abs=1e-9)
        assert pc.sd ** 2 == pytest.approx(var, abs=1e-9)
        # today's difference: every unjudged pair graded 0
        zero = {q: dict(v) for q, v in qrels.items()}
        assert pc.now == pytest.approx(_trec_mean(rankings[pc.a], zero, k) - _trec_mean(rankings[pc.b], zero, k),
                                       abs=1e-12)


def test_monte_carlo_within_sampling_error_of_enumeration():
    rankings, qrels, scale, k, probs = _case(5, n_queries=2, n_docs=6, k=2)
    truth, _ = _enumerate(rankings, qrels, scale, k, probs)
    draws = 20000
    for pc in pair_confidence(rankings, qrels, scale, probs, k, method="mc", draws=draws, seed=3):
        rows = np.array(truth[(pc.a, pc.b)])
        p_a = float(rows[rows[:, 1] > 1e-12, 0].sum())
        assert abs(pc.p_a - p_a) <= 4 * np.sqrt(max(p_a * (1 - p_a), 1e-4) / draws) + 1e-9


def test_normal_and_monte_carlo_agree_on_many_questions():
    rankings, qrels, scale, k, probs = _case(7, n_queries=60, n_docs=30, k=10)
    normal = pair_confidence(rankings, qrels, scale, probs, k)
    mc = pair_confidence(rankings, qrels, scale, probs, k, method="mc", draws=8000, seed=1)
    for a, b in zip(normal, mc):
        assert a.mean == pytest.approx(b.mean, abs=1e-12)
        assert abs(a.p_a - b.p_a) < 0.03


def test_certain_probabilities_give_a_certain_verdict():
    """Probabilities that put all mass on grade 0: D is today's difference, known for sure."""
    rankings, qrels, scale, k, _ = _case(0)
    sure = pair_confidence(rankings, qrels, scale, lambda q, d: [1.0, 0.0, 0.0], k)
    for pc in sure:
        assert pc.sd == 0 and pc.mean == pytest.approx(pc.now, abs=1e-12)
        assert pc.probability == 1.0


def test_bad_probabilities_are_one_line():
    from runners.statistics.analysis_errors import AnalysisError

    rankings, qrels, scale, k, _ = _case(0)
    with pytest.raises(AnalysisError, match="summing to 1"):
        pair_confidence(rankings, qrels, scale, lambda q, d: [0.5, 0.1, 0.1], k)
