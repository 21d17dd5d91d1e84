"""Results on disk -> per-query tables -> intervals, paired tests, power, regression gate.

This is the bridge between the runner's sidecars (runners/store.py) and the pure statistics
(runners/stats.py, runners/gate.py); the CLI only prints what these functions return.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import stats
from .gate import GateResult, regression_check
from .store import find_run, load_candidates, load_per_query, read_json, task_result_path


def result_models(results_dir: Path, task_name: str) -> list[str]:
    """Model names with per-query scores for this task (in candidates.json order, then any others)."""
    base = Path(results_dir) / "results"
    names = [n for n in load_candidates(results_dir)]
    if base.is_dir():
        for meta in sorted(base.glob("*/*/model_meta.json")):
            name = read_json(meta).get("name")
            if name and name not in names:
                names.append(name)
    return [n for n in names if find_run(results_dir, n, task_name) is not None]


def label_of(results_dir: Path, model_name: str) -> str:
    return load_candidates(results_dir).get(model_name, {}).get("label") or model_name


def per_query_table(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                    models: list[str] | None = None) -> dict[str, pd.Series]:
    """label -> per-query scores (the current data revision of each model's result)."""
    names = models or result_models(results_dir, task_name)
    out: dict[str, pd.Series] = {}
    for name in names:
        out[label_of(results_dir, name)] = load_per_query(results_dir, name, task_name, metric, split)
    if not out:
        raise FileNotFoundError(f"no per-query results for task '{task_name}' in {results_dir}: run `private-mteb run` first")
    return out


def task_tags(task_name: str) -> pd.DataFrame | None:
    """Query tags from a private task's collection (None for public tasks / no tags)."""
    from custom_tasks.config import find_task_configs
    from custom_tasks.task import get_task

    if task_name not in find_task_configs():
        return None
    collection = get_task(task_name).collection
    if not collection.query_tags:
        return None
    return pd.DataFrame.from_dict(collection.query_tags, orient="index").sort_index()


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


def _resolve(target: str, default_results: Path) -> tuple[Path, str | None]:
    """A results folder, or a model name inside the default results folder."""
    p = Path(target)
    if p.is_dir():
        return p, None
    return Path(default_results), target


def _model_by_label_or_name(results_dir: Path, task: str, key: str) -> str:
    for name in result_models(results_dir, task):
        if key in (name, label_of(results_dir, name)):
            return name
    raise FileNotFoundError(f"no results for model '{key}' on task '{task}' in {results_dir}")


def regression_gate(baseline: str, candidate: str = "results", *, results_dir: Path = Path("results"),
                    tasks: list[str] | None = None, metric: str = "ndcg_at_10", max_drop: float = 0.01,
                    alpha: float = 0.05, split: str = "test", n_resamples: int = 10_000,
                    seed: int = 0) -> list[tuple[str, str, str, GateResult]]:
    """Compare candidate vs baseline per task: (task, baseline model, candidate model, result).

    Each side is a results folder (then models are matched by name) or a model name/label in
    `results_dir` (e.g. yesterday's fine-tune vs today's).
    """
    base_dir, base_model = _resolve(baseline, results_dir)
    cand_dir, cand_model = _resolve(candidate, results_dir)
    if base_dir.resolve() == cand_dir.resolve() and base_model is None and cand_model is None:
        raise FileNotFoundError("baseline and candidate are the same results folder: name a model or another folder")
    task_names = tasks or sorted(_tasks_with_runs(base_dir) & _tasks_with_runs(cand_dir))
    if not task_names:
        raise FileNotFoundError(f"no task has per-query results in both {base_dir} and {cand_dir}")
    out = []
    for task in task_names:
        if base_model or cand_model:
            pairs = [(_model_by_label_or_name(base_dir, task, base_model or cand_model),
                      _model_by_label_or_name(cand_dir, task, cand_model or base_model))]
        else:
            common = [m for m in result_models(cand_dir, task) if m in set(result_models(base_dir, task))]
            pairs = [(m, m) for m in common]
        for b, c in pairs:
            result = regression_check(load_per_query(base_dir, b, task, metric, split),
                                      load_per_query(cand_dir, c, task, metric, split), metric,
                                      max_drop=max_drop, alpha=alpha, n_resamples=n_resamples, seed=seed)
            out.append((task, label_of(base_dir, b), label_of(cand_dir, c), result))
    if not out:
        raise FileNotFoundError("no model has results on both sides to compare")
    return out


def _tasks_with_runs(results_dir: Path) -> set[str]:
    base = Path(results_dir) / "private-mteb" / "runs"
    return {p.name for p in base.glob("*/*/*") if p.is_dir()}


def main_score_of(results_dir: Path, model_name: str, revision: str, task_name: str, metric: str,
                  split: str = "test") -> float | None:
    path = task_result_path(results_dir, model_name, revision, task_name)
    if not path.exists():
        return None
    return read_json(path)["scores"][split][0].get(metric)
