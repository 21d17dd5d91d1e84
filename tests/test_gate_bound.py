"""Issue 28 "the interval matches the test": the gate prints the one-sided bound of the very test it decides on
(resampling.drop_bound), so a FAIL's bound is above zero; checked against scipy's exact sign-flip test and its
one-sided t bound. `check` and `stats` print the same difference and say which question each answers."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from runners.analysis.gate.gate import regression_check
from runners.statistics.resampling import drop_bound, randomization_test
from runners.cli import app
from tests.conftest import TINY_YAML
from tests.fake_results import QUERIES, write_config, write_model


@pytest.mark.parametrize("seed", range(40))
def test_p_and_bound_are_one_computation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 300))
    d = rng.normal(rng.normal(0.0, 0.02), 0.1, n)
    p, bound = drop_bound(d, 0.05, 2_000, seed)
    assert p == randomization_test(d, 2_000, seed, alternative="greater")[0]
    assert (p < 0.05) == (bound > 0)


def _exact_p(d: np.ndarray, shift: float) -> float:
    """scipy's exact one-sample sign-flip test of mean(d - shift) > 0 (every one of the 2^n sign patterns)."""
    res = sps.permutation_test((d - shift,), np.mean, permutation_type="samples", alternative="greater",
                               n_resamples=np.inf)
    return float(res.pvalue)


def test_bound_inverts_scipys_exact_sign_flip_test():
    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 0.1, 14)  # 16,384 sign patterns: scipy enumerates them all
    p, bound = drop_bound(d, 0.05, 40_000, 0)
    assert abs(p - _exact_p(d, 0.0)) < 0.006  # Monte Carlo p vs the exact one
    # the exact test rejects just below our bound and not just above it (Monte Carlo slack of ~3 SE)
    eps = 0.002
    assert _exact_p(d, bound - eps) < 0.05 + 0.004
    assert _exact_p(d, bound + eps) >= 0.05 - 0.004


def test_bound_agrees_with_scipys_one_sided_t_bound_on_many_queries():
    rng = np.random.default_rng(5)
    d = rng.normal(0.012, 0.12, 400)
    _, bound = drop_bound(d, 0.05, 20_000, 0)
    t_low = sps.ttest_rel(d, np.zeros_like(d), alternative="greater").confidence_interval(0.95).low
    assert bound == pytest.approx(t_low, abs=0.1 * d.std(ddof=1) / np.sqrt(d.size))


def _one_sided_only(n: int = 120) -> tuple[dict[str, float], dict[str, float]]:
    """A drop significant one-sided (p < 0.05) whose two-sided 95% interval includes zero (the issue's pair)."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.9, n)
    noise = rng.normal(0.0, 0.15, n)
    noise -= noise.mean()
    se = noise.std(ddof=1) / np.sqrt(n)
    cand = base - noise - 1.8 * se  # t of about 1.8: one-sided p ~0.04, two-sided ~0.07
    ids = [f"q{i}" for i in range(n)]
    return dict(zip(ids, base.tolist())), dict(zip(ids, cand.tolist()))


def test_fail_prints_a_one_sided_bound_above_zero_and_query_counts():
    base, cand = _one_sided_only()
    d = np.array([base[q] - cand[q] for q in base])
    assert sps.ttest_rel(list(base.values()), list(cand.values())).confidence_interval(0.95).low < 0
    g = regression_check(base, cand, "ndcg_at_10", max_drop=0.01)
    assert not g.passed and g.p_value < 0.05 and g.bound > 0
    assert "95% one-sided bound" in g.reason and "CI [" not in g.reason
    assert f"at least {g.bound:.3f} (95% one-sided bound)" in g.reason
    improved, degraded = int((d < 0).sum()), int((d > 0).sum())
    assert g.reason.endswith(f"queries +{improved} improved, -{degraded} degraded, {d.size - improved - degraded} tied")
    assert improved > 0 and degraded > 0


def test_not_significant_pass_shows_a_bound_at_or_below_zero():
    base, cand = _one_sided_only()
    g = regression_check(base, cand, "ndcg_at_10", max_drop=0.01, alpha=0.01)
    assert g.passed and g.p_value >= 0.01 and g.bound <= 0
    assert "could be as small as" in g.reason and "99% one-sided bound" in g.reason


def test_check_and_stats_print_the_same_difference_and_name_their_questions(tmp_path):
    rng = np.random.default_rng(2)
    one = dict(zip(QUERIES, rng.uniform(0.4, 0.9, 10).tolist()))
    two = {q: max(0.0, v - 0.08 + rng.normal(0, 0.03)) for q, v in one.items()}
    results = tmp_path / "results"
    write_model(results, "acme/one", "TinyKBRetrieval", one, "One")
    write_model(results, "acme/two", "TinyKBRetrieval", two, "Two")
    bench = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                         [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}])
    runner = CliRunner()
    s = runner.invoke(app, ["stats", "-c", str(bench), "--metric", "ndcg_at_10"], terminal_width=400)
    c = runner.invoke(app, ["check", "-c", str(bench), "--baseline", "One", "--candidate", "Two",
                            "--resamples", "500"], terminal_width=400)
    assert s.exit_code == 0, s.output
    assert c.exit_code == 1, c.output
    diff = np.mean([one[q] - two[q] for q in QUERIES])
    assert f"One beats Two on nDCG@10 by {diff:+.3f}" in s.output
    assert f"dropped by {diff:.3f}" in c.output
    assert "two-sided test of each pair, Holm-adjusted over 1 pair" in s.output
    assert "one-sided test: is the candidate worse?" in c.output
    assert re.search(r"at least 0\.\d{3} \(95% one-sided bound\)", c.output)
