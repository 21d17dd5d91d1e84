"""The stopping rule with a stated confidence (issue 47): judging in the decisive order can stop once every verdict
is at least `labels: {confidence: 0.95}` likely to hold on the full labels.

Where the probabilities come from. Each unjudged pooled pair gets P(human grade = g | the LLM judge's grade),
calibrated on the pooled pairs people have judged that the judge graded too (runners/statistics/
relevance_calibration.py: a penalised multinomial logistic regression on the one-hot LLM grade). A pair the judge
did not grade, or every pair when there are no LLM grades, gets the pooled rates of the human grades on the judged
pooled pairs. A judge's errors need not be the same everywhere (LLM judges favour documents that share the
question's words, i.e. what a lexical candidate retrieves) nor is relevance (a document some candidate ranks first
is far likelier relevant than one at rank 8, and the decisive order judges the first kind first), so each pair
belongs to two groups: which candidates retrieved it with the band of its best rank (1, 2-3, 4+), and the band
alone. The most specific group with MIN_CALIBRATION calibration pairs of two grades or more gives its own fit; a
pair in no such group gets the pooled fit. verdict_confidence.py turns these into the probability that each verdict holds (exact moments,
normal approximation). The calibration is used only once it rests on at least MIN_CALIBRATION judged pooled pairs
holding at least two different grades: with fewer, or with people's grades all one value, it would call every
unjudged pair certain and the stop would fire on nothing (the figure is then None and the text says why).

Two caveats, said where the figure is shown: the pairs are taken as independent given their LLM grade, and the
pooled pairs people judged are the calibration sample whether or not they were drawn at random (the decisive order
judges the pairs that matter most, not a random sample). benchmarks/bench_stopping.py measures how often a verdict
stopped at 95% matches the full labels' under simulated judges of known error profiles.

The adversarial bounds of verdict_bounds.py stay, named the worst case: "worst case: open; 97% likely to hold".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...statistics.relevance_calibration import RelevanceCalibration, calibrate_relevance
from ..pool.judged import ranked_ids
from .calibration_posterior import DEFAULT_DRAWS, calibration_draws
from .verdict_confidence import GradeProbs, PairConfidence, pair_confidence, pair_confidence_averaged

#: judged pooled pairs the calibration needs before any probability is stated
MIN_CALIBRATION = 30
DEFAULT_CONFIDENCE = 0.95


@dataclass
class Calibrated:
    """The grade probabilities of the unjudged pooled pairs, and what they were learnt from."""

    probs: GradeProbs | None  # None: too few judged pooled pairs (``why`` says)
    judged: int  # pooled pairs with a human grade
    with_llm: int  # ... of which the LLM judge graded too (the calibration sample)
    calibration: RelevanceCalibration | None
    why: str  # one clause: what the probabilities rest on, or why there are none
    known: bool = False  # nothing unjudged: every verdict known on the labels (probability 1 or an exact tie)


def pooled_pairs(rankings: Mapping[str, Mapping[str, Mapping[str, float]]], questions: Sequence[str],
                 k: int) -> set[tuple[str, str]]:
    """Every (question, document) in a compared candidate's top-k."""
    return {(q, d) for r in rankings.values() for q in questions for d in ranked_ids(r.get(q, {}))[:k]}


