"""Prediction-powered verdicts (issue 47): the LLM judge's grades on the pool, corrected on the random sample of
questions people judged whole, give each candidate's main metric and each pair's paired difference with a valid
interval, and the verdict that interval says. `stats`, `check` and the report print what `ppi_report` returns, so
they give one answer, figures and rounding.

Only when the benchmark admits LLM grades for inference (`labels: {use_llm: prediction_powered}`,
runners/config/judge.py); every output says so. Per question (all N labelled questions of the split):

* ``Yhat`` = the main metric (pytrec_eval, as mteb scores it: rank_agreement.per_query_metric) of the candidate's
  stored ranking under the labels known *before* the sample was judged (the collection's labels without the pairs
  of the sample plan) with the judge's current grades on every pair it graded: the same rule for every question,
  so it never sees a human grade of the sample;
* ``Y`` = the same metric under the collection's labels (human grades, those of the sample plan merged in with
  `labels merge`), on the n sampled questions only; a pooled pair nobody judged counts as not relevant, as in the
  scores, and is counted.

The sample is the one `labels plan --order sample` drew and wrote into the plan file
(runners/labels/pool/question_sample.py); a question of it counts once every pair planned for it carries a human
grade (the app serves the sample in its drawn order, so the questions judged so far are a random sample too).
The estimator is runners/statistics/prediction_powered.py (PPI++, a bootstrap where the CLT is doubtful).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...statistics.analysis_errors import AnalysisError
from ...statistics.intervals import metric_label
from ...statistics.per_query import label_of
from ...statistics.prediction_powered import PPIEstimate, ppi_mean, ppi_paired_difference, questions_to_resolve
from ..pool.judged import ranked_ids, stored_rankings, task_collection
from ..pool.question_sample import read_sample
from ..raters.ratings import judging_dir
from .rank_agreement import per_query_metric

#: bootstrap draws where the CLT is doubtful; fixed (not a command's --resamples) so stats and check agree
RESAMPLES = 2000
SEED = 0


@dataclass
class PPIVerdicts:
    """Prediction-powered figures of one task: each candidate's mean and each pair's difference."""

    task: str
    metric: str
    judge: str            # the judge's source, e.g. llm:gpt-4o-mini
    n: int                # labelled questions of the split (N)
    sampled: int          # questions the plan sampled
    judged: int           # of those, judged whole (the labelled sample n)
    seed: int | None      # the sample's seed
    unjudged: int         # pooled pairs of the judged sample questions nobody graded (counted not relevant)
    leaked: int           # pairs of the judged sample questions with a human grade but no LLM grade
    means: dict[str, PPIEstimate] = field(default_factory=dict)          # label -> estimate
    pairs: dict[tuple[str, str], PPIEstimate] = field(default_factory=dict)  # (label A, label B) -> A - B
    alpha: float = 0.05
    why_not: str | None = None  # no figures: why (no sample yet, too few questions judged)

    def header(self) -> str:
        """What was admitted and how, said once per task by every output."""
        return (f"prediction-powered (labels.use_llm: prediction_powered): {self.judge} grades on the pool, "
                f"corrected on {self.judged} of the {self.sampled} questions of the random sample (seed "
                f"{self.seed}) that people judged whole, of {self.n} questions; {1 - self.alpha:.0%} intervals")

    @staticmethod
    def interval(t: tuple[float, float, float], signed: bool = False) -> str:
        f = "{:+.4f}" if signed else "{:.4f}"
        return f"{f.format(t[0])} [{f.format(t[1])}, {f.format(t[2])}]"

    def verdict(self, a: str, b: str, est: PPIEstimate) -> str:
        """A beats B / tied / open, from the prediction-powered interval of A - B."""
        if est.low > 0:
            return f"{a} beats {b}"
        if est.high < 0:
            return f"{b} beats {a}"
        more = questions_to_resolve(est, alpha=self.alpha)
        if more is None:
            return f"tied: judging every other question would likely not separate {a} and {b}"
        return f"open: about {more:,} more randomly sampled questions would likely settle it"

    def lines(self, only: set[str] | None = None) -> list[str]:
        """The lines `stats`, `check` and the report print; ``only``: the candidates (labels) to show (`check`:
        baseline and candidate), each line the same characters as `stats` prints for it."""
        if self.why_not:
            return [f"prediction-powered (labels.use_llm: prediction_powered): no verdicts yet: {self.why_not}"]
        out = [self.header()]
        if self.unjudged:
            out.append(f"  {self.unjudged:,} pooled pairs of the judged sample questions carry no human grade: "
                       "counted as not relevant, as in the scores")
        if self.leaked:
            out.append(f"  warning: {self.leaked:,} human-graded pairs of the sample have no LLM grade: run "
                       "`labels judge` on the pool (the LLM must grade every pooled pair)")
        for label, e in self.means.items():
            if only is not None and label not in only:
                continue
            out.append(f"  {label}: {metric_label(self.metric)} {self.interval((e.estimate, e.low, e.high))} (lam {e.lam:.2f}, "
                       f"{e.method}); LLM-only {self.interval(e.llm_only)}; human-only {self.interval(e.human_only)} "
                       f"(n={e.n_labelled})")
        for (a, b), e in self.pairs.items():
            if only is not None and not {a, b} <= only:
                continue
            out.append(f"  {a} - {b}: {self.interval((e.estimate, e.low, e.high), True)}: {self.verdict(a, b, e)}; "
                       f"LLM-only {self.interval(e.llm_only, True)}; human-only {self.interval(e.human_only, True)} "
                       f"(n={e.n_labelled})")
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON form: the same figures, unrounded."""
        def est(e: PPIEstimate) -> dict[str, Any]:
            return {"estimate": e.estimate, "low": e.low, "high": e.high, "lam": e.lam, "method": e.method,
                    "n_labelled": e.n_labelled, "n_unlabelled": e.n_unlabelled, "llm_only": list(e.llm_only),
                    "human_only": list(e.human_only)}

        return {"task": self.task, "metric": self.metric, "judge": self.judge, "use_llm": "prediction_powered",
                "questions": self.n, "sampled": self.sampled, "judged": self.judged, "seed": self.seed,
                "unjudged_in_sample": self.unjudged, "human_without_llm": self.leaked, "why_not": self.why_not,
                "candidates": {k: est(e) for k, e in self.means.items()},
                "pairs": [{"a": a, "b": b, **est(e), "verdict": self.verdict(a, b, e)}
                          for (a, b), e in self.pairs.items()]}


