"""`labels agreement --judge`: are the LLM judge's grades good enough to count? Measured against human grades.

Label level, on the pairs with both a human grade (the task's labels, what mteb scores) and a grade of the config's
judge: Cohen's kappa, unweighted and quadratic-weighted (ordinal grades), with 95% bootstrap CIs over pairs
(raters/agreement.py, shared with the raters' agreement); TPR and TNR of "relevant" (grade >= 1) and of each
grade, with CIs; the confusion matrix; the majority-class baseline (always the humans' most frequent grade: kappa
0 by definition, its accuracy is the bar); and the human-human ceiling when two raters graded the same pairs.
System level (rank_agreement.py): the candidates' ranking by the main metric under human-only labels vs
human + LLM labels (``fill_unjudged``), Kendall's tau and tau-AP with a bootstrap CI over queries, and whether a
significant paired verdict flips. Then one plain sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..raters.agreement import Interval, bootstrap_ci, cohen_kappa, confusion_matrix
from ..raters.rater_agreement import WORDS


def _rate(hit: np.ndarray, cond: np.ndarray) -> float:
    """Share of ``hit`` among the items where ``cond`` holds (NaN when it never does)."""
    n = int(cond.sum())
    return float(hit[cond].sum() / n) if n else float("nan")


def rates(human: np.ndarray, llm: np.ndarray, positive: Any) -> tuple[float, float]:
    """(TPR, TNR) of the LLM for the class ``positive`` (a callable grade -> bool), the humans' as the truth."""
    h, p = positive(human), positive(llm)
    return _rate(p, h), _rate(~p, ~h)


@dataclass
class LabelAgreement:
    """The label-level comparison of one judge with the human grades on the pairs both graded."""

    n: int
    scale: list[int]
    kappa: Interval
    kappa_quadratic: Interval
    accuracy: float
    tpr: Interval  # relevant = grade >= 1
    tnr: Interval
    per_grade: dict[int, dict[str, Interval]]  # grade -> {"tpr", "tnr"} (that grade vs the others)
    confusion: list[list[int]]  # rows: human grade, columns: LLM grade, the scale ascending
    majority_grade: int
    majority_accuracy: float
    human_counts: dict[int, int]
    ceiling: dict[str, Any] | None = None  # {"raters": [a, b], "n", "kappa_quadratic": Interval}

    def as_dict(self) -> dict[str, Any]:
        iv = lambda i: i.as_dict()  # noqa: E731
        return {"n": self.n, "scale": self.scale, "kappa": iv(self.kappa), "kappa_quadratic": iv(self.kappa_quadratic),
                "accuracy": self.accuracy, "relevant": {"tpr": iv(self.tpr), "tnr": iv(self.tnr)},
                "per_grade": {str(g): {k: iv(v) for k, v in d.items()} for g, d in self.per_grade.items()},
                "confusion": self.confusion, "majority": {"grade": self.majority_grade,
                                                          "accuracy": self.majority_accuracy, "kappa": 0.0},
                "human_counts": {str(g): n for g, n in self.human_counts.items()},
                "ceiling": None if self.ceiling is None else {**self.ceiling,
                                                              "kappa_quadratic": iv(self.ceiling["kappa_quadratic"])}}


def label_agreement(human: np.ndarray, llm: np.ndarray, scale: list[int], n_resamples: int = 2000,
                    seed: int = 0) -> LabelAgreement:
    """Every label-level figure of one judge vs the human grades (equal-length arrays, one pair each)."""
    human, llm = np.asarray(human, int), np.asarray(llm, int)
    n = len(human)

    def ci(stat: Any) -> Interval:
        return bootstrap_ci(stat, n, n_resamples, seed)

    relevant = lambda g: g >= 1  # noqa: E731
    per_grade = {}
    for g in scale:
        per_grade[g] = {"tpr": ci(lambda i, g=g: rates(human[i], llm[i], lambda x: x == g)[0]),
                        "tnr": ci(lambda i, g=g: rates(human[i], llm[i], lambda x: x == g)[1])}
    counts = {g: int((human == g).sum()) for g in scale}
    majority = max(scale, key=lambda g: (counts[g], g))
    return LabelAgreement(
        n, list(scale),
        ci(lambda i: cohen_kappa(human[i], llm[i], None, scale)),
        ci(lambda i: cohen_kappa(human[i], llm[i], "quadratic", scale)),
        float((human == llm).mean()) if n else float("nan"),
        ci(lambda i: rates(human[i], llm[i], relevant)[0]), ci(lambda i: rates(human[i], llm[i], relevant)[1]),
        per_grade, confusion_matrix(human, llm, scale).tolist(), majority,
        counts[majority] / n if n else float("nan"), counts)


