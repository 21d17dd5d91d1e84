"""The `experiments:` entries of a benchmark config (pure data), checked one problem per line.

What each entry sweeps and the candidates it expands to: experiments.py. This module validates entries
without knowing the benchmark config (benchmark.py calls ``experiment_problems`` while reading a file).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from custom_tasks.config_problems import Problem, did_you_mean, problems
from custom_tasks.path_names import check_display, name_problem
from custom_tasks.yaml_io import line_at

from ..search.chunking import Chunker
from ..search.params import IndexParams
from .model_spec import BM25_ALIASES
from .rerank import RerankEntry


def _listify(v: Any) -> Any:
    return v if isinstance(v, list) else [v]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str | None = None  # replaces the base model's label in front of the experiment tag

    @field_validator("label")
    @classmethod
    def _shown(cls, v: str | None) -> str | None:
        return v if v is None else check_display(v, "label")


class HybridEntry(_Entry):
    type: Literal["hybrid"]
    dense: str
    sparse: Literal["bm25"] = "bm25"
    fusion: Literal["rrf", "weighted"] = "rrf"
    k: list[Annotated[int, Field(ge=0)]] = [60]
    alpha: list[Annotated[float, Field(ge=0.0, le=1.0)]] = [0.5]
    depth: Annotated[int, Field(gt=0)] | None = None  # list length per retriever before fusion

    _lists = field_validator("k", "alpha", mode="before")(_listify)

    @model_validator(mode="after")
    def _param_fits_fusion(self) -> HybridEntry:
        wrong = "alpha" if self.fusion == "rrf" else "k"
        if wrong in self.model_fields_set:
            raise ValueError(f"'{wrong}' does not apply to fusion '{self.fusion}' (rrf takes k, weighted takes alpha)")
        return self

    @property
    def values(self) -> list[float]:
        return list(self.k) if self.fusion == "rrf" else list(self.alpha)

    def tag(self, value: float) -> str:
        """'rrf60' / 'w0.5' (and '-d<depth>'): what labels and result-folder names call one swept value."""
        fused = f"rrf{int(value)}" if self.fusion == "rrf" else f"w{value:g}"
        return fused + (f"-d{self.depth}" if self.depth else "")


class ChunkEntry(_Entry):
    type: Literal["chunk"]
    model: str
    unit: Literal["tokens", "chars"] = "tokens"
    sizes: list[Annotated[int, Field(gt=0)]]
    overlap: Annotated[int, Field(ge=0)] = 0
    title: Literal["every", "first"] = "every"
    score: Literal["document", "chunk"] = "document"

    _lists = field_validator("sizes", mode="before")(_listify)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkEntry:
        if self.overlap >= min(self.sizes):
            raise ValueError(f"overlap {self.overlap} must be smaller than every size {self.sizes}")
        return self

    def chunkers(self) -> list[Chunker]:
        return [Chunker(s, self.overlap, self.unit, self.title) for s in self.sizes]


class AnnEntry(_Entry):
    type: Literal["ann"]
    model: str
    index: Literal["flat", "hnsw", "ivf"]
    M: Annotated[int, Field(gt=1)] = 16
    ef_construction: Annotated[int, Field(gt=0)] = 40
    ef_search: list[Annotated[int, Field(gt=0)]] = [64]
    nlist: Annotated[int, Field(gt=0)] = 64
    nprobe: list[Annotated[int, Field(gt=0)]] = [8]

    _lists = field_validator("ef_search", "nprobe", mode="before")(_listify)

    @model_validator(mode="after")
    def _params_fit_index(self) -> AnnEntry:
        own = {"flat": set(), "hnsw": {"M", "ef_construction", "ef_search"}, "ivf": {"nlist", "nprobe"}}
        other = ({"M", "ef_construction", "ef_search", "nlist", "nprobe"} - own[self.index]) & self.model_fields_set
        if other:
            raise ValueError(f"{sorted(other)} do not apply to index '{self.index}'")
        return self

    def params(self) -> list[IndexParams]:
        if self.index == "hnsw":
            return [IndexParams("hnsw", M=self.M, ef_construction=self.ef_construction, ef_search=e)
                    for e in self.ef_search]
        if self.index == "ivf":
            return [IndexParams("ivf", nlist=self.nlist, nprobe=p) for p in self.nprobe]
        return [IndexParams("flat")]


class GrowthEntry(_Entry):
    """Score `model` on nested random subsets of the corpus that keep every labelled document.

    A fraction f scores round(f * N) documents (N: the corpus). Above 1.0 the corpus is extended with
    `distractors:` (another collection's task YAML, or a corpus file with _id/title/text; relative to the
    benchmark file): 1.5 = the whole corpus plus round(0.5 * N) distractor documents.
    """

    type: Literal["growth"]
    model: str
    fractions: list[Annotated[float, Field(gt=0.0)]] = [0.1, 0.25, 0.5, 1.0]
    repeats: Annotated[int, Field(ge=1)] = 3
    seed: int = 0
    distractors: str | None = None

    _lists = field_validator("fractions", mode="before")(_listify)

    @model_validator(mode="after")
    def _includes_full_corpus(self) -> GrowthEntry:
        self.fractions = sorted(set(self.fractions))
        if 1.0 not in self.fractions:
            raise ValueError(f"fractions {self.fractions} must include 1.0 (the full corpus anchors the curve)")
        above = [f for f in self.fractions if f > 1.0]
        if above and not self.distractors:
            raise ValueError(f"fractions {above} above 1.0 need 'distractors:' (a task YAML or corpus file whose "
                             "documents extend the corpus)")
        return self


Experiment = Annotated[Union[HybridEntry, ChunkEntry, AnnEntry, GrowthEntry, RerankEntry], Field(discriminator="type")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Experiment)
TYPES = ("hybrid", "chunk", "ann", "growth", "rerank")


def entry_base(entry: HybridEntry | ChunkEntry | AnnEntry | RerankEntry) -> str:
    if isinstance(entry, RerankEntry):
        return entry.first
    return entry.dense if isinstance(entry, HybridEntry) else entry.model


#: raw entries (canonical JSON) -> their validated entries: a config's experiments are validated once per
#: process (when its file is read, with line numbers), then planned from what that validation made
_VALIDATED: dict[str, list[Any]] = {}


def _raw_key(entries: list[Any]) -> str:
    return json.dumps(entries, sort_keys=True, separators=(",", ":"), default=str)


def validated_entries(entries: list[Any]) -> tuple[list[Any], list[Problem]]:
    """The entries validated (once per process for the same raw entries) and their problems (none: all valid)."""
    key = _raw_key(entries)
    if key in _VALIDATED:
        return _VALIDATED[key], []
    found = experiment_problems(entries)
    return (_VALIDATED.get(key, []), found)


def experiment_problems(entries: list[Any], node: Any = None) -> list[Problem]:
    """(line, problem) per problem of every entry; ``node``: the benchmark file's composed YAML. Entries without
    a problem are kept (validated_entries), so planning them does not validate them again."""
    out: list[Problem] = []
    valid: list[Any] = []
    for i, raw in enumerate(entries):
        where, at = f"experiments[{i}]", ["experiments", i]
        if not isinstance(raw, dict) or raw.get("type") not in TYPES:
            got = raw.get("type") if isinstance(raw, dict) else raw
            near = did_you_mean(got, TYPES) if isinstance(got, str) else ""
            out.append((line_at(node, [*at, "type"]), f"{where}: 'type' must be one of {', '.join(TYPES)} "
                                                      f"(got {got!r}){near}"))
            continue
        try:
            entry = _ADAPTER.validate_python(raw)
        except ValidationError as e:
            out += problems(e, Experiment, node, at, skip=1, where=f"{where} ({raw['type']}): ")
            continue
        valid.append(entry)
        if entry_base(entry) in BM25_ALIASES and not isinstance(entry, RerankEntry):  # rerank: any first stage
            out.append((line_at(node, at), f"{where} ({raw['type']}): the base model must be a dense model, not BM25"))
        elif name_problem(entry_base(entry), slashes=True):  # it names the experiment's results folder
            key = "dense" if isinstance(entry, HybridEntry) else "first" if isinstance(entry, RerankEntry) else "model"
            out.append((line_at(node, [*at, key]), f"{where} ({raw['type']}): {key} {ascii(entry_base(entry))[:80]} "
                                                   f"cannot name a folder: {name_problem(entry_base(entry), True)}"))
    if not out:
        if len(_VALIDATED) > 64:  # a long-lived process reading many configs
            _VALIDATED.clear()
        _VALIDATED[_raw_key(entries)] = valid
    return out
