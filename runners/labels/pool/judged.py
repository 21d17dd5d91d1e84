"""judged@k: the share of a candidate's top-k that carries any label, from stored rankings.

Unlabelled documents count as irrelevant, so a model that finds *different* good documents than the
one the labels were made from is punished. judged@k says how much of a score rests on unlabelled
documents: a candidate whose judged@10 is clearly below the baseline's is probably underestimated,
and its top-10 should be pooled and labelled (`private-mteb labels pool`). Reads stored rankings and
the collection's labels only; no model library is imported, and no pandas either (plain dicts; the
Series / frame views are built on demand) so `stats` and `check` start fast.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import label_of, task_config_collection
from ...statistics.intervals import format_number
from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import task_config_for
from ...results.store import find_run, read_json

if TYPE_CHECKING:
    import pandas as pd

    from custom_tasks.collection import Collection

#: a candidate is "clearly below" the baseline when its mean judged@k is at least this much lower ...
DEFAULT_MARGIN = 0.10
#: ... and the 95% bootstrap interval of the paired per-query difference lies below zero
_RESAMPLES = 2000


def ranked_ids(ranking: Mapping[str, float]) -> list[str]:
    """Document ids best first, ties broken as the stored top-k was cut (score, then id, descending)."""
    return [d for d, _ in sorted(ranking.items(), key=lambda x: (x[1], x[0]), reverse=True)]


#: said instead of the marks when every question's labels are declared complete (the task's `complete_labels: true`
#: or each question's `complete_labels` column: the same set, so the same line)
COMPLETE = ("labels: complete (`complete_labels` declared for every question): a document nobody judged is not "
            "relevant, so no verdict rests on missing grades")


def complete_line(declared: int, questions: int) -> str | None:
    """What the notes say of the declared complete labels: ``COMPLETE`` when each of the split's ``questions``
    declares them, how many do when some do (the marks then count the others' unjudged pairs), None when none."""
    if not declared or not questions:
        return None
    if declared >= questions:
        return COMPLETE
    return (f"labels: complete for {declared:,} of {questions:,} questions (`complete_labels` declared for them): "
            f"a document nobody judged is not relevant there, so only the other {questions - declared:,} "
            "questions' unjudged pairs are counted below")


def known_zeros(qrels: Mapping[str, Mapping[str, int]], rankings: Iterable[Mapping[str, Mapping[str, float]]],
                known: Set[str], k: int) -> dict[str, dict[str, int]]:
    """``qrels`` with every unlabelled document in any ranking's top-k of a ``known`` question (labels declared
    complete: Collection.complete_questions) graded 0, as it is known to be: the bounds, the settle estimate and
    the marks then see no unjudged pair there. The qrels themselves when no question is known."""
    if not known or not qrels.keys() & known:
        return {q: dict(d) for q, d in qrels.items()}
    tops = list(rankings)
    return {q: ({**{d: 0 for r in tops for d in ranked_ids(r.get(q, {}))[:k]}, **docs} if q in known else dict(docs))
            for q, docs in qrels.items()}


def judged_scores(rankings: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                  k: int = 10, known: Set[str] = frozenset()) -> dict[str, float]:
    """Per evaluated query (the qrels' queries, sorted): labelled share of the top-k (any grade, 0 included).

    The denominator is min(k, documents ranked), so a corpus smaller than k is not a penalty; a query
    the model did not rank at all is NaN. A ``known`` question (labels declared complete) has every document's
    grade known: 1.0 when it is ranked.
    """
    if k < 1:
        raise AnalysisError(f"judged@k: k must be >= 1, got {k}")
    out: dict[str, float] = {}
    for qid in sorted(qrels):
        labels = qrels[qid]
        top = ranked_ids(rankings.get(qid, {}))[:k]
        out[qid] = sum(d in labels or qid in known for d in top) / len(top) if top else float("nan")
    return out


def judged_ceiling(qrels: Mapping[str, Mapping[str, int]], k: int = 10,
                   known: Set[str] = frozenset()) -> tuple[float, float]:
    """(highest judged@k any ranking can reach, mean labelled documents per query) on these labels.

    A query with n labelled documents can have at most min(n, k) of them in its top-k: on a known-item task
    (one labelled document per query) judged@10 is at most 0.10, and 0.10 is then the best, not a warning sign.
    A ``known`` question (labels declared complete) can reach 1.0.
    """
    counts = [len(docs) for docs in qrels.values()]
    if not counts or k < 1:
        return float("nan"), float("nan")
    reach = sum(k if q in known else min(len(docs), k) for q, docs in qrels.items())
    return reach / (k * len(counts)), sum(counts) / len(counts)


def judged_meaning(k: int, ceilings: Mapping[str, tuple[float, float]]) -> str:
    """What judged@k says, for the tasks' ``judged_ceiling``s: a low value means an underestimated score only
    where more labels per query would allow a higher one."""
    low = {t: c for t, c in ceilings.items() if not math.isnan(c[0]) and c[0] < 0.995}
    text = (f"judged@{k}: the share of the candidate's top-{k} that carries any label (unlabelled documents count "
            "as irrelevant")
    if not low:
        return text + ", so a low value means the score is probably underestimated)"
    caps = "; ".join(f"at most {c:.2f} on {t} ({n:.1f} labelled documents per query)" for t, (c, n) in low.items())
    return (text + f"). With fewer than {k} labelled documents per query a ranking cannot reach 1.0: {caps}. "
            "Compare candidates with each other and with that maximum: one clearly below the others is probably "
            "underestimated")


def judged_at_k(rankings: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                k: int = 10) -> pd.Series:
    """`judged_scores` as a pandas Series named ``judged_at_<k>``."""
    import pandas as pd  # lazy: only the pandas API pays for it

    return pd.Series(judged_scores(rankings, qrels, k), dtype=float, name=f"judged_at_{k}")  # sorted already


def nan_mean(scores: Mapping[Any, float]) -> float:
    """Mean over the non-NaN values, summed in key order exactly as pandas' ``Series.mean`` does
    (NaN -> 0, one numpy sum, / count), so the numbers match the pandas API to the bit."""
    values = np.array(list(scores.values()), dtype=np.float64)
    missing = np.isnan(values)
    count = values.size - int(missing.sum())
    if count == 0:
        return float("nan")
    values[missing] = 0.0
    return float(values.sum() / np.float64(count))


def stored_rankings(results_dir: Path, model: str, task: str, split: str = "test",
                    subset: str = "default") -> tuple[dict[str, dict[str, float]], int]:
    """(query -> {doc: score}, stored depth) of a model's current run; AnalysisError if missing."""
    folder = find_run(results_dir, model, task)
    path = folder / f"rankings_{split}.json.gz" if folder is not None else None
    if path is None or not path.exists():
        raise AnalysisError(f"no stored rankings for model '{model}' on task '{task}' (split {split}) in "
                            f"{results_dir}: run `private-mteb run` first")
    try:
        data = read_json(path)
        return data["subsets"][subset], int(data.get("top_k", 100))
    except (ValueError, KeyError, TypeError) as e:
        raise AnalysisError(f"{path}: damaged rankings file ({type(e).__name__}): delete {folder} and re-run "
                            "`private-mteb run`") from None


@dataclass
class JudgedReport:
    """judged@k of every candidate on one task: the rows, per-query values and the warnings."""

    task: str
    rows: list[dict[str, Any]]  # task, candidate, model, k, judged, n_queries, stored_depth
    scores: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)  # (model, k) -> per query
    warnings: list[str] = field(default_factory=list)
    ceilings: dict[int, tuple[float, float]] = field(default_factory=dict)  # k -> judged_ceiling of the labels

    @property
    def table(self) -> pd.DataFrame:
        """The rows as a frame."""
        import pandas as pd  # lazy: stats/check print from the rows

        return pd.DataFrame(self.rows)

    @property
    def per_query(self) -> dict[tuple[str, int], pd.Series]:
        """(model, k) -> per-query judged@k as pandas Series (what `judged_at_k` returns)."""
        import pandas as pd  # lazy: stats/check print from the rows

        return {(m, k): pd.Series(v, dtype=float, name=f"judged_at_{k}") for (m, k), v in self.scores.items()}


