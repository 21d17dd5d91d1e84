"""The stopping rule (issue 47): the unjudged pairs' probabilities are the calibration's (runners/statistics/
relevance_calibration.py) for their LLM grade, the pooled human rates without one, none on too thin a sample; the
stop fires at the configured confidence and not before."""

from __future__ import annotations

import numpy as np
import pytest

from runners.labels.verdicts.confidence_stop import MIN_CALIBRATION, grade_probabilities, verdict_confidence
from runners.statistics.relevance_calibration import calibrate_relevance

SCALE = [0, 1, 2]


def _judged(rng, n=80):
    human = {(f"q{i % 9}", f"d{i}"): int(rng.choice(SCALE, p=[0.6, 0.25, 0.15])) for i in range(n)}
    llm = {key: (h if rng.random() < 0.7 else int(rng.choice(SCALE))) for key, h in human.items()}
    return human, llm


def test_probabilities_are_the_calibration_for_the_llm_grade():
    rng = np.random.default_rng(0)
    human, llm = _judged(rng)
    llm = {**llm, ("q1", "new0"): 0, ("q1", "new2"): 2}
    cal = grade_probabilities(human, llm, SCALE)
    ref = calibrate_relevance([(llm[k], h) for k, h in human.items()], scale=SCALE)
    for key, g in [(("q1", "new0"), 0), (("q1", "new2"), 2)]:
        assert cal.probs(*key) == pytest.approx([ref.p_grade(g, h) for h in SCALE], abs=1e-12)
    grades = list(human.values())  # a pair the judge did not grade: the human grades' rates
    assert cal.probs("q1", "ungraded") == pytest.approx([grades.count(g) / len(grades) for g in SCALE], abs=1e-12)
    assert cal.with_llm == len(human) and "calibrated on 80 judged pooled pairs" in cal.why


def test_no_probabilities_on_too_thin_or_one_valued_samples():
    rng = np.random.default_rng(1)
    human, llm = _judged(rng, MIN_CALIBRATION - 1)
    assert grade_probabilities(human, llm, SCALE).probs is None
    zeros = {k: 0 for k in _judged(rng, 100)[0]}
    thin = grade_probabilities(zeros, llm, SCALE)
    assert thin.probs is None and "two different grades" in thin.why


def _collection(rng, n_queries=40, n_docs=30, k=5):
    docs = [f"d{i}" for i in range(n_docs)]
    truth = {f"q{q}": {d: int(rng.choice(SCALE, p=[0.7, 0.2, 0.1])) for d in docs} for q in range(n_queries)}
    rankings = {name: {q: {d: truth[q][d] + float(rng.normal(0, s)) for d in docs} for q in truth}
                for name, s in (("good", 0.5), ("bad", 2.0))}
    return rankings, truth, k


def test_the_stop_fires_at_the_configured_confidence_and_not_before():
    """Reveal the truth pair by pair: `reached` is first true exactly where every probability is >= the level,
    for two levels; a higher level never stops earlier."""
    rng = np.random.default_rng(2)
    rankings, truth, k = _collection(rng)
    pool = sorted({(q, d) for r in rankings.values() for q in truth
                   for d in sorted(r[q], key=r[q].get, reverse=True)[:k]})
    llm = {key: truth[key[0]][key[1]] for key in pool}
    stops = {}
    for level in (0.9, 0.999):
        known = {q: {} for q in truth}
        for n, (q, d) in enumerate(pool[::3], 1):
            known[q][d] = truth[q][d]
            rep = verdict_confidence(rankings, known, SCALE, k, llm, level)
            if not rep.pairs:
                assert not rep.reached
                continue
            assert rep.reached == all(pc.probability >= level for pc in rep.pairs)
            if rep.reached:
                stops[level] = n
                break
    assert stops[0.9] <= stops.get(0.999, len(pool))


