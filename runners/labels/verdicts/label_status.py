"""`labels status`: for each pair of a config's candidates, is the nDCG@k verdict settled whatever the unjudged
pairs turn out to be, or could grading them reverse it (issue 39)? And, as the worst case rarely settles, how likely
it is to hold (confidence_stop.py) and how many more randomly sampled questions would likely resolve it
(resolve_questions.py) (issue 47).

Questions whose labels are declared complete (Collection.complete_questions: a `complete_labels` column of the
questions, or the task's `complete_labels: true` for all of them) have no unjudged pair: a document nobody judged is
a known 0 there, in the bounds, the settle estimate and the probabilities alike (the probabilities are still
calibrated on people's grades only, not on those known 0s). Every question declared: every verdict is settled.

Reads stored rankings and the task's labels only (the scored ones: what `run` scored, LLM grades included where
the config's `labels: {use_llm}` policy counts them); the bounds are runners/labels/pool/verdict_bounds.py's, the
estimate of the judgments still needed runners/labels/pool/settle_estimate.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import label_of
from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import pick_task, task_config_for
from .confidence_stop import ConfidenceReport, config_llm_grades, holds_text, verdict_confidence
from ..pool.judged import complete_line, known_zeros, ranked_ids, stored_rankings, task_collection
from ..pool.settle_estimate import judgments_to_settle
from ..pool.verdict_bounds import PairBound, ndcg, pair_bounds
from ..raters.label_merge import judged_from_pool


@dataclass
class QuestionsToResolve:
    """Per pair, how many more randomly sampled questions people would likely have to judge (every pooled pair of
    each) before the prediction-powered interval of the difference excludes 0 (runners/statistics/
    prediction_powered.py's questions_to_resolve, from the rectifier's variance); empty without a sample."""

    counts: dict[tuple[str, str], int | None]
    basis: str  # what the figure rests on, or why there is none

    def count(self, a: str, b: str) -> int | None:
        """The pair's figure (None: no sample, or judging every question left would not resolve it)."""
        return self.counts.get((a, b))

    def sentence(self, a: str, b: str) -> str:
        """'; about 40 more randomly sampled questions would likely resolve it' (or '' without a sample)."""
        if (a, b) not in self.counts:
            return ""
        n = self.counts[(a, b)]
        if n is None:
            return "; judging every question left at random would likely not resolve it"
        if n == 0:
            return "; the prediction-powered interval on the random sample already resolves it"
        return f"; about {n:,} more randomly sampled question{'s' * (n != 1)} would likely resolve it"


