"""Candidates x tasks -> mteb results + per-query sidecars, never stale, never half-written.

A result is reused only when its run fingerprint (candidates/run_identity.py: data, task settings, candidate
settings, local weights, experiment parameters) equals the current one and every file it vouches for is intact.
Concurrent runs on one results folder take a flock per (candidate, task): the second waits, then finds
the result complete. Leftovers of killed runs (staging folders, temp files) are removed at start.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_tasks.errors import CollectionError

from ..config.benchmark import BenchmarkConfig
from ..results.leftovers import clean_leftovers, staging_root
from ..results.locks import FileLock
from ..results.store import (
    SIDE,
    EnvironmentFault,
    atomic_write_json,
    env_faults,
    environment_fault,
    file_digest,
    identity_path,
    model_dir_name,
    read_json,
    run_dir,
    save_candidate,
)
from ..config.candidate_facts import config_facts
from .backends.cpu_features import cpu_identities
from .candidates.candidates import Candidate
from .encoding.models import registry_facts
from .candidates.run_identity import run_identities, run_identity
from .cache.embedding_cache import wrap_cache
from .candidates.experiment_candidates import build_candidates, chunk_level_runs
from ..results.stored_runs import RunAt, run_files, stored_scores, stored_states, why_stale
from ..results.migrate import migrate_search_variants
from ..results.variants import experiment_meta, migrate_variant_results, variant_of
from .cache.large_corpus import search_model_for
from .encoding.progress import EncodeProgress, quiet_foreign_bars, reporting_to
from .tasks import load_task, task_revision

SUMMARY_METRICS = ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_10", "recall_at_100"]
logger = logging.getLogger(__name__)


@dataclass
class RunRecord:
    candidate: str
    label: str
    task: str
    status: str  # "ran" | "skipped" | "failed" (then `reason` says why)
    seconds: float
    scores: dict[str, float]
    encoded: int = 0
    reused: int = 0
    reason: str = ""  # why it ran: what changed since the stored result; for "failed", the error
    note: str = ""  # what the candidate says about this run (e.g. queries a run file lacks, pairs a reranker scored)


def _fatal(e: BaseException) -> bool:
    """Faults of the environment (disk full, no write permission) stop the whole run; others fail one candidate."""
    return (not isinstance(e, Exception) or isinstance(e, EnvironmentFault)
            or (isinstance(e, OSError) and environment_fault(e) is not None))


LOAD_FAILED, CRASHED = "could not load: ", "crashed: "


def failure_reason(e: BaseException, step: str = "") -> str:
    """The one line a failed (candidate, task) shows. A ConfigError is a whole sentence naming the config and what
    to do (an unreachable endpoint, its retries spent, a model not found): its own line, without the generic
    step ("could not load", "crashed") or the type's name; a step that says where ("Ray encode failed") stays.
    Any other error: the step, its type and its first line."""
    text = str(e).strip().splitlines()
    if isinstance(e, CollectionError) and text:
        line = e.problem.splitlines()[0] if e.path is None and e.line is None and e.problem else text[0]
        return ("" if step in (LOAD_FAILED, CRASHED) else step) + line
    return step + (f"{type(e).__name__}: {text[0]}" if text else type(e).__name__)


def run_at(cand: Candidate, task: Any) -> RunAt:
    """Where (candidate, task) is stored: its name and revision, the task's name, data revision and splits."""
    return RunAt(cand.name, cand.revision, task.metadata.name, task_revision(task), tuple(task.eval_splits))


def why_not_complete(results_dir: Path, cand: Candidate, task: Any, identity: dict[str, Any]) -> str:
    """'' when the stored result has this identity and intact files, else what differs (one phrase)."""
    return why_stale(Path(results_dir), run_at(cand, task), identity)


def is_complete(results_dir: Path, cand: Candidate, task: Any, identity: dict[str, Any] | None = None,
                keep_top_k: int | None = None) -> bool:
    """Complete = TaskResult, per-query sidecars and rankings of THIS run identity, all intact."""
    identity = identity or run_identity(cand, task, keep_top_k)
    return why_not_complete(Path(results_dir), cand, task, identity) == ""


def task_lock(results_dir: Path, cand: Candidate, task: Any) -> FileLock:
    """The lock a run holds while computing (candidate, task): a concurrent run waits for it."""
    return FileLock(Path(results_dir) / SIDE / "locks" / model_dir_name(cand.name) / cand.revision
                    / f"{task.metadata.name}.lock")


