"""`{type: rerank, ...}` entries: a first stage's stored top-`depth` reordered by a reranker (pure data).

    experiments:
      - {type: rerank, first: BM25, reranker: cross-encoder/ms-marco-MiniLM-L6-v2, depth: [20, 50, 100]}
      - type: rerank
        first: BM25                                   # any candidate of this config (name or label)
        reranker: {name: sentence-transformers/all-MiniLM-L6-v2, kind: bi-encoder}
        depth: [20, 50, 100]

`first` names a candidate of the same config: a `models:` entry (a model, BM25, a run file, a retriever) or
a document-level experiment candidate (a hybrid, say). The reranker is a hub name (an installed offline copy
or the HF cache), a local `path:`, or a `factory:` (package.module:function returning an object with
`predict(list of (query, document)) -> scores`, sentence-transformers' `CrossEncoder` interface). `kind`:
`cross-encoder` scores each (query, document) pair jointly; `bi-encoder` (a sentence-transformers embedding
model) scores the pair as the model's similarity of the two embeddings; `auto` tells them apart by the
model folder (`modules.json` with no `*ForSequenceClassification` head = bi-encoder). The execution side is
runners/execution/candidates/rerank_candidate.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class RerankerSpec(BaseModel):
    """The second stage of a rerank entry."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["auto", "cross-encoder", "bi-encoder", "factory"] = "auto"
    path: str | None = None
    revision: str | None = None
    factory: str | None = None
    factory_kwargs: dict[str, Any] = {}
    label: str | None = None
    max_length: Annotated[int, Field(gt=0)] | None = None  # tokens per pair (cross-encoder) or text (bi-encoder)
    batch_size: Annotated[int, Field(gt=0)] = 32

    @model_validator(mode="after")
    def _factory_fits_kind(self) -> RerankerSpec:
        if self.kind == "factory" and (not self.factory or ":" not in self.factory):
            raise ValueError("reranker kind factory needs `factory: package.module:function`")
        if self.factory and self.kind not in ("auto", "factory"):
            raise ValueError(f"reranker `factory:` does not go with kind {self.kind!r} (use kind: factory)")
        return self

    @property
    def resolved_kind(self) -> str:
        """'factory' for a factory, else the given kind ('auto' is told apart when the model loads)."""
        return "factory" if self.factory else self.kind

    @property
    def short(self) -> str:
        """What candidate names and labels show: the label, else the last part of the name."""
        return self.label or self.name.rstrip("/").split("/")[-1]


class RerankEntry(BaseModel):
    """Rerank `first`'s stored top-`depth` per query with `reranker`; one candidate per depth."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["rerank"]
    label: str | None = None  # replaces the first stage's label in front of the experiment tag
    first: str
    reranker: RerankerSpec
    depth: list[Annotated[int, Field(gt=0)]] = [20, 50, 100]

    @field_validator("reranker", mode="before")
    @classmethod
    def _name_alone(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @field_validator("depth", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return v if isinstance(v, list) else [v]

    @model_validator(mode="after")
    def _sorted_depths(self) -> RerankEntry:
        self.depth = sorted(set(self.depth))
        return self


def _first_stage(cfg: Any, entry: RerankEntry, planned: list[Any]) -> tuple[Any, str, str]:
    """(the first stage's ModelSpec or PlannedCandidate, its results name, its label), by name or label."""
    from custom_tasks.errors import ConfigError

    from .model_spec import BM25_ALIASES

    want = entry.first
    for m in cfg.models:
        bm25 = want in BM25_ALIASES and m.resolved_kind == "bm25"
        if bm25 or want in (m.name, m.label, m.results_name):
            return m, m.results_name, m.default_label
    for p in planned:
        if want in (p.name, p.label):
            return p, p.name, p.label
    known = [m.label or m.name for m in cfg.models] + [p.label for p in planned]
    raise ConfigError(cfg.path, f"rerank entry: first stage {want!r} is not a candidate of this config (one of: "
                                f"{', '.join(known)}); list it under `models:` or as an experiment")


def plan_rerank(cfg: Any, entry: RerankEntry, planned: list[Any]) -> list[Any]:
    """One PlannedCandidate per depth: `private-mteb/<first>+rerank-<reranker>-d<depth>`.

    `base` is the first stage as a ModelSpec (for an experiment first stage, a spec carrying its name and
    label), so analysis pairs each reranked candidate with the list it reordered."""
    from custom_tasks.errors import ConfigError

    from .planned import PREFIX, PlannedCandidate
    from .model_spec import ModelSpec

    first, first_name, first_label = _first_stage(cfg, entry, planned)
    base = first if isinstance(first, ModelSpec) else ModelSpec(name=first_name, label=first_label)
    deeper = [d for d in entry.depth if cfg.keep_top_k is not None and d > cfg.keep_top_k]
    if deeper:
        raise ConfigError(cfg.path, f"rerank entry on {entry.first!r}: depth {deeper} is deeper than the "
                                    f"{cfg.keep_top_k} documents stored per query (keep_top_k): raise keep_top_k or "
                                    "lower the depth")
    rr = entry.reranker
    short, label = first_name.split("/")[-1], entry.label or first_label
    return [PlannedCandidate(f"{PREFIX}/{short}+rerank-{rr.short}-d{d}", f"{label} +rerank {rr.short} d{d}",
                             "rerank", base, (rr, d),
                             {"first": first_name, "reranker": rr.name, "reranker_kind": rr.kind, "depth": d})
            for d in entry.depth]
