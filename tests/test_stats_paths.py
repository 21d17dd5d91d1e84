"""The pandas-free path (`stats` / `check`: dicts, arrays, rows) gives the pandas tables' numbers to the bit.

`stats_report` builds rows from intervals.py on plain dicts; the report, experiments and Python users get
pandas frames from stats_frames.py. Both must agree exactly (`check_exact`), on random scores with
ragged tags, several candidates, both interval methods, and with NaN-holding judged@k values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from runners.statistics import intervals as stats
from runners.statistics import power
from runners.analysis.gate.gate import regression_check
from runners.labels.pool.judged import nan_mean
from runners.statistics.stats_frames import breakdown, by_tag, ci_table, paired_tests, power_report


def _data(n: int, k: int, seed: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    rng = np.random.default_rng(seed)
    ids = [f"q{rng.integers(10**6)}-{i}" for i in range(n)]
    scores = {f"m{j}": {q: float(v) for q, v in zip(ids, rng.random(n))} for j in range(k)}
    tags: dict[str, dict[str, str]] = {}
    for q in ids:
        t = {"source": str(rng.choice(["human", "llm"]))}
        if rng.random() < 0.7:  # ragged: not every query has a topic
            t["topic"] = str(rng.choice(["a", "b", "c"]))
        tags[q] = t
    return scores, tags


def _lean(scores, tags, columns, func, **kw) -> pd.DataFrame:
    rows = []
    for subset, sub in [("all", scores)] + stats.tag_subsets(scores, tags, columns):
        cols = func(stats.align_scores(sub), **kw)
        rows += stats.rows_of(cols, subset) if cols else []
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n,k,method", [(7, 1, "percentile"), (60, 3, "percentile"), (150, 4, "bca")])
def test_rows_equal_the_pandas_tables(n: int, k: int, method: str) -> None:
    scores, tags = _data(n, k, n + k)
    series = {m: pd.Series(s).sample(frac=1.0, random_state=3) for m, s in scores.items()}  # any order
    frame = pd.DataFrame.from_dict(tags, orient="index").sort_index()
    cols = ["source", "topic"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # small subsets are skipped with a warning
        want = breakdown(series, frame[cols], ci_table, n_resamples=300, method=method, seed=5)
        got = _lean(scores, tags, cols, stats.ci_columns, n_resamples=300, method=method, seed=5)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        if k > 1:
            want = breakdown(series, frame[cols], paired_tests, n_resamples=300, method=method, seed=5, metric="mrr_at_10")
            got = _lean(scores, tags, cols, stats.pair_columns, n_resamples=300, method=method, seed=5, metric="mrr_at_10")
            pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert power.power_line(stats.align_scores(scores)) == power_report(series)


def test_layout_matters_so_alignment_keeps_pandas_order() -> None:
    """numpy's column sums depend on memory layout in the last bit: the aligned matrix is Fortran-ordered,
    like a pandas frame's values, and a C-ordered copy would not give the same means."""
    scores, _ = _data(57, 3, 0)
    x = stats.align_scores(scores).x
    assert x.flags["F_CONTIGUOUS"]
    frame = pd.DataFrame({m: pd.Series(s) for m, s in scores.items()}).sort_index()
    assert np.array_equal(frame.to_numpy().mean(axis=0), x.mean(axis=0))
    assert not np.array_equal(np.ascontiguousarray(x).mean(axis=0), x.mean(axis=0))


def test_gate_same_result_from_dicts_and_series() -> None:
    scores, _ = _data(80, 2, 9)
    a, b = scores["m0"], {q: v - 0.02 for q, v in scores["m1"].items()}
    assert regression_check(a, b, "ndcg_at_10", n_resamples=500) == \
        regression_check(pd.Series(a), pd.Series(b), "ndcg_at_10", n_resamples=500)


def test_nan_mean_is_pandas_mean() -> None:
    rng = np.random.default_rng(1)
    for n in (1, 9, 100, 1001):
        v = rng.random(n)
        v[rng.random(n) < 0.2] = np.nan
        d = {f"q{i:05d}": float(x) for i, x in enumerate(v)}
        want = pd.Series(d, dtype=float).mean()
        got = nan_mean(d)
        assert (math.isnan(want) and math.isnan(got)) or got == want
    assert math.isnan(nan_mean({"q": float("nan")}))


def test_by_tag_and_tag_subsets_split_alike() -> None:
    """One subset rule (stats.tag_groups): the pandas split and the dict split put the same queries under the
    same values, in the same order, with missing tags (None, NaN, pd.NA) in no subset and mixed types too."""
    scores, _ = _data(40, 2, 4)
    ids = sorted(scores["m0"])
    pool = ["b", "a", 1, 2.5, None, float("nan")]
    tags = {q: {"x": pool[i % len(pool)], "y": i % 3} for i, q in enumerate(ids)}
    frame = pd.DataFrame.from_dict(tags, orient="index")
    series = {m: pd.Series(s) for m, s in scores.items()}
    for c in ("x", "y"):
        lean = stats.tag_subsets(scores, tags, [c], min_queries=0)
        split = by_tag(series, frame, c)
        assert [label for label, _ in lean] == [f"{c}={v}" for v in split]
        for (_, sub), frames in zip(lean, split.values()):
            assert {m: sorted(s) for m, s in sub.items()} == {m: sorted(s.index) for m, s in frames.items()}