def evaluate_one(model: Any, cand: Candidate, task: Any, results_dir: Path, encode_kwargs: dict[str, Any],
                 keep_top_k: int | None = None, show_progress: bool = True, identity: dict[str, Any] | None = None,
                 progress: EncodeProgress | None = None) -> None:
    """Run mteb.evaluate into a staging folder, then publish sidecars, identity.json and the TaskResult atomically."""
    import mteb  # lazy: analysis commands import this package's siblings without torch

    results_dir = Path(results_dir)
    identity = identity or run_identity(cand, task, keep_top_k)
    stage = staging_root(results_dir) / f"{os.getpid()}-{uuid.uuid4().hex}"
    stage_lock = FileLock(stage.with_name(stage.name + ".lock"))  # held while live: no cleaner removes it
    task.per_query, task.rankings, task.query_hashes, task.keep_top_k = {}, {}, {}, identity["keep_top_k"]
    task.corpus_ids, task.awaiting_rankings = {}, {}
    with env_faults(results_dir):
        stage_lock.acquire()
    try:
        with env_faults(stage), quiet_foreign_bars(not show_progress), reporting_to(progress):
            mteb.evaluate(model, task, cache=mteb.ResultCache(stage), overwrite_strategy="always",
                          encode_kwargs=dict(encode_kwargs), show_progress_bar=show_progress)
        _publish(cand, task, results_dir, stage, identity)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        stage_lock.path.unlink(missing_ok=True)
        stage_lock.release()


def _publish(cand: Candidate, task: Any, results_dir: Path, stage: Path, identity: dict[str, Any]) -> None:
    """Sidecars, then identity.json (digests of everything), then model_meta, the TaskResult last."""
    name, ds_rev = task.metadata.name, task_revision(task)
    staged = stage / "results" / model_dir_name(cand.name) / cand.revision
    produced = staged / f"{name}.json"
    if not produced.exists():
        raise RuntimeError(f"mteb wrote no result for {cand.name} on {name} (expected {produced})")
    folder = run_dir(results_dir, cand.name, cand.revision, name, ds_rev)
    files = run_files(results_dir, run_at(cand, task))
    digests = {"task_result": file_digest(produced)}
    analyzer = _bm25_analyzer(cand, task)
    for split in task.eval_splits:
        subsets = {sub: pq for (sp, sub), pq in task.per_query.items() if sp == split}
        ranks = {sub: r for (sp, sub), r in task.rankings.items() if sp == split}
        meta = {"model": cand.name, "label": cand.label, "revision": cand.revision, "task": name,
                "dataset_revision": ds_rev, "split": split, "fingerprint": identity["fingerprint"],
                **({"bm25_analyzer": analyzer} if analyzer else {})}
        docs = {sub: ids for (sp, sub), ids in getattr(task, "corpus_ids", {}).items() if sp == split and ids is not None}
        awaiting = {sub: r for (sp, sub), r in getattr(task, "awaiting_rankings", {}).items() if sp == split}
        atomic_write_json(folder / f"rankings_{split}.json.gz", {**meta, "top_k": identity["keep_top_k"], "subsets": ranks,
                                                                 "corpus_ids": docs,
                                                                 **({"awaiting": awaiting} if awaiting else {})},
                          compress=True)
        hashes = {sub: h for (sp, sub), h in getattr(task, "query_hashes", {}).items() if sp == split and h}
        atomic_write_json(folder / f"per_query_{split}.json",  # query_hashes: what pairing.py compares
                          {**meta, "query_hashes": hashes, "corpus_documents": {sub: len(ids) for sub, ids in docs.items()},
                           "subsets": subsets})
        for key in (f"per_query_{split}.json", f"rankings_{split}.json.gz"):
            digests[key] = file_digest(files[key])
    atomic_write_json(identity_path(folder), {**identity, "files": digests})
    final = files["task_result"]
    with env_faults(final):
        final.parent.mkdir(parents=True, exist_ok=True)
        for extra in staged.iterdir():  # model_meta.json etc. first, the TaskResult (completion marker) last
            if extra.name == "model_meta.json" and variant_of(cand.name) is not None:  # mteb's experiment meta
                atomic_write_json(final.parent / extra.name, experiment_meta(read_json(extra), cand.name))
            elif extra.name != produced.name:
                os.replace(extra, final.parent / extra.name)
        os.replace(produced, final)


def _bm25_analyzer(cand: Candidate, task: Any) -> dict[str, Any] | None:
    """The analyzer BM25 used on the task, for the sidecars of a candidate with BM25 in it (None otherwise)."""
    from .candidates.bm25 import task_analyzer, uses_bm25  # lazy: mteb's BM25 module

    return task_analyzer(task).record() if uses_bm25(cand.identity) else None


