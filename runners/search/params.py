"""Parameters and name tags of search strategies (pure data: configs name candidates without loading faiss or mteb)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

IndexKind = Literal["flat", "hnsw", "ivf"]
LARGE_CORPUS_DOCS = 200_000  # default `encode.large_corpus_docs`: from this many documents, block-wise search
Fusion = Literal["rrf", "weighted"]


@dataclass(frozen=True)
class IndexParams:
    kind: IndexKind
    M: int = 16
    ef_construction: int = 40
    ef_search: int = 64
    nlist: int = 64
    nprobe: int = 8

    @property
    def tag(self) -> str:
        """'hnsw-M16-ef64' / 'ivf64-p8' / 'flat': names and labels."""
        if self.kind == "hnsw":
            efc = "" if self.ef_construction == 40 else f"-efc{self.ef_construction}"
            return f"hnsw-M{self.M}{efc}-ef{self.ef_search}"
        if self.kind == "ivf":
            return f"ivf{self.nlist}-p{self.nprobe}"
        return "flat"
