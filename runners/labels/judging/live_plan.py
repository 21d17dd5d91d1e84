"""`labels serve -c CONFIG`: the rater's items in the decisive order, re-planned after every grade (issue 39).

With a config the app knows the candidates' rankings, so it serves the re-planned decisive order of
runners/labels/pool/replan_order.py: after each grade the bounds of the grade's question are recomputed and the
items not judged yet that come after the one just graded are put in the new order, so the next item the page
asks for is the most decisive one given every grade so far, without a reload. Items before the current one keep
their places (← goes back to what the rater saw). The page names the pair it grades and the server refuses a grade
whose pair is no longer at that place, so a re-plan can never put a grade on another pair.

The status panel: for each pair of candidates, settled or open by the exact bounds of verdict_bounds.py over the
pairs still unjudged (named the worst case), with the labels known (the task's, plus this rater's grades; other
raters' files count once merged, as everywhere else), and how likely the verdict is to hold (issue 47:
runners/labels/verdicts/confidence_stop.py, the config judge's LLM grades calibrated on the judged pooled pairs). Once
every verdict is at least `labels: {confidence}` likely to hold (default 95%) the panel says judging can stop: the
decisive order is served until then (the items after it stay, for a team that wants the worst case settled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...statistics.per_query import label_of
from ..verdicts.confidence_stop import DEFAULT_CONFIDENCE, config_llm_grades, holds_text, verdict_confidence
from ..pool.judged import known_zeros, stored_rankings, task_collection
from ..pool.replan_order import Replanner
from ..pool.verdict_bounds import EPS
from ..raters.label_merge import judged_from_pool
from .session import JudgingSession


class LivePlan:
    """The Replanner of one judging session, and how it reorders the session's items."""

    def __init__(self, planner: Replanner, names: Sequence[str], labels: Mapping[str, str], k: int,
                 rankings: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
                 llm: Mapping[tuple[str, str], int] | None = None, level: float = DEFAULT_CONFIDENCE) -> None:
        """`rankings`, `llm` (the judge's grades) and `level` (labels.confidence): for how likely each verdict is
        to hold and the stop (runners/labels/verdicts/confidence_stop.py); without rankings the panel gives the bounds
        only."""
        self.planner, self.names, self.labels, self.k = planner, list(names), dict(labels), k
        self.rankings, self.llm, self.level = rankings, dict(llm or {}), level
        #: the pairs people graded from the pool (raters' files, then this session): the calibration sample; not
        #: the task's own labels nor the known 0s of questions declared complete (raters.label_merge.judged_from_pool)
        self.people: dict[tuple[str, str], int] = {}

    @classmethod
    def for_config(cls, bench: Any, entry: str, models: Sequence[str], session: JudgingSession, k: int = 10,
                   split: str = "test", seed: int = 0) -> LivePlan:
        """From the config's stored rankings, the task's human labels and this rater's grades so far."""
        collection = task_collection(entry, bench, llm=False)
        qrels = {q: dict(v) for q, v in collection.qrels.get(split, {}).items()}
        for (s, q, d), j in session.judged.items():
            if s == split and q in qrels and j.status == "graded" and j.grade is not None:
                qrels[q][d] = int(j.grade)
        rankings = {m: stored_rankings(bench.results_path, m, collection.name, split)[0] for m in models}
        known = collection.complete_in(split)  # declared complete: their unjudged pairs are known 0s, never open
        filled = known_zeros(qrels, rankings.values(), known, k)
        planner = Replanner(rankings, filled, sorted(session.cfg.grades), k, seed=seed)
        llm = {p: g for p, g in config_llm_grades(bench, entry, split).items() if p[0] not in known}
        plan = cls(planner, models, {m: label_of(bench.results_path, m) for m in models}, k, rankings, llm,
                   bench.labels.confidence)
        plan.people = {p: g for p, g in judged_from_pool(session.cfg, split).items() if p[0] not in known}
        for (s, q, d), j in session.judged.items():
            if s == split and q not in known and j.status == "graded" and j.grade is not None:
                plan.people[(q, d)] = int(j.grade)
        plan.reorder(session, -1)
        return plan

    def reorder(self, session: JudgingSession, after: int) -> None:
        """Items after position `after` not judged yet, in the re-planned order (judged ones first, as they were;
        items the plan does not rank, after the ranked ones, in their old order)."""
        head, tail = session.items[:after + 1], session.items[after + 1:]
        done = [it for it in tail if it.key in session.judged]
        todo = {it.key: it for it in tail if it.key not in session.judged}
        split = next(iter(todo))[0] if todo else "test"
        ranked = [todo.pop((split, w.query_id, w.doc_id)) for w in self.planner.order()
                  if (split, w.query_id, w.doc_id) in todo]
        session.items = head + done + ranked + list(todo.values())

    def graded(self, session: JudgingSession, i: int, grade: int | None) -> None:
        """After item i's judgment: a grade enters the bounds, and the items after i are re-planned."""
        split, q, d = session.items[i].key
        if grade is not None:
            self.planner.grade(q, d, int(grade))
            self.people[(q, d)] = int(grade)
        self.reorder(session, i)

    def status(self) -> list[dict[str, Any]]:
        """For the panel: each pair, its difference now, bounds, 'settled' / 'worst case: open' sentence, how likely
        its verdict is to hold, and ``stop`` (the same line on every pair) once every verdict is at least the
        configured confidence likely: the decisive order is served until then."""
        out = []
        totals = self.planner.totals()
        people: dict[str, dict[str, int]] = {}
        for (q, d), g in self.people.items():
            people.setdefault(q, {})[d] = g
        conf = (verdict_confidence({n: self.rankings[n] for n in self.names}, self.planner.labels,
                                   self.planner.scale, self.k, self.llm, self.level, calibrate_on=people)
                if self.rankings is not None else None)
        stop = (f"the verdicts are at least {self.level:.0%} likely to hold all together: judging can stop here "
                "(labels.confidence)" if conf is not None and conf.reached else None)
        for p, (i, j) in enumerate(self.planner.pairs):
            now, low, high = (float(x) for x in totals[p])
            a, b = self.labels[self.names[i]], self.labels[self.names[j]]
            if low > EPS or high < -EPS:
                win, lose = (a, b) if low > EPS else (b, a)
                text = f"settled: {win} beats {lose} whatever the unjudged pairs are"
            else:
                lead = a if now > 0 else b if now < 0 else None
                text = (f"worst case: open: {lead + ' leads now; ' if lead else 'tied now; '}the unjudged pairs "
                        "could reverse it")
            pc = conf.of(self.names[i], self.names[j]) if conf is not None else None
            likely = holds_text(pc, self.labels)
            if likely and not text.startswith("settled"):
                text += f"; {likely}"
            out.append({"a": a, "b": b, "difference": now, "lowest": low, "highest": high,
                        "settled": text.startswith("settled"), "sentence": text,
                        "probability": None if pc is None else pc.probability, "stop": stop})
        return out
