"""Run one model with the reference (torch fp32) and with other encode backends on a task: timings and vectors.

Each variant is a full cold `run_benchmark` of the one task: its results land in the config's results folder
under their own names (`<model>@onnx`, ...), and its vectors in a fresh temporary embedding cache, read back
afterwards in one fixed text order (the task's queries, then its documents) to compare with the reference's.
Exported copies are built before any timing (they are built once per machine, not once per run). Variants run
interleaved, the order reversed every other repeat, so load on a shared machine hits each alike.
The statistics on the stored per-query scores are the analysis layer's (runners/analysis/cost/drift.py).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.errors import ConfigError

from ...config.benchmark import BenchmarkConfig
from ...config.model_spec import ModelSpec, backend_tag, with_backend
from ..candidates.candidates import candidate_from_spec
from ..candidates.run_identity import value_weights
from ..cache.embedding_cache import wrap_cache
from ..encoding.models import load_model
from ..run import run_benchmark
from ..tasks import load_task


@dataclass
class VariantRun:
    spec: ModelSpec
    name: str  # results name
    seconds: list[float] = field(default_factory=list)  # cold run_benchmark per repeat
    vectors: np.ndarray | None = None  # queries then documents, reference order
    scores: dict[str, float] = field(default_factory=dict)
    threads: int | None = None

    @property
    def tag(self) -> str:
        return backend_tag(self.spec.backend, self.spec.precision).lstrip("@") or "torch"


def variant_specs(base: ModelSpec, variants: list[tuple[str, str]]) -> list[ModelSpec]:
    """The reference (torch fp32) first, then one entry per (backend, precision), each checked to exist."""
    ref = base.model_copy(update={"backend": None, "precision": None})
    out = [ref]
    for backend, precision in variants:
        try:
            spec = with_backend(ref, backend, precision)
        except ValueError as e:
            raise ConfigError(None, str(e)) from None
        if backend_tag(spec.backend, spec.precision) and spec not in out:
            out.append(spec)
    return out


def prepare(cfg: BenchmarkConfig, specs: list[ModelSpec], say: Callable[[str], None]) -> list[VariantRun]:
    """A VariantRun per spec, each model loaded once untimed: exported copies are built now (once per machine, not
    per run) and the first load's imports are paid before any timing."""
    runs = [VariantRun(s, s.results_name) for s in specs]
    for run in runs:
        say(f"preparing {run.name}")
        loaded = load_model(run.spec, cfg.encode.device)
        run.threads = getattr(getattr(loaded, "model", None), "private_mteb_backend", {}).get("threads")
    return runs


def task_texts(task: Any) -> tuple[list[str], list[str]]:
    """(queries, documents) as mteb embeds them for the task's first split: a document is 'title text'."""
    split = task.metadata.eval_splits[0]
    coll = task.collection
    queries = list(dict.fromkeys(coll.split_queries(split).values()))
    docs = [((d.get("title") or "") + " " + d["text"]).strip() if d.get("title") else d["text"].strip()
            for d in coll.corpus.values()]
    return queries, list(dict.fromkeys(docs))


def measure(cfg: BenchmarkConfig, task_name: str, specs: list[ModelSpec], repeats: int = 1,
            on_step: Callable[[str], None] | None = None) -> tuple[Any, list[VariantRun]]:
    """(task, runs): each spec's cold runs on the task and its vectors; the first spec is the reference."""
    say = on_step or (lambda _msg: None)
    task = load_task(task_name)
    runs = prepare(cfg, specs, say)
    queries, docs = task_texts(task)
    for r in range(repeats):
        for run in (runs if r % 2 == 0 else runs[::-1]):
            say(f"run {r + 1}/{repeats}: {run.name}")
            cold_run(cfg, run, task, task_name, (queries, docs), vectors=r == repeats - 1)
    return task, runs


def cold_run(cfg: BenchmarkConfig, run: VariantRun, task: Any, task_name: str, texts: tuple[list[str], list[str]],
             vectors: bool = True, on_load: Callable[[Any], None] | None = None) -> None:
    """One `run_benchmark` of run.spec on the task from an empty embedding cache (results to cfg's results folder,
    re-run even if stored); its seconds appended, its scores and (if `vectors`) its vectors of `texts` kept.
    `on_load(model)` sees the model as it loads, before it encodes (a profiler hooks in there)."""
    from mteb.types import PromptType

    with tempfile.TemporaryDirectory(prefix="backends-cache-") as cache:
        cand = candidate_from_spec(run.spec, cfg.encode.device, cfg.encode.max_seq_length)
        loaded: list[Any] = []
        hook = on_load or (lambda _model: None)
        cand = dataclasses.replace(cand, load=lambda c=cand: loaded.append(c.load()) or hook(loaded[-1]) or loaded[-1])
        one = cfg.model_copy(update={"models": [run.spec], "experiments": [], "cache_dir": cache, "tasks": [task_name]})
        t0 = time.perf_counter()
        (record,) = run_benchmark(one, force=True, show_progress=False, candidates=[cand], tasks=[task])
        run.seconds.append(time.perf_counter() - t0)
        if record.status != "ran":
            raise RuntimeError(f"{run.name} on {task_name}: {record.status}: {record.reason}")
        run.scores = record.scores
        if vectors or run.vectors is None:
            run.vectors = _cached_vectors(loaded[0], cand, Path(cache), task, *texts, PromptType)


def _cached_vectors(model: Any, cand: Any, cache: Path, task: Any, queries: list[str], docs: list[str],
                    prompt_type: Any) -> np.ndarray:
    """The run's vectors of `queries` then `docs`, read from its embedding cache (a text it lacks is an error)."""
    encoder = wrap_cache(model, cand, cache, weights=value_weights(cand, cache))
    split = task.metadata.eval_splits[0]

    def missing(rows: list[int]) -> Any:
        raise RuntimeError(f"{len(rows)} texts are not in the run's embedding cache: the texts compared are not "
                           "the ones mteb encoded")

    out = []
    for texts, ptype in ((queries, prompt_type.query), (docs, prompt_type.document)):
        call = {"task_metadata": task.metadata, "hf_split": split, "hf_subset": "default", "prompt_type": ptype}
        out.append(encoder.vectors_for(texts, missing, 32, call))
    return np.concatenate(out)


def max_cosine_difference(a: np.ndarray, b: np.ndarray) -> float:
    """max over rows of |cos(a_i, a_i) - cos(a_i, b_i)| = max |1 - cos(a_i, b_i)|."""
    na = a / np.linalg.norm(a, axis=1, keepdims=True)
    nb = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float(np.abs(1.0 - (na * nb).sum(axis=1)).max(initial=0.0))
