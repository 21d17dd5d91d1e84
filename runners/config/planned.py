"""An experiment candidate as named in results, before anything is loaded (experiments.py, rerank.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model_spec import ModelSpec

PREFIX = "private-mteb"


@dataclass(frozen=True)
class PlannedCandidate:
    """One experiment candidate as named in results, before anything is loaded."""

    name: str
    label: str
    kind: str  # hybrid | chunk | ann
    base: ModelSpec  # the dense model it is built on
    strategy: Any  # (fusion, value, depth) for hybrid, a Chunker, or IndexParams
    params: dict[str, Any] = field(default_factory=dict)