def grade_probabilities(human: Mapping[tuple[str, str], int], llm: Mapping[tuple[str, str], int],
                        scale: Sequence[int],
                        strata: Mapping[tuple[str, str], str | tuple[str, ...]] | None = None) -> Calibrated:
    """P(grade | LLM grade) for every pair, fitted on ``human`` (the judged pooled pairs' human grades) against
    ``llm`` (the judge's grades, any pairs); probability vectors aligned with sorted(scale) (module docstring).
    ``strata`` (pair -> which candidates retrieved it): a stratum with MIN_CALIBRATION calibration pairs of two
    grades or more gets its own fit, the others the pooled one."""
    grid = sorted(set(int(g) for g in scale))
    grades = [int(g) for g in human.values()]
    outside = sorted(set(grades) - set(grid))
    if outside:
        return Calibrated(None, len(grades), 0, None, f"human grade(s) {outside} are outside the scale {grid}")
    pairs = [(int(llm[key]), int(h)) for key, h in human.items() if key in llm and int(llm[key]) in grid]
    if len(grades) < MIN_CALIBRATION or len(set(grades)) < 2:
        need = ("at least two different grades among them" if len(grades) >= MIN_CALIBRATION else
                f"{MIN_CALIBRATION - len(grades)} more")
        return Calibrated(None, len(grades), len(pairs), None,
                          f"{len(grades)} pooled pair{'s' * (len(grades) != 1)} judged from the pool: too few to "
                          f"calibrate relevance probabilities ({need} needed; the task's own labels do not count: "
                          "most were written down because they are relevant)")
    base = [grades.count(g) / len(grades) for g in grid]  # the calibration's rates for an LLM grade never seen
    cal = None
    if len(pairs) >= MIN_CALIBRATION and len({h for _, h in pairs}) >= 2:
        cal = calibrate_relevance(pairs, scale=grid)
    rows = {g: _vector(cal, g, grid) for g in grid} if cal is not None else {}
    own: dict[str, dict[int, list[float]]] = {}
    if cal is not None and strata:
        by: dict[str, list[tuple[int, int]]] = {}
        for key, h in human.items():
            if key in llm and int(llm[key]) in grid and key in strata:
                for name in _groups(strata[key]):
                    by.setdefault(name, []).append((int(llm[key]), int(h)))
        for name, sp in by.items():
            if len(sp) >= MIN_CALIBRATION and len({h for _, h in sp}) >= 2:
                fit = calibrate_relevance(sp, scale=grid)
                own[name] = {g: _vector(fit, g, grid) for g in grid}

    def probs(q: str, d: str) -> list[float]:
        g = llm.get((q, d))
        if g is None:
            return base
        table = next((own[n] for n in _groups(strata.get((q, d), ""))
                      if n in own), rows) if strata else rows
        return table.get(int(g), base)

    why = (f"relevance probabilities from the LLM grade, calibrated on {len(pairs):,} judged pooled pairs"
           + (f" ({len(own)} group{'s' * (len(own) != 1)} of pairs by which candidates retrieved them fitted apart)"
              if own else "") if cal is not None else f"relevance probabilities: the human grades' rates on {len(grades):,} judged "
                                   "pooled pairs (no LLM grade calibrated)")
    return Calibrated(probs, len(grades), len(pairs), cal, why)


def _groups(stratum: str | tuple[str, ...]) -> tuple[str, ...]:
    """A pair's groups, the most specific first (a plain string: one group)."""
    return (stratum,) if isinstance(stratum, str) else tuple(stratum)


def _vector(cal: RelevanceCalibration, llm_grade: int, grid: list[int]) -> list[float]:
    return [cal.p_grade(llm_grade, g) for g in grid]


@dataclass
class ConfidenceReport:
    """Every compared pair's probability of holding, the level asked, and whether judging may stop."""

    pairs: list[PairConfidence]  # empty when ``calibrated.probs`` is None
    level: float
    calibrated: Calibrated

    @property
    def together(self) -> float:
        """How likely every verdict is to hold at once, at least: 1 - the sum of each verdict's chance to fail (the
        union bound, true whatever their dependence). A team acts on all the verdicts, so the stop asks this of them
        all together: three verdicts each 95% likely may all hold only 85% of the time."""
        return max(0.0, 1.0 - sum(1.0 - pc.probability for pc in self.pairs)) if self.pairs else 0.0

    @property
    def reached(self) -> bool:
        """The verdicts at least ``level`` likely to hold all together (never without calibrated probabilities)."""
        return bool(self.pairs) and self.together >= self.level

    def of(self, a: str, b: str) -> PairConfidence | None:
        """The pair (a, b)'s figure, if computed."""
        return next((pc for pc in self.pairs if (pc.a, pc.b) == (a, b)), None)


