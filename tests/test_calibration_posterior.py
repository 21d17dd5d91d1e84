"""The calibration's own uncertainty (issue 47's stop): the Dirichlet draws have the moments scipy gives for their
parameters, a group people judged is pinned by its counts while one nobody judged is spread around its parent, the
averaged verdict probability equals the average of the per-draw exact ones, and the stop asks the verdicts to hold
all together."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from runners.labels.verdicts.calibration_posterior import PRIOR_POOLED, RATE_SMOOTHING, calibration_draws
from runners.labels.verdicts.confidence_stop import ConfidenceReport, Calibrated
from runners.labels.verdicts.verdict_confidence import PairConfidence, pair_confidence, pair_confidence_averaged
from tests.test_verdict_confidence import _case

GRID = [0, 1, 2]


def _groups(n: int, group: str, band: str = "1") -> dict[tuple[str, str], tuple[str, str]]:
    return {(f"q{i}", f"{group}{i}"): (f"{group}|{band}", band) for i in range(n)}


def test_pooled_cell_draws_have_the_dirichlet_moments_of_its_counts():
    """One LLM grade, one band, one group: the pooled level draws Dirichlet(PRIOR_POOLED * rates + counts)."""
    groups = _groups(60, "a")
    human = {key: [0, 0, 0, 1, 2][i % 5] for i, key in enumerate(sorted(groups))}
    llm = {key: 1 for key in groups}
    draws = calibration_draws(human, llm, GRID, groups, draws=20000, seed=3, group_prior=1e9)  # children = parent
    counts = np.bincount(list(human.values()), minlength=3).astype(float)
    rates = (counts + RATE_SMOOTHING) / (counts.sum() + RATE_SMOOTHING * 3)
    ref = stats.dirichlet(PRIOR_POOLED * rates + counts)
    sample = draws.tables[:, 0, :]
    assert np.allclose(sample.mean(axis=0), ref.mean(), atol=3e-3)
    assert np.allclose(sample.var(axis=0), ref.var(), rtol=0.08)


def test_a_judged_group_is_pinned_an_unjudged_one_spread():
    judged, unjudged = _groups(200, "a"), _groups(50, "b")
    human = {key: (2 if i % 4 == 0 else 0) for i, key in enumerate(sorted(judged))}  # a: 25% relevant
    llm = {key: 2 for key in {**judged, **unjudged}}
    draws = calibration_draws(human, llm, GRID, {**judged, **unjudged}, draws=4000, seed=1)
    a = draws.tables[:, draws.cell_of[next(iter(judged))]]
    b = draws.tables[:, draws.cell_of[next(iter(unjudged))]]
    assert abs(a[:, 2].mean() - 0.25) < 0.02 and a[:, 2].std() < 0.04  # its own 200 pairs
    assert b[:, 2].std() > 3 * a[:, 2].std()  # nobody judged it: only its parent's rates, loosely
    assert abs(b[:, 2].mean() - a[:, 2].mean()) < 0.05  # ... centred on them


@pytest.mark.parametrize("seed", [0, 1])
def test_averaged_probability_is_the_mean_of_each_draws_exact_one(seed):
    rankings, qrels, scale, k, _ = _case(seed, n_queries=3, n_docs=7, k=3)
    pool = sorted({(q, d) for r in rankings.values() for q in qrels for d in list(r[q])[:k] if d not in qrels[q]})
    rng = np.random.default_rng(seed)
    cell_of = {key: i % 2 for i, key in enumerate(pool)}
    tables = rng.dirichlet(np.ones(3), size=(3, 2))  # 3 draws, 2 cells
    averaged = pair_confidence_averaged(rankings, qrels, scale, tables, cell_of, k)
    per_draw = [pair_confidence(rankings, qrels, scale, lambda q, d, t=t: t[cell_of[(q, d)]], k) for t in tables]
    for i, pc in enumerate(averaged):
        rows = [draw[i] for draw in per_draw]
        assert pc.p_a == pytest.approx(np.mean([r.p_a for r in rows]), abs=1e-12)
        assert pc.p_b == pytest.approx(np.mean([r.p_b for r in rows]), abs=1e-12)
        assert pc.mean == pytest.approx(np.mean([r.mean for r in rows]), abs=1e-12)
        total_var = np.mean([r.sd ** 2 for r in rows]) + np.var([r.mean for r in rows])
        assert pc.sd == pytest.approx(np.sqrt(total_var), abs=1e-12)
        assert pc.now == pytest.approx(rows[0].now, abs=1e-12)


def test_the_stop_asks_the_verdicts_to_hold_all_together():
    def report(*ps: float) -> ConfidenceReport:
        pairs = [PairConfidence(f"a{i}", f"b{i}", 0.1, 0.1, 0.05, p, 1 - p) for i, p in enumerate(ps)]
        return ConfidenceReport(pairs, 0.95, Calibrated(lambda q, d: [1.0], 100, 100, None, ""))

    assert report(0.99, 0.98, 0.97).together == pytest.approx(0.94)
    assert not report(0.99, 0.98, 0.97).reached  # each above 95%, together not
    assert report(0.99, 0.99, 0.975).reached
    assert report(0.96).reached and not report(0.94).reached