def per_question(rankings: Mapping[str, Mapping[str, Mapping[str, float]]], human: Mapping[str, Mapping[str, int]],
                 predicted: Mapping[str, Mapping[str, int]], sample: Sequence[str], metric: str,
                 ignore_identical_ids: bool = False) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray],
                                                               list[str], list[str]]:
    """(candidate -> Y on the sample, candidate -> Yhat on all questions, sample order, the other questions):
    Yhat in the order sample + others, so Yhat[:n] pairs with Y."""
    inside = [q for q in sample if q in human]
    others = sorted(q for q in predicted if q not in set(inside))
    y = {m: per_query_metric(r, human, metric, inside, ignore_identical_ids) for m, r in rankings.items()}
    yhat = {m: per_query_metric(r, predicted, metric, inside + others, ignore_identical_ids)
            for m, r in rankings.items()}
    return y, yhat, inside, others


def estimates(y: Mapping[str, np.ndarray], yhat: Mapping[str, np.ndarray], labels: Mapping[str, str], n: int,
              alpha: float = 0.05) -> tuple[dict[str, PPIEstimate], dict[tuple[str, str], PPIEstimate]]:
    """ppi_mean of every candidate and ppi_paired_difference of every pair (config order), the first n of yhat
    labelled."""
    kw: dict[str, Any] = {"alpha": alpha, "method": "auto", "resamples": RESAMPLES, "seed": SEED}
    names = list(y)
    means = {labels[m]: ppi_mean(y[m], yhat[m][:n], yhat[m][n:], **kw) for m in names}
    pairs = {(labels[a], labels[b]): ppi_paired_difference(y[a], y[b], yhat[a][:n], yhat[b][:n], yhat[a][n:],
                                                           yhat[b][n:], **kw)
             for i, a in enumerate(names) for b in names[i + 1:]}
    return means, pairs


