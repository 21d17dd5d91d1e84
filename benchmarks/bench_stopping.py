"""Benchmark (issue 47): the stopping rule with a stated confidence, against the full-label verdicts.

Simulation, not a timed test. A collection's grades are the truth (every pooled pair: the demo's labels as they are,
an unlabelled pooled pair 0 -- as bench_judging_order.py -- or a generated collection's known grades). A simulated
LLM judge grades every pooled pair with a known error profile; people's grades are the truth, revealed in an order:

* confidence stop: the static decisive order (runners/labels/pool/decisive_order.py), or with ``--order replanned``
  the order re-planned after every batch (runners/labels/pool/replan_order.py: what `labels serve -c` serves), in
  batches; after each batch runners/labels/verdicts/confidence_stop.py computes how likely each verdict is to hold
  (LLM grade calibrated on the pooled pairs judged so far, the calibration's uncertainty averaged over); judging
  stops once the verdicts are at least --confidence likely to hold all together. Reported: the share of the pool
  judged, and whether the stopped verdicts (the more likely sign of each pair) all equal the full labels'.
* adversarial stop: the same order until the exact bounds (verdict_bounds.py) settle every pair (a few seeds: it
  does not depend on the judge).
* prediction-powered random sampling: questions drawn at random, every pooled pair of each judged by people, PPI++
  intervals of each pair's difference (runners/statistics/prediction_powered.py) after each batch; stops when every
  interval excludes 0. Reported: share of the pool judged and agreement with the full labels.

Judges (each draw: one judge, one seed): grade kept with probability ``keep``, else a uniform grade of the scale;
``lexical`` also grades 2 any document the lexical candidate (BM25 on the demo, the noisiest generated one) ranks in
its top 3 with probability 0.5: LLM judges favour documents sharing the question's words. Cohen's kappa of each
judge against the truth on the pool is reported.

Run: ``python benchmarks/bench_stopping.py -c configs/benchmarks/demo.yaml --generated --draws 500``
(``--smoke``: one tiny generated collection, 4 draws).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling bench_judging_order (run as a file or by runpy)
from bench_judging_order import from_config, generated, means, pooled, verdicts  # noqa: E402
from runners.labels.verdicts.confidence_stop import verdict_confidence  # noqa: E402
from runners.labels.pool.decisive_order import decisive_order  # noqa: E402
from runners.labels.pool.judged import ranked_ids  # noqa: E402
from runners.labels.pool.replan_order import Replanner  # noqa: E402
from runners.labels.pool.verdict_bounds import ndcg, pair_bounds  # noqa: E402
from runners.statistics.prediction_powered import ppi_paired_difference  # noqa: E402

JUDGES = {"good": (0.8, False), "fair": (0.6, False), "weak": (0.4, False), "lexical": (0.7, True)}


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two gradings."""
    cats = sorted(set(a) | set(b))
    po = float(np.mean(a == b))
    pe = sum(float(np.mean(a == c)) * float(np.mean(b == c)) for c in cats)
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def judge(truth, pool, scale, profile, lexical_top, rng):
    keep, lexical = JUDGES[profile]
    out = {}
    for q, d in pool:
        g = truth[q].get(d, 0)
        if rng.random() > keep:
            g = int(rng.choice(scale))
        if lexical and d in lexical_top.get(q, ()) and rng.random() < 0.5:
            g = max(scale)
        out[(q, d)] = int(g)
    return out


