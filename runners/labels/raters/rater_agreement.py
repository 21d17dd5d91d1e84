"""`labels agreement`: how alike the raters of a task grade the same pairs, with intervals, and what to adjudicate.

On the pairs graded by two or more raters: Cohen's kappa per pair of raters (unweighted, and quadratic-weighted
because the grades are ordinal), Krippendorff's alpha (ordinal) over all raters, each with a 95% bootstrap
interval over the pairs; the confusion matrix per pair of raters; the share of pairs on which two raters differ
by two grades or more; and the list of disagreements. The words of the sentence follow Landis & Koch (1977).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from custom_tasks.config import TaskConfig

from .agreement import Interval, bootstrap_ci, cohen_kappa, confusion_matrix, krippendorff_alpha_ordinal
from .ratings import Key, RaterFile

#: Landis & Koch's words for a kappa (upper bounds)
WORDS = ((0.0, "agree no better than chance"), (0.20, "agree slightly"), (0.40, "agree fairly"),
         (0.60, "agree moderately"), (0.80, "agree well"), (1.01, "agree almost perfectly"))


@dataclass
class PairAgreement:
    a: str
    b: str
    n: int  # pairs both graded
    kappa: Interval
    kappa_quadratic: Interval
    confusion: list[list[int]]  # rows: a's grade, columns: b's grade, on the task's scale (ascending)
    differ_by_two: float  # share of the n pairs where |a - b| >= 2

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "n": self.n, "kappa": self.kappa.as_dict(),
                "kappa_quadratic": self.kappa_quadratic.as_dict(), "confusion": self.confusion,
                "differ_by_two": self.differ_by_two}


@dataclass
class AgreementReport:
    task: str
    scale: list[int]
    raters: dict[str, dict[str, int]]  # rater -> {graded, skip, unsure}
    n_items: int  # pairs graded by anyone
    n_multi: int  # pairs graded by two or more raters
    pairs: list[PairAgreement]
    alpha: Interval | None
    differ_by_two: float  # share of the multi-rated pairs whose grades span two grades or more
    disagreements: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        """The finding in plain words, e.g. 'two raters agree well (weighted kappa 0.71 [0.62, 0.79]); ...'."""
        if not self.pairs:
            who = len(self.raters)
            return (f"no pair was graded by two raters yet ({who} rater{'s' if who != 1 else ''}, {self.n_items} "
                    "pairs graded): plan an overlap with `labels plan --overlap 0.2` to measure agreement")
        if len(self.raters) == 2 or self.alpha is None:
            p = self.pairs[0] if len(self.pairs) == 1 else None
            iv = p.kappa_quadratic if p else self.alpha
            name = "weighted kappa" if p else "Krippendorff's alpha"
        else:
            iv, name = self.alpha, "Krippendorff's alpha"
        n_words = {2: "two", 3: "three", 4: "four", 5: "five"}.get(len(self.raters), str(len(self.raters)))
        if iv is None or np.isnan(iv.estimate):
            return f"{n_words} raters: agreement is undefined on {self.n_multi} pairs (every grade the same)"
        word = next(w for bound, w in WORDS if iv.estimate <= bound)
        return (f"{n_words} raters {word} ({name} {iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}], "
                f"{self.n_multi} pairs graded by two or more); {self.differ_by_two:.0%} of them differ by two grades")

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "scale": self.scale, "raters": self.raters, "n_items": self.n_items,
                "n_multi": self.n_multi, "pairs": [p.as_dict() for p in self.pairs],
                "alpha": self.alpha.as_dict() if self.alpha else None, "differ_by_two": self.differ_by_two,
                "sentence": self.sentence, "disagreements": self.disagreements, "warnings": self.warnings}


def agreement(cfg: TaskConfig, files: list[RaterFile], queries: dict[str, str] | None = None,
              n_resamples: int = 2000, seed: int = 0) -> AgreementReport:
    """Agreement of the raters' files of one task (their broken lines already named in the files' warnings)."""
    scale = cfg.grade_scale
    graded = {f.rater: f.graded for f in files}
    counts = {f.rater: {s: sum(j.status == s for j in f.judgments.values()) for s in ("graded", "skip", "unsure")}
              for f in files}
    keys = sorted({k for g in graded.values() for k in g})
    multi = [k for k in keys if sum(k in g for g in graded.values()) >= 2]
    pairs = []
    for a, b in combinations(sorted(graded), 2):
        both = [k for k in keys if k in graded[a] and k in graded[b]]
        if not both:
            continue
        va = np.array([graded[a][k] for k in both])
        vb = np.array([graded[b][k] for k in both])
        ci = [bootstrap_ci(lambda i, w=w: cohen_kappa(va[i], vb[i], w, scale), len(both), n_resamples, seed)
              for w in (None, "quadratic")]
        pairs.append(PairAgreement(a, b, len(both), ci[0], ci[1], confusion_matrix(va, vb, scale).tolist(),
                                   float(np.mean(np.abs(va - vb) >= 2))))
    raters = sorted(graded)
    alpha = None
    spans: list[int] = []
    if multi:
        m = np.array([[graded[r].get(k, np.nan) for k in multi] for r in raters], dtype=float)
        alpha = bootstrap_ci(lambda i: krippendorff_alpha_ordinal(m[:, i], scale), len(multi), n_resamples, seed)
        spans = [int(np.nanmax(m[:, j]) - np.nanmin(m[:, j])) for j in range(len(multi))]
    disagreements = []
    for k, span in zip(multi, spans):
        if span:
            split, qid, doc_id = k
            disagreements.append({"split": split, "query_id": qid, "doc_id": doc_id,
                                  "query": (queries or {}).get(qid, ""), "span": span,
                                  "grades": {r: graded[r][k] for r in raters if k in graded[r]}})
    disagreements.sort(key=lambda d: (-d["span"], d["query_id"], d["doc_id"]))
    return AgreementReport(cfg.name, scale, counts, len(keys), len(multi), pairs, alpha,
                           float(np.mean(np.array(spans) >= 2)) if spans else float("nan"), disagreements,
                           [w for f in files for w in f.warnings])


def multi_rated(files: list[RaterFile]) -> list[Key]:
    """Pairs graded by two or more raters."""
    graded = [f.graded for f in files]
    return sorted({k for g in graded for k in g if sum(k in h for h in graded) >= 2})
