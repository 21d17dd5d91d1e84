"""What the config says about each candidate, read once: the facts a candidate's value is built from.

A benchmark config is read here, in one pass, into plain frozen records: every `models:` entry (`SpecFacts`: its
kind, results name, label, the settings that enter its identity, its local files, its cache folder parts), every
experiment (its plan, the facts of the model it is built on, a reranker's facts), the embedding model of each
retriever and the names to look up in mteb's registry. The execution layer then builds the candidates from these
facts without reading the config again (runners/execution/candidates/candidates.py `build_candidates`), so
following a config from `run_benchmark` passes through the config room once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .benchmark import BenchmarkConfig
from .experiments import base_spec, plan_experiments
from .model_spec import BM25_NAME, ModelSpec, backend_tag
from .planned import PlannedCandidate
from .rerank import RerankerSpec

#: kinds built by a module of their own (runners/execution/candidates/candidates.py KIND_MODULES)
OWN_MODULE_KINDS = ("run", "retriever", "endpoint")


@dataclass(frozen=True)
class SpecFacts:
    """One model entry as its candidate is built: nothing here needs a model library to know."""

    spec: ModelSpec
    kind: str
    results_name: str
    label: str
    lookup: str  # the name mteb's registry and the offline packages are asked about ('': none, its own kind)
    settings: dict[str, Any] = field(hash=False)  # the entry's identity settings, but its revision (known later)
    weight_paths: tuple[str, ...] = ()  # the entry's own local files (a model folder, a run file)
    cache_parts: tuple[str, ...] = ()  # its embedding cache folder's variant, but the CPU part
    backend_pair: tuple[str, str] | None = None  # an exported backend: (backend, precision)
    embedder: str | None = None  # a retriever's embedding model (factory_kwargs.model)


@dataclass(frozen=True)
class RerankerFacts:
    settings: dict[str, Any] = field(hash=False)  # what of the reranker changes a score (its identity settings)
    path: str | None = None  # its local folder, resolved against the benchmark file
    lookup: str | None = None  # no path, no factory: the name whose offline copy is its folder, if installed


@dataclass(frozen=True)
class ConfigFacts:
    """Everything `build_candidates` needs from a benchmark config, read once."""

    cfg: BenchmarkConfig
    models: list[SpecFacts]
    plans: list[PlannedCandidate]
    bases: dict[str, SpecFacts]  # experiment name -> the facts of the model (or first stage) it is built on
    rerankers: dict[str, RerankerFacts]  # rerank experiment name -> its reranker
    embedders: dict[str, SpecFacts]  # embedder name -> its facts (a retriever's, by base_spec)
    bm25: SpecFacts  # a hybrid's sparse part
    device: str | None
    cache_path: Path
    results_path: Path
    large_corpus_docs: int
    lookups: list[str]  # every name to ask mteb's registry and the offline packages about
    backend_pairs: list[tuple[str, str]]  # every exported (backend, precision), for its CPU features


def spec_facts(spec: ModelSpec, max_seq_length: int | None = None) -> SpecFacts:
    """The facts of one entry; `max_seq_length`: the benchmark's default, for an entry that sets none."""
    kind = spec.resolved_kind
    if max_seq_length and not spec.max_seq_length and kind not in ("bm25", *OWN_MODULE_KINDS):
        spec = spec.model_copy(update={"max_seq_length": max_seq_length})  # BM25 has no sequence length
    exported = (spec.backend or "torch", spec.precision or "fp32") != ("torch", "fp32")  # not the reference
    tagged = kind not in OWN_MODULE_KINDS and bool(backend_tag(spec.backend, spec.precision))  # names its cache
    name = spec.results_name
    # what the identity records of the entry: paths are hashed, not named; prompts, endpoint and an exported
    # backend only when set, so the results of entries without them keep their fingerprints
    settings = {"name": name, "kind": kind, "max_seq_length": spec.max_seq_length, "model_kwargs": spec.model_kwargs,
                "factory": spec.factory, "factory_kwargs": spec.factory_kwargs,
                "trust_remote_code": spec.trust_remote_code, "local": bool(spec.path),
                **({"prompts": spec.prompts} if spec.prompts else {}),
                **({"endpoint": spec.endpoint.identity()} if spec.endpoint is not None else {}),
                **({"backend": spec.backend, "precision": spec.precision} if exported else {})}
    parts = [f"max_seq_length={spec.max_seq_length}"] if spec.max_seq_length else []
    if kind == "factory":  # for a `factory:` model, the factory and its kwargs (model_kwargs are in the name)
        blob = json.dumps([spec.factory, spec.factory_kwargs], sort_keys=True, default=str).encode()
        parts.append(f"factory={hashlib.sha256(blob).hexdigest()[:12]}")
    if tagged:  # an exported / quantised copy: never the reference's vectors
        parts.append(f"backend={spec.backend},precision={spec.precision}")
    paths: tuple[str, ...] = ()
    if kind == "run":
        paths = (str(Path(spec.path or "").expanduser()),)
    elif kind != "bm25" and spec.path:
        paths = (spec.path,)
    model = spec.factory_kwargs.get("model") if kind == "retriever" else None
    lookup = "" if kind in OWN_MODULE_KINDS else BM25_NAME if kind == "bm25" else spec.name
    return SpecFacts(spec, kind, name, spec.default_label, lookup, settings,
                     paths, tuple(parts), (spec.backend, spec.precision) if tagged else None,
                     model if isinstance(model, str) and model else None)


def reranker_facts(spec: RerankerSpec, base_dir: Path) -> RerankerFacts:
    """The reranker's identity settings and where its files are (`path:` relative to the benchmark file)."""
    settings = {"name": spec.name, "kind": spec.resolved_kind, "revision": spec.revision, "factory": spec.factory,
                "factory_kwargs": spec.factory_kwargs, "max_length": spec.max_length, "local": bool(spec.path)}
    if spec.path:
        p = Path(spec.path).expanduser()
        return RerankerFacts(settings, str(p if p.is_absolute() else (Path(base_dir) / p).resolve()))
    return RerankerFacts(settings, None, None if spec.factory else spec.name)


def config_facts(cfg: BenchmarkConfig) -> ConfigFacts:
    """Every candidate's facts of a benchmark config (experiment entries are validated and planned here)."""
    msl = cfg.encode.max_seq_length
    models = [spec_facts(m, msl) for m in cfg.models]
    plans = plan_experiments(cfg) if cfg.experiments else []
    bases = {p.name: spec_facts(p.base, msl) for p in plans}
    base_dir = cfg.base_dir
    rerankers = {p.name: reranker_facts(p.strategy[0], base_dir) for p in plans if p.kind == "rerank"}
    embedders = {f.embedder: spec_facts(base_spec(cfg, f.embedder), msl) for f in models if f.embedder}
    bm25 = spec_facts(ModelSpec.model_construct(name="bm25"))  # a constant, valid entry: nothing to validate
    every = [*models, *bases.values(), *embedders.values(), bm25]
    lookups = sorted({f.lookup for f in every if f.lookup} | {r.lookup for r in rerankers.values() if r.lookup})
    pairs = sorted({f.backend_pair for f in every if f.backend_pair is not None})
    return ConfigFacts(cfg, models, plans, bases, rerankers, embedders, bm25, cfg.encode.device, cfg.cache_path,
                       cfg.results_path, cfg.encode.large_corpus_docs, lookups, pairs)
