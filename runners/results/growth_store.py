"""Where corpus-growth curves live: one JSON per (model, task, data revision, growth parameters).

  private-mteb/growth/<org__model>/<revision>/<Task>/<dataset_revision>/growth-<params hash>.json

holding per-query scores (ids and numbers, never text) of every (fraction, repeat) subset. Written by
runners/execution/measure/growth.py, read by runners/analysis/cost/growth_curve.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .store import SIDE, model_dir_name, model_folder, path_part, read_json


def params_hash(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]


def growth_path(results_dir: Path, model: str, revision: str, task: str, dataset_revision: str,
                params: dict[str, Any]) -> Path:
    return (model_folder(Path(results_dir) / SIDE / "growth", model, revision) / path_part(task, "task name")
            / path_part(dataset_revision, "dataset revision") / f"growth-{params_hash(params)}.json")


def find_growth(results_dir: Path, model: str, task: str, dataset_revision: str,
                params: dict[str, Any]) -> dict[str, Any] | None:
    """The stored curve of this model, task, data revision and parameters (any model revision), or None."""
    base = Path(results_dir) / SIDE / "growth" / model_dir_name(model)
    for path in sorted(base.glob(f"*/{task}/{dataset_revision}/growth-{params_hash(params)}.json")):
        try:
            return read_json(path)
        except (OSError, ValueError):
            continue
    return None


def stored_growth(results_dir: Path, model: str, task: str, match: dict[str, Any],
                  dataset_revision: str | None = None) -> dict[str, Any] | None:
    """The newest stored curve of this model and task whose params hold every key of `match` (analysis side:
    it knows the config entry, not the content hash of its distractors), on `dataset_revision` when given."""
    base = Path(results_dir) / SIDE / "growth" / model_dir_name(model)
    ds = dataset_revision or "*"
    found = []
    for path in base.glob(f"*/{task}/{ds}/growth-*.json"):
        try:
            data = read_json(path)
            mtime = path.stat().st_mtime
        except (OSError, ValueError):
            continue
        params = data.get("params", {})
        if all(_same(params.get(k), v) for k, v in match.items()):
            found.append((mtime, str(path), data))
    return max(found, key=lambda t: t[:2])[2] if found else None


def _same(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(_same(stored.get(k), v) for k, v in wanted.items())
    return stored == wanted
