"""A candidate is anything scored like a model: a plain model, or an experiment (hybrid, chunking, ANN, rerank).

A `Candidate` is its value (candidate_value.py: what it is, built once from the config, immutable; the run
identity is computed from it alone, in run_identity.py) plus how to load it and what its kind checks before
anything runs. Its results-folder name and revision are known before loading, so a re-run can skip what is
complete without loading the model at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...config.model_spec import BM25_NAME, ModelSpec
from ..encoding.models import accepts, load_model, offline_copy, registry_meta
from .candidate_value import CandidateValue, model_value


@dataclass
class Candidate:
    value: CandidateValue  # what it is: name, revision, label, kind, settings, parts (the identity's one source)
    load: Callable[[], Any]  # -> object mteb.evaluate accepts, with mteb_model_meta naming it `name`
    public_name: str | None = None
    cacheable: bool = True  # wrap in the embedding cache (dense encoders only)
    info: dict[str, Any] = field(default_factory=dict)
    check: Callable[[list[Any]], None] | None = None  # reads its inputs against the tasks before anything runs

    @property
    def name(self) -> str:  # mteb model name: results land in results/<org__name>/<revision>/
        return self.value.name

    @property
    def revision(self) -> str:
        return self.value.revision

    @property
    def label(self) -> str:  # what tables show
        return self.value.label

    @property
    def kind(self) -> str:
        return self.value.kind

    @property
    def cache_variant(self) -> str:
        return self.value.cache_variant

    @property
    def weight_paths(self) -> tuple[str, ...]:
        return self.value.weight_paths

    @property
    def identity(self) -> dict[str, Any]:
        """The value's static identity record (settings that change a score; JSON-able)."""
        return self.value.record()


def _bm25_search() -> Any:
    """mteb's BM25 with the task's analyzer (bm25.py; lazy: it imports mteb)."""
    from .bm25 import bm25_search

    return bm25_search()


#: candidate kinds that live in a file of their own, runners/execution/candidates/<module>.py, each with
#: `candidate(spec: ModelSpec, device: str | None) -> Candidate` (adding a kind: that file plus this entry);
#: a kind whose `candidate` also takes `cfg` gets the benchmark config (the models and the cache it uses)
KIND_MODULES = {"run": "run_file", "retriever": "retriever_candidate", "endpoint": "endpoint_candidate"}


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
    return Candidate(
        value=model_value(spec, name, str(revision), kind),
        load=_bm25_search if kind == "bm25" else (lambda: load_model(spec, device=device)),
        public_name=spec.public_name or (name if meta is not None else None),
        cacheable=kind != "bm25",
        info={"source": spec.path or offline_copy(spec.name) or "registry", "kind": kind},
    )
