"""`kind: retriever`: your own retrieval system (an object with `search`) scored as a candidate.

    models:
      - name: sentence-transformers/all-MiniLM-L6-v2
      - name: northwind/pgvector-hnsw          # the results name
        label: pgvector HNSW ef=40
        kind: retriever
        factory: runners.retrievers.pgvector:make
        factory_kwargs: {model: sentence-transformers/all-MiniLM-L6-v2, index: hnsw, ef_search: 40}
        revision: pg18-pgvector0.8          # optional: say which deployment this is

`factory(**factory_kwargs)` returns the retriever (runners/search/retriever.py says what it must do). A
factory with a parameter named `embedder` gets one: the vectors of the model `factory_kwargs.model` names (a
`models:` entry by name or label, else a plain entry for the name, resolved like the experiments' base
models) from that model's embedding cache, shared with its plain run, so nothing is encoded twice. A
factory with a `path` parameter gets the entry's `path:` (its files are part of the identity).

Identity: the results name, `revision` (default `local`), `factory`, `factory_kwargs`, and the embedding
model's whole identity when there is one: a changed setting re-runs, an unchanged one is reused.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...config.model_spec import ModelSpec
from ...search.retriever import Embedder, RetrieverSearch
from ...config.candidate_facts import ConfigFacts, SpecFacts
from .candidates import Candidate
from .candidate_value import Part, model_value
from .experiment_candidates import shared_encoder
from ..encoding.models import factory_kwargs, import_factory


def from_facts(f: SpecFacts, device: str | None = None, ctx: ConfigFacts | None = None,
               embedder: Candidate | None = None) -> Candidate:
    """The Candidate of a `kind: retriever` entry (nothing is imported or loaded until it runs); `embedder`: the
    candidate of its embedding model (factory_kwargs.model), whose value is part of its own."""
    spec, dense, model = f.spec, embedder, f.embedder
    revision = spec.revision or "local"
    cache_path = ctx.cache_path if ctx is not None else None
    results_dir = ctx.results_path if ctx is not None else None
    value = model_value(f, revision, parts=(Part("embedder", dense.value if dense else None),),
                        weight_paths=f.weight_paths + (dense.weight_paths if dense is not None else ()),
                        cache_variant="")
    return Candidate(value=value, load=lambda: load(spec, revision, dense, cache_path, results_dir),
                     public_name=spec.public_name, cacheable=False,
                     info={"source": spec.factory, "kind": "retriever", "model": model})


def load(spec: ModelSpec, revision: str, dense: Candidate | None, cache_path: Path | None,
         results_dir: Path | None) -> RetrieverSearch:
    """Import the factory, hand it its kwargs (and an embedder if it takes one), wrap what it returns for mteb."""
    from mteb.models.model_meta import ModelMeta

    func = import_factory(spec)
    kwargs = factory_kwargs(spec, func)
    embedder = None
    if "embedder" in _parameters(func):
        if dense is None:
            raise ConfigError(None, f"model '{spec.name}': factory '{spec.factory}' takes an embedder: name its "
                                    "embedding model in factory_kwargs (model: <a models: entry or hub name>)")
        if cache_path is None:
            raise ConfigError(None, f"model '{spec.name}': a retriever with an embedder runs from a benchmark config")
        embedder = Embedder(shared_encoder(dense, cache_path))
        kwargs["embedder"] = embedder
    retriever = func(**kwargs)
    if not callable(getattr(retriever, "search", None)):
        raise ConfigError(None, f"model '{spec.name}': factory '{spec.factory}' returned {type(retriever).__name__} "
                                "without search(queries, top_k)")
    meta = ModelMeta.create_empty(overwrites={"name": spec.results_name, "revision": revision,  # names its embedder
                                              **({"adapted_from": dense.name} if dense is not None else {})})
    return RetrieverSearch(retriever, meta, embedder, results_dir, params=spec.factory_kwargs)


def _parameters(func: Any) -> set[str]:
    """The parameters a factory names (an `embedder` must be named: **kwargs does not ask for one)."""
    try:
        return set(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return set()