def ppi_report(bench: Any, entry: str, models: Sequence[str], split: str = "test",
               alpha: float = 0.05) -> PPIVerdicts | None:
    """The prediction-powered figures of `models` (results names) on one task entry; None when the config does not
    admit LLM grades for inference or the task is not a private one with labels."""
    if not getattr(bench.labels, "prediction_powered", False) or bench.judge is None:
        return None
    from custom_tasks.llm_labels import current_grades, llm_labels_path, read_llm_labels

    from ...config.label_policy import current_judge
    from ...config.task_lookup import task_config_for

    try:
        cfg = task_config_for(entry, bench)
    except Exception:  # noqa: BLE001 — a public task: no pool, no judge grades
        return None
    collection = task_collection(entry, bench, llm=False)
    human = collection.qrels.get(split)
    if not human or cfg.path is None:
        return None
    out = PPIVerdicts(collection.name, cfg.main_score, bench.judge.source, len(human), 0, 0, None, 0, 0,
                      alpha=alpha)
    sample = read_sample(judging_dir(cfg))
    if sample is None or sample.get("split", split) != split:
        out.why_not = ("no random sample of questions planned: `private-mteb labels plan -c CONFIG --order sample "
                       "--questions 100 --raters NAMES`, then people judge it in `labels serve`")
        return out
    grades = current_grades(collection, read_llm_labels(llm_labels_path(cfg.path)), current_judge(bench, cfg))
    if not any(s == split for s, _, _ in grades):
        out.why_not = (f"no grades of {bench.judge.source} for the texts as they are: `private-mteb labels judge -c "
                       "CONFIG` grades the pool first")
        return out
    planned: dict[str, set[str]] = {}
    for s, q, d in sample["pairs"]:
        if s == split:
            planned.setdefault(q, set()).add(d)
    done = [q for q in sample["questions"] if q in human and planned.get(q, set()) <= set(human[q])]
    predicted = {q: {d: g for d, g in docs.items() if d not in planned.get(q, set())} for q, docs in human.items()}
    for (s, q, d), g in grades.items():
        if s == split and q in predicted:
            predicted[q][d] = int(g)
    out.sampled, out.judged, out.seed = len(sample["questions"]), len(done), sample.get("seed")
    if len(done) < 2:
        out.why_not = (f"{len(done)} of the {out.sampled} sampled questions judged whole: people judge every pair "
                       "of each in `labels serve` (then `labels merge`)")
        return out
    rankings = {}
    for m in models:
        try:
            rankings[m] = stored_rankings(bench.results_path, m, collection.name, split)[0]
        except AnalysisError:
            continue  # runs stored before rankings were: left out, as judged@10 leaves them
    if not rankings:
        out.why_not = "no stored rankings: `private-mteb run` first"
        return out
    depth = int(sample.get("depth", 10))
    pooled = {(q, d) for r in rankings.values() for q in done for d in ranked_ids(r.get(q, {}))[:depth]}
    out.unjudged = sum(1 for q, d in pooled if d not in human[q])
    out.leaked = sum(1 for q in done for d in planned.get(q, set()) if (split, q, d) not in grades)
    labels = {m: label_of(bench.results_path, m) for m in rankings}
    y, yhat, inside, _ = per_question(rankings, human, predicted, done, cfg.main_score, cfg.ignore_identical_ids)
    out.means, out.pairs = estimates(y, yhat, labels, len(inside), alpha)
    return out
