"""Stored results -> per-query score tables (one column per model), and the tags of each query.

Reads only what `run` stored (runners/results/store.py) and the task's own files: no model
library is imported, so analysis starts in well under a second.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from custom_tasks.config import find_task_configs, resolve_task_config
from custom_tasks.sources import load_collection

from ..results.store import find_run, load_candidates, load_per_query, read_json


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
    if task_name not in find_task_configs():
        return None
    cfg = resolve_task_config(task_name)
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    if not collection.query_tags:
        return None
    return pd.DataFrame.from_dict(collection.query_tags, orient="index").sort_index()
