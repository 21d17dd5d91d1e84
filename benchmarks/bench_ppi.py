"""Benchmark (issue 47): prediction-powered verdicts from simulated LLM judges and a random human sample.

Simulation, not a timed test. On a fully judged collection every pooled (question, document) pair has a true grade;
a simulated LLM judge grades the whole pool with a known error profile, and people "judge" a random sample of n
questions (their true grades revealed). Per question, nDCG@10 is scored as mteb scores it (pytrec_eval's
``ndcg_cut.10`` over the stored rankings): Y under the true grades, Yhat under the judge's. Then, over many draws of
the human sample (the judge's grades redrawn each time), for every candidate's mean and every pair's paired
difference (runners/statistics/prediction_powered.py, PPI++ with power tuning; the product's interval, method "t",
and ppi-python's CLT interval, "clt", on the same draws):

* coverage of the 95% prediction-powered interval of the full-label figure (the mean over all N questions under
  the true grades), beside the human-only interval on the same sample and the LLM-only one (all N questions'
  Yhat taken as truth: systematic errors make it miss);
* how much narrower it is than the human-only interval on the same sample, by judge, with the correlation of the
  judge's per-question metric with the true one (per candidate for means, per pair's difference for
  differences), and beside it the ceiling: what a perfect judge (Yhat = Y on every question) reaches on the same
  sample. The estimator imputes over the N - n unjudged questions only (ppi-python's convention) and tunes
  ``lam``; with Yhat = Y its variance is sigma^2 [(1 - lam)^2 / n + lam^2 / (N - n)], least at lam = (N - n) / N,
  where it is sigma^2 / N: at most 1 - sqrt(n / N) narrower than the human sample's sigma^2 / n (plain PPI, lam =
  1, would reach only 1 - sqrt(n / (N - n))). A judge of correlation r reaches at best 1 - sqrt(1 - r^2 (N - n) / N);
  the per-sample perfect-judge figure differs from 1 - sqrt(n/N) by the sample's own moments and the t interval's
  divisors;
* sequential: questions revealed in a random order, 10 at a time; for each pair whose full-label verdict is
  decided (its 95% interval over all N questions excludes 0), the human judgments (pooled pairs of the revealed
  questions) until the interval first excludes 0, as a share of the pool, prediction-powered vs human-only, and
  how often that first verdict has the full-label sign.

Judges (grades 0-2 on every pooled pair): "kappa q" keeps the true grade with probability q and otherwise draws a
grade from the pool's grade distribution, so Cohen's kappa with the truth is q in expectation (measured kappa
printed); "lexical" keeps it with probability 0.6 and then raises by one grade, with probability 0.6, every pair in
the top quarter of the pool by word overlap between question and document: it favours documents that share the
question's words, i.e. the lexical retriever.

Collections:
* ``-c configs/benchmarks/demo.yaml``: the demo's 247 questions with its labels as the truth (a pooled pair
  without a label is grade 0, the pooling assumption), the stored BM25 and MiniLM rankings (`private-mteb run -c
  configs/benchmarks/demo.yaml` first) and the TREC run `data/demo_kb/prod_search.run` (a differently configured
  BM25); word overlap from the real texts (bm25s' English stop words removed).
* ``--generated``: known grades for every document; candidates rank by grade + noise of their own size, and one
  ("lexical") adds the pair's word overlap, a synthetic feature that relevant documents have more of.
Outside the pool, both Y and Yhat use the collection's labels (known before judging, as in bench_judging_order).

Run: ``python benchmarks/bench_ppi.py -c configs/benchmarks/demo.yaml --generated --draws 1000``
(``--smoke``: a tiny generated collection and a few draws; checks the script runs, measures nothing).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pytrec_eval

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runners.labels.pool.judged import ranked_ids  # noqa: E402
from runners.statistics.prediction_powered import ppi_mean, ppi_paired_difference  # noqa: E402

Rankings = dict[str, dict[str, dict[str, float]]]
Qrels = dict[str, dict[str, int]]
K = 10
STEP = 10


@dataclass
class Case:
    """A fully judged collection: rankings, the pool with its true grades and word overlaps, the labels outside."""

    name: str
    rankings: Rankings
    queries: list[str]
    pairs: list[tuple[str, str]]      # the pool, (question, document), grouped by question in ``queries`` order
    truth: np.ndarray                 # true grade per pooled pair
    overlap: np.ndarray               # word overlap per pooled pair, in [0, 1]
    outside: Qrels                    # labels of documents outside the pool (known before judging)

    def qrels(self, grades: np.ndarray) -> Qrels:
        out: Qrels = {q: dict(self.outside.get(q, {})) for q in self.queries}
        for (q, d), g in zip(self.pairs, grades.tolist()):
            out[q][d] = int(g)
        return out

    def ndcg(self, grades: np.ndarray) -> dict[str, np.ndarray]:
        """Per-question nDCG@10 of every candidate under these pool grades, scored by pytrec_eval as mteb does."""
        evaluator = pytrec_eval.RelevanceEvaluator(self.qrels(grades), {f"ndcg_cut.{K}"})
        out = {}
        for name, run in self.rankings.items():
            scores = evaluator.evaluate({q: run.get(q, {}) for q in self.queries})
            out[name] = np.array([scores.get(q, {}).get(f"ndcg_cut_{K}", 0.0) for q in self.queries])
        return out

    def pool_sizes(self) -> np.ndarray:
        index = {q: i for i, q in enumerate(self.queries)}
        return np.bincount([index[q] for q, _ in self.pairs], minlength=len(self.queries))


def make_case(name: str, rankings: Rankings, labels: Qrels, overlap_of) -> Case:
    queries = sorted(labels)
    pairs = sorted({(q, d) for r in rankings.values() for q in queries for d in ranked_ids(r.get(q, {}))[:K]})
    in_pool = set(pairs)
    outside = {q: {d: g for d, g in labels[q].items() if (q, d) not in in_pool} for q in queries}
    truth = np.array([labels[q].get(d, 0) for q, d in pairs])
    overlap = np.array([overlap_of(q, d) for q, d in pairs])
    return Case(name, rankings, queries, pairs, truth, overlap, outside)


def generated(seed: int, n_queries: int = 400, n_docs: int = 200) -> Case:
    """Known grades for every document; candidates rank by grade + noise, "lexical" also by word overlap."""
    rng = np.random.default_rng(seed)
    labels: Qrels = {}
    overlap: dict[tuple[str, str], float] = {}
    noise = {"dense": (1.0, 0.0), "lexical": (1.0, 1.8), "weak": (1.25, 0.0)}
    rankings: Rankings = {c: {} for c in noise}
    for i in range(n_queries):
        q = f"q{i:03d}"
        grades = np.zeros(n_docs, dtype=int)
        rel = rng.choice(n_docs, size=int(rng.integers(1, 6)), replace=False)
        grades[rel] = rng.choice([1, 2], size=rel.size, p=[0.6, 0.4])
        lap = np.where(grades > 0, rng.beta(3, 3, n_docs), rng.beta(1.2, 4, n_docs))
        labels[q] = {f"d{j}": int(grades[j]) for j in np.flatnonzero(grades)}
        overlap.update({(q, f"d{j}"): float(lap[j]) for j in range(n_docs)})
        for c, (sd, w) in noise.items():
            score = grades + w * lap + rng.normal(0, sd, n_docs)
            rankings[c][q] = {f"d{j}": float(score[j]) for j in np.argsort(-score)[:20]}
    return make_case(f"generated (seed {seed})", rankings, labels, lambda q, d: overlap[(q, d)])


def demo(config: Path) -> Case:
    """The demo task with its labels as the truth, its stored rankings and the TREC run beside it."""
    from bm25s.stopwords import STOPWORDS_EN

    from custom_tasks.normalize import normalize_text
    from runners.config.benchmark import BenchmarkConfig
    from runners.labels.pool.judged import stored_rankings, task_collection
    from runners.statistics.analysis_errors import AnalysisError
    from runners.statistics.candidate_set import config_names

    bench = BenchmarkConfig.from_file(config)
    coll = task_collection(bench.tasks[0], bench, llm=False)
    try:
        rankings = {n: stored_rankings(bench.results_path, n, coll.name)[0] for n in config_names(bench)}
    except AnalysisError as e:
        sys.exit(f"bench_ppi: {e}")
    run_file = Path(__file__).resolve().parents[1] / "data" / "demo_kb" / "prod_search.run"
    prod: dict[str, dict[str, float]] = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split()
        prod.setdefault(qid, {})[doc] = float(score)
    rankings["prod_search.run"] = prod
    stop = set(STOPWORDS_EN)

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"\w+", normalize_text(text)) if w not in stop and len(w) > 1}

    qwords = {q: words(t) for q, t in coll.queries.items()}
    dwords: dict[str, set[str]] = {}

    def overlap_of(q: str, d: str) -> float:
        if d not in dwords:
            doc = coll.corpus[d]
            dwords[d] = words(f"{doc['title']} {doc['text']}")
        return len(qwords[q] & dwords[d]) / max(len(qwords[q]), 1)

    return make_case(f"demo ({coll.name})", rankings, coll.qrels["test"], overlap_of)


def judge(case: Case, profile: str, rng: np.random.Generator) -> np.ndarray:
    """One draw of a simulated judge's grades on the pool (see the module docstring)."""
    t = case.truth
    marginal = np.bincount(t, minlength=3)[:3] / t.size
    keep = 0.6 if profile == "lexical" else float(profile.split()[1])
    grades = np.where(rng.random(t.size) < keep, t, rng.choice(3, size=t.size, p=marginal))
    if profile == "lexical":
        high = case.overlap >= np.quantile(case.overlap, 0.75)
        grades = np.where(high & (rng.random(t.size) < 0.6), np.minimum(grades + 1, 2), grades)
    return grades


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    po = float(np.mean(a == b))
    pe = float(sum(np.mean(a == g) * np.mean(b == g) for g in range(3)))
    return (po - pe) / (1 - pe)


