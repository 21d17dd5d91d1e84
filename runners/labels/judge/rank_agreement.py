"""System-level agreement of two label sets: does the candidates' ranking change when LLM grades fill the gaps?

Each candidate's stored ranking is scored under both qrels with pytrec_eval, the library mteb scores with (same
measure names, same input: the scores mteb ranked by), so under the human qrels the numbers are the stored per-query
ones (tested to 1e-9). Then, over the candidates' mean scores: Kendall's tau-b (ties counted as scipy does) and
tau-AP (Yilmaz, Aslam & Robertson, 2008: disagreements near the top weigh more), with a percentile bootstrap over
queries (the same resampled queries for every candidate and both label sets); and the paired verdicts of `stats`
(pair_columns: sign-flip test, Holm) under both, to say whether a significant verdict flips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ...statistics.analysis_errors import AnalysisError

#: mteb score-name prefix -> pytrec_eval measure family (as custom_tasks/task.py maps mteb's per-query scores)
_PYTREC = {"ndcg_at": "ndcg_cut", "map_at": "map_cut", "recall_at": "recall", "precision_at": "P"}


def pytrec_measure(metric: str) -> tuple[str, str]:
    """('ndcg_cut.10', 'ndcg_cut_10') for 'ndcg_at_10': the measure to ask for and the key it answers under."""
    prefix, _, k = metric.rpartition("_")
    family = _PYTREC.get(prefix)
    if family is None or not k.isdigit():
        raise AnalysisError(f"main score '{metric}': the system-level check rescores nDCG/MAP/recall/precision@k "
                            "(pytrec_eval); pass --metric ndcg_at_10 (or another of those)")
    return f"{family}.{k}", f"{family}_{k}"


def per_query_metric(rankings: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                     metric: str, queries: Sequence[str], ignore_identical_ids: bool = False) -> np.ndarray:
    """``metric`` of each of ``queries`` (in that order) for a stored ranking under ``qrels`` (0 when unranked)."""
    import pytrec_eval

    ask, key = pytrec_measure(metric)
    run = {q: {d: float(s) for d, s in rankings.get(q, {}).items() if not (ignore_identical_ids and d == q)}
           for q in queries}
    evaluator = pytrec_eval.RelevanceEvaluator({q: {d: int(g) for d, g in qrels[q].items()} for q in queries}, {ask})
    scores = evaluator.evaluate({q: r for q, r in run.items() if r})
    return np.array([scores.get(q, {}).get(key, 0.0) for q in queries], dtype=np.float64)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two score vectors (NaN when either is constant)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    n0 = len(i)
    tx, ty = int((sx == 0).sum()), int((sy == 0).sum())
    denom = math.sqrt((n0 - tx) * (n0 - ty))
    return float((sx * sy).sum() / denom) if denom else float("nan")


def tau_ap(reference: Sequence[float], other: Sequence[float]) -> float:
    """tau-AP of ``other``'s ranking (the one evaluated: here the candidates under LLM grades) against
    ``reference``'s (the truth: under human grades). Higher score = better; ties broken by position.

    Yilmaz, Aslam & Robertson (2008): tau_AP = 2/(n-1) * sum_{i=2..n} C(i)/(i-1) - 1, the items ordered by the
    *evaluated* ranking, C(i) = how many of the items above rank i of that ranking the reference also places above
    the item at rank i. 1 for the same order, -1 for the reverse. Not symmetric: an error at the top of the
    evaluated ranking costs more, which is why the roles matter."""
    ref, oth = np.asarray(reference, float), np.asarray(other, float)
    n = len(ref)
    if n < 2:
        return float("nan")
    order = sorted(range(n), key=lambda k: (-oth[k], k))  # the evaluated ranking, top first
    rank_ref = {k: r for r, k in enumerate(sorted(range(n), key=lambda k: (-ref[k], k)))}
    total = 0.0
    for i in range(1, n):
        above = order[:i]
        total += sum(rank_ref[a] < rank_ref[order[i]] for a in above) / i
    return 2.0 * total / (n - 1) - 1.0


def bootstrap_tau(human: np.ndarray, mixed: np.ndarray, n_resamples: int, seed: int,
                  level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, resamples used) of tau-b between candidate means, resampling queries (rows) with replacement;
    ``human``/``mixed``: queries x candidates. Resamples with a constant side (tau undefined) are dropped."""
    n = human.shape[0]
    rng = np.random.default_rng([int(seed), 47])
    boot = []
    for idx in rng.integers(0, n, size=(n_resamples, n)):
        t = kendall_tau_b(human[idx].mean(axis=0), mixed[idx].mean(axis=0))
        if not math.isnan(t):
            boot.append(t)
    if not boot:
        return float("nan"), float("nan"), 0
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return float(low), float(high), len(boot)


def verdict_class(significant: bool, diff: float) -> str:
    """'a' (a better), 'b' (b better) or 'tie' (no significant difference)."""
    return "tie" if not significant else ("a" if diff > 0 else "b")


def system_agreement(rankings: Mapping[str, tuple[Mapping[str, Mapping[str, float]], str]],
                     human: Mapping[str, Mapping[str, int]], mixed: Mapping[str, Mapping[str, int]], metric: str,
                     n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
                     ignore_identical_ids: bool = False) -> dict:
    """Candidates' ranking and paired verdicts under ``human`` vs ``mixed`` qrels (one split).

    ``rankings``: results name -> (stored rankings, label). Queries: those with a positive human grade (the ones
    mteb evaluates). Returns the fields of judge_agreement.SystemAgreement."""
    from ...statistics.intervals import align_scores, pair_columns

    queries = sorted(q for q, d in human.items() if any(g > 0 for g in d.values()))
    if not queries:
        raise AnalysisError("no query has a positive human grade: nothing to rank candidates on")
    labels = [label for _, label in rankings.values()]
    h = np.column_stack([per_query_metric(r, human, metric, queries, ignore_identical_ids) for r, _ in rankings.values()])
    m = np.column_stack([per_query_metric(r, mixed, metric, queries, ignore_identical_ids) for r, _ in rankings.values()])
    hm, mm = h.mean(axis=0), m.mean(axis=0)
    low, high, _ = bootstrap_tau(h, m, n_resamples, seed)
    out = {"metric": metric, "candidates": labels, "n_queries": len(queries), "human_means": hm.tolist(),
           "mixed_means": mm.tolist(), "tau": kendall_tau_b(hm, mm), "tau_low": low, "tau_high": high,
           "tau_ap": tau_ap(hm, mm), "flips": [], "significant_human": 0, "significant_mixed": 0}
    if len(labels) >= 2:
        cols = [pair_columns(align_scores({lab: dict(zip(queries, x[:, i])) for i, lab in enumerate(labels)}),
                             n_resamples, seed, alpha) for x in (h, m)]
        for p in range(len(cols[0]["candidate_a"])):
            a, b = cols[0]["candidate_a"][p], cols[0]["candidate_b"][p]
            before = verdict_class(bool(cols[0]["significant"][p]), float(cols[0]["diff"][p]))
            after = verdict_class(bool(cols[1]["significant"][p]), float(cols[1]["diff"][p]))
            if before != after:
                say = {"a": f"{a} better", "b": f"{b} better", "tie": "no significant difference"}
                out["flips"].append(f"{a} vs {b}: {say[before]} -> {say[after]}")
        out["significant_human"] = int(np.sum(cols[0]["significant"]))
        out["significant_mixed"] = int(np.sum(cols[1]["significant"]))
    return out
