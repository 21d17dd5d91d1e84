"""Stored results -> what the report needs: candidates, per-query scores, tags, run records.

Reads only files `run` wrote (runners/results/store.py) and the collection's own files (for tags,
labels and, with --show-text, titles). No model library is imported, so a report never loads a model.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig, resolve_task_config
from custom_tasks.sources import load_collection

from ...config.benchmark import BenchmarkConfig
from ...results.store import find_run, load_per_query, read_json, task_result_path
from ...statistics.candidate_set import Candidate, config_candidates  # the one candidate rule of every command


@dataclass
class TaskData:
    """Everything stored for one task: per-query scores per metric (label -> Series), tags, runs."""

    name: str
    config: TaskConfig | None
    main_metric: str
    metrics: list[str]
    candidates: list[Candidate]  # those with stored results, config order
    scores: dict[str, dict[str, pd.Series]]  # metric -> label -> per-query scores
    tags: pd.DataFrame | None
    runs: dict[str, Path]  # label -> run folder
    collection: Collection | None = None

    def label_of(self, name: str) -> str | None:
        return next((c.label for c in self.candidates if c.name == name), None)


def resolve_baseline(cands: list[Candidate], wanted: str | None) -> Candidate:
    """`--baseline` by label or name, else the config's first model (the first candidate with results)."""
    if wanted:
        hit = next((c for c in cands if wanted in (c.label, c.name)), None)
        if hit is None:
            raise FileNotFoundError(f"baseline '{wanted}' has no stored results "
                                    f"(candidates: {', '.join(c.label for c in cands)})")
        return hit
    return cands[0]


def _task_config(entry: str) -> TaskConfig | None:
    try:
        return resolve_task_config(entry)
    except Exception:  # a public mteb task: no YAML, no tags
        return None


def _collection(tc: TaskConfig | None) -> Collection | None:
    if tc is None:
        return None
    try:
        return load_collection(tc.source, tc.base_dir, tc.name)
    except Exception:  # data moved since the run: the report still shows scores, without tags
        return None


def _tags(coll: Collection | None, wanted: list[str]) -> pd.DataFrame | None:
    if coll is None or not coll.query_tags or not wanted:
        return None
    frame = pd.DataFrame.from_dict(coll.query_tags, orient="index").sort_index()
    cols = [t for t in wanted if t in frame.columns]
    return frame[cols] if cols else None


def load_task(cfg: BenchmarkConfig, entry: str, cands: list[Candidate], tags: list[str],
              split: str = "test") -> TaskData | None:
    """Per-query scores of every candidate with a stored run on this task (None when none has one)."""
    tc = _task_config(entry)
    name = tc.name if tc is not None else entry
    main = tc.main_score if tc is not None else "ndcg_at_10"
    metrics = [main] + [m for m in cfg.stats.metrics if m != main]
    results_dir = cfg.results_path
    scores: dict[str, dict[str, pd.Series]] = {m: {} for m in metrics}
    have, runs = [], {}
    for c in cands:
        folder = find_run(results_dir, c.name, name, c.revision)
        if folder is None:
            continue
        try:
            for m in metrics:
                scores[m][c.label] = load_per_query(results_dir, c.name, name, m, split, c.revision)
        except KeyError:  # a metric this run did not store
            for m in metrics:
                scores[m].pop(c.label, None)
            continue
        have.append(c)
        runs[c.label] = folder
    if not have:
        return None
    coll = _collection(tc)
    return TaskData(name, tc, main, metrics, have, scores, _tags(coll, tags), runs, coll)


def run_record(results_dir: Path, c: Candidate, task: str, folder: Path) -> dict[str, Any]:
    """Provenance of one stored run: revisions, date, mteb version, and a fingerprint when the run has one."""
    rec: dict[str, Any] = {"candidate": c.label, "model": c.name, "revision": c.revision or folder.parent.parent.name,
                           "task": task, "dataset_revision": folder.name}
    result = task_result_path(results_dir, c.name, folder.parent.parent.name, task)
    try:
        data = read_json(result)
        rec.update(date=data.get("date"), mteb_version=data.get("mteb_version"),
                   evaluation_time=data.get("evaluation_time"))
    except (OSError, ValueError):
        pass
    rec["fingerprint"] = _fingerprint(folder)
    return rec


def _fingerprint(folder: Path) -> str | None:
    """A run identity/fingerprint if the run folder (or its parent) carries one; optional by design."""
    for base in (folder, folder.parent):
        for path in sorted(base.glob("*.json")):
            if not any(k in path.name for k in ("identity", "fingerprint", "run_info", "manifest")):
                continue
            try:
                data = read_json(path)
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                for key in ("fingerprint", "run_fingerprint", "identity", "id", "sha256", "hash"):
                    v = data.get(key)
                    if isinstance(v, str):
                        return v
                    if isinstance(v, dict):
                        inner = v.get("fingerprint") or v.get("hash")
                        if isinstance(inner, str):
                            return inner
    return None


def quiet(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a stats function with its 'query sets differ' warnings silenced (the report says n instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return func(*args, **kwargs)