def corr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a, b)[0, 1]) if np.std(a) > 0 and np.std(b) > 0 else float("nan")


def full_verdicts(y: dict[str, np.ndarray], pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """+1 / -1 where the pair's 95% interval over all N questions (human-only, CLT) excludes 0, else 0."""
    out = {}
    for a, b in pairs:
        d = y[a] - y[b]
        half = 1.959963984540054 * np.std(d) / np.sqrt(d.size)
        out[(a, b)] = int(np.sign(d.mean())) if abs(d.mean()) > half else 0
    return out


def simulate(case: Case, profile: str, ns: list[int], draws: int, seq_draws: int, boot_draws: int,
             seed: int) -> dict:
    """Coverage, widths and judgments needed for one judge on one collection, over ``draws`` draws."""
    y = case.ndcg(case.truth)
    names = sorted(y)
    pairs = list(combinations(names, 2))
    n_q = len(case.queries)
    full = full_verdicts(y, pairs)
    sizes = case.pool_sizes()
    rng = np.random.default_rng([seed, sum(map(ord, profile))])
    rows: dict = {n: {"mean": [], "diff": []} for n in ns}
    stats: dict = {"kappa": [], "corr_mean": [], "corr_diff": [], "llm_mean": [], "llm_diff": [],
                   "need_ppi": [], "need_human": [], "right_ppi": [], "right_human": [], "boot": []}
    for draw in range(draws):
        grades = judge(case, profile, rng)
        yhat = case.ndcg(grades)
        stats["kappa"].append(kappa(case.truth, grades))
        stats["corr_mean"].append(np.nanmean([corr(y[c], yhat[c]) for c in names]))
        stats["corr_diff"].append(np.nanmean([corr(y[a] - y[b], yhat[a] - yhat[b]) for a, b in pairs]))
        for n in ns:
            lab = np.zeros(n_q, bool)
            lab[rng.choice(n_q, size=n, replace=False)] = True
            for c in names:
                args = (y[c][lab], yhat[c][lab], yhat[c][~lab])
                est = ppi_mean(*args)
                rows[n]["mean"].append(_record(est, y[c].mean(), ppi_mean(*args, method="clt"),
                                               ppi_mean(y[c][lab], y[c][lab], y[c][~lab])))
                if n == ns[0]:   # LLM-only: all N predictions as truth (the human sample plays no part)
                    stats["llm_mean"].append(est.llm_only[1] <= y[c].mean() <= est.llm_only[2])
                if n == ns[0] and draw < boot_draws:
                    boot = ppi_mean(*args, method="bootstrap", resamples=2000, seed=draw)
                    stats["boot"].append(_record(boot, y[c].mean()))
            for a, b in pairs:
                args = (y[a][lab], y[b][lab], yhat[a][lab], yhat[b][lab], yhat[a][~lab], yhat[b][~lab])
                est = ppi_paired_difference(*args)
                perfect = ppi_paired_difference(y[a][lab], y[b][lab], y[a][lab], y[b][lab], y[a][~lab], y[b][~lab])
                rows[n]["diff"].append(_record(est, (y[a] - y[b]).mean(), ppi_paired_difference(*args, method="clt"),
                                               perfect))
                if n == ns[0]:
                    stats["llm_diff"].append(est.llm_only[1] <= (y[a] - y[b]).mean() <= est.llm_only[2])
                if n == ns[0] and draw < boot_draws:
                    boot = ppi_paired_difference(*args, method="bootstrap", resamples=2000, seed=draw)
                    stats["boot"].append(_record(boot, (y[a] - y[b]).mean()))
        if draw < seq_draws:
            _sequential(y, yhat, pairs, full, sizes, rng, stats)
    return {"rows": rows, "stats": stats, "full": full, "pool": int(sizes.sum()), "n_q": n_q}


def _record(est, truth: float, clt=None, perfect=None) -> tuple[bool, bool, float, float, float, float]:
    """(PPI covers, human-only covers, width ratio, lam, ppi-python's CLT interval covers, a perfect judge's width
    ratio on the same sample) of one estimate (nan where not measured)."""
    return (est.low <= truth <= est.high, est.human_only[1] <= truth <= est.human_only[2], est.width_ratio, est.lam,
            (clt.low <= truth <= clt.high) if clt is not None else np.nan,
            perfect.width_ratio if perfect is not None else np.nan)


def _sequential(y, yhat, pairs, full, sizes, rng, stats) -> None:
    """Reveal questions in a random order, STEP at a time: judgments until each decided pair's interval first
    excludes 0 (PPI and human-only), and whether that first verdict has the full-label sign."""
    n_q = sizes.size
    order = rng.permutation(n_q)
    decided = [p for p in pairs if full[p] != 0]
    if not decided:
        return
    first: dict[str, dict] = {"ppi": {}, "human": {}}
    for n in list(range(STEP, n_q, STEP)) + [n_q]:
        lab = np.zeros(n_q, bool)
        lab[order[:n]] = True
        for a, b in decided:
            if (a, b) in first["ppi"] and (a, b) in first["human"]:
                continue
            est = ppi_paired_difference(y[a][lab], y[b][lab], yhat[a][lab], yhat[b][lab], yhat[a][~lab],
                                        yhat[b][~lab])
            for kind, (low, high) in (("ppi", (est.low, est.high)), ("human", est.human_only[1:])):
                if (a, b) not in first[kind] and (low > 0 or high < 0):
                    first[kind][(a, b)] = (int(sizes[lab].sum()), 1 if low > 0 else -1)
        if all(len(first[k]) == len(decided) for k in first):
            break
    total = int(sizes.sum())
    for kind in ("ppi", "human"):
        got = first[kind]
        stats[f"need_{kind}"].append(max(got[p][0] for p in decided) / total if len(got) == len(decided) else 1.0)
        stats[f"right_{kind}"].append(all(got.get(p, (0, full[p]))[1] == full[p] for p in decided))


def report(case: Case, results: dict[str, dict], ns: list[int]) -> None:
    any_res = next(iter(results.values()))
    full = any_res["full"]
    print(f"\n{case.name}: {any_res['n_q']} questions, {any_res['pool']} pooled pairs, candidates "
          f"{', '.join(sorted(case.rankings))}; full-label verdicts: "
          + ", ".join(f"{a} vs {b}: {'+' if v > 0 else '-' if v < 0 else 'undecided'}" for (a, b), v in full.items()))
    n_q = any_res["n_q"]
    print("coverage of the full-label figure by the 95% interval: 't' (the product's default, method='auto'), "
          "ppi-python's CLT ('clt') and the human-only t interval on the same sample. narrower: 1 - the PPI "
          "interval's width over the human-only one's, as achieved / as a perfect judge (Yhat = Y) reaches on the "
          "same sample; PPI++'s ceiling is 1 - sqrt(n/N) (module docstring): "
          + ", ".join(f"n={n}: {1 - np.sqrt(n / n_q):.0%}" for n in ns))
    print(f"{'judge':10s} {'kappa':>5s} {'r mean':>6s} {'r diff':>6s} {'n':>4s} | {'t mean':>6s} {'t diff':>6s} "
          f"{'clt m/d':>13s} {'human':>6s} {'LLM-only m/d':>12s} | {'narrower mean':>13s} {'narrower diff':>13s} "
          f"{'lam':>4s}")
    for profile, res in results.items():
        s = res["stats"]
        for n in ns:
            m, d = np.array(res["rows"][n]["mean"], float), np.array(res["rows"][n]["diff"], float)
            human = np.concatenate([m[:, 1], d[:, 1]]).mean()
            print(f"{profile:10s} {np.mean(s['kappa']):5.2f} {np.mean(s['corr_mean']):6.2f} "
                  f"{np.mean(s['corr_diff']):6.2f} {n:4d} | {m[:, 0].mean():6.1%} {d[:, 0].mean():6.1%} "
                  f"{m[:, 4].mean():6.1%}/{d[:, 4].mean():<6.1%} {human:6.1%} "
                  f"{np.mean(s['llm_mean']):5.0%}/{np.mean(s['llm_diff']):<5.0%}  | "
                  f"{1 - np.nanmean(m[:, 2]):6.0%} / {1 - np.nanmean(m[:, 5]):<4.0%} "
                  f"{1 - np.nanmean(d[:, 2]):6.0%} / {1 - np.nanmean(d[:, 5]):<4.0%} {np.mean(d[:, 3]):4.2f}")
    if any(res["stats"]["boot"] for res in results.values()):
        print(f"method='bootstrap' (BCa, 2,000 resamples) at n = {ns[0]}: coverage of means and differences "
              "together, PPI / human-only, and the t interval's (the default) on the same draws")
        for profile, res in results.items():
            b = np.array(res["stats"]["boot"], float)
            per_draw = len(case.rankings) + len(list(combinations(case.rankings, 2)))
            m, d = res["rows"][ns[0]]["mean"], res["rows"][ns[0]]["diff"]
            default = [r[0] for r in m[: b.shape[0] // per_draw * len(case.rankings)]]
            default += [r[0] for r in d[: b.shape[0] // per_draw * (per_draw - len(case.rankings))]]
            print(f"  {profile:10s} bootstrap {b[:, 0].mean():6.1%} / {b[:, 1].mean():6.1%}   t "
                  f"{np.mean(default):6.1%}   width over human-only {np.nanmean(b[:, 2]):.2f}   over {b.shape[0]} "
                  "estimates")
    print("human judgments until every decided pair's 95% interval first excludes 0 (share of the pool; median, "
          "90th percentile; first verdict = full-label verdict)")
    for profile, res in results.items():
        s = res["stats"]
        if not s["need_ppi"]:
            print(f"  {profile:10s} no pair is decided by the full labels")
            continue
        print(f"  {profile:10s} prediction-powered {np.median(s['need_ppi']):6.1%} (p90 "
              f"{np.quantile(s['need_ppi'], 0.9):5.1%}, right {np.mean(s['right_ppi']):5.1%})   human-only "
              f"{np.median(s['need_human']):6.1%} (p90 {np.quantile(s['need_human'], 0.9):5.1%}, right "
              f"{np.mean(s['right_human']):5.1%})   over {len(s['need_ppi'])} draws")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-c", "--config", type=Path, help="a config whose first task is fully judged (the demo)")
    ap.add_argument("--generated", action="store_true", help="a generated collection (seed 0)")
    ap.add_argument("--draws", type=int, default=1000, help="draws of the human sample per judge and n")
    ap.add_argument("--seq-draws", type=int, default=300, help="draws of the sequential (judgments needed) part")
    ap.add_argument("--boot-draws", type=int, default=100,
                    help="draws where the bootstrap interval is measured too, at the smallest n (it is slower)")
    ap.add_argument("--ns", default="30,60,100", help="human sample sizes (questions)")
    ap.add_argument("--judges", default="kappa 0.3,kappa 0.5,kappa 0.7,kappa 0.85,lexical")
    ap.add_argument("--smoke", action="store_true", help="a tiny generated collection, 5 draws: measures nothing")
    args = ap.parse_args()
    ns = [int(x) for x in args.ns.split(",")]
    cases = []
    if args.smoke:
        args.draws, args.seq_draws, args.boot_draws, ns = 5, 2, 2, [10]
        cases.append(generated(0, n_queries=30, n_docs=40))
    if args.config:
        cases.append(demo(args.config))
    if args.generated:
        cases.append(generated(0))
    if not cases:
        ap.error("name a collection: -c CONFIG and/or --generated (or --smoke)")
    for case in cases:
        results = {p: simulate(case, p, ns, args.draws, args.seq_draws, args.boot_draws, seed=0) for p in args.judges.split(",")}
        report(case, results, ns)


if __name__ == "__main__":
    main()