def test_a_group_of_pairs_with_enough_calibration_pairs_is_fitted_on_its_own():
    """Pairs grouped by which candidates retrieved them: a group with MIN_CALIBRATION pairs gets the calibration of
    its own pairs (a judge that overcalls one candidate's documents is corrected there), a thin group the pooled."""
    rng = np.random.default_rng(3)
    human, llm = _judged(rng, 120)
    keys = sorted(human)
    strata = {key: ("bm25" if n < 60 else "dense" if n < 110 else "both") for n, key in enumerate(keys)}
    for key in keys[:60]:  # the judge calls every bm25 document a 2
        llm[key] = 2
    strata.update({("q0", "u_bm25"): "bm25", ("q0", "u_both"): "both", ("q0", "u_dense"): "dense"})
    llm.update({("q0", "u_bm25"): 2, ("q0", "u_both"): 2, ("q0", "u_dense"): 2})
    cal = grade_probabilities(human, llm, SCALE, strata)
    fit = lambda ks: calibrate_relevance([(llm[k], human[k]) for k in ks], scale=SCALE)  # noqa: E731
    assert cal.probs("q0", "u_bm25") == pytest.approx([fit(keys[:60]).p_grade(2, h) for h in SCALE], abs=1e-7)  # the optimizer's tolerance: pairs in another order
    assert cal.probs("q0", "u_dense") == pytest.approx([fit(keys[60:110]).p_grade(2, h) for h in SCALE], abs=1e-7)  # the optimizer's tolerance: pairs in another order
    assert cal.probs("q0", "u_both") == pytest.approx([fit(keys).p_grade(2, h) for h in SCALE], abs=1e-7)  # the optimizer's tolerance: pairs in another order
    assert "2 groups" in cal.why


def test_more_questions_is_the_ppi_count_on_the_fully_judged_questions():
    """`labels status`' "more questions": the questions whose every pooled pair people judged are the labelled
    sample, the rest LLM-only, and the count is questions_to_resolve of the PPI++ paired difference on them."""
    from runners.labels.verdicts.label_status import questions_to_resolve_pairs
    from runners.labels.pool.verdict_bounds import ndcg
    from runners.statistics.prediction_powered import ppi_paired_difference, questions_to_resolve

    rng = np.random.default_rng(4)
    rankings, truth, k = _collection(rng, n_queries=60, n_docs=20)
    tops = {n: {q: sorted(r[q], key=r[q].get, reverse=True)[:k] for q in truth} for n, r in rankings.items()}
    sample = sorted(truth)[:25]
    human = {q: ({d: truth[q][d] for n in tops for d in tops[n][q]} if q in sample else {}) for q in truth}
    llm = {(q, d): truth[q][d] if rng.random() < 0.8 else 0 for q in truth for n in tops for d in tops[n][q]}
    got = questions_to_resolve_pairs(rankings, human, llm, k)
    rest = sorted(truth)[25:]
    judge = {q: {d: g for (qq, d), g in llm.items() if qq == q} for q in truth}
    y = {n: [ndcg(tops[n][q], human[q], k) for q in sample] for n in tops}
    yh = {n: [ndcg(tops[n][q], judge[q], k) for q in sample] for n in tops}
    yu = {n: [ndcg(tops[n][q], judge[q], k) for q in rest] for n in tops}
    est = ppi_paired_difference(y["good"], y["bad"], yh["good"], yh["bad"], yu["good"], yu["bad"])
    assert got.count("good", "bad") == questions_to_resolve(est)
    assert "25 questions" in got.basis
    assert not questions_to_resolve_pairs(rankings, human, {}, k).counts  # no LLM grades: no figure


def test_nothing_unjudged_makes_every_verdict_known_without_a_calibration():
    """Every pooled pair graded (a fully judged pool, or questions declared complete): no calibration is needed or
    asked for; each verdict's probability is 1 (an exact tie: a tie, certainly) and judging can stop. Before, the
    figure was withheld ('too few to calibrate') on labels that leave nothing to chance."""
    rng = np.random.default_rng(5)
    rankings, truth, k = _collection(rng, n_queries=12)
    pool = {(q, d) for r in rankings.values() for q in truth for d in sorted(r[q], key=r[q].get, reverse=True)[:k]}
    labels = {q: {d: g for d, g in docs.items() if (q, d) in pool} for q, docs in truth.items()}
    report = verdict_confidence(rankings, labels, SCALE, k=k)
    assert report.calibrated.known and report.reached and report.together == 1.0
    assert [pc.probability for pc in report.pairs] == [1.0]
    assert report.pairs[0].leader == ("A" if report.pairs[0].now > 0 else "B")
    assert "no unjudged pair" in report.calibrated.why
    same = verdict_confidence({"x": rankings["good"], "y": rankings["good"]}, labels, SCALE, k=k)
    assert same.pairs[0].leader is None and same.pairs[0].probability == 1.0
    del labels["q0"][next(iter(labels["q0"]))]  # one pooled pair unjudged: the calibration's rules again
    open_ = verdict_confidence(rankings, labels, SCALE, k=k)
    assert not open_.calibrated.known and "calibrat" in open_.calibrated.why and open_.pairs[0].sd > 0
    thin = verdict_confidence(rankings, labels, SCALE, k=k, calibrate_on={})
    assert not thin.calibrated.known and thin.calibrated.probs is None and not thin.reached
