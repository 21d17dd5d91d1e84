"""Latency intervals and the "cheaper" verdict (issue 28): bootstrap over the timed queries, checked against
scipy.stats.bootstrap; a candidate is called cheaper only when the pass can tell (paired, apart, a calm machine)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from runners.analysis.cost.cost import cheapest_not_worse, cost_row, latency_comparison
from runners.analysis.cost.latency_stats import paired_difference, percentile_ci


@pytest.mark.parametrize("q", [50, 95])
def test_percentile_interval_equals_scipy_bootstrap(q: float) -> None:
    x = np.random.default_rng(3).lognormal(2.0, 0.3, size=200)
    ours = percentile_ci(x, q, 0.95, n_resamples=20_000)
    ref = stats.bootstrap((x,), lambda s, axis: np.percentile(s, q, axis=axis), vectorized=True, n_resamples=20_000,
                          confidence_level=0.95, method="percentile", random_state=np.random.default_rng(1))
    assert ours == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), rel=0.02)
    assert ours[0] < np.percentile(x, q) < ours[1]


def test_paired_difference_equals_scipy_paired_bootstrap() -> None:
    rng = np.random.default_rng(5)
    base = rng.lognormal(2.0, 0.5, size=150)  # query difficulty, shared by both candidates
    a, b = base + rng.normal(2.0, 0.5, 150), base + rng.normal(0.0, 0.5, 150)
    ours = paired_difference(a, b, 50, 0.95, n_resamples=20_000)
    ref = stats.bootstrap((a, b), lambda x, y, axis: np.percentile(x, 50, axis=axis) - np.percentile(y, 50, axis=axis),
                          paired=True, vectorized=True, n_resamples=20_000, confidence_level=0.95,
                          method="percentile", random_state=np.random.default_rng(2))
    assert (ours["ci_low"], ours["ci_high"]) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=0.05)
    assert ours["significant"] and ours["diff"] == pytest.approx(np.median(a) - np.median(b))
    shuffled = paired_difference(b, b + rng.normal(0, 0.5, 150), 50)  # no real difference: not significant
    assert not shuffled["significant"]


def _record(ms: list[float], pass_id: str = "p1", load: float = 0.5) -> dict:
    q = np.asarray(ms, dtype=float)
    return {"measurable": True, "latency_ms": {"p50": float(np.median(q)), "p95": float(np.percentile(q, 95))},
            "query_ms": q.tolist(), "pass": {"id": pass_id, "query_ids": [str(i) for i in range(len(q))],
                                             "overhead_ms": {"subtracted": 0.05}, "at": "now"},
            "machine": {"cores": 2, "cores_usable": 2, "load_avg_1m": {"mean": load}}}


def _costs(**recs: dict) -> list[dict]:
    return [{"candidate": name, **cost_row(rec)} for name, rec in recs.items()]


def _quality(diff: float = -0.004, significant: bool = False) -> tuple[list, list]:
    intervals = [{"subset": "all", "candidate": "big", "mean": 0.80},
                 {"subset": "all", "candidate": "small", "mean": 0.80 + diff}]
    pairs = [{"subset": "all", "candidate_a": "big", "candidate_b": "small", "diff": -diff, "diff_ci_low": -diff - 0.01,
              "diff_ci_high": -diff + 0.01, "significant": significant}]
    return intervals, pairs


RNG = np.random.default_rng(7)
DIFFICULTY = RNG.uniform(0, 2, 24)


def test_cost_rows_carry_intervals() -> None:
    row = cost_row(_record(list(3 + DIFFICULTY)))
    assert row["p50_ci_low"] < row["p50_ms"] < row["p50_ci_high"] and row["p95_ci_low"] <= row["p95_ms"]
    assert row["timed_queries"] == 24 and row["overhead_ms"] == 0.05 and row["cores"] == 2


def test_a_clear_difference_on_a_calm_machine_is_cheaper() -> None:
    costs = _costs(big=_record(list(30 + DIFFICULTY)), small=_record(list(3 + DIFFICULTY)))
    found = cheapest_not_worse(*_quality(), costs, "nDCG@10")
    assert found["verdict"] == "cheaper" and found["candidate"] == "small"
    assert found["latency_diff_ci_high"] < 0 and "p50 difference -27.00 ms" in found["sentence"]
    assert f"small (p50 {costs[1]['p50_ms']:.2f} ms [{costs[1]['p50_ci_low']:.2f}, " in found["sentence"]  # its interval


def test_overlapping_latencies_cannot_tell() -> None:
    noise = np.random.default_rng(11)
    costs = _costs(big=_record(list(10 + DIFFICULTY + noise.normal(0, 1, 24))),
                   small=_record(list(9.8 + DIFFICULTY + noise.normal(0, 1, 24))))
    assert costs[1]["p50_ms"] < costs[0]["p50_ms"]  # lower p50, but not a difference the pass can tell
    found = cheapest_not_worse(*_quality(), costs, "nDCG@10")
    assert found["verdict"] == "cannot tell" and "cannot tell whether small" in found["sentence"]


def test_different_passes_cannot_tell_and_the_best_is_cheapest_only_when_it_shows() -> None:
    costs = _costs(big=_record(list(30 + DIFFICULTY), pass_id="a"), small=_record(list(3 + DIFFICULTY), pass_id="b"))
    cmp = latency_comparison(costs[1], costs[0])
    assert "not timed in the same latency pass" in cmp["reason"]
    fast_best = _costs(big=_record(list(3 + DIFFICULTY)), small=_record(list(30 + DIFFICULTY)))
    found = cheapest_not_worse(*_quality(), fast_best, "nDCG@10")
    assert found["verdict"] == "best is cheapest" and "also the cheapest" in found["sentence"]
    jitter = np.random.default_rng(19).normal(0, 0.2, (2, 24))  # each query's own timing noise
    close = _costs(big=_record(list(3 + DIFFICULTY + jitter[0])), small=_record(list(3.01 + DIFFICULTY + jitter[1])))
    found = cheapest_not_worse(*_quality(), close, "nDCG@10")  # 0.01 ms apart: the paired interval reaches 0
    assert found["verdict"] == "cannot tell" and "includes 0" in found["sentence"], found["sentence"]


def test_a_worse_candidate_is_never_the_pick() -> None:
    costs = _costs(big=_record(list(30 + DIFFICULTY)), small=_record(list(3 + DIFFICULTY)))
    found = cheapest_not_worse(*_quality(-0.05, True), costs, "nDCG@10")
    assert found["candidate"] == "big" and found["verdict"] == "best is cheapest"


def _shared_load(fast: float, slow: float, seed: int = 13, n: int = 24,
                 spread: float = 1.2) -> tuple[list[float], list[float]]:
    """Interleaved times on a machine loaded above its cores: each query's moment of load (heavy-tailed, up to
    tens of ms) hits both candidates alike, plus a little noise of their own."""
    rng = np.random.default_rng(seed)
    load = rng.lognormal(1.0, spread, n)
    return (list(fast + DIFFICULTY[:n] + load + rng.normal(0, 0.1, n)),
            list(slow + DIFFICULTY[:n] + load + rng.normal(0, 0.1, n)))


def test_a_busy_machine_decides_from_the_paired_interleaved_difference() -> None:
    """Issue 36: load above the cores made every cost sentence "cannot tell", even with the candidates' intervals
    3x apart; the paired difference decides, and says the machine was busy."""
    small, big = _shared_load(5.9, 20.7)
    costs = _costs(big=_record(big, load=3.4), small=_record(small, load=3.4))
    assert costs[1]["p50_ci_high"] < costs[0]["p50_ci_low"]  # 3x apart, as in the issue
    found = cheapest_not_worse(*_quality(), costs, "nDCG@10")
    assert found["verdict"] == "cheaper" and found["candidate"] == "small", found["sentence"]
    assert found["latency_diff_ci_high"] < 0 and "load average 3.4 above its 2 cores" in found["sentence"]
    # the shared load spreads each candidate's own p50 interval over the other's; the paired difference is -2 ms
    small, big = _shared_load(6.0, 8.0, seed=3, spread=2.0)
    costs = _costs(big=_record(big, load=3.4), small=_record(small, load=3.4))
    assert costs[1]["p50_ci_high"] > costs[0]["p50_ci_low"]  # the unpaired intervals overlap
    found = cheapest_not_worse(*_quality(), costs, "nDCG@10")
    assert found["verdict"] == "cheaper" and found["latency_diff_ci_high"] < 0, found["sentence"]


def test_a_busy_machine_with_a_wide_paired_interval_cannot_tell() -> None:
    rng = np.random.default_rng(17)
    own = [list(10 + DIFFICULTY + rng.lognormal(1.0, 1.2, 24)) for _ in range(2)]  # load NOT shared: wide
    costs = _costs(big=_record(own[0], load=3.4), small=_record([v - 0.3 for v in own[1]], load=3.4))
    found = cheapest_not_worse(*_quality(), costs, "nDCG@10")
    cmp = latency_comparison(costs[1], costs[0])
    assert cmp["diff_ci_low"] < 0 < cmp["diff_ci_high"]
    assert found["verdict"] == "cannot tell" and "includes 0" in found["sentence"]
    assert "load average 3.4 above its 2 cores" in found["sentence"]
