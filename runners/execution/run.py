"""Candidates x tasks -> mteb results + per-query sidecars, never stale, never half-written."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.benchmark import BenchmarkConfig
from ..results.store import (
    SIDE,
    atomic_write_json,
    existing_dataset_revision,
    model_dir_name,
    read_json,
    run_dir,
    save_candidate,
    task_result_path,
)
from .candidates import Candidate, candidate_from_spec
from .embedding_cache import wrap_cache
from .experiments import candidates_from_experiments, chunk_level_runs
from .tasks import load_task, task_revision

SUMMARY_METRICS = ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_10", "recall_at_100"]


@dataclass
class RunRecord:
    candidate: str
    label: str
    task: str
    status: str  # "ran" | "skipped"
    seconds: float
    scores: dict[str, float]
    encoded: int = 0
    reused: int = 0


def is_complete(results_dir: Path, cand: Candidate, task: Any) -> bool:
    """Complete = TaskResult for this data revision, with every split, and its per-query sidecars."""
    path = task_result_path(results_dir, cand.name, cand.revision, task.metadata.name)
    ds_rev = task_revision(task)
    if existing_dataset_revision(path) != ds_rev:
        return False
    folder = run_dir(results_dir, cand.name, cand.revision, task.metadata.name, ds_rev)
    return all((folder / f"per_query_{s}.json").exists() for s in task.eval_splits)


def read_scores(results_dir: Path, cand: Candidate, task_name: str, split: str = "test") -> dict[str, float]:
    data = read_json(task_result_path(results_dir, cand.name, cand.revision, task_name))
    return dict(data["scores"][split][0])


def evaluate_one(model: Any, cand: Candidate, task: Any, results_dir: Path, encode_kwargs: dict[str, Any],
                 keep_top_k: int = 100, show_progress: bool = True) -> None:
    """Run mteb.evaluate into a staging folder, then publish sidecars and the TaskResult atomically."""
    import mteb  # lazy: analysis commands import this package's siblings without torch

    results_dir = Path(results_dir)
    stage = results_dir / SIDE / ".staging" / uuid.uuid4().hex
    task.per_query, task.rankings, task.keep_top_k = {}, {}, keep_top_k
    try:
        mteb.evaluate(model, task, cache=mteb.ResultCache(stage), overwrite_strategy="always",
                      encode_kwargs=dict(encode_kwargs), show_progress_bar=show_progress)
        name, ds_rev = task.metadata.name, task_revision(task)
        staged = stage / "results" / model_dir_name(cand.name) / cand.revision
        produced = staged / f"{name}.json"
        if not produced.exists():
            raise RuntimeError(f"mteb wrote no result for {cand.name} on {name} (expected {produced})")
        folder = run_dir(results_dir, cand.name, cand.revision, name, ds_rev)
        for split in task.eval_splits:
            subsets = {sub: pq for (sp, sub), pq in task.per_query.items() if sp == split}
            ranks = {sub: r for (sp, sub), r in task.rankings.items() if sp == split}
            meta = {"model": cand.name, "label": cand.label, "revision": cand.revision, "task": name,
                    "dataset_revision": ds_rev, "split": split}
            atomic_write_json(folder / f"rankings_{split}.json.gz", {**meta, "top_k": keep_top_k, "subsets": ranks},
                              compress=True)
            atomic_write_json(folder / f"per_query_{split}.json", {**meta, "subsets": subsets})
        final = task_result_path(results_dir, cand.name, cand.revision, name)
        final.parent.mkdir(parents=True, exist_ok=True)
        for extra in staged.iterdir():  # model_meta.json etc. first, the TaskResult (completion marker) last
            if extra.name != produced.name:
                os.replace(extra, final.parent / extra.name)
        os.replace(produced, final)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def candidates_for(cfg: BenchmarkConfig) -> list[Candidate]:
    cands = [candidate_from_spec(m, cfg.encode.device, cfg.encode.max_seq_length) for m in cfg.models]
    if cfg.experiments:
        cands += candidates_from_experiments(cfg)
    return cands


def run_benchmark(cfg: BenchmarkConfig, *, force: bool = False, show_progress: bool = True,
                  on_step: Callable[[str, str, str], None] | None = None,
                  candidates: list[Candidate] | None = None, tasks: list[Any] | None = None) -> list[RunRecord]:
    """Evaluate every candidate on every task; skip (candidate, task, data revision) already complete.

    `on_step(event, candidate_label, task_name)` lets a UI draw progress ("start" / "done" / "skip").
    """
    results_dir = cfg.results_path
    tasks = tasks if tasks is not None else [load_task(t) for t in cfg.tasks]
    candidates = candidates if candidates is not None else candidates_for(cfg)
    encode_kwargs = {"batch_size": cfg.encode.batch_size}
    records: list[RunRecord] = []
    for cand in candidates:
        model = None
        save_candidate(results_dir, cand.name, {"label": cand.label, "revision": cand.revision, "kind": cand.kind,
                                                "public_name": cand.public_name, **cand.info})
        for task in tasks:
            name = task.metadata.name
            if not force and is_complete(results_dir, cand, task):
                records.append(RunRecord(cand.name, cand.label, name, "skipped", 0.0,
                                         read_scores(results_dir, cand, name, task.eval_splits[0])))
                if on_step:
                    on_step("skip", cand.label, name)
                continue
            if on_step:
                on_step("start", cand.label, name)
            if model is None:
                model = wrap_cache(cand.load(), cand, cfg.cache_path)
            before = (getattr(model, "encoded", 0), getattr(model, "reused", 0))
            t0 = time.perf_counter()
            evaluate_one(model, cand, task, results_dir, encode_kwargs, cfg.keep_top_k, show_progress)
            records.append(RunRecord(cand.name, cand.label, name, "ran", time.perf_counter() - t0,
                                     read_scores(results_dir, cand, name, task.eval_splits[0]),
                                     getattr(model, "encoded", 0) - before[0], getattr(model, "reused", 0) - before[1]))
            if on_step:
                on_step("done", cand.label, name)
    if any(isinstance(e, dict) and e.get("score") == "chunk" for e in cfg.experiments):
        records += run_chunk_level(cfg, tasks, force=force, show_progress=show_progress, on_step=on_step)
    return records


def run_chunk_level(cfg: BenchmarkConfig, tasks: list[Any] | None = None, **run_kwargs: Any) -> list[RunRecord]:
    """Chunk-level scoring: each `score: chunk` entry's plain model on its <Task>@chunks... tasks."""
    tasks = tasks if tasks is not None else [load_task(t) for t in cfg.tasks]
    plain = cfg.model_copy(update={"experiments": []})  # no recursion through the chunk-level hook
    records = []
    for dense, chunk_tasks in chunk_level_runs(cfg, tasks):
        if chunk_tasks:
            records += run_benchmark(plain, candidates=[dense], tasks=chunk_tasks, **run_kwargs)
    return records