@dataclass
class SystemAgreement:
    """The candidates' ranking under human-only vs human + LLM labels."""

    metric: str
    candidates: list[str]  # labels, in the order of the arrays below
    n_queries: int
    human_means: list[float]
    mixed_means: list[float]
    tau: float
    tau_low: float
    tau_high: float
    tau_ap: float
    llm_filled: int  # pairs the LLM grades added
    flips: list[str] = field(default_factory=list)  # "A vs B: <human verdict> -> <mixed verdict>"
    significant_human: int = 0
    significant_mixed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class JudgeAgreementReport:
    task: str
    judge: str
    source: str
    labels: LabelAgreement | None
    system: SystemAgreement | None
    llm_only: int = 0  # pairs graded by the LLM and no human (what fill_unjudged would add)
    unrateable: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        return verdict_sentence(self)

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "judge": self.judge, "source": self.source, "llm_only": self.llm_only,
                "unrateable": self.unrateable, "labels": self.labels.as_dict() if self.labels else None,
                "system": self.system.as_dict() if self.system else None, "sentence": self.sentence,
                "warnings": self.warnings}


def _fmt(iv: Interval) -> str:
    return f"{iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"


def verdict_sentence(rep: JudgeAgreementReport) -> str:
    """"LLM labels agree with humans about as well as humans agree with each other (...); the ranking of 5
    candidates is unchanged (tau 1.00)", or the opposite, plainly."""
    lab = rep.labels
    if lab is None or lab.n == 0:
        return (f"no pair has both a human grade and a grade of {rep.source}: run `labels judge --also-judged` to "
                "grade the human-graded pairs too")
    kw = lab.kappa_quadratic
    if math.isnan(kw.estimate):
        first = (f"agreement of {rep.source} with humans is undefined on {lab.n} pairs (one grade used throughout: "
                 f"the humans graded {', '.join(f'{g}: {c}' for g, c in lab.human_counts.items() if c)})")
    elif lab.ceiling is not None and not math.isnan(lab.ceiling["kappa_quadratic"].estimate):
        ceil = lab.ceiling["kappa_quadratic"].estimate
        how = "about as well as" if kw.high >= ceil else "less well than"
        if kw.low > ceil:
            how = "better than"
        first = (f"LLM labels agree with humans {how} humans agree with each other (weighted kappa {_fmt(kw)} vs "
                 f"{ceil:.2f}, {lab.n} pairs)")
    else:
        word = next(w for bound, w in WORDS if kw.estimate <= bound)
        first = (f"LLM labels {word} with humans (weighted kappa {_fmt(kw)}, {lab.n} pairs; no two human raters "
                 "to compare with)")
        if kw.high <= 0:
            first += f", no better than always answering {lab.majority_grade}"
    if not math.isnan(lab.accuracy) and lab.accuracy < lab.majority_accuracy:
        first += (f"; {lab.accuracy:.0%} of its grades equal the human grade, fewer than always answering "
                  f"{lab.majority_grade} would ({lab.majority_accuracy:.0%})")
    sys_ = rep.system
    if sys_ is None:
        return first
    n = len(sys_.candidates)
    if math.isnan(sys_.tau):
        second = f"the ranking of {n} candidates cannot be compared (their scores tie)"
    elif sys_.tau >= 1.0 - 1e-12:
        second = f"the ranking of {n} candidates is unchanged (tau {sys_.tau:.2f} [{sys_.tau_low:.2f}, {sys_.tau_high:.2f}])"
    else:
        second = (f"the ranking of {n} candidates changes (tau {sys_.tau:.2f} [{sys_.tau_low:.2f}, "
                  f"{sys_.tau_high:.2f}], tau-AP {sys_.tau_ap:.2f})")
    flips = (f"; {len(sys_.flips)} significant verdict(s) flip: {'; '.join(sys_.flips)}" if sys_.flips
             else "; no significant verdict flips")
    return f"{first}; {second}{flips}"


