"""`labels status`: for each pair of a config's candidates, is the nDCG@k verdict settled whatever the unjudged
pairs turn out to be, or could grading them reverse it (issue 39)?

A task declaring `complete_labels: true` has no unjudged pair: a document nobody judged is a known 0, so every
verdict is settled.

Reads stored rankings and the task's labels only (the scored ones: what `run` scored, LLM grades included where
the config's `labels: {use_llm}` policy counts them); the bounds are runners/labels/pool/verdict_bounds.py's, the
estimate of the judgments still needed runners/labels/pool/settle_estimate.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import label_of
from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import pick_task, task_config_for
from .judged import ranked_ids, stored_rankings, task_collection
from .settle_estimate import judgments_to_settle
from .verdict_bounds import PairBound, pair_bounds


@dataclass
class LabelStatus:
    """The pairs' bounds on one task, and what they were computed from."""

    task: str
    split: str
    k: int
    labels: dict[str, str]  # results name -> label as every command prints it
    pairs: list[PairBound]
    pool: int  # unjudged (query, document) pairs in the union of every candidate's top-k
    to_settle: dict[tuple[str, str], int | None]  # settle_estimate.judgments_to_settle

    def estimate(self, pb: PairBound) -> str:
        """How many more judgments would settle an open pair, as one clause (settle_estimate's method)."""
        n = self.to_settle.get((pb.a, pb.b))
        if n is None:
            return "judging the whole pool would not settle it if the unjudged pairs are as today's scores count them"
        return (f"about {n:,} more judgment{'s' * (n != 1)} in the decisive order would settle it, if they are "
                "graded as today's scores count them (not relevant)")

    def sentence(self, pb: PairBound) -> str:
        """'settled: A beats B whatever the 1,240 unjudged pairs are' / 'open: ...'."""
        a, b = self.labels[pb.a], self.labels[pb.b]
        n = f"{pb.unjudged:,} unjudged pair{'s' * (pb.unjudged != 1)}"
        if pb.verdict == "A":
            return f"settled: {a} beats {b} whatever the {n} are"
        if pb.verdict == "B":
            return f"settled: {b} beats {a} whatever the {n} are"
        if pb.verdict == "tie":
            return f"settled: {a} and {b} score the same whatever the {n} are"
        lead = a if pb.now > 0 else b if pb.now < 0 else None
        now = f"{lead} leads now; " if lead else "tied now; "
        return f"open: {now}the {n} could reverse it; {self.estimate(pb)}"

    def as_dict(self) -> dict[str, Any]:
        """JSON form (`--format json`)."""
        return {"task": self.task, "split": self.split, "k": self.k, "unjudged_in_pool": self.pool,
                "pairs": [{"a": self.labels[p.a], "b": self.labels[p.b], "difference": p.now, "lowest": p.low,
                           "highest": p.high, "unjudged": p.unjudged, "queries": p.queries,
                           "verdict": {"A": "settled", "B": "settled", "tie": "settled"}.get(p.verdict, "open"),
                           "winner": self.labels[p.a] if p.verdict == "A" else self.labels[p.b]
                           if p.verdict == "B" else None, "judgments_to_settle": self.to_settle.get((p.a, p.b)),
                           "sentence": self.sentence(p)} for p in self.pairs]}


def label_status(bench: BenchmarkConfig, models: Sequence[str], task: str | None = None, split: str = "test",
                 k: int = 10) -> LabelStatus:
    """The bounds of every pair of `models` (results names, at least two) on one of the config's tasks."""
    if len(models) < 2:
        raise AnalysisError("labels status compares candidates: give at least two (--models a,b)")
    if k < 1:
        raise AnalysisError(f"--k must be >= 1, got {k}")
    entry = pick_task(bench, task)
    collection = task_collection(entry, bench)
    if split not in collection.qrels:
        raise AnalysisError(f"task '{collection.name}' has no split '{split}' (splits: {collection.splits})")
    cfg = task_config_for(entry, bench)
    scale, qrels = list(cfg.grades), collection.qrels[split]
    rankings = {}
    for m in models:
        stored, depth = stored_rankings(bench.results_path, m, collection.name, split)
        if k > depth:
            raise AnalysisError(f"--k {k} is deeper than the {depth} documents stored per query for '{m}'")
        rankings[m] = stored
    if cfg.complete_labels:  # `complete_labels: true`: a document nobody judged is known not relevant (grade 0)
        qrels = {q: {**{d: 0 for r in rankings.values() for d in ranked_ids(r.get(q, {}))[:k]}, **docs}
                 for q, docs in qrels.items()}
    pool = len({(q, d) for r in rankings.values() for q in qrels for d in ranked_ids(r.get(q, {}))[:k]
                if d not in qrels[q]})
    return LabelStatus(collection.name, split, k, {m: label_of(bench.results_path, m) for m in models},
                       pair_bounds(rankings, qrels, scale, k), pool, judgments_to_settle(rankings, qrels, scale, k))