def confidence_stop(rankings, truth, scale, k, llm, seed, level, batch, full, order, replanned=False):
    """(share of the pool judged at the stop, stopped verdicts = full labels'): grades revealed in ``order`` (the
    static decisive order), or, ``replanned``, each batch the re-planned order's first (what `labels serve -c`
    serves: runners/labels/pool/replan_order.py)."""
    queries = sorted(truth)
    pool = pooled(rankings, queries, k)
    in_pool = set(pool)
    known = {q: {d: g for d, g in truth[q].items() if (q, d) not in in_pool} for q in queries}
    planner = Replanner(rankings, known, scale, k, seed=seed) if replanned else None
    order = list(order)
    for n in range(batch, len(order) + batch, batch):
        if planner is not None:
            order[n - batch:] = [(w.query_id, w.doc_id) for w in planner.order()]
        for q, d in order[n - batch:n]:
            known[q][d] = truth[q].get(d, 0)
            if planner is not None:
                planner.grade(q, d, known[q][d])
        rep = verdict_confidence(rankings, known, scale, k, llm, level)
        if rep.reached or n >= len(order):
            signs = tuple({"A": 1, "B": -1, None: 0}[pc.leader] for pc in rep.pairs)
            return min(n, len(order)) / len(pool), signs == full[1]
    raise AssertionError("unreachable")


def adversarial_stop(rankings, truth, scale, k, order, every):
    queries = sorted(truth)
    pool = pooled(rankings, queries, k)
    in_pool = set(pool)
    known = {q: {d: g for d, g in truth[q].items() if (q, d) not in in_pool} for q in queries}
    for n in range(every, len(order) + every, every):
        for q, d in order[n - every:n]:
            known[q][d] = truth[q].get(d, 0)
        if all(b.verdict in ("A", "B") for b in pair_bounds(rankings, known, scale, k)):
            return min(n, len(order)) / len(pool)
    return 1.0


def ppi_stop(rankings, truth, k, llm, seed, step, full):
    queries = sorted(truth)
    names = list(rankings)
    tops = {n: {q: ranked_ids(rankings[n].get(q, {}))[:k] for q in queries} for n in names}
    judged_llm = {q: {} for q in queries}
    for (q, d), g in llm.items():
        judged_llm[q][d] = g
    y = {n: np.array([ndcg(tops[n][q], truth[q], k) for q in queries]) for n in names}
    yh = {n: np.array([ndcg(tops[n][q], judged_llm[q], k) for q in queries]) for n in names}
    size = np.array([len({d for n in names for d in tops[n][q]}) for q in queries])
    perm = np.random.default_rng([seed, 7]).permutation(len(queries))
    for m in range(max(step, 10), len(queries), step):
        lab, unl = perm[:m], perm[m:]
        signs, done = [], True
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                est = ppi_paired_difference(y[a][lab], y[b][lab], yh[a][lab], yh[b][lab], yh[a][unl], yh[b][unl])
                if est.low > 0:
                    signs.append(1)
                elif est.high < 0:
                    signs.append(-1)
                else:
                    done = False
        if done:
            return size[lab].sum() / size.sum(), tuple(signs) == full[1]
    return 1.0, float("nan")  # never resolved before every question was judged: no verdict to compare


