"""Per-query tables -> intervals for every model, paired tests for every pair, a power sentence."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import stats
from .per_query import per_query_table, task_tags


@dataclass
class StatsReport:
    task: str
    metric: str
    intervals: pd.DataFrame
    pairs: pd.DataFrame
    power: str
    n_queries: int


def stats_report(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                 n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, method: str = "percentile",
                 tags: list[str] | None = None, models: list[str] | None = None) -> StatsReport:
    """Intervals for every model and paired tests for every pair, optionally broken down by tags."""
    per_query = per_query_table(results_dir, task_name, metric, split, models)
    tag_frame = task_tags(task_name) if tags else None
    if tag_frame is not None:
        tag_frame = tag_frame[[t for t in tags if t in tag_frame.columns]]
    label = stats.metric_label(metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        intervals = stats.breakdown(per_query, tag_frame, stats.ci_table, n_resamples=n_resamples,
                                    confidence=confidence, method=method, seed=seed)
        pairs = (stats.breakdown(per_query, tag_frame, stats.paired_tests, n_resamples=n_resamples, seed=seed,
                                 metric=label, method=method) if len(per_query) > 1 else pd.DataFrame())
        _, power = stats.power_report(per_query, metric=label)
    n = len(stats.align(per_query))
    return StatsReport(task_name, metric, intervals, pairs, power, n)
