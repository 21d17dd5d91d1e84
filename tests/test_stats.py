"""Tests for runners.stats and runners.gate: numbers checked against scipy,
ranx, exhaustive enumeration, and hand-worked examples."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from runners.analysis.gate.gate import GateResult, regression_check
from runners.statistics.intervals import bootstrap_ci, holm, metric_label, randomization_test
from runners.statistics.power import min_detectable_difference, power_warning
from runners.statistics.stats_frames import align, breakdown, by_tag, ci_table, paired_tests, power_report


def _series(values, prefix="q"):
    return pd.Series(np.asarray(values, float), index=[f"{prefix}{i}" for i in range(len(values))])


def _models(k=4, n=200, seed=1, step=0.02, noise=0.12):
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, n)
    return {f"m{i}": _series(np.clip(base + rng.normal(i * step, noise, n), 0, 1))
            for i in range(k)}


# --------------------------------------------------------------------------- labels / align
@pytest.mark.parametrize("key,label", [
    ("ndcg_at_10", "nDCG@10"), ("mrr_at_5", "MRR@5"), ("map_at_100", "MAP@100"),
    ("recall_at_20", "Recall@20"), ("precision_at_1", "P@1"), ("NDCG_AT_3", "nDCG@3"),
    ("main_score", "main_score"),
])
def test_metric_label(key, label):
    assert metric_label(key) == label


def test_align_inner_join_warns_and_raises():
    a = _series([0.1, 0.2, 0.3])
    b = pd.Series([0.5, 0.6], index=["q1", "q2"])
    with pytest.warns(UserWarning, match="query sets differ"):
        df = align({"a": a, "b": b})
    assert list(df.index) == ["q1", "q2"]
    with pytest.raises(ValueError, match="query sets differ"):
        align({"a": a, "b": b}, on_mismatch="raise")
    with pytest.raises(ValueError, match="duplicate"):
        align({"a": pd.Series([1.0, 2.0], index=["q", "q"])})


def test_results_do_not_depend_on_query_order():
    pq = _models(3, 50)
    shuffled = {k: v.sample(frac=1.0, random_state=7) for k, v in pq.items()}
    pd.testing.assert_frame_equal(paired_tests(pq, 2000), paired_tests(shuffled, 2000))


# --------------------------------------------------------------------------- bootstrap CI
def test_bootstrap_ci_reproducible_and_seed_sensitive():
    x = _models(1, 150)["m0"].to_numpy()
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    m, lo, hi = bootstrap_ci(x, seed=3)
    m2, lo2, hi2 = bootstrap_ci(x, seed=4)
    assert m == m2 == pytest.approx(x.mean())
    assert (lo, hi) != (lo2, hi2)
    assert abs(lo - lo2) < 0.005 and abs(hi - hi2) < 0.005
    assert lo < m < hi


@pytest.mark.parametrize("method,scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_ci_matches_scipy(method, scipy_method):
    # skewed data so that BCa and percentile actually differ
    x = np.random.default_rng(5).exponential(0.2, 120).clip(0, 1)
    _, lo, hi = bootstrap_ci(x, 20_000, 0.95, method, seed=0)
    ref = sps.bootstrap((x,), np.mean, n_resamples=20_000, method=scipy_method,
                        confidence_level=0.95, rng=np.random.default_rng(0)).confidence_interval
    width = ref.high - ref.low
    assert abs(lo - ref.low) < 0.03 * width
    assert abs(hi - ref.high) < 0.03 * width


def test_bca_shifts_interval_for_skewed_data():
    x = np.random.default_rng(5).exponential(0.2, 60)
    _, plo, phi = bootstrap_ci(x, method="percentile")
    _, blo, bhi = bootstrap_ci(x, method="bca")
    assert blo > plo and bhi > phi  # right skew moves BCa bounds up


def test_constant_scores_give_degenerate_ci():
    for method in ("percentile", "bca"):
        assert bootstrap_ci(np.full(30, 0.5), method=method) == (0.5, 0.5, 0.5)


def test_ci_table_matches_bootstrap_ci_and_is_per_candidate_stable():
    pq = _models(3, 80)
    t = ci_table(pq, 5000, seed=2)
    assert list(t.columns) == ["candidate", "n_queries", "mean", "ci_low", "ci_high", "std"]
    for _, r in t.iterrows():
        m, lo, hi = bootstrap_ci(pq[r.candidate].sort_index(), 5000, seed=2)
        assert (r["mean"], r.ci_low, r.ci_high) == pytest.approx((m, lo, hi), abs=1e-12)
        assert r["std"] == pytest.approx(pq[r.candidate].std(ddof=1))
    # adding a candidate must not change the others' numbers
    t2 = ci_table({**pq, "extra": pq["m0"] * 0.5}, 5000, seed=2)
    pd.testing.assert_frame_equal(t, t2.iloc[:3])


# --------------------------------------------------------------------------- paired tests
def test_paired_tests_shape_and_ttest_equals_scipy_exactly():
    pq = _models(5, 120)
    res = paired_tests(pq, 2000, metric="ndcg_at_10")
    df = align(pq)  # same query order as paired_tests uses (float sums are order-sensitive)
    assert len(res) == 10
    for r in res.itertuples():
        a, b = df[r.candidate_a], df[r.candidate_b]
        assert r.p_ttest == sps.ttest_rel(a.to_numpy(), b.to_numpy()).pvalue
        d = a - b
        assert r.diff == pytest.approx(d.mean(), abs=1e-12)
        assert r.cohens_dz == pytest.approx(d.mean() / d.std(ddof=1))
        assert r.diff_ci_low < r.diff < r.diff_ci_high
        assert 1 / 2001 <= r.p_randomization <= 1


def _slow_sign_flip_p(d, n_resamples, seed):
    """Independent reference: explicit loop, its own RNG, (count+1)/(B+1)."""
    rng = np.random.default_rng(seed + 12345)
    obs, count = abs(d.mean()), 0
    for _ in range(n_resamples):
        s = rng.choice([-1.0, 1.0], size=d.size)
        count += abs((s * d).mean()) >= obs - 1e-12
    return (count + 1) / (n_resamples + 1)


@pytest.mark.parametrize("shift", [0.0, 0.015, 0.03])
def test_randomization_matches_slow_loop(shift):
    rng = np.random.default_rng(11)
    a = rng.random(150)
    b = np.clip(a + rng.normal(shift, 0.15, 150), 0, 1)
    p = randomization_test(a - b, 10_000)[0]
    assert abs(p - _slow_sign_flip_p(a - b, 10_000, 0)) < 0.02


def test_randomization_matches_exact_enumeration():
    d = np.array([0.12, -0.05, 0.30, 0.08, 0.0, 0.22, -0.10, 0.15, 0.05, -0.02, 0.18, 0.09])
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    p = randomization_test(d, 20_000)[0]
    se = np.sqrt(exact * (1 - exact) / 20_000)
    assert abs(p - exact) < 4 * se + 1e-4
    exact_greater = np.mean(signs @ d >= d.sum() - 1e-12)
    assert abs(randomization_test(d, 20_000, alternative="greater")[0] - exact_greater) < 0.01


def test_randomization_matches_ranx():
    ranx_tests = pytest.importorskip("ranx.statistical_tests")
    rng = np.random.default_rng(3)
    a = rng.random(200)
    b = np.clip(a + rng.normal(0.02, 0.15, 200), 0, 1)
    p_ranx, _ = ranx_tests.fisher_randomization_test(a, b, 10_000, 0.05, 42)
    assert abs(randomization_test(a - b, 10_000)[0] - p_ranx) < 0.02


def test_paired_tests_reproducible_and_seed_sensitive():
    pq = _models(4, 100)
    r1, r2 = paired_tests(pq, 3000, seed=1), paired_tests(pq, 3000, seed=1)
    pd.testing.assert_frame_equal(r1, r2)
    r3 = paired_tests(pq, 3000, seed=2)
    assert not np.array_equal(r1.p_randomization, r3.p_randomization)
    assert np.allclose(r1.p_randomization, r3.p_randomization, atol=0.03)
    assert np.allclose(r1.diff_ci_low, r3.diff_ci_low, atol=0.005)


def test_identical_candidates():
    x = _models(1, 50)["m0"]
    res = paired_tests({"a": x, "b": x.copy()}, 1000, metric="ndcg_at_10")
    r = res.iloc[0]
    assert r.p_randomization == 1.0 and r.p_holm == 1.0 and not r.significant
    assert np.isnan(r.p_ttest) and np.isnan(r.cohens_dz)
    assert r.verdict == "no difference between a and b on nDCG@10: identical on every one of the 50 queries"


def test_verdict_format_from_winner_side():
    base = _models(1, 300)["m0"]
    pq = {"weak": base - 0.05, "strong": base}
    r = paired_tests(pq, 2000, metric="ndcg_at_10").iloc[0]
    assert r.significant
    assert r.verdict == "strong beats weak on nDCG@10 by +0.050 [+0.050, +0.050], p<0.001 (Holm)"
    assert paired_tests({"a": base}).empty


def test_holm_hand_worked():
    # sorted: .005*4=.02, .01*3=.03, .03*2=.06, .04*1=.04 -> monotone .02 .03 .06 .06
    adj = holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adj, [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.6]), [1.0, 1.0])  # cap at 1 + monotone
    np.testing.assert_allclose(holm([0.02, np.nan, 0.04]), [0.04, np.nan, 0.04])
    assert holm([]).size == 0


def test_holm_rejections_match_step_down_definition():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.uniform(0, 0.1, rng.integers(1, 12))
        m, alpha = p.size, 0.05
        reject = np.zeros(m, bool)
        for rank, i in enumerate(np.argsort(p)):  # textbook: stop at first failure
            if p[i] > alpha / (m - rank):
                break
            reject[i] = True
        np.testing.assert_array_equal(holm(p) <= alpha, reject)


# --------------------------------------------------------------------------- power
def test_min_detectable_difference_hand_computed():
    # z: (1.959964 + 0.841621) * 0.2 / sqrt(100)
    assert min_detectable_difference(0.2, 100, dist="z") == pytest.approx(0.0560317, abs=1e-6)
    # t(99): (1.984217 + 0.845230) * 0.2 / 10
    assert min_detectable_difference(0.2, 100) == pytest.approx(0.0565889, abs=1e-6)
    d = np.random.default_rng(0).normal(0, 0.2, 100)
    assert min_detectable_difference(d) == min_detectable_difference(d.std(ddof=1), 100)
    with pytest.raises(ValueError):
        min_detectable_difference(0.2)


@pytest.mark.parametrize("n", [30, 120, 500])
def test_mdd_achieves_requested_power_exactly_noncentral_t(n):
    sd = 0.15
    mdd = min_detectable_difference(sd, n)
    tcrit = sps.t.ppf(0.975, n - 1)
    nc = mdd / (sd / np.sqrt(n))
    power = sps.nct.sf(tcrit, n - 1, nc) + sps.nct.cdf(-tcrit, n - 1, nc)
    assert abs(power - 0.8) < 0.01


def test_power_text():
    assert power_warning(0.0341, 120, "ndcg_at_10") == (
        "with 120 queries, differences smaller than 0.034 nDCG@10 cannot be detected "
        "reliably (80% power)")
    mdd, text = power_report(_models(3, 120), "ndcg_at_10")
    assert 0 < mdd < 0.2 and text.startswith("with 120 queries")
    mdd1, _ = power_report(_models(1, 120))
    assert mdd1 > 0


# --------------------------------------------------------------------------- subsets
def test_by_tag_and_breakdown():
    pq = _models(3, 90)
    ids = pq["m0"].index
    tags = pd.DataFrame({"source": ["human", "llm", "llm"] * 30,
                         "topic": ["a"] * 89 + ["b"]}, index=ids)
    split = by_tag(pq, tags, "source")
    assert set(split) == {"human", "llm"}
    assert len(split["human"]["m1"]) == 30 and len(split["llm"]["m2"]) == 60
    with pytest.warns(UserWarning, match="topic=b has 1 queries"):
        out = breakdown(pq, tags, ci_table, n_resamples=1000)
    assert out.columns[0] == "subset"
    assert list(out.subset.unique()) == ["all", "source=human", "source=llm", "topic=a"]
    human = out[out.subset == "source=human"].reset_index(drop=True).drop(columns="subset")
    pd.testing.assert_frame_equal(human, ci_table(split["human"], 1000))
    pairs = breakdown(pq, tags, paired_tests, tag_columns=["source"], n_resamples=500)
    assert len(pairs) == 9 and set(pairs.subset) == {"all", "source=human", "source=llm"}


def test_by_tag_warns_on_unknown_ids():
    pq = _models(2, 10)
    tags = pd.DataFrame({"source": ["human"] * 10}, index=range(10))  # int ids: typo
    with pytest.warns(UserWarning, match="no row in tags"):
        by_tag(pq, tags, "source")


# --------------------------------------------------------------------------- gate
def test_gate_identical_runs_pass():
    x = _models(1, 200)["m0"]
    g = regression_check(x, x.copy(), "ndcg_at_10")
    assert isinstance(g, GateResult) and g.passed
    assert g.drop == 0 and g.p_value == 1.0
    m = f"{x.mean():.4f}"
    assert g.reason == f"PASS: nDCG@10 {m} → {m}, did not drop (identical on every one of the 200 queries)"
    assert g.tied == 200 and "nan" not in g.reason


def test_gate_fails_on_clearly_worse():
    x = _models(1, 200)["m0"]
    worse = x.copy()
    worse.iloc[:150] -= 0.1
    g = regression_check(x, worse, "ndcg_at_10")
    assert not g.passed
    assert g.drop == pytest.approx(0.075)
    assert g.p_value < 0.001 and g.bound > 0
    assert g.reason.startswith(f"FAIL: nDCG@10 {x.mean():.4f} → {worse.mean():.4f}, dropped by 0.075 (> allowed "
                               f"0.010), at least {g.bound:.3f} "
                               "(95% one-sided bound); the drop is significant (p<0.001, one-sided test")
    assert g.reason.endswith("queries +0 improved, -150 degraded, 50 tied")


def test_gate_passes_big_but_noisy_drop():
    rng = np.random.default_rng(4)
    x = _series(rng.random(40))
    noisy = x + rng.normal(0.0, 0.3, 40)
    noisy = noisy - (noisy.mean() - x.mean()) - 0.03  # drop exactly 0.03, huge noise
    g = regression_check(x, noisy, "ndcg_at_10", max_drop=0.01)
    assert g.drop == pytest.approx(0.03)
    assert g.passed and g.p_value > 0.05
    assert "exceeds 0.010 but is not significant" in g.reason and "could be noise" in g.reason


def test_gate_small_significant_drop_within_margin_passes():
    x = _models(1, 400)["m0"]
    g = regression_check(x, x - 0.005, "ndcg_at_10", max_drop=0.01)
    assert g.passed and g.p_value < 0.001 and "within the allowed" in g.reason


def test_gate_improvement_passes_and_aligns_ids():
    x = _models(1, 100)["m0"]
    better = (x + 0.05).iloc[::-1]  # reversed order: must align by id, not position
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = regression_check(x, better, "mrr_at_10")
    assert g.passed and g.drop == pytest.approx(-0.05) and "did not drop" in g.reason


def test_verdict_dz_has_the_sign_of_the_reported_difference():
    rng = np.random.default_rng(9)
    base = _series(rng.random(200))
    weak = base - 0.05 + _series(rng.normal(0, 0.05, 200))
    r = paired_tests({"weak": weak, "strong": base}, 2000, metric="ndcg_at_10").iloc[0]
    assert r.significant and r.verdict.startswith("strong beats weak on nDCG@10 by +")
    assert r.cohens_dz < 0  # a - b, as documented
    assert r.verdict_dz == pytest.approx(-r.cohens_dz) and r.verdict_dz > 0
    same_side = paired_tests({"strong": base, "weak": weak}, 2000).iloc[0]
    assert same_side.verdict_dz == pytest.approx(same_side.cohens_dz) and same_side.verdict_dz > 0
    noise = paired_tests({"a": base, "b": base + _series(rng.normal(0, 0.3, 200))}, 2000).iloc[0]
    assert not noise.significant and noise.verdict_dz == noise.cohens_dz  # "diff -x" keeps a - b
