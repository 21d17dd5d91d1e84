"""Where results live, and atomic writes.

Layout under a results folder (`results/` by default):
  results/<org__model>/<revision>/<Task>.json, model_meta.json  -- mteb's ResultCache layout, untouched
  private-mteb/runs/<org__model>/<revision>/<Task>/<dataset_revision>/per_query_<split>.json
  private-mteb/runs/.../rankings_<split>.json.gz                 -- top-k per query (doc ids + scores)
  private-mteb/candidates.json                                    -- display names, public names
  private-mteb/embeddings/...                                     -- embedding cache
mteb's loaders only read `results/`, so the sidecars never confuse them.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

SIDE = "private-mteb"


def model_dir_name(model_name: str) -> str:
    return model_name.replace("/", "__").replace(" ", "_")


def task_result_path(results_dir: Path, model_name: str, revision: str, task_name: str) -> Path:
    return Path(results_dir) / "results" / model_dir_name(model_name) / revision / f"{task_name}.json"


def run_dir(results_dir: Path, model_name: str, revision: str, task_name: str, dataset_revision: str) -> Path:
    return Path(results_dir) / SIDE / "runs" / model_dir_name(model_name) / revision / task_name / dataset_revision


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, rename: readers see old or new, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, obj: Any, compress: bool = False) -> None:
    data = json.dumps(obj, indent=None if compress else 1, sort_keys=False).encode()
    atomic_write_bytes(path, gzip.compress(data, mtime=0) if compress else data)


def read_json(path: Path) -> Any:
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def existing_dataset_revision(path: Path) -> str | None:
    """dataset_revision recorded in an mteb TaskResult JSON (None if absent or unreadable)."""
    try:
        return read_json(path).get("dataset_revision")
    except (OSError, ValueError):
        return None


def save_candidate(results_dir: Path, model_name: str, info: dict[str, Any]) -> None:
    path = Path(results_dir) / SIDE / "candidates.json"
    data = read_json(path) if path.exists() else {}
    data[model_name] = {**data.get(model_name, {}), **info}
    atomic_write_json(path, data)


def load_candidates(results_dir: Path) -> dict[str, dict[str, Any]]:
    path = Path(results_dir) / SIDE / "candidates.json"
    return read_json(path) if path.exists() else {}


def find_run(results_dir: Path, model_name: str, task_name: str, revision: str | None = None) -> Path | None:
    """The run folder matching the dataset revision in the current TaskResult JSON."""
    base = Path(results_dir) / "results" / model_dir_name(model_name)
    revisions = [revision] if revision else sorted(p.name for p in base.iterdir()) if base.is_dir() else []
    for rev in revisions:
        result = task_result_path(results_dir, model_name, rev, task_name)
        ds_rev = existing_dataset_revision(result)
        if ds_rev:
            folder = run_dir(results_dir, model_name, rev, task_name, ds_rev)
            if folder.is_dir():
                return folder
    return None


def load_per_query(results_dir: Path, model_name: str, task_name: str, metric: str = "ndcg_at_10",
                   split: str = "test", revision: str | None = None, subset: str = "default") -> pd.Series:
    """Per-query scores of one model on one task, indexed by query id."""
    folder = find_run(results_dir, model_name, task_name, revision)
    if folder is None:
        raise FileNotFoundError(f"no per-query scores for model '{model_name}' on task '{task_name}' in {results_dir}")
    data = read_json(folder / f"per_query_{split}.json")
    scores = data["subsets"][subset][metric]
    return pd.Series(scores, name=model_name, dtype=float).sort_index()


def load_rankings(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                  revision: str | None = None, subset: str = "default") -> dict[str, dict[str, float]]:
    folder = find_run(results_dir, model_name, task_name, revision)
    if folder is None:
        raise FileNotFoundError(f"no rankings for model '{model_name}' on task '{task_name}' in {results_dir}")
    return read_json(folder / f"rankings_{split}.json.gz")["subsets"][subset]


def list_runs(results_dir: Path) -> pd.DataFrame:
    """One row per (model, revision, task) that has per-query scores."""
    rows = []
    base = Path(results_dir) / SIDE / "runs"
    for pq in sorted(base.glob("*/*/*/*/per_query_*.json")):
        ds_rev, task, rev = pq.parent.name, pq.parent.parent.name, pq.parent.parent.parent.name
        info = read_json(pq)
        rows.append({"model": info["model"], "revision": rev, "task": task, "dataset_revision": ds_rev,
                     "split": info["split"], "path": str(pq.parent)})
    return pd.DataFrame(rows)


def load_ann_agreement(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                       revision: str | None = None, subset: str = "default") -> dict[str, Any] | None:
    """The agreement record of one ANN run (None when the run or its sidecar is missing)."""
    folder = find_run(results_dir, model_name, task_name, revision)
    path = folder / f"ann_agreement_{split}.json" if folder is not None else None
    if path is None or not path.exists():
        return None
    return read_json(path)["subsets"].get(subset)
