"""Experiment candidates (hybrid search, chunking, ANN indexes; reranking: rerank_candidate.py) made runnable, and
every candidate of a config built from its facts (`build_candidates`).

The config layer names them (runners/config/experiments.py) and reads what each candidate is
(runners/config/candidate_facts.py); here each one gets its value (candidate_value.py: a hybrid holds its dense
model's and BM25's, a chunking/ANN setting its model's, a rerank its first stage's) and its loader: the search
strategy from runners/search/ around the dense model, which is loaded once per process and shares the plain
run's embedding cache, so no text is encoded twice.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...config.benchmark import BenchmarkConfig
from ...config.candidate_facts import ConfigFacts, SpecFacts, config_facts
from ...config.experiments import (
    PlannedCandidate,
    base_spec,
    chunk_level_entries,
    chunk_task_name,
)
from ...search.ann import AnnSearch
from ...search.chunking import chunk_level_collection, token_offsets
from ...search.hybrid import HybridRetriever
from .candidate_value import experiment_value
from .candidates import KIND_MODULES, Candidate, candidate_from_spec, model_candidate, own_kind_candidate
from ..cache.chunk_blocks import LargeChunkedSearch
from ..cache.embedding_cache import CachedEncoder, wrap_cache
from .run_identity import value_weights
from ...results.variants import variant_of
from ..cache.large_corpus import LARGE_CORPUS_DOCS, dense_search
from ..backends.cpu_features import cpu_identities
from ..cache.prefill import block_vectors
from ..encoding.models import RegistryFacts, registry_facts
from .rerank_candidate import rerank_candidate

logger = logging.getLogger(__name__)

_RAW: dict[tuple[str, ...], Any] = {}
_CACHED: dict[tuple[str, ...], Any] = {}


def shared_raw(dense: Candidate) -> Any:
    """The dense model, loaded once per process for all experiments built on it."""
    key = (dense.name, dense.revision, dense.cache_variant, value_weights(dense) or "")
    if key not in _RAW:
        _RAW[key] = dense.load()
    return _RAW[key]


def shared_encoder(dense: Candidate, cache_path: Path) -> Any:
    """The dense model wrapped in the SAME embedding cache folder as its plain run."""
    weights = value_weights(dense, cache_path)
    key = (dense.name, dense.revision, dense.cache_variant, str(Path(cache_path).resolve()), weights or "")
    if key not in _CACHED:
        _CACHED[key] = wrap_cache(shared_raw(dense), dense, cache_path, weights=weights)
    return _CACHED[key]


def clear_shared() -> None:
    """Forget loaded models and caches (tests, long-lived processes)."""
    _RAW.clear()
    _CACHED.clear()


def _meta(encoder: Any, name: str, revision: str) -> Any:
    """The experiment's mteb meta: the dense model's, renamed; a hybrid names the model it is built on
    (`adapted_from`), a chunking/ANN variant is an experiment of it (run.py writes its experiment_kwargs)."""
    base = encoder.mteb_model_meta
    return base.model_copy(update={"name": name, "revision": revision,
                                   "adapted_from": None if variant_of(name) else base.name})


def dense_candidate(cfg: BenchmarkConfig, name: str) -> Candidate:
    """The base model's own Candidate: its `models:` entry when listed (by name or label), else the name."""
    return candidate_from_spec(base_spec(cfg, name), cfg.encode.device, cfg.encode.max_seq_length)


def _loader(plan: PlannedCandidate, dense: Candidate, cache_path: Path, results_dir: Path | None,
            large_corpus_docs: int = LARGE_CORPUS_DOCS) -> Any:
    name, revision = plan.name, dense.revision
    if plan.kind == "hybrid":
        fusion, value, depth = plan.strategy

        def make() -> Any:
            from .bm25 import bm25_search  # lazy: mteb's BM25 (its registry entry) with the task's analyzer

            enc = shared_encoder(dense, cache_path)
            return HybridRetriever(enc, bm25_search(), fusion, value, _meta(enc, name, revision), depth,
                                   dense_search(enc, large_corpus_docs))
    elif plan.kind == "chunk":

        def make() -> Any:
            enc = shared_encoder(dense, cache_path)
            return LargeChunkedSearch(enc, plan.strategy, _meta(enc, name, revision), large_corpus_docs)
    else:

        def make() -> Any:
            enc = shared_encoder(dense, cache_path)
            fetch = block_vectors(enc) if isinstance(enc, CachedEncoder) else None  # large corpora: from the cache
            return AnnSearch(enc, plan.strategy, _meta(enc, name, revision), results_dir, fetch, large_corpus_docs,
                             Path(cache_path) / "ann-work")
    return make


def candidate_from_plan(plan: PlannedCandidate, dense: Candidate, cache_path: Path,
                        results_dir: Path | None = None, large_corpus_docs: int = LARGE_CORPUS_DOCS,
                        sparse: Candidate | None = None) -> Candidate:
    """A hybrid / chunking / ANN candidate: its value holds the dense model's (and a hybrid BM25's)."""
    info = {"experiment": plan.kind, "base": dense.name, "base_revision": dense.revision,
            "base_label": dense.label, **plan.params}
    value = experiment_value(plan.name, plan.label, plan.kind, plan.params, dense.value, strategy=plan.strategy,
                             sparse=sparse.value if sparse is not None else None)
    return Candidate(value=value, load=_loader(plan, dense, cache_path, results_dir, large_corpus_docs),
                     cacheable=False, info=info)


