"""Adversarial bounds of a paired nDCG@k difference (issue 39): equal to enumerating every grading of the unjudged
pairs and scoring each with pytrec_eval (what mteb scores with), and "settled" only when no grading reverses it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from runners.labels.pool.verdict_bounds import EPS, ndcg, pair_bounds

pytrec_eval = pytest.importorskip("pytrec_eval")


def _trec_ndcg(run: dict, qrels: dict, k: int) -> dict[str, float]:
    ev = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    return {q: v[f"ndcg_cut_{k}"] for q, v in ev.evaluate(run).items()}


def _generated(rng: np.random.Generator, n_models: int, n_queries: int, n_docs: int, k: int, scale: list[int]):
    """Random rankings over a small corpus and random labels for some documents (every query keeps one)."""
    docs = [f"d{i}" for i in range(n_docs)]
    rankings = {f"m{m}": {f"q{q}": {d: float(rng.integers(0, 4)) for d in rng.choice(docs, size=rng.integers(1, k + 2),
                                                                                       replace=False)}
                          for q in range(n_queries)} for m in range(n_models)}
    qrels = {}
    for q in range(n_queries):
        chosen = rng.choice(docs, size=rng.integers(1, n_docs), replace=False)
        qrels[f"q{q}"] = {str(d): int(rng.choice(scale)) for d in chosen}
    return rankings, qrels


def _brute(rankings, qrels, scale, k):
    """(min, max) of every pair's mean difference over every grading of the unjudged pooled pairs, via pytrec_eval."""
    from runners.labels.pool.judged import ranked_ids

    pool = sorted({(q, d) for r in rankings.values() for q in qrels for d in ranked_ids(r.get(q, {}))[:k]
                   if d not in qrels[q]})
    names = list(rankings)
    lo = {p: np.inf for p in itertools.combinations(names, 2)}
    hi = {p: -np.inf for p in lo}
    for grades in itertools.product(scale, repeat=len(pool)):
        full = {q: dict(v) for q, v in qrels.items()}
        for (q, d), g in zip(pool, grades):
            full[q][d] = g
        means = {}
        for n in names:
            s = _trec_ndcg({q: rankings[n].get(q, {}) for q in qrels if rankings[n].get(q)}, full, k)
            means[n] = np.mean([s.get(q, 0.0) for q in sorted(qrels)])
        for a, b in lo:
            lo[(a, b)] = min(lo[(a, b)], means[a] - means[b])
            hi[(a, b)] = max(hi[(a, b)], means[a] - means[b])
    return lo, hi, len(pool)


def test_ndcg_equals_pytrec_eval():
    rng = np.random.default_rng(1)
    for _ in range(200):
        rankings, qrels = _generated(rng, 1, 3, 14, 10, [0, 1, 2, 3])
        run = rankings["m0"]
        trec = _trec_ndcg(run, qrels, 10)
        from runners.labels.pool.judged import ranked_ids

        for q, v in trec.items():
            assert ndcg(ranked_ids(run[q]), qrels[q], 10) == pytest.approx(v, abs=1e-12)


@pytest.mark.parametrize("scale,seed", [([0, 1, 2], 0), ([0, 1, 2], 1), ([0, 1, 3], 2), ([0, 1], 3),
                                        ([0, 1, 2], 4), ([0, 1, 2], 5)])
def test_bounds_equal_brute_force_enumeration(scale, seed):
    rng = np.random.default_rng(seed)
    checked = settled = 0
    while checked < 8:
        k = int(rng.integers(2, 5))
        rankings, qrels = _generated(rng, int(rng.integers(2, 4)), 2, 7, k, scale)
        lo, hi, n = _brute(rankings, qrels, scale, k)
        if n > 6 or n == 0:
            continue
        checked += 1
        for pb in pair_bounds(rankings, qrels, scale, k):
            assert pb.low == pytest.approx(lo[(pb.a, pb.b)], abs=1e-12)
            assert pb.high == pytest.approx(hi[(pb.a, pb.b)], abs=1e-12)
            assert pb.low - 1e-12 <= pb.now <= pb.high + 1e-12  # today's scores are one of the gradings
            # "settled" never when some grading reverses (or ties) it
            if pb.verdict == "A":
                assert lo[(pb.a, pb.b)] > 0
                settled += 1
            elif pb.verdict == "B":
                assert hi[(pb.a, pb.b)] < 0
                settled += 1
            elif pb.verdict == "tie":
                assert abs(lo[(pb.a, pb.b)]) <= EPS and abs(hi[(pb.a, pb.b)]) <= EPS
            elif pb.verdict == "open":
                assert lo[(pb.a, pb.b)] <= EPS and hi[(pb.a, pb.b)] >= -EPS
    assert settled  # the generated pools hold settled verdicts too, so the check above is exercised


def test_the_ideal_dcg_is_part_of_the_adversary():
    """A's unjudged document graded 2 is not B's worst case: it also raises the ideal DCG, so a negative difference
    shrinks toward 0. Bounds that treat the ideal as fixed would be wrong here."""
    rankings = {"A": {"q": {"u": 2.0, "x": 1.0}}, "B": {"q": {"r": 2.0, "x": 1.0}}}
    qrels = {"q": {"r": 2, "x": 0}}
    (pb,) = pair_bounds(rankings, qrels, [0, 1, 2], k=2)
    lo, hi, _ = _brute(rankings, qrels, [0, 1, 2], 2)
    assert pb.now == pytest.approx(-1.0)
    assert (pb.low, pb.high) == (pytest.approx(lo[("A", "B")]), pytest.approx(hi[("A", "B")]))
    assert pb.high == pytest.approx(0.0) and pb.verdict == "open"  # u graded 2: A and B tie, never A ahead
