"""Hybrid search: BM25 (mteb's bm25s baseline) + a dense model, fused per query.

Built on mteb's own `HybridSearch` (it runs both retrievers over the same corpus and fuses each
query's score lists). The fusion, exactly, so results can be reproduced from stored rankings:
* depth: each retriever contributes its top-`depth` documents by score (equal scores: higher doc
  id first, mteb's order). Without `depth`, mteb's default: its top max(top_k, 100), where top_k
  is the task's largest k value (1000 by default). With depth < top_k the fused list is shorter
  than top_k (at most 2 * depth documents).
* `rrf`: score(d) = sum over retrievers of 1 / (k + rank(d)), rank counted from 1 in that
  retriever's cut list, weight 1 each (mteb's default halves both weights, which ranks the same).
* `weighted`: per query, min-max normalise each retriever's cut list, (s - min) / (max - min)
  (a list of equal scores normalises to 0.5), then alpha * dense + (1 - alpha) * bm25.
* a document missing from a retriever's cut list gets 0 from that retriever;
* the fused list is ordered by (score, doc id) descending and cut to top_k (mteb).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mteb.models.hybrid_wrappers import HybridSearch, fuse_relative_score_fusion, fuse_rrf
from mteb.models.search_wrappers import SearchEncoderWrapper

from .counts import CountsFromInner
from .params import Fusion


def rrf(score_lists: Sequence[Mapping[str, float]], k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion with weight 1 per list; ties in a list rank by descending doc id (mteb)."""
    return dict(fuse_rrf(score_lists, [1.0] * len(score_lists), rrf_k=k))


def weighted(dense: Mapping[str, float], sparse: Mapping[str, float], alpha: float = 0.5) -> dict[str, float]:
    """alpha * minmax(dense) + (1 - alpha) * minmax(sparse), per query; constant lists normalise to 0.5."""
    return dict(fuse_relative_score_fusion([dense, sparse], [alpha, 1.0 - alpha]))


def cut(scores: Mapping[str, float], depth: int | None) -> dict[str, float]:
    """A retriever's top-`depth` by score, equal scores by descending doc id (the order fuse_rrf ranks by).

    mteb asks each retriever for max(top_k, depth) documents, so without this cut a depth below
    top_k would be ignored.
    """
    if depth is None or len(scores) <= depth:
        return dict(scores)
    return dict(sorted(scores.items(), key=lambda x: (x[1], x[0]), reverse=True)[:depth])


class HybridRetriever(CountsFromInner, HybridSearch):
    """mteb HybridSearch over [dense (through the embedding cache), BM25] named as a candidate."""

    _counts_from = "dense"

    def __init__(self, dense: Any, bm25: Any, fusion: Fusion, value: float, meta: Any,
                 depth: int | None = None, dense_search: Any = None) -> None:
        self.dense = dense
        self.fusion, self.value, self.depth = fusion, value, depth
        if fusion == "rrf":
            strategy: Any = lambda lists, _w: rrf(lists, int(value))  # noqa: E731
            weights = [1.0, 1.0]
        elif fusion == "weighted":
            strategy = lambda lists, _w: weighted(lists[0], lists[1], value)  # noqa: E731
            weights = [value, 1.0 - value]
        else:
            raise ValueError(f"unknown fusion {fusion!r} (use rrf or weighted)")
        dense_search = dense_search if dense_search is not None else SearchEncoderWrapper(dense)
        super().__init__([dense_search, bm25], weights=weights,
                         sub_model_top_k=depth, fusion_strategy=strategy)
        self.mteb_model_meta = meta

    def fuse(self, query_scores_list: Sequence[Mapping[str, float]]) -> Mapping[str, float]:
        """Fuse each retriever's list cut to `depth` (mteb's search calls this once per query)."""
        return self._fuse_fn([cut(s, self.depth) for s in query_scores_list], self.weights)
