"""One model entry of a benchmark config (pure data: reading a config loads no model library)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BM25_NAME = "mteb/baseline-bm25s"
BM25_ALIASES = {"bm25", "bm25s", BM25_NAME}


class ModelSpec(BaseModel):
    """One candidate model in `configs/benchmarks/*.yaml`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["auto", "sentence-transformers", "mteb", "bm25", "factory"] = "auto"
    path: str | None = None
    revision: str | None = None
    factory: str | None = Field(default=None, description="package.module:function returning an encoder")
    factory_kwargs: dict[str, Any] = {}
    public_name: str | None = None
    label: str | None = None
    trust_remote_code: bool = False
    max_seq_length: int | None = None
    model_kwargs: dict[str, Any] = {}

    @property
    def display_name(self) -> str:
        return self.label or self.name

    @property
    def results_name(self) -> str:
        """The name results are filed under (mteb's name for BM25)."""
        return BM25_NAME if self.resolved_kind == "bm25" else self.name

    @property
    def default_label(self) -> str:
        """What tables show: the config's label, else the last part of the name."""
        if self.label:
            return self.label
        return "BM25" if self.resolved_kind == "bm25" else self.name.split("/")[-1]

    @property
    def resolved_kind(self) -> str:
        if self.kind != "auto":
            return self.kind
        if self.name in BM25_ALIASES:
            return "bm25"
        if self.factory:
            return "factory"
        if self.path:
            return "sentence-transformers"
        return "mteb"