def judged_report(results_dir: Path, task: str, qrels: Mapping[str, Mapping[str, int]], models: Sequence[str],
                  ks: Iterable[int] = (10,), split: str = "test", baseline: str | None = None,
                  margin: float = DEFAULT_MARGIN, seed: int = 0, known: Set[str] = frozenset()) -> JudgedReport:
    """judged@k for each model (results names) on one task; warns where one is clearly below `baseline`
    (default: the first model) at k = 10 (or the smallest k asked for). ``known``: the questions whose labels
    are declared complete (every document's grade known)."""
    ks = sorted(set(ks))
    rows, per_query = [], {}
    for model in models:
        rankings, depth = stored_rankings(results_dir, model, task, split)
        for k in ks:
            s = judged_scores(rankings, qrels, k, known)
            per_query[(model, k)] = s
            rows.append({"task": task, "candidate": label_of(results_dir, model), "model": model, "k": k,
                         "judged": nan_mean(s), "n_queries": sum(not math.isnan(v) for v in s.values()),
                         "stored_depth": depth})
    rep = JudgedReport(task, rows, per_query, ceilings={k: judged_ceiling(qrels, k, known) for k in ks})
    if models:
        base = baseline or models[0]
        if base not in models:
            raise AnalysisError(f"--baseline: '{base}' is not among the compared models ({', '.join(models)})")
        k = 10 if 10 in ks else ks[0]
        for model in models:
            if model != base:
                line = _below_baseline(results_dir, task, per_query[(model, k)], per_query[(base, k)], model,
                                       base, k, margin, seed)
                if line:
                    rep.warnings.append(line)
    return rep