def judge_agreement(bench: Any, entry: str, split: str = "test", n_resamples: int = 2000, seed: int = 0,
                    metric: str | None = None, models: list[str] | None = None,
                    labels_dir: Any = None) -> JudgeAgreementReport:
    """The whole comparison for one task of ``bench`` (its `judge:` names whose grades are compared)."""
    from custom_tasks.llm_labels import current_grades, llm_labels_path, read_llm_labels, with_llm_labels

    from ...statistics.candidate_set import candidate_set
    from ...statistics.analysis_errors import AnalysisError
    from ...statistics.per_query import label_of, task_config_collection
    from ...config.label_policy import current_judge
    from ...config.task_lookup import task_config_for
    from ..pool.judged import stored_rankings
    from .rank_agreement import system_agreement

    if bench.judge is None:
        raise AnalysisError(f"{bench.path}: no `judge:` in this config: whose grades should be compared?")
    cfg = task_config_for(entry, bench)
    collection = task_config_collection(cfg)  # human grades only
    if split not in collection.qrels:
        raise AnalysisError(f"task '{collection.name}' has no split '{split}' (splits: {collection.splits})")
    jid = current_judge(bench, cfg)
    rows = read_llm_labels(llm_labels_path(cfg.path))
    grades = {k: g for k, g in current_grades(collection, rows, jid).items() if k[0] == split}
    qrels = collection.qrels[split]
    both = sorted(k for k in grades if k[2] in qrels.get(k[1], {}))
    scale = list(cfg.grade_scale)
    report = JudgeAgreementReport(collection.name, jid, bench.judge.source, None, None,
                                  llm_only=len(grades) - len(both),
                                  unrateable=sum(r["judge"] == jid and r.get("grade") is None for r in rows))
    off = sorted({qrels[q][d] for _, q, d in both} - set(scale))
    if off:
        raise AnalysisError(f"{collection.name}: human grades {off} are outside the task's scale {scale}")
    if both:
        h = np.array([qrels[q][d] for _, q, d in both])
        lab = label_agreement(h, np.array([grades[k] for k in both]), scale, n_resamples, seed)
        lab.ceiling = _ceiling(cfg, labels_dir, n_resamples, seed)
        report.labels = lab
    names = list(candidate_set(bench, models).names)
    if names and report.llm_only:
        mixed, _ = with_llm_labels(collection, grades, bench.judge.source, "fill_unjudged")
        try:
            runs = {n: (stored_rankings(bench.results_path, n, collection.name, split)[0],
                        label_of(bench.results_path, n)) for n in names}
        except AnalysisError as e:
            report.warnings.append(f"system level left out: {e}")
        else:
            fields = system_agreement(runs, qrels, mixed.qrels[split], metric or cfg.main_score, n_resamples, seed,
                                      ignore_identical_ids=cfg.ignore_identical_ids)
            report.system = SystemAgreement(**fields, llm_filled=report.llm_only)
    elif not report.llm_only:
        report.warnings.append("system level left out: the judge graded no pair without a human grade (run "
                               "`labels judge` on the pool)")
    return report


def _ceiling(cfg: Any, labels_dir: Any, n_resamples: int, seed: int) -> dict[str, Any] | None:
    """The human-human agreement of the two raters (labels/<task>/) who graded the most pairs in common."""
    from ..raters.rater_agreement import agreement
    from ..raters.ratings import judging_dir, read_all

    folder = judging_dir(cfg, labels_dir)
    files = read_all(cfg, folder) if folder.is_dir() else []
    if len(files) < 2:
        return None
    pairs = agreement(cfg, files, None, n_resamples, seed).pairs
    if not pairs:
        return None
    best = max(pairs, key=lambda p: (p.n, p.a, p.b))
    return {"raters": [best.a, best.b], "n": best.n, "kappa_quadratic": best.kappa_quadratic}
