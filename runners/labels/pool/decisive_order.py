"""The decisive order (issue 39): judge first the pairs whose grade can move the candidates' differences most.

The rule. A document d of query q that is not judged yet enters candidate X's nDCG@k through its gain times the
discount at X's rank, disc_X(d) = 1 / log2(rank + 1) inside X's top-k and 0 outside. So in the paired difference
of A and B on q its grade is multiplied by disc_A(d) - disc_B(d): a document every candidate ranks at the same
depth adds the same to each and cannot change a difference; one that A ranks first and B not at all moves it by
the whole of its gain. The weight of (q, d) is

    weight(q, d) = sum over the compared pairs (A, B) of |disc_A(d) - disc_B(d)|

over every pair of the candidates, or over the pairs named with ``--decide A,B``. Pairs are judged by weight,
highest first (the minimal-test-collection idea of Carterette, Allan & Sitaraman, SIGIR 2006, with the metric's
own discount as the move). Equal weights are ordered by a seeded shuffle, so the order is deterministic for a seed.
A weight of 0 (the same depth in every compared candidate) comes last: its grade cannot change any difference
(only the ideal DCG, which scales every candidate of that query alike).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import resolve_models
from .judged import ranked_ids, stored_rankings, task_collection
from .verdict_bounds import discounts


@dataclass(frozen=True)
class Weighted:
    """One unjudged pair and how much its grade can move the compared differences."""

    query_id: str
    doc_id: str
    weight: float


def decisive_order(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                   qrels: Mapping[str, Mapping[str, int]], k: int = 10,
                   pairs: Iterable[tuple[str, str]] | None = None, seed: int = 0) -> list[Weighted]:
    """Every unjudged (query, document) pair in a compared candidate's top-k, heaviest first (module docstring);
    `rankings`: candidate -> query -> {doc: score}; `pairs`: the candidate pairs to decide (default: all)."""
    names = list(rankings)
    chosen = [tuple(p) for p in pairs] if pairs is not None else [
        (a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    for a, b in chosen:
        for n in (a, b):
            if n not in rankings:
                raise AnalysisError(f"--decide: '{n}' is not among the compared candidates ({', '.join(names)})")
        if a == b:
            raise AnalysisError(f"--decide {a},{b}: name two different candidates")
    if not chosen:
        raise AnalysisError("the decisive order compares candidates: give at least two")
    disc = discounts(k)
    involved = sorted({n for p in chosen for n in p}, key=names.index)
    weights: dict[tuple[str, str], float] = {}
    for q in sorted(qrels):
        rank_disc = {n: {d: float(disc[r]) for r, d in enumerate(ranked_ids(rankings[n].get(q, {}))[:k])}
                     for n in involved}
        docs = sorted({d for n in involved for d in rank_disc[n] if d not in qrels[q]})
        for d in docs:
            weights[(q, d)] = sum(abs(rank_disc[a].get(d, 0.0) - rank_disc[b].get(d, 0.0)) for a, b in chosen)
    keys = sorted(weights)
    perm = np.random.default_rng([int(seed), 39]).permutation(len(keys))
    shuffled = [keys[i] for i in perm]
    shuffled.sort(key=lambda key: -weights[key])  # stable: the shuffle orders equal weights
    return [Weighted(q, d, weights[(q, d)]) for q, d in shuffled]


def decide_pairs(spec: str | None, resolve: Callable[[list[str]], list[str]]) -> list[tuple[str, str]] | None:
    """`--decide A,B[;C,D]` -> results-name pairs (`resolve` maps names or labels to results names)."""
    if not spec:
        return None
    out: list[tuple[str, str]] = []
    for part in spec.split(";"):
        names = [x.strip() for x in part.split(",") if x.strip()]
        if len(names) != 2:
            raise AnalysisError(f"--decide {part!r}: name two candidates, e.g. --decide MiniLM,BM25")
        a, b = resolve(names)
        out.append((a, b))
    return out


def order_keys(order: Sequence[Weighted], split: str) -> list[tuple[str, str, str]]:
    """The judging items' keys (split, query, document) in the decisive order."""
    return [(split, w.query_id, w.doc_id) for w in order]


def config_decisive_order(bench: Any, entry: str, names: Sequence[str], depth: int, split: str, seed: int,
                          decide: str | None) -> list[Weighted]:
    """The pool's pairs of task ``entry`` in the decisive order of the candidates ``names`` (results names), from
    their stored rankings; ``decide`` (`--decide A,B`) narrows the compared pairs to those named."""
    collection = task_collection(entry, bench, llm=False)  # the pairs no human graded, as the pool
    rankings = {n: stored_rankings(bench.results_path, n, collection.name, split)[0] for n in names}
    pairs = decide_pairs(decide, lambda keys: resolve_models(bench.results_path, keys))
    known = collection.complete_in(split)  # declared complete: no pair of theirs to judge
    qrels = {q: docs for q, docs in collection.qrels[split].items() if q not in known}
    return decisive_order(rankings, qrels, depth, pairs, seed)
