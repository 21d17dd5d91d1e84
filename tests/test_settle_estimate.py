"""`labels status`' estimate of the judgments that would settle a pair (issue 39): judging the decisive order's
first n pairs as not relevant settles the pair, the first n - 1 do not (checked with the bounds recomputed from
scratch, not with the estimate's own running sums)."""

from __future__ import annotations

import numpy as np
import pytest

from runners.labels.pool.decisive_order import decisive_order
from runners.labels.pool.settle_estimate import judgments_to_settle
from runners.labels.pool.verdict_bounds import pair_bounds


def _pool(rng: np.random.Generator, n_models: int, n_queries: int, n_docs: int, k: int):
    """Candidates that rank by a hidden grade plus noise of their own size; some documents labelled."""
    rankings = {f"m{m}": {} for m in range(n_models)}
    qrels = {}
    for q in range(n_queries):
        grades = rng.choice([0, 0, 0, 1, 2], size=n_docs)
        for m in range(n_models):
            score = grades + rng.normal(0, 0.5 + m, n_docs)
            top = np.argsort(-score)[:k]
            rankings[f"m{m}"][f"q{q}"] = {f"d{j}": float(score[j]) for j in top}
        labelled = rng.choice(n_docs, size=int(rng.integers(1, n_docs // 2)), replace=False)
        qrels[f"q{q}"] = {f"d{j}": int(grades[j]) for j in labelled}
    return rankings, qrels


def _settled(rankings, qrels, scale, k, a, b) -> bool:
    (pb,) = [p for p in pair_bounds(rankings, qrels, scale, k) if (p.a, p.b) == (a, b)]
    return pb.verdict in ("A", "B")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_estimate_is_the_first_prefix_of_the_decisive_order_that_settles(seed):
    rng = np.random.default_rng(seed)
    scale, k = [0, 1, 2], 4
    rankings, qrels = _pool(rng, 3, 12, 9, k)
    est = judgments_to_settle(rankings, qrels, scale, k, seed=seed)
    order = decisive_order(rankings, qrels, k, seed=seed)
    seen = set()
    for (a, b), n in est.items():
        def after(m: int):
            graded = {q: dict(v) for q, v in qrels.items()}
            for w in order[:m]:
                graded[w.query_id][w.doc_id] = 0
            return graded

        if n is None:  # the whole pool graded 0 leaves it open: today's difference is 0
            assert not _settled(rankings, after(len(order)), scale, k, a, b)
            seen.add("never")
            continue
        assert _settled(rankings, after(n), scale, k, a, b)
        if n > 0:
            assert not _settled(rankings, after(n - 1), scale, k, a, b)
            seen.add("open")
        else:
            seen.add("settled")
    assert "open" in seen  # the generated pools hold pairs that need judging, so the check is exercised


def test_a_pair_tied_today_is_never_settled_by_grades_that_keep_it_tied():
    rankings = {"A": {"q": {"x": 2.0, "u": 1.0}}, "B": {"q": {"u": 2.0, "x": 1.0}}}
    qrels = {"q": {"r": 2}}  # neither found r: both score 0 today
    assert judgments_to_settle(rankings, qrels, [0, 1, 2], k=2) == {("A", "B"): None}
    settled = {"A": {"q": {"r": 2.0}}, "B": {"q": {"x": 2.0}}}
    assert judgments_to_settle(settled, {"q": {"r": 2, "x": 0}}, [0, 1, 2], k=1) == {("A", "B"): 0}