def _migrate_variants(results_dir: Path, candidates: list[Candidate]) -> None:
    """Variant results of the earlier layout become mteb experiments of their base model, once, with one line each."""
    import warnings

    with env_faults(results_dir):
        moved = migrate_variant_results(Path(results_dir) / "results")
        searched = migrate_search_variants(results_dir, [c.name for c in candidates if c.kind in ("chunk", "ann")])
    if moved:
        warnings.warn(f"{results_dir}: moved {len(moved)} variant result folder(s) (@msl, @kw, @onnx, @openvino) to "
                      "mteb's experiments layout: results/<model>/<revision>/experiments/<setting>/", stacklevel=2)
    if searched:
        warnings.warn(f"{results_dir}: moved {len(searched)} chunking/ANN result folder(s) (private-mteb/<model>-<tag>) "
                      "to mteb's experiments of their base model: results/<model>/<revision>/experiments/<setting>/, "
                      f"now named <model>@<tag> (e.g. {searched[0][0]} -> {searched[0][1]})", stacklevel=2)


def candidates_for(cfg: BenchmarkConfig) -> list[Candidate]:
    """Every candidate of a config as a value plus its loader, the config read once and each name looked up once."""
    ctx = config_facts(cfg)  # config: every entry's facts (experiments planned)
    known = registry_facts(ctx.lookups)  # encoding: mteb's registry and the offline packages
    cpu = cpu_identities(ctx.backend_pairs)  # backends: what decides an exported bf16/int8 model's vectors
    return build_candidates(ctx, known, cpu)  # candidates: values and loaders, nothing loaded


def run_benchmark(cfg: BenchmarkConfig, *, force: bool = False, show_progress: bool = True,
                  on_step: Callable[[str, str, str, RunRecord | None], None] | None = None,
                  candidates: list[Candidate] | None = None, tasks: list[Any] | None = None,
                  progress: EncodeProgress | None = None, keep_loaded: dict[str, Any] | None = None) -> list[RunRecord]:
    """Evaluate every candidate on every task; skip (candidate, task, data revision) already complete.

    `keep_loaded` (candidate name -> loaded model) keeps each model the run loaded, for a latency pass after it.

    `on_step(event, candidate_label, task_name, record)` lets a UI draw progress ("start" (record None) /
    "done" / "skip" / "fail"); `progress` gets every encode pass (progress.py); show_progress=False also
    silences mteb's, sentence-transformers', datasets' and bm25s' own bars. A candidate that fails to load,
    or crashes on a task, gets a "failed" record (its `reason` says why) and the others still run;
    disk-full / permission faults still stop everything.
    """
    results_dir, cache_path = cfg.results_path, cfg.cache_path
    clean_leftovers(results_dir, cache_path)
    tasks = tasks if tasks is not None else [load_task(t, cfg) for t in cfg.tasks]
    candidates = candidates if candidates is not None else candidates_for(cfg)
    _migrate_variants(results_dir, candidates)
    for cand in candidates:  # inputs read against the tasks now (a bad run file: file:line, exit 2), not mid-run
        if cand.check is not None:
            cand.check(tasks)
    if cfg.encode.engine == "ray":  # Ray missing: one line now, before any model loads
        from .distributed.ray_connect import import_ray

        import_ray(cfg.path)
    encode_kwargs = {"batch_size": cfg.encode.batch_size, "show_progress_bar": show_progress}
    records: list[RunRecord] = []
    identities = run_identities(candidates, tasks, cfg.keep_top_k, cache_path)  # [candidate][task]
    ats = [[run_at(cand, task) for task in tasks] for cand in candidates]
    for cand in candidates:
        save_candidate(results_dir, cand.name, {"label": cand.label, "revision": cand.revision, "kind": cand.kind,
                                                "public_name": cand.public_name, **cand.info})
    # which stored runs are current, every pair decided at once (forced: none is)
    states = ([[("forced", None)] * len(tasks) for _ in candidates] if force
              else stored_states(results_dir, ats, identities))
    for cand, cand_identities, cand_states, cand_ats in zip(candidates, identities, states, ats):
        model, load_error, on_ray = None, "", {}
        for task, identity, (reason, stored), at in zip(tasks, cand_identities, cand_states, cand_ats):
            name = task.metadata.name
            if load_error:  # the model did not load: every remaining task of it fails with the same reason
                _failed(records, cand, name, 0.0, load_error, on_step)
                continue
            if not reason:
                _skipped(records, cand, name, stored, on_step)
                continue
            with env_faults(results_dir / SIDE), task_lock(results_dir, cand, task):
                if not force:  # a concurrent run may have completed it while we waited
                    reason = why_stale(results_dir, at, identity)
                    if not reason:
                        _skipped(records, cand, name, stored_scores(results_dir, at), on_step)
                        continue
                logger.info("running %s on %s (%s): %s", cand.label, name, reason, cand.value)
                if on_step:
                    on_step("start", cand.label, name, None)
                if model is None:
                    step = LOAD_FAILED
                    try:
                        raw = cand.load()
                        if keep_loaded is not None:
                            keep_loaded[cand.name] = raw
                        # the cache folder names the weights by the identity's figure (computed once, above)
                        model = wrap_cache(raw, cand, cfg.cache_path, weights=identity["candidate"]["weights"])
                        if cfg.encode.engine == "ray":  # fill the cache on the cluster; mteb then finds hits
                            step = "Ray encode failed: "
                            on_ray = _ray_encode(cfg, model, cand, tasks, progress)
                    except BaseException as e:  # noqa: BLE001 - one bad model must not stop the others
                        if _fatal(e):
                            raise
                        logger.debug("%s%s", step, cand.name, exc_info=True)
                        load_error = failure_reason(e, step)
                        _failed(records, cand, name, 0.0, load_error, on_step)
                        continue
                before = (getattr(model, "encoded", 0), getattr(model, "reused", 0))
                t0 = time.perf_counter()
                try:
                    evaluate_one(search_model_for(model, task, cfg.encode.large_corpus_docs), cand, task,
                                 results_dir, encode_kwargs, cfg.keep_top_k, show_progress, identity, progress)
                    scores = stored_scores(results_dir, at)
                except BaseException as e:  # noqa: BLE001 - a crash on one task fails that (candidate, task) only
                    if _fatal(e):
                        raise
                    logger.debug("%s on %s failed", cand.name, name, exc_info=True)
                    _failed(records, cand, name, time.perf_counter() - t0, failure_reason(e, CRASHED),
                            on_step)
                    continue
                by_ray = on_ray.get(name, 0)  # encoded on the cluster, then found in the cache by mteb
                records.append(RunRecord(cand.name, cand.label, name, "ran", time.perf_counter() - t0, scores,
                                         getattr(model, "encoded", 0) - before[0] + by_ray,
                                         max(0, getattr(model, "reused", 0) - before[1] - by_ray), reason,
                                         getattr(model, "note_for", lambda _t: "")(name)))
            if on_step:
                on_step("done", cand.label, name, records[-1])
    if any(isinstance(e, dict) and e.get("score") == "chunk" for e in cfg.experiments):
        records += run_chunk_level(cfg, tasks, force=force, show_progress=show_progress, on_step=on_step,
                                   progress=progress)
    return records


