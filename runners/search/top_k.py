"""Top-k documents per query by (score, id), fed block by block; the same for any block boundaries.

The rule is the order of mteb's `(score, corpus_id)` heaps: a higher score first, and among equal scores the
greater document id (Python string order). mteb feeds its heaps only `torch.topk(top_k + 1)` of each chunk, so
when equal scores straddle that cut, which of them it keeps depends on torch's selection and on the chunk
boundaries. Here every document tied with a block's k-th score is considered (`TopKDocs.add`), so the result
is exactly the top_k of the whole corpus under the rule, whatever the blocks. NaN scores are taken as torch.topk
orders them (first). Used by chunked search, whose in-memory and block-wise paths must agree.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any


class TopKDocs:
    """Per query id, a heap of the best `top_k` (score, doc id) pairs seen so far."""

    def __init__(self, query_ids: Sequence[str], top_k: int) -> None:
        self.query_ids = list(query_ids)
        self.top_k = top_k
        self.heaps: dict[str, list[tuple[float, str]]] = {q: [] for q in self.query_ids}

    def add(self, scores: Any, ids: Sequence[str]) -> None:
        """One block: `scores` (queries x documents, torch or numpy), `ids` its documents' ids."""
        import torch

        sim = torch.as_tensor(scores)
        if not self.top_k or not sim.shape[1]:
            return
        k = min(self.top_k, sim.shape[1])
        values, idx = torch.topk(sim, k, dim=1, largest=True)
        cut = values[:, -1:]
        reach = ((sim >= cut) | sim.isnan()).sum(dim=1)  # more than k: equal scores straddle the cut
        values_l, idx_l, reach_l = values.tolist(), idx.tolist(), reach.tolist()
        for q, qid in enumerate(self.query_ids):
            if reach_l[q] > k:
                items = _with_ties(sim[q], float(cut[q, 0]), k, ids)
            else:
                items = [(s, ids[i]) for s, i in zip(values_l[q], idx_l[q])]
            self._push(self.heaps[qid], items)

    def _push(self, heap: list[tuple[float, str]], items: list[tuple[float, str]]) -> None:
        """Items best first; once the heap is full, an item can enter only when above its smallest."""
        for item in items:
            if len(heap) < self.top_k:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
            elif item[0] < heap[0][0]:
                break  # the rest score lower still

    def results(self) -> dict[str, dict[str, float]]:
        """Per query, doc id -> score, best first."""
        return {q: {doc: score for score, doc in sorted(heap, reverse=True)} for q, heap in self.heaps.items()}


def _with_ties(row: Any, cut: float, k: int, ids: Sequence[str]) -> list[tuple[float, str]]:
    """The k best of one row by (score, id): every score above the cut, then the greatest ids among those at it."""
    import torch

    above = torch.nonzero((row > cut) | row.isnan()).flatten().tolist()
    tied = torch.nonzero(row == cut).flatten().tolist()
    values = row.tolist()
    items = [(values[i], ids[i]) for i in above]
    nan = [item for item in items if item[0] != item[0]]
    items = nan + sorted((item for item in items if item[0] == item[0]), reverse=True)
    best = heapq.nlargest(k - len(items), (ids[i] for i in tied))
    return items + [(cut, doc) for doc in best]
