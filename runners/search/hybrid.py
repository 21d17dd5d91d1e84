"""Hybrid search: BM25 (mteb's bm25s baseline) + a dense model, fused per query.

Built on mteb's own `HybridSearch` (it runs both retrievers over the same corpus and fuses
each query's score lists), with two fusions teams actually ship:
* `rrf`: reciprocal rank fusion, score(d) = sum over retrievers of 1 / (k + rank(d)), equal
  weights of 1 (the textbook form; mteb's default halves both weights, which ranks the same);
* `weighted`: min-max normalise each retriever's scores per query, then
  alpha * dense + (1 - alpha) * bm25 (mteb's relative score fusion with weights alpha, 1-alpha).
A document missing from one retriever's list gets nothing from that retriever.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mteb.models.hybrid_wrappers import HybridSearch, fuse_relative_score_fusion, fuse_rrf
from mteb.models.search_wrappers import SearchEncoderWrapper

from .counts import CountsFromInner
from .params import Fusion, fusion_tag


def rrf(score_lists: Sequence[Mapping[str, float]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion with weight 1 per list; ties in a list rank by descending doc id (mteb)."""
    return dict(fuse_rrf(score_lists, [1.0] * len(score_lists), rrf_k=k))


def weighted(dense: Mapping[str, float], sparse: Mapping[str, float], alpha: float = 0.5) -> dict[str, float]:
    """alpha * minmax(dense) + (1 - alpha) * minmax(sparse), per query; constant lists normalise to 0.5."""
    return dict(fuse_relative_score_fusion([dense, sparse], [alpha, 1.0 - alpha]))


class HybridRetriever(CountsFromInner, HybridSearch):
    """mteb HybridSearch over [dense (through the embedding cache), BM25] named as a candidate."""

    _counts_from = "dense"

    def __init__(self, dense: Any, bm25: Any, fusion: Fusion, value: float, meta: Any,
                 depth: int | None = None) -> None:
        self.dense = dense
        self.fusion, self.value = fusion, value
        if fusion == "rrf":
            strategy: Any = lambda lists, _w: rrf(lists, int(value))  # noqa: E731
            super().__init__([SearchEncoderWrapper(dense), bm25], weights=[1.0, 1.0],
                             sub_model_top_k=depth, fusion_strategy=strategy)
        elif fusion == "weighted":
            strategy = lambda lists, _w: weighted(lists[0], lists[1], value)  # noqa: E731
            super().__init__([SearchEncoderWrapper(dense), bm25], weights=[value, 1.0 - value],
                             sub_model_top_k=depth, fusion_strategy=strategy)
        else:
            raise ValueError(f"unknown fusion {fusion!r} (use rrf or weighted)")
        self.fusion_name = fusion_tag(fusion, value)
        self.mteb_model_meta = meta