def _ray_encode(cfg: BenchmarkConfig, model: Any, cand: Candidate, tasks: list[Any],
                progress: EncodeProgress | None) -> dict[str, int]:
    """Fill the cache on the Ray cluster; texts the cluster encoded per task name."""
    from .distributed.ray_encode import ray_pre_encode

    device = cfg.encode.device or ""
    report = ray_pre_encode(model, cand.load, tasks, address=cfg.encode.address, actors=cfg.encode.actors,
                            batch_size=cfg.encode.ray_batch_size, model_batch_size=cfg.encode.batch_size,
                            connect_timeout=cfg.encode.connect_timeout, gpu=device.startswith("cuda"),
                            config=cfg.path, progress=progress)
    return report.per_task


def _skipped(records: list[RunRecord], cand: Candidate, task_name: str, scores: dict[str, float] | None,
             on_step: Callable[..., None] | None) -> None:
    record = RunRecord(cand.name, cand.label, task_name, "skipped", 0.0, scores or {})
    records.append(record)
    if on_step:
        on_step("skip", cand.label, task_name, record)


def _failed(records: list[RunRecord], cand: Candidate, task_name: str, seconds: float, reason: str,
            on_step: Callable[..., None] | None) -> None:
    record = RunRecord(cand.name, cand.label, task_name, "failed", seconds, {}, reason=reason)
    records.append(record)
    if on_step:
        on_step("fail", cand.label, task_name, record)


def run_chunk_level(cfg: BenchmarkConfig, tasks: list[Any] | None = None, **run_kwargs: Any) -> list[RunRecord]:
    """Chunk-level scoring: each `score: chunk` entry's plain model on its <Task>@chunks... tasks."""
    tasks = tasks if tasks is not None else [load_task(t, cfg) for t in cfg.tasks]
    plain = cfg.model_copy(update={"experiments": []})  # no recursion through the chunk-level hook
    records = []
    for dense, chunk_tasks in chunk_level_runs(cfg, tasks):
        if chunk_tasks:
            records += run_benchmark(plain, candidates=[dense], tasks=chunk_tasks, **run_kwargs)
    return records