def run_case(name, make, scale, k, draws, level, args):
    print(f"\n{name}")
    rows = {}
    t0 = time.time()
    adversarial = []
    for d in range(args.start, args.start + draws):
        profile = list(JUDGES)[d % len(JUDGES)]
        seed = d // len(JUDGES)
        rankings, truth, lexical_name = make(seed)
        queries = sorted(truth)
        pool = pooled(rankings, queries, k)
        full = verdicts(means(rankings, truth, k))
        rng = np.random.default_rng([d, 47])
        lex_top = {q: ranked_ids(rankings[lexical_name].get(q, {}))[:3] for q in queries}
        llm = judge(truth, pool, scale, profile, lex_top, rng)
        order = [(w.query_id, w.doc_id) for w in decisive_order(rankings, {q: {} for q in queries}, k, seed=seed)]
        batch = max(10, len(pool) // args.looks)
        share, ok = confidence_stop(rankings, truth, scale, k, llm, seed, level, batch, full, order,
                                    args.order == "replanned")
        pshare, pok = ppi_stop(rankings, truth, k, llm, seed, max(2, len(queries) // args.looks), full)
        tv = np.array([truth[q].get(dd, 0) for q, dd in pool])
        lv = np.array([llm[(q, dd)] for q, dd in pool])
        rows.setdefault(profile, []).append((share, ok, pshare, pok, kappa(tv, lv)))
        if (d + 1 - args.start) % 20 == 0:
            print(f"  ... {d + 1 - args.start} draws, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
        if d - args.start < args.adversarial:
            adversarial.append(adversarial_stop(rankings, truth, scale, k, order, max(batch, len(pool) // 50)))
    print(f"  {draws} draws in {time.time() - t0:.0f}s; pool {len(pool):,} pairs, {len(queries)} questions"
          + (" (one collection)" if args.config and name.startswith(args.config.name) else " (per draw)"))
    print(f"  {'judge':8s} {'kappa':>6s} {'draws':>6s} {'stop@' + format(level, '.0%'):>10s} {'agree':>7s} "
          f"{'PPI random':>11s} {'agree':>7s} {'unresolved':>10s}")
    allrows = []
    for profile, rs in rows.items():
        a = np.array(rs, dtype=float)
        allrows.append(a)
        _row(profile, a)
    _row("all", np.concatenate(allrows))
    if adversarial:
        print(f"  adversarial stop (decisive order until the exact bounds settle every pair), {len(adversarial)} "
              f"draws: median {np.median(adversarial):.1%} of the pool")
    print("  stop@: median share of the pool people judged before the verdicts were "
          f"{level:.0%} likely to hold all together; agree: stopped verdicts = full labels'; PPI random: median "
          "share judged (every pooled pair of randomly drawn questions) until every PPI++ 95% interval excludes 0, looked at "
          "after every batch of questions (no correction for the repeated looks); agree among the draws it resolved; "
          "unresolved: draws where some interval still held 0 with every question but one judged")


def _row(name: str, a: np.ndarray) -> None:
    """One line of the table: kappa, draws, the confidence stop and the PPI stop (agreement over resolved draws)."""
    resolved = ~np.isnan(a[:, 3])
    ppi_agree = f"{a[resolved, 3].mean():7.1%}" if resolved.any() else f"{'-':>7s}"
    print(f"  {name:8s} {a[:, 4].mean():6.2f} {len(a):6d} {np.median(a[:, 0]):10.1%} {a[:, 1].mean():7.1%} "
          f"{np.median(a[:, 2]):11.1%} {ppi_agree} {int((~resolved).sum()):10d}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-c", "--config", type=Path)
    ap.add_argument("--generated", action="store_true")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0,
                    help="the first draw's number: draws start..start+draws-1 (a run split over processes or days)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--looks", type=int, default=100, help="looks at the verdicts over the whole pool")
    ap.add_argument("--order", choices=("static", "replanned"), default="static",
                    help="the judging order the stop is simulated on: the static decisive order, or re-planned after "
                         "every batch (what `labels serve -c CONFIG` serves)")
    ap.add_argument("--adversarial", type=int, default=3, help="draws that also run the adversarial stop")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.adversarial = 1
        run_case("generated (smoke)", lambda s: (*generated(s, n_queries=20, n_docs=40), "c2"), [0, 1, 2], args.k,
                 4, args.confidence, args)
        return
    if args.config:
        rankings, truth, scale = from_config(args.config)
        lexical = next((n for n in rankings if "bm25" in n.lower()), list(rankings)[-1])
        run_case(f"{args.config.name} ({lexical} the lexical candidate)", lambda s: (rankings, truth, lexical),
                 scale, args.k, args.draws, args.confidence, args)
    if args.generated:
        run_case("generated (a new collection per draw: 150 questions, 3 candidates)",
                 lambda s: (*generated(1000 + s), "c2"), [0, 1, 2], args.k, args.draws, args.confidence, args)


if __name__ == "__main__":
    main()
