"""A candidate is anything scored like a model: a plain model, or an experiment (hybrid, chunking, ANN).

Its results-folder name and revision are known before loading, so a re-run can skip what is
complete without loading the model at all. `identity` + `weight_paths` feed the run fingerprint
(identity.py): everything in the config that can change an embedding.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...config.model_spec import BM25_NAME, ModelSpec, backend_tag
from ...results.identity import spec_weight_paths
from ..backends.cpu_features import cpu_identity
from ..backends.identity import backend_identity
from ..encoding.models import accepts, load_model, offline_copy, registry_meta


@dataclass
class Candidate:
    name: str  # mteb model name: results land in results/<org__name>/<revision>/
    revision: str
    label: str  # what tables show
    load: Callable[[], Any]  # -> object mteb.evaluate accepts, with mteb_model_meta naming it `name`
    kind: str = "model"
    public_name: str | None = None
    cacheable: bool = True  # wrap in the embedding cache (dense encoders only)
    cache_variant: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)  # settings that change a score (JSON-able)
    weight_paths: tuple[str, ...] = ()  # local files whose content is part of the identity
    check: Callable[[list[Any]], None] | None = None  # reads its inputs against the tasks before anything runs


def spec_identity(spec: ModelSpec, name: str, revision: str, kind: str) -> dict[str, Any]:
    """The config's settings of a model that can change an embedding (paths are hashed, not named). `prompts` and
    `endpoint` are recorded only when set, so the results of entries without them keep their fingerprints."""
    return {"name": name, "revision": revision, "kind": kind, "max_seq_length": spec.max_seq_length,
            "model_kwargs": spec.model_kwargs, "factory": spec.factory, "factory_kwargs": spec.factory_kwargs,
            "trust_remote_code": spec.trust_remote_code, "local": bool(spec.path),
            **({"prompts": spec.prompts} if spec.prompts else {}),
            **({"endpoint": spec.endpoint.identity()} if spec.endpoint is not None else {}),
            **backend_identity(spec.backend, spec.precision)}


def cache_variant(spec: ModelSpec, kind: str) -> str:
    """What besides name, revision and weights changes a vector, so that vectors of another setting are never reused:
    max_seq_length, and for a `factory:` model the factory and its kwargs (model_kwargs are in the name)."""
    parts = [f"max_seq_length={spec.max_seq_length}"] if spec.max_seq_length else []
    if kind == "factory":
        blob = json.dumps([spec.factory, spec.factory_kwargs], sort_keys=True, default=str).encode()
        parts.append(f"factory={hashlib.sha256(blob).hexdigest()[:12]}")
    if backend_tag(spec.backend, spec.precision):  # an exported / quantised copy: never the reference's vectors
        parts.append(f"backend={spec.backend},precision={spec.precision}")
        cpu = cpu_identity(spec.backend, spec.precision)
        if cpu:  # bf16 / int8 vectors of another CPU are another machine's vectors
            parts.append(f"cpu={hashlib.sha256(json.dumps(cpu, sort_keys=True).encode()).hexdigest()[:12]}")
    return ",".join(parts)


def _bm25_search() -> Any:
    """mteb's BM25 with the task's analyzer (bm25.py; lazy: it imports mteb)."""
    from .bm25 import bm25_search

    return bm25_search()


#: candidate kinds that live in a file of their own, runners/execution/candidates/<module>.py, each with
#: `candidate(spec: ModelSpec, device: str | None) -> Candidate` (adding a kind: that file plus this entry);
#: a kind whose `candidate` also takes `cfg` gets the benchmark config (the models and the cache it uses)
KIND_MODULES = {"run": "run_file", "retriever": "retriever", "endpoint": "endpoint"}


def candidate_from_spec(spec: ModelSpec, device: str | None = None, max_seq_length: int | None = None,
                        cfg: Any = None) -> Candidate:
    kind = spec.resolved_kind
    if kind in KIND_MODULES:
        import importlib

        make = importlib.import_module(f"{__package__}.{KIND_MODULES[kind]}").candidate
        return make(spec, device, cfg=cfg) if accepts(make, "cfg") else make(spec, device)
    if max_seq_length and not spec.max_seq_length and kind != "bm25":  # BM25 has no sequence length
        spec = spec.model_copy(update={"max_seq_length": max_seq_length})
    if kind == "bm25":
        meta = registry_meta(BM25_NAME)
        name, revision = BM25_NAME, meta.revision if meta else "0_3_0"
    else:
        meta = registry_meta(spec.name)
        if spec.revision:
            revision = spec.revision
        elif meta is not None and meta.revision:
            revision = meta.revision
        elif spec.path or kind == "factory":
            revision = "local"
        else:
            revision = "no_revision_available"
        name = spec.results_name
    variant = cache_variant(spec, kind)
    return Candidate(
        name=name,
        revision=str(revision),
        label=spec.default_label,
        load=_bm25_search if kind == "bm25" else (lambda: load_model(spec, device=device)),
        kind=kind,
        public_name=spec.public_name or (name if meta is not None else None),
        cacheable=kind != "bm25",
        cache_variant=variant,
        info={"source": spec.path or offline_copy(spec.name) or "registry", "kind": kind},
        identity=spec_identity(spec, name, str(revision), kind),
        weight_paths=() if kind == "bm25" else spec_weight_paths(spec.path),
    )
