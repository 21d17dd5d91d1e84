"""Corpus-growth curve: nested subsets keep every labelled document, fraction 1.0 equals the plain run
exactly with nothing encoded again, and on a collection built for it the curve falls with size."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from custom_tasks.errors import ConfigError
from runners.analysis.growth import format_growth, growth_curve
from runners.config.benchmark import BenchmarkConfig
from runners.config.experiments import growth_entries, plan_experiments
from runners.execution.growth import nested_subsets, run_growth
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, read_json
from tests.conftest import write_benchmark
from tests.growth_fixture import write_growth_task

BOW = {"name": "test/bow", "factory": "tests.growth_fixture:make_encoder", "revision": "r1"}


def test_subsets_are_nested_and_keep_every_labelled_document():
    ids = [f"d{i}" for i in range(100)]
    labelled = {"d3", "d50", "d99"}
    subs = nested_subsets(ids, labelled, [0.1, 0.5, 1.0], repeats=2, seed=0)
    assert [(f, r) for f, r, _ in subs] == [(0.1, 0), (0.5, 0), (1.0, 0), (0.1, 1), (0.5, 1)]
    by = {(f, r): s for f, r, s in subs}
    for r in (0, 1):
        assert labelled <= set(by[(0.1, r)]) <= set(by[(0.5, r)]) <= set(ids)
        assert len(by[(0.1, r)]) == 10 and len(by[(0.5, r)]) == 50
    assert by[(0.1, 0)] != by[(0.1, 1)]  # repeats draw other distractors
    assert by[(1.0, 0)] == ids  # the corpus' own order
    assert nested_subsets(ids, labelled, [0.1, 1.0], 2, 0) == nested_subsets(ids, labelled, [0.1, 1.0], 2, 0)
    # a fraction below the labelled share keeps the labelled documents only
    assert set(nested_subsets(ids, set(ids[:30]), [0.1, 1.0], 1, 0)[0][2]) == set(ids[:30])


def test_growth_entry_is_validated_and_plans_no_candidate(tmp_path):
    bad = write_benchmark(tmp_path, ["T"], experiments=[{"type": "growth", "model": "m", "fractions": [0.5]}])
    with pytest.raises(ConfigError, match=r"experiments\[0\] \(growth\): .*must include 1.0"):
        growth_entries(BenchmarkConfig.from_file(bad))
    ok = BenchmarkConfig.from_file(write_benchmark(tmp_path, ["T"], experiments=[
        {"type": "growth", "model": "m", "fractions": [1.0, 0.25], "repeats": 2}]))
    assert growth_entries(ok)[0].fractions == [0.25, 1.0] and plan_experiments(ok) == []


def test_curve_equals_plain_run_at_full_corpus_and_falls_with_size(tmp_path):
    task_yaml = write_growth_task(tmp_path)
    cfg = BenchmarkConfig.from_file(write_benchmark(
        tmp_path, [str(task_yaml)], models=[BOW], stats={"metrics": ["ndcg_at_10", "recall_at_10"]},
        experiments=[{"type": "growth", "model": "test/bow", "fractions": [0.1, 0.25, 0.5, 1.0], "repeats": 3}]))
    run_benchmark(cfg, show_progress=False)
    records = run_growth(cfg)
    assert [(r.status, r.encoded) for r in records] == [("ran", 0)]  # every vector from the plain run's cache
    data = read_json(records[0].path)
    assert "topic" not in records[0].path.read_text()  # ids and numbers only, never text
    full = next(p for p in data["points"] if p["fraction"] == 1.0)
    for metric in ("ndcg_at_10", "recall_at_10"):
        plain = load_per_query(cfg.results_path, "test/bow", "GrowthKBRetrieval", metric)
        assert pd.Series(full["per_query"][metric]).sort_index().equals(plain.rename(None))  # exactly
    curve = growth_curve(data, "ndcg_at_10", n_resamples=500)
    means = curve.points["mean"].to_numpy()
    assert list(curve.points["n_docs"]) == [42, 105, 210, 420]
    assert means[0] > means[-1] + 0.05 and all(np.diff(means) <= 0.01)  # monotone in expectation
    assert curve.slope_per_doubling < 0 and curve.slope_ci[1] < 0
    ext = curve.extrapolated.set_index("multiple")
    assert ext.loc[10.0, "mean"] < ext.loc[2.0, "mean"] < means[-1]
    assert ext.loc[2.0, "ci_low"] <= ext.loc[2.0, "mean"] <= ext.loc[2.0, "ci_high"]
    text = format_growth(curve)
    assert "per doubling" in text and "extrapolated at 10x (4200 docs)" in text
    # stored curves are reused
    assert [r.status for r in run_growth(cfg)] == ["skipped"]


def test_clipped_fractions_fit_no_trend():
    record = {"model": "m", "task": "T", "n_corpus": 10, "n_labelled": 9, "points": [
        {"fraction": f, "repeat": 0, "n_docs": n, "per_query": {"ndcg_at_10": {"q1": s, "q2": s}}}
        for f, n, s in [(0.5, 9, 0.8), (1.0, 10, 0.7)]]}
    curve = growth_curve(record, n_resamples=100)
    assert math.isnan(curve.slope_per_doubling) and curve.extrapolated["mean"].isna().all()
    assert any("clipped" in n for n in curve.notes)