def experiment_candidates(ctx: ConfigFacts, models: list[Candidate], made: Callable[[SpecFacts], Candidate],
                          known: dict[str, RegistryFacts]) -> list[Candidate]:
    """The experiment candidates of a config's facts (nothing is looked up or loaded here): each built on its base
    model's candidate (`made` from facts: the dense model of a hybrid, chunking or ANN, loaded once per process),
    a rerank on its first stage's (a `models:` entry, or an experiment made before it)."""
    dense: dict[str, Candidate] = {}
    out: list[Candidate] = []
    sparse: list[Candidate] = []  # BM25, the sparse part of every hybrid (held by its value, not hashed)
    for plan in ctx.plans:
        base = ctx.bases[plan.name]
        if plan.kind == "rerank":  # its first stage: an experiment candidate made above, or a `models:` entry
            first = next((c for c in [*out, *models] if c.name == plan.params["first"]), None) or made(base)
            rr = ctx.rerankers[plan.name]
            offline = known[rr.lookup].offline if rr.lookup in known else None
            out.append(rerank_candidate(plan, first, ctx.cfg, rr, offline))
            continue
        entry = base.spec.model_dump_json()  # the whole entry: a variant of a model (`MiniLM@msl64`) is another
        if entry not in dense:                # dense model than the plain one of the same name
            dense[entry] = made(base)
        if plan.kind == "hybrid" and not sparse:
            sparse.append(made(ctx.bm25))
        out.append(candidate_from_plan(plan, dense[entry], ctx.cache_path, ctx.results_path,
                                       ctx.large_corpus_docs, sparse[0] if plan.kind == "hybrid" else None))
    return out


def build_candidates(ctx: ConfigFacts, known: dict[str, RegistryFacts],
                     cpu: dict[tuple[str, str], dict[str, Any] | None], with_models: bool = True) -> list[Candidate]:
    """Every candidate of a config, from its facts (config/candidate_facts.py), what mteb's registry and the
    offline packages say of its names (`known`) and the CPU features of its exported backends (`cpu`): values and
    loaders only, nothing looked up or loaded here (an endpoint is probed: its answer is part of its identity)."""
    def made(f: SpecFacts, embedder: Candidate | None = None) -> Candidate:
        if f.kind in KIND_MODULES:
            return own_kind_candidate(f, ctx.device, ctx, embedder)  # (KIND_MODULES: run, retriever, endpoint)
        return model_candidate(f, known.get(f.lookup), cpu.get(f.backend_pair) if f.backend_pair else None,
                               ctx.device)

    if not with_models:  # the experiments alone (a rerank's first stage is made for it)
        return experiment_candidates(ctx, [], made, known)
    embedders = {name: made(f) for name, f in ctx.embedders.items()}
    models = [made(f, embedders.get(f.embedder) if f.embedder else None) for f in ctx.models]
    return models + experiment_candidates(ctx, models, made, known)


def candidates_from_experiments(cfg: BenchmarkConfig) -> list[Candidate]:
    """All doc-level experiment candidates of a benchmark config (nothing is loaded here)."""
    ctx = config_facts(cfg)
    return build_candidates(ctx, registry_facts(ctx.lookups), cpu_identities(ctx.backend_pairs), with_models=False)


def chunk_level_runs(cfg: BenchmarkConfig, tasks: list[Any]) -> list[tuple[Candidate, list[Any]]]:
    """(dense candidate, chunk-level tasks) per `score: chunk` entry; registers the tasks in mteb."""
    from custom_tasks.task import task_from_collection

    out = []
    for entry in chunk_level_entries(cfg):
        dense = dense_candidate(cfg, entry.model)
        offsets = token_offsets(shared_encoder(dense, cfg.cache_path)) if entry.unit == "tokens" else None
        made = []
        for task in tasks:
            if getattr(task, "collection", None) is None and getattr(task, "task_config", None) is not None:
                task.load_data()
            collection = getattr(task, "collection", None)
            if collection is None or not collection.spans:
                logger.warning("%s has no evidence spans: no chunk-level scoring", task.metadata.name)
                continue
            for ch in entry.chunkers():
                name = chunk_task_name(task.metadata.name, ch)
                coll = chunk_level_collection(collection, ch, offsets, name)
                if not coll.qrels:
                    continue
                note = "; ".join(w.message for w in coll.warnings)
                tcfg = task.task_config.model_copy(update={
                    "name": name, "splits": [s for s in task.task_config.splits if s in coll.qrels],
                    "description": f"{task.metadata.description} Chunk level ({ch.tag}). {note}".strip()})
                made.append(task_from_collection(coll, tcfg))
        # the plain model's own candidate, sharing the process-wide loaded model
        out.append((dataclasses.replace(dense, load=lambda d=dense: shared_raw(d)), made))
    return out
