"""`judge:` and `labels:` of a benchmark YAML: the LLM that grades pooled pairs, and whether its grades count.

Nothing is sent anywhere unless a config names `judge.endpoint`: an OpenAI-compatible chat-completions server
(llama.cpp's `llama-server`, vLLM, Ollama, TGI all speak it). Whether LLM grades count in scoring is explicit:
`labels: {use_llm: false}` (the default) scores human grades only; `fill_unjudged` adds LLM grades to the pairs no
human graded (custom_tasks/llm_labels.py), which gives a new data revision.
"""

from __future__ import annotations

from typing import Literal
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .endpoint import http_url, server_model_name


class JudgeOptions(BaseModel):
    """`judge: {endpoint, model, prompt, temperature, max_concurrency, timeout_s, max_retries, backoff_s}`."""

    model_config = ConfigDict(extra="forbid")

    #: the server's base URL (`http://127.0.0.1:8080/v1`) or its full `/chat/completions` URL
    endpoint: str
    #: the model name the server knows (also what `source: llm:<model>` and the family guard read)
    model: str
    #: `umbrela` (the UMBRELA prompt of TREC 2024 RAG with the task's grade scale) or a template file (relative to
    #: the benchmark YAML) holding {query}, {passage} and optionally {grades}
    prompt: str = "umbrela"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_concurrency: int = Field(default=4, ge=1, le=64)
    timeout_s: float = Field(default=60.0, gt=0.0)
    #: a malformed answer, a timeout, a 429 or a 5xx is asked again this many times (with backoff), then unrateable
    max_retries: int = Field(default=3, ge=0, le=10)
    backoff_s: float = Field(default=1.0, ge=0.0, le=60.0)
    max_tokens: int = Field(default=16, ge=1, le=4096)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str) -> str:
        return http_url(v, "http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:8000/v1 (vLLM)")

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        return server_model_name(v)

    @property
    def chat_url(self) -> str:
        """The chat-completions URL: the endpoint as given when it ends so, else `<endpoint>/chat/completions`."""
        url = self.endpoint.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"

    @property
    def source(self) -> str:
        """What LLM grades are stored with: `llm:<model>`."""
        return f"llm:{self.model}"


class LabelsOptions(BaseModel):
    """`labels: {use_llm: false | fill_unjudged | prediction_powered, confidence: 0.95}`: which grades scores and
    verdicts rest on, and how likely each verdict must be to hold before the decisive order says judging can stop.

    ``fill_unjudged``: the judge's grades fill the pairs no human graded, and scores are computed on them (a new
    data revision). ``prediction_powered``: scores stay on human grades; `stats`, `check` and the report add
    prediction-powered estimates and verdicts (runners/labels/judge/ppi_verdicts.py) from the judge's grades on the
    pool and people's grades on the random sample `labels plan --order sample` drew. ``confidence``: the stopping
    rule's level (issue 47: runners/labels/verdicts/confidence_stop.py)."""

    model_config = ConfigDict(extra="forbid")

    use_llm: Literal[False, "fill_unjudged", "prediction_powered"] = False
    confidence: float = Field(0.95, gt=0.5, lt=1.0)

    @property
    def fills(self) -> bool:
        """Whether LLM grades enter the scored labels (fill_unjudged), which changes the data revision."""
        return self.use_llm == "fill_unjudged"

    @property
    def prediction_powered(self) -> bool:
        """Whether LLM grades enter inference only, corrected on a human-judged random sample."""
        return self.use_llm == "prediction_powered"
