"""Per-query tables -> intervals for every model, paired tests for every pair, a power sentence.

The models compared are the ones asked for (a config's candidates, or `--models`), never
"whatever is in the folder": Holm's correction and the power sentence depend on that set.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import stats
from .errors import AnalysisError
from .per_query import per_query_table, task_tags


@dataclass
class StatsReport:
    task: str
    metric: str
    intervals: pd.DataFrame
    pairs: pd.DataFrame
    power: str
    n_queries: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN -> None): one entry of `stats --format json`."""
        return {"task": self.task, "metric": self.metric, "n_queries": self.n_queries,
                "intervals": _records(self.intervals), "pairs": _records(self.pairs), "power": self.power}


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    def plain(v: Any) -> Any:
        if hasattr(v, "item"):  # numpy scalar -> Python
            v = v.item()
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return [{k: plain(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def select_tags(task: str, tags: list[str] | None, strict: bool = True, name: str | None = None) -> pd.DataFrame | None:
    """The task's tag columns to break down by; an unknown tag is an error naming the known ones
    (`strict`, for `--by`) or is left out (a config's default tags need not fit every task)."""
    if not tags:
        return None
    frame = task_tags(task)
    known = list(frame.columns) if frame is not None else []
    unknown = [t for t in tags if t not in known]
    if unknown and strict:
        raise AnalysisError(f"--by: task '{name or task}' has no query tag {', '.join(map(repr, unknown))} "
                            f"(known tags: {', '.join(known) or 'none'})")
    kept = [t for t in tags if t in known]
    return frame[kept] if frame is not None and kept else None


def stats_report(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                 n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, method: str = "percentile",
                 tags: list[str] | None = None, models: list[str] | None = None,
                 strict_tags: bool = True, task_source: str | None = None) -> StatsReport:
    """Intervals for every model and paired tests for every pair, optionally broken down by tags
    (read from `task_source`, the task's name or YAML path, default `task_name`)."""
    tag_frame = select_tags(task_source or task_name, tags, strict_tags, task_name)
    per_query = per_query_table(results_dir, task_name, metric, split, models)
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
