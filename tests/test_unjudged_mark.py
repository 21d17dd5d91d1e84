"""The mark `stats` and `check` print under a verdict (issue 39): "settled" never for a verdict some grading of the
unjudged pairs reverses or ties (brute force: every grading, each scored with pytrec_eval), "in the worst case ...
could reverse" whenever one does, and the same line whichever candidate comes first (stats: config order, check:
baseline first)."""

from __future__ import annotations

import numpy as np
import pytest

from runners.labels.notes.unjudged_mark import mark_lines, unjudged_in_top

pytest.importorskip("pytrec_eval")
from tests.test_verdict_bounds import _brute, _generated  # noqa: E402  (the enumeration the bounds are tested on)


@pytest.mark.parametrize("scale,seed", [([0, 1, 2], 10), ([0, 1], 11), ([0, 1, 3], 12), ([0, 1, 2], 13)])
def test_settled_only_when_no_grading_reverses_the_verdict(scale, seed):
    rng = np.random.default_rng(seed)
    seen: set[str] = set()
    checked = 0
    while checked < 10:
        k = int(rng.integers(2, 5))
        rankings, qrels = _generated(rng, 2, 2, 7, k, scale)
        lo, hi, n = _brute(rankings, qrels, scale, k)
        if n > 6 or n == 0:
            continue
        checked += 1
        labels = {"m0": "A", "m1": "B"}
        (line,) = mark_lines(rankings, labels, qrels, scale, k)
        low, high = lo[("m0", "m1")], hi[("m0", "m1")]
        if ": settled, whatever their grades" in line:
            assert low > 0 or high < 0, (line, low, high)  # no grading reverses or ties it
            seen.add("settled")
        elif ": settled, every grading of them leaves the tie" in line:
            assert abs(low) < 1e-12 and abs(high) < 1e-12
        else:
            assert ": in the worst case their grades could reverse it" in line or \
                ": in the worst case their grades could break the tie" in line
            assert low <= 1e-12 and high >= -1e-12, (line, low, high)  # some grading reverses or ties it
            seen.add("open")
        # one verdict: the other order prints the same line
        assert mark_lines({"m1": rankings["m1"], "m0": rankings["m0"]}, labels, qrels, scale, k) == [line]
        for name, label in labels.items():
            assert f" {unjudged_in_top(rankings[name], qrels, k):,} " in line
    assert seen == {"settled", "open"}, seen  # both marks exercised


def test_counts_are_the_unlabelled_places_of_each_top_k():
    ranking = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"a": 1.0}, "q3": {"z": 1.0}}
    qrels = {"q1": {"a": 2, "c": 0}, "q2": {"x": 1}}  # q3 has no labels: not evaluated, not counted
    assert unjudged_in_top(ranking, qrels, k=2) == 2  # q1's b, q2's a
    assert unjudged_in_top(ranking, qrels, k=3) == 2  # c is judged (grade 0 is a judgment)
