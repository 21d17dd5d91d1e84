"""Write a results folder in the layout `run` stores, with chosen per-query scores (no model, no mteb).

The analysis commands read only this layout, so their tests need seconds, not a model run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import yaml

from runners.results.store import model_dir_name

QUERIES = [f"q{i}" for i in range(1, 11)]  # the tiny task's query ids (tags: source=human|llm)


def scores(mean: float, seed: int = 0, n: int = len(QUERIES), spread: float = 0.2) -> dict[str, float]:
    """Per-query scores around `mean` (clipped to [0, 1])."""
    rng = np.random.default_rng(seed)
    values = np.clip(mean + rng.uniform(-spread, spread, n), 0.0, 1.0)
    return dict(zip(QUERIES[:n] if n <= len(QUERIES) else [f"q{i}" for i in range(1, n + 1)], values.tolist()))


def write_model(results: Path, name: str, task: str, per_query: dict[str, float], label: str | None = None,
                revision: str = "r1", dataset_revision: str = "ds1") -> Path:
    """One model's result on one task: TaskResult JSON, model_meta.json, per-query sidecar, candidates.json."""
    model_dir = Path(results) / "results" / model_dir_name(name) / revision
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "model_meta.json").write_text(json.dumps({"name": name, "revision": revision}))
    (model_dir / f"{task}.json").write_text(json.dumps({"dataset_revision": dataset_revision, "task_name": task,
                                                         "scores": {}}))
    run = Path(results) / "private-mteb" / "runs" / model_dir_name(name) / revision / task / dataset_revision
    run.mkdir(parents=True, exist_ok=True)
    metrics = {"ndcg_at_10": per_query, "mrr_at_10": per_query, "recall_at_100": per_query}
    path = run / "per_query_test.json"
    path.write_text(json.dumps({"model": name, "split": "test", "subsets": {"default": metrics}}))
    cands = Path(results) / "private-mteb" / "candidates.json"
    data = json.loads(cands.read_text()) if cands.exists() else {}
    data[name] = {"label": label or name.split("/")[-1], "revision": revision}
    cands.write_text(json.dumps(data))
    return path


def write_config(path: Path, results: Path, tasks: list[str], models: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"name": "t", "tasks": tasks, "models": models, "results_dir": str(results),
                                    "stats": {"resamples": 500}}))
    return path