def verdict_confidence(rankings: Mapping[str, Mapping[str, Mapping[str, float]]],
                       qrels: Mapping[str, Mapping[str, int]], scale: Sequence[int], k: int = 10,
                       llm: Mapping[tuple[str, str], int] | None = None,
                       level: float = DEFAULT_CONFIDENCE,
                       calibrate_on: Mapping[str, Mapping[str, int]] | None = None, draws: int = DEFAULT_DRAWS,
                       seed: int = 0) -> ConfidenceReport:
    """How likely each pair's verdict is to hold, from the judged pooled pairs and the judge's grades ``llm``
    ((question, document) -> grade); ``reached`` when they are at least ``level`` likely all together (module
    docstring). The probability averages over ``draws`` draws of the calibration itself (calibration_posterior.py,
    seeded). ``calibrate_on``: the labels the probabilities are learnt from, when ``qrels`` holds grades no person
    gave (the known 0s of questions declared complete: label_status.py); default ``qrels``."""
    pool = pooled_pairs(rankings, sorted(qrels), k)
    people = qrels if calibrate_on is None else calibrate_on
    human = {(q, d): int(g) for q, d in pool for g in [people.get(q, {}).get(d)] if g is not None}
    ranks = {n: {q: {d: i for i, d in enumerate(ranked_ids(r.get(q, {}))[:k])} for q in qrels}
             for n, r in rankings.items()}
    if all(d in qrels.get(q, {}) for q, d in pool):  # nothing unjudged: each difference is known, no calibration
        known = Calibrated(lambda q, d: [], len(human), 0, None,
                           f"no unjudged pair in the candidates' top-{k}: each verdict is known on these labels",
                           known=True)
        return ConfidenceReport(pair_confidence(rankings, qrels, scale, known.probs, k) if pool else [], level,
                                known)
    strata = {(q, d): _stratum_of(ranks, q, d) for q, d in pool}
    # the pooled fit: whether there is enough to calibrate on, and the table `labels status` names; the probability
    # itself comes from the grouped posterior draws below (a fit per group here would go unused)
    calibrated = grade_probabilities(human, llm or {}, scale)
    if calibrated.probs is None:
        return ConfidenceReport([], level, calibrated)
    posterior = calibration_draws(human, llm or {}, sorted(set(int(g) for g in scale)), strata, draws, seed)
    calibrated.why += (f", by groups of pairs (which candidates retrieved them, the band of their best rank), "
                       f"{draws} draws of the calibration")
    return ConfidenceReport(pair_confidence_averaged(rankings, qrels, scale, posterior.tables, posterior.cell_of, k),
                            level, calibrated)


def _depth(rank: int) -> str:
    return "1" if rank == 0 else "2-3" if rank < 3 else "4+"


def _stratum_of(ranks: Mapping[str, Mapping[str, Mapping[str, int]]], q: str, d: str) -> tuple[str, ...]:
    """(which candidates retrieved it | its best rank's band, its best rank's band): the groups the calibration
    is fitted on, the most specific first (module docstring)."""
    found = [n for n in ranks if d in ranks[n][q]]
    band = _depth(min(ranks[n][q][d] for n in found)) if found else "4+"
    return ("+".join(found) + "|" + band, band)


def holds_text(pc: PairConfidence | None, labels: Mapping[str, str]) -> str:
    """'all-MiniLM-L6-v2 beats BM25: 97% likely to hold' (or '' without a figure)."""
    if pc is None:
        return ""
    a, b = labels.get(pc.a, pc.a), labels.get(pc.b, pc.b)
    side = {"A": f"{a} beats {b}", "B": f"{b} beats {a}", None: f"{a} and {b} tie"}[pc.leader]
    return f"{side}: {likely_percent(pc.probability)} likely to hold"


def likely_percent(p: float) -> str:
    """A probability as a percent that never rounds up to a certainty it is not (99.96% -> '>99.9%')."""
    if p >= 1.0:
        return "100%"
    if p > 0.999:
        return ">99.9%"
    return f"{p:.1%}" if p > 0.99 else f"{p:.0%}"


def config_llm_grades(bench: Any, entry: str, split: str) -> dict[tuple[str, str], int]:
    """The config's judge's current LLM grades of task ``entry`` on ``split`` ((question, document) -> grade);
    none without a `judge:` in the config."""
    if getattr(bench, "judge", None) is None:
        return {}
    from custom_tasks.llm_labels import current_grades, llm_labels_path, read_llm_labels

    from ...config.label_policy import current_judge
    from ...config.task_lookup import task_config_for
    from ..pool.judged import task_collection

    cfg = task_config_for(entry, bench)
    if cfg is None or cfg.path is None:
        return {}
    rows = read_llm_labels(llm_labels_path(cfg.path))
    if not rows:
        return {}
    grades = current_grades(task_collection(entry, bench, llm=False), rows, current_judge(bench, cfg))
    return {(q, d): int(g) for (s, q, d), g in grades.items() if s == split}
