"""The decisive order (issue 39): the stated rule on a small example, deterministic for a seed, and the plan that
deals the items in it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from runners.labels.pool.decisive_order import decide_pairs, decisive_order
from runners.statistics.analysis_errors import AnalysisError
from runners.labels.judging.plan import make_plan


def _disc(rank: int) -> float:
    return 1 / math.log2(rank + 1)


RANKINGS = {  # scores give the ranks: A ranks u1 first, B ranks it third, C not at all
    "A": {"q": {"u1": 3.0, "same": 2.0, "u2": 1.0}},
    "B": {"q": {"u2": 3.0, "same": 2.0, "u1": 1.0}},
    "C": {"q": {"u3": 3.0, "same": 2.0, "j": 1.0}},
}
QRELS = {"q": {"j": 2}}


def test_the_weight_is_the_discount_difference_summed_over_candidate_pairs():
    order = {w.doc_id: w.weight for w in decisive_order(RANKINGS, QRELS, k=3)}
    d1, d2, d3 = _disc(1), _disc(2), _disc(3)
    assert set(order) == {"u1", "u2", "u3", "same"}  # judged j is not in the order
    # u1: A rank 1, B rank 3, C absent -> |d1-d3| + |d1-0| + |d3-0|
    assert order["u1"] == pytest.approx(abs(d1 - d3) + d1 + d3)
    assert order["u2"] == pytest.approx(abs(d3 - d1) + d3 + d1)
    assert order["u3"] == pytest.approx(0 + d1 + d1)  # only C ranks it: A-C and B-C
    assert order["same"] == 0.0  # the same depth everywhere: its grade cannot change a difference
    assert [w.doc_id for w in decisive_order(RANKINGS, QRELS, k=3)][-1] == "same"
    # --decide A,B: only that pair's differences count; C's u3 cannot move it
    ab = {w.doc_id: w.weight for w in decisive_order(RANKINGS, QRELS, k=3, pairs=[("A", "B")])}
    assert ab == {"u1": pytest.approx(d1 - d3), "u2": pytest.approx(d1 - d3), "same": 0.0}
    # a shallower cut: u1 is outside B's top-2, so it counts in full
    assert {w.doc_id: w.weight for w in decisive_order(RANKINGS, QRELS, k=2, pairs=[("A", "B")])}["u1"] == \
        pytest.approx(d1)


def test_deterministic_for_a_seed_and_heaviest_first():
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(30)]
    rankings = {m: {f"q{q}": {d: float(rng.random()) for d in rng.choice(docs, 12, replace=False)} for q in range(20)}
                for m in ("A", "B", "C")}
    qrels = {f"q{q}": {"d0": 1} for q in range(20)}
    one = decisive_order(rankings, qrels, 10, seed=3)
    assert one == decisive_order(rankings, qrels, 10, seed=3)
    weights = [w.weight for w in one]
    assert weights == sorted(weights, reverse=True)
    other = decisive_order(rankings, qrels, 10, seed=4)
    assert [w.weight for w in other] == weights  # another seed only reorders equal weights
    assert [(w.query_id, w.doc_id) for w in other] != [(w.query_id, w.doc_id) for w in one]


def test_bad_decide_and_the_plan_keeps_the_order():
    with pytest.raises(AnalysisError, match="not among"):
        decisive_order(RANKINGS, QRELS, 3, pairs=[("A", "Z")])
    with pytest.raises(AnalysisError, match="two candidates"):
        decide_pairs("A", lambda keys: keys)
    assert decide_pairs("A,B;B,C", lambda keys: keys) == [("A", "B"), ("B", "C")]
    keys = [("test", "q", d) for d in ("a", "b", "c", "d", "e")]
    order = [("test", "q", d) for d in ("e", "c")]
    share = make_plan(keys, ["ana", "bo"], overlap=0.2, seed=0, order=order)
    assert share["ana"][0] == ("test", "q", "e") and share["bo"][0] == ("test", "q", "e")  # first: two raters
    assert share["ana"][1] == ("test", "q", "c") or share["bo"][1] == ("test", "q", "c")
    assert sorted(set(share["ana"]) | set(share["bo"])) == keys
    assert make_plan(keys, ["ana", "bo"], 0.2, 0) == make_plan(keys, ["ana", "bo"], 0.2, 0, order=None)
