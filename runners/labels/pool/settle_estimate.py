"""How many more judgments would settle each open pair (issue 39): `labels status`' "to settle" column.

The method, a projection and not a bound. Take the decisive order (runners/labels/pool/decisive_order.py: the order
`labels plan --order decisive` deals and `labels serve` serves) of the pairs still unjudged, and judge them in that
order, each graded as today's scores already count it: not relevant (grade 0). After each judgment recompute the
exact adversarial bounds of runners/labels/pool/verdict_bounds.py over the pairs still unjudged; a pair is settled at
the first judgment after which its bounds exclude 0. The answer is that count, or None when judging the whole pool
would not settle it (today's difference is 0: with every grade as today counts it the two candidates tie).

Why this assumption: it is the one today's difference rests on, so the figure reads "if today's scores are right
about the unjudged pairs, this many more judgments in the served order prove it". Grades that turn out relevant
change the difference itself; rerun `labels status` as grades arrive, the estimate is redone from them.

Only the judged question's bounds change with one judgment, so each step recomputes one question (the per-question
bounds are independent and the pair's bound is their mean).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from .decisive_order import decisive_order
from .judged import ranked_ids
from .verdict_bounds import EPS, diff_range, query_pool


def _query_ranges(tops: list[list[str]], labels: Mapping[str, int], scale: Sequence[int], k: int,
                  pairs: list[tuple[int, int]]) -> np.ndarray:
    """(pairs, 3): now, lowest, highest of each pair's difference on one question."""
    pool = query_pool([d for t in tops for d in t if d not in labels], labels, scale, k)
    return np.array([diff_range(pool, labels, tops[i], tops[j], k) for i, j in pairs], dtype=np.float64)


def _settled(row: np.ndarray) -> bool:
    return bool(row[1] > EPS or row[2] < -EPS)


def judgments_to_settle(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                        qrels: Mapping[str, Mapping[str, int]], scale: Sequence[int], k: int = 10,
                        seed: int = 0) -> dict[tuple[str, str], int | None]:
    """(A, B) -> judgments in the decisive order until A-B is settled, grading each judged pair 0 (module
    docstring); 0 for a pair settled already, None for one the whole pool would not settle."""
    names = list(rankings)
    pairs = list(itertools.combinations(range(len(names)), 2))
    queries = sorted(qrels)
    labels = {q: dict(qrels[q]) for q in queries}
    tops = {q: [ranked_ids(rankings[n].get(q, {}))[:k] for n in names] for q in queries}
    per_query = {q: _query_ranges(tops[q], labels[q], scale, k, pairs) for q in queries}
    n = max(len(queries), 1)
    total = sum(per_query.values(), np.zeros((len(pairs), 3))) if queries else np.zeros((len(pairs), 3))
    out: dict[tuple[str, str], int | None] = {}
    for p, (i, j) in enumerate(pairs):
        if _settled(total[p] / n):
            out[(names[i], names[j])] = 0
    if len(out) == len(pairs):
        return out
    order = decisive_order(rankings, qrels, k, seed=seed)
    for step, w in enumerate(order, start=1):
        q = w.query_id
        labels[q][w.doc_id] = 0
        fresh = _query_ranges(tops[q], labels[q], scale, k, pairs)
        total += fresh - per_query[q]
        per_query[q] = fresh
        for p, (i, j) in enumerate(pairs):
            key = (names[i], names[j])
            if key not in out and _settled(total[p] / n):
                out[key] = step
        if len(out) == len(pairs):
            break
    for i, j in pairs:
        out.setdefault((names[i], names[j]), None)
    return out