def questions_to_resolve_pairs(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                               human: Mapping[str, Mapping[str, int]], llm: Mapping[tuple[str, str], int],
                               k: int) -> QuestionsToResolve:
    """The questions whose every pooled pair people judged are the labelled sample (taken as drawn at random, as
    `labels plan` draws it), the judge's grades score every question (an ungraded pair counts 0, as unjudged pairs
    do), and each pair's PPI++ difference gives how many more random questions would likely resolve it."""
    from ...statistics.prediction_powered import ppi_paired_difference, questions_to_resolve

    questions = sorted(human)
    if not llm:
        return QuestionsToResolve({}, "no LLM grades: no prediction-powered estimate")
    tops = {n: {q: ranked_ids(r.get(q, {}))[:k] for q in questions} for n, r in rankings.items()}
    sample = [q for q in questions if all(d in human[q] for t in tops.values() for d in t[q])]
    rest = [q for q in questions if q not in set(sample)]
    if len(sample) < 2 or not rest:
        return QuestionsToResolve({}, f"{len(sample)} question(s) with every pooled pair judged by people: a random "
                                      "sample of at least 2 (and questions left) is needed (`labels plan`)")
    judge = {q: {d: g for (qq, d), g in llm.items() if qq == q} for q in questions}
    y = {n: [ndcg(tops[n][q], human[q], k) for q in sample] for n in rankings}
    yh = {n: [ndcg(tops[n][q], judge[q], k) for q in sample] for n in rankings}
    yu = {n: [ndcg(tops[n][q], judge[q], k) for q in rest] for n in rankings}
    names = list(rankings)
    counts = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            est = ppi_paired_difference(y[a], y[b], yh[a], yh[b], yu[a], yu[b])
            counts[(a, b)] = questions_to_resolve(est)
    return QuestionsToResolve(counts, f"{len(sample)} questions with every pooled pair judged by people, taken as a "
                                      "random sample; LLM grades on the rest")


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
    confidence: ConfidenceReport  # confidence_stop.verdict_confidence: how likely each verdict holds
    resolve: QuestionsToResolve  # resolve_questions: more random questions that would likely resolve each
    complete: int = 0  # questions whose labels are declared complete (their unjudged pairs are known 0s)
    questions: int = 0  # scored questions of the split

    def complete_sentence(self) -> str | None:
        """How many questions declare complete labels (judged.complete_line), None when none do."""
        return complete_line(self.complete, self.questions)

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
        likely = holds_text(self.confidence.of(pb.a, pb.b), self.labels)
        if pb.verdict == "A":
            return f"settled: {a} beats {b} whatever the {n} are"
        if pb.verdict == "B":
            return f"settled: {b} beats {a} whatever the {n} are"
        if pb.verdict == "tie":
            return f"settled: {a} and {b} score the same whatever the {n} are"
        lead = a if pb.now > 0 else b if pb.now < 0 else None
        now = f"{lead} leads now; " if lead else "tied now; "
        likely = f"; {likely}" if likely else ""
        more = self.resolve.sentence(pb.a, pb.b)
        return f"worst case: open: {now}the {n} could reverse it{likely}; {self.estimate(pb)}{more}"

    def as_dict(self) -> dict[str, Any]:
        """JSON form (`--format json`)."""
        return {"task": self.task, "split": self.split, "k": self.k, "unjudged_in_pool": self.pool,
                "pairs": [{"a": self.labels[p.a], "b": self.labels[p.b], "difference": p.now, "lowest": p.low,
                           "highest": p.high, "unjudged": p.unjudged, "queries": p.queries,
                           "verdict": {"A": "settled", "B": "settled", "tie": "settled"}.get(p.verdict, "open"),
                           "winner": self.labels[p.a] if p.verdict == "A" else self.labels[p.b]
                           if p.verdict == "B" else None, "judgments_to_settle": self.to_settle.get((p.a, p.b)),
                           "probability_holds": _probability(self.confidence.of(p.a, p.b)),
                           "questions_to_resolve": self.resolve.count(p.a, p.b),
                           "sentence": self.sentence(p)} for p in self.pairs],
                "confidence": {"level": self.confidence.level, "reached": self.confidence.reached,
                               "together": _probability_of(self.confidence),
                               "basis": self.confidence.calibrated.why},
                "random_sample": self.resolve.basis,
                "complete_labels": {"questions": self.complete, "of": self.questions}}


def _probability(pc: Any) -> float | None:
    return None if pc is None else pc.probability


def _probability_of(report: ConfidenceReport) -> float | None:
    """How likely the verdicts hold all together, at least (None without calibrated probabilities)."""
    return report.together if report.pairs else None


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
    known = collection.complete_in(split)  # declared complete: a document nobody judged is a known 0
    qrels = known_zeros(qrels, rankings.values(), known, k)
    pool = len({(q, d) for r in rankings.values() for q in qrels for d in ranked_ids(r.get(q, {}))[:k]
                if d not in qrels[q]})
    human = task_collection(entry, bench, llm=False).qrels[split]  # the probabilities are of people's grades
    llm = config_llm_grades(bench, entry, split)
    judged: dict[str, dict[str, int]] = {}
    for (q, d), g in judged_from_pool(cfg, split).items():  # calibrated on what people judged from the pool only
        judged.setdefault(q, {})[d] = g
    confidence = verdict_confidence(rankings, known_zeros(human, rankings.values(), known, k), scale, k,
                                    {p: g for p, g in llm.items() if p[0] not in known}, bench.labels.confidence,
                                    calibrate_on=judged)
    return LabelStatus(collection.name, split, k, {m: label_of(bench.results_path, m) for m in models},
                       pair_bounds(rankings, qrels, scale, k), pool, judgments_to_settle(rankings, qrels, scale, k),
                       confidence, questions_to_resolve_pairs(rankings, human, llm, k), len(known), len(qrels))
