"""`endpoint:` of a `kind: endpoint` model entry: an OpenAI-compatible `/v1/embeddings` server (pure data).

vLLM, TEI, Infinity, Ollama, llama.cpp's llama-server and OpenAI all speak this API. Nothing is sent anywhere
unless a config names the server here; the API key is read from the environment variable `api_key_env` names,
never from the file. The query/document prefixes or instructions are the entry's `prompts:` (model_spec.py), as
for any model.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator


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
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"api_key_env {ascii(v)[:40]} must be the NAME of an environment variable (the key "
                             "itself never goes in a config file)")
        return v

    @property
    def embeddings_url(self) -> str:
        """The URL as given when it ends in `/embeddings`, else `<url>/embeddings`."""
        url = self.url.rstrip("/")
        return url if url.endswith("/embeddings") else url + "/embeddings"

    def identity(self) -> dict[str, object]:
        """What of these settings can change a vector: the server's address and model, `dimensions`, the
        similarity (batch size, concurrency, timeouts and the key change none; the probe checks the served model)."""
        return {"url": self.embeddings_url, "model": self.model, "dimensions": self.dimensions,
                "similarity": self.similarity}