def _below_baseline(results_dir: Path, task: str, cand: Mapping[str, float], base: Mapping[str, float], model: str,
                    base_model: str, k: int, margin: float, seed: int,
                    labels: tuple[str, str] | None = None) -> str | None:
    """The warning line when `cand` is clearly below `base` (paired over the queries both have a value
    for), else None; `labels` (candidate, baseline) when the two come from different results folders."""
    ids = [q for q in sorted(cand.keys() & base.keys()) if not (math.isnan(cand[q]) or math.isnan(base[q]))]
    if not ids:
        return None
    both = np.array([[cand[q] for q in ids], [base[q] for q in ids]], dtype=np.float64)
    diff = both[0] - both[1]
    mean = float(diff.mean())
    if mean > -margin:
        return None
    rng = np.random.default_rng(seed)
    boot = diff[rng.integers(0, len(diff), size=(_RESAMPLES, len(diff)))].mean(axis=1)
    high = float(np.quantile(boot, 0.975))
    if high >= 0:
        return None
    lc, lb = labels or (label_of(results_dir, model), label_of(results_dir, base_model))
    return (f"{task}: {lc} judged@{k} = {both[0].mean():.2f} vs {lb} {both[1].mean():.2f} "
            f"({format_number(mean, 2, True)}, 95% CI upper {format_number(high, 2, True)}): its score is probably underestimated; pool and label its "
            f"top-{k} (`private-mteb labels pool -c CONFIG --depth {k}`)")


def judged_line(rep: JudgedReport, k: int = 10) -> str:
    """One line for other commands' output (stats, check, report): `judged@10: A 0.95, B 0.88`."""
    rows = [r for r in rep.rows if r["k"] == k]
    if not rows:
        return ""
    top, per_query = rep.ceilings.get(k, (float("nan"), float("nan")))
    cap = (f" (at most {top:.2f} possible: {per_query:.1f} labelled documents per query)"
           if not math.isnan(top) and top < 0.995 else "")
    return f"judged@{k}: " + ", ".join(f"{r['candidate']} {r['judged']:.2f}" for r in rows) + cap


def task_collection(entry: str, bench: BenchmarkConfig | None = None, llm: bool = True) -> Collection:
    """The collection (with any imported labels) of a benchmark's task entry (name or YAML path); with ``bench``
    and ``llm``, with the LLM grades its `labels: {use_llm}` policy scores on (what `run` scored)."""
    cfg = task_config_for(entry, bench)  # first: a public task (not found) never imports the readers
    collection = task_config_collection(cfg)  # read once inside per_query.read_once
    if llm and bench is not None and bench.labels.fills:
        from ...config.label_policy import scored_collection

        collection = scored_collection(collection, cfg, bench)[0]
    return collection


def judged_for_config(bench: BenchmarkConfig, models: Sequence[str], ks: Iterable[int] = (10,),
                      split: str = "test", baseline: str | None = None, tasks: Sequence[str] | None = None,
                      margin: float = DEFAULT_MARGIN) -> list[JudgedReport]:
    """judged@k of `models` on every task of a benchmark (or `tasks`): what stats/check/report/inspect call."""
    out = []
    for entry in tasks or bench.tasks:
        collection = task_collection(entry, bench)
        if split not in collection.qrels:
            raise AnalysisError(f"task '{collection.name}' has no split '{split}' (splits: {collection.splits})")
        out.append(judged_report(bench.results_path, collection.name, collection.qrels[split], models, ks, split,
                                 baseline, margin, known=collection.complete_in(split)))
    return out
