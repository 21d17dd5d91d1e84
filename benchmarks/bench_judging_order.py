"""Benchmark (issue 39): how many judgments each order needs to reach the verdicts of the full grades.

Simulation, not a timed test. Grades are hidden and revealed in an order, one batch at a time; after each batch
the script asks two questions of the grades known so far:

* settled: does `labels status` (runners/labels/pool/verdict_bounds.py) call every pair of candidates settled? Its
  bounds are exact over the still-hidden pairs, so a settled verdict is the full-grade one (checked here);
* agree: do today's scores (hidden pairs counted as not relevant, as mteb scores them) give the full grades' sign
  for every pair and the same best candidate, from this batch on?

Orders: random (a seeded shuffle: what `labels pool` / `labels serve` do), depth (the best rank any candidate
gives the document first: depth-first pooling), decisive (runners/labels/pool/decisive_order.py, the static order of
`labels plan --order decisive`), replanned (runners/labels/pool/replan_order.py, re-planned after every batch from
the grades so far: what `labels serve -c CONFIG` serves), oracle (the same re-planning with each gain computed for
the hidden true grade instead of 0: a reference for what knowing the grades would buy; greedy, so not a lower bound),
and, only when named with --orders, mixed (each batch half re-planned, half the static decisive order: a tried
compromise between reaching today's right verdict early and settling early; docs/judging.md has its figures).

Collections:
* ``-c CONFIG``: a config's task with stored rankings (`private-mteb run` first). The truth is the task's labels
  as they are, every pooled pair without a label taken as grade 0 (what the scores assume; the demo's pool is
  NOT fully judged, so this measures the orders against the verdicts of today's labels). Labels of documents
  outside every candidate's top-k are known from the start (they are the team's existing labels).
* ``--generated``: synthetic collections with known grades for every document: each candidate ranks by the
  true grade plus noise of its own size, so candidates differ in quality by a known amount.

Run: ``python benchmarks/bench_judging_order.py -c configs/benchmarks/demo.yaml --seeds 5`` or ``--generated``
(``--smoke``: one tiny generated collection, one seed; what the test suite runs).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runners.labels.pool.decisive_order import decisive_order  # noqa: E402
from runners.labels.pool.judged import ranked_ids  # noqa: E402
from runners.labels.pool.replan_order import Replanner  # noqa: E402
from runners.labels.pool.verdict_bounds import ndcg, pair_bounds  # noqa: E402

Rankings = dict[str, dict[str, dict[str, float]]]
Qrels = dict[str, dict[str, int]]


def pooled(rankings: Rankings, queries: list[str], k: int) -> list[tuple[str, str]]:
    return sorted({(q, d) for r in rankings.values() for q in queries for d in ranked_ids(r.get(q, {}))[:k]})


def order_of(name: str, rankings: Rankings, pool: list[tuple[str, str]], k: int, seed: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng([seed, 11])
    shuffled = [pool[i] for i in rng.permutation(len(pool))]
    if name == "random":
        return shuffled
    if name == "depth":
        best: dict[tuple[str, str], int] = {}
        for r in rankings.values():
            for q in {q for q, _ in pool}:
                for rank, d in enumerate(ranked_ids(r.get(q, {}))[:k]):
                    best[(q, d)] = min(best.get((q, d), k), rank)
        return sorted(shuffled, key=lambda p: best[p])
    queries = sorted({q for q, _ in pool})
    return [(w.query_id, w.doc_id) for w in decisive_order(rankings, {q: {} for q in queries}, k, seed=seed)]


def means(rankings: Rankings, qrels: Qrels, k: int) -> dict[str, float]:
    return {n: float(np.mean([ndcg(ranked_ids(r.get(q, {})), qrels[q], k) for q in sorted(qrels)]))
            for n, r in rankings.items()}


def verdicts(m: dict[str, float]) -> tuple[str, tuple[int, ...]]:
    names = list(m)
    return max(names, key=lambda n: m[n]), tuple(int(np.sign(m[a] - m[b])) for i, a in enumerate(names)
                                                 for b in names[i + 1:])


DYNAMIC = ("replanned", "oracle", "mixed")


def simulate(rankings: Rankings, truth: Qrels, scale: list[int], k: int, order: str, seed: int,
             batch: int, settle_every: int) -> tuple[int, int | None, int]:
    """(judgments until today's verdicts equal the full grades' for good, until status settles all, pool size)."""
    queries = sorted(truth)
    pool = pooled(rankings, queries, k)
    in_pool = set(pool)
    known: Qrels = {q: {d: g for d, g in truth[q].items() if (q, d) not in in_pool} for q in queries}
    full = verdicts(means(rankings, truth, k))
    planner = None
    if order in DYNAMIC:  # re-planned after every batch from the grades so far (runners/labels/pool/replan_order.py)
        planner = Replanner(rankings, known, scale, k, seed=seed,
                            assume=(lambda q, d: truth[q].get(d, 0)) if order == "oracle" else None)
        seq: list[tuple[str, str]] = []
    else:
        seq = order_of(order, rankings, pool, k, seed)
    agree_from, settled_at = None, None
    static = order_of("decisive", rankings, pool, k, seed) if order == "mixed" else []
    for n in range(0, len(pool) + batch, batch):
        if planner is not None and n and order == "mixed":  # half re-planned, half the static decisive order
            taken = {(q, d) for q in known for d in known[q]}
            picks = [(w.query_id, w.doc_id) for w in planner.order()[:batch // 2]]
            picks += [x for x in static if x not in taken and x not in picks][:batch - len(picks)]
            seq += picks
        elif planner is not None and n:
            seq += [(w.query_id, w.doc_id) for w in planner.order()[:batch]]
        for q, d in seq[max(0, n - batch):n]:
            known[q][d] = truth[q].get(d, 0)
            if planner is not None:
                planner.grade(q, d, known[q][d])
        ok = verdicts(means(rankings, known, k)) == full
        agree_from = (agree_from if agree_from is not None else n) if ok else None
        if settled_at is None and (n % settle_every == 0 or n >= len(pool)):
            bounds = pair_bounds(rankings, known, scale, k)
            if all(b.verdict in ("A", "B") for b in bounds):
                signs = tuple(1 if b.verdict == "A" else -1 for b in bounds)
                assert signs == full[1], "a settled verdict differs from the full grades' (the bound is wrong)"
                settled_at = n
        if settled_at is not None and agree_from is not None:
            break
    return min(agree_from if agree_from is not None else len(pool), len(pool)), \
        None if settled_at is None else min(settled_at, len(pool)), len(pool)


def generated(seed: int, n_queries: int = 150, n_docs: int = 300, noise: tuple[float, ...] = (0.9, 1.0, 1.1)
              ) -> tuple[Rankings, Qrels]:
    """Known grades (0-2, a few relevant per query) and candidates that rank by grade + their own noise."""
    rng = np.random.default_rng(seed)
    truth: Qrels = {}
    rankings: Rankings = {f"c{i}": {} for i in range(len(noise))}
    for q in range(n_queries):
        qid = f"q{q:03d}"
        grades = np.zeros(n_docs, dtype=int)
        rel = rng.choice(n_docs, size=int(rng.integers(1, 8)), replace=False)
        grades[rel] = rng.choice([1, 2], size=len(rel))
        truth[qid] = {f"d{i}": int(g) for i, g in enumerate(grades) if g > 0 or rng.random() < 0.02}
        for i, s in enumerate(noise):
            score = grades + rng.normal(0, s, n_docs)
            top = np.argsort(-score)[:20]
            rankings[f"c{i}"][qid] = {f"d{j}": float(score[j]) for j in top}
    return rankings, truth


def from_config(path: Path) -> tuple[Rankings, Qrels, list[int]]:
    from runners.statistics.candidate_set import config_names
    from runners.labels.pool.judged import stored_rankings, task_collection
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.task_lookup import task_config_for

    bench = BenchmarkConfig.from_file(path)
    entry = bench.tasks[0]
    collection = task_collection(entry, bench, llm=False)
    rankings = {n: stored_rankings(bench.results_path, n, collection.name)[0] for n in config_names(bench)}
    return rankings, collection.qrels["test"], list(task_config_for(entry, bench).grades)


def report(name: str, runs: dict[str, list[tuple[int, int | None, int]]]) -> None:
    total = next(iter(runs.values()))[0][2]
    print(f"{name}: {total} pooled pairs")
    for order, rows in runs.items():
        agree = np.array([r[0] for r in rows]) / total
        settled = [r[1] for r in rows]
        s = ("never" if all(x is None for x in settled) else
             f"median {np.median([x if x is not None else total for x in settled]) / total:.1%}")
        print(f"  {order:9s} today's verdicts = full grades' from {np.median(agree):.1%} of the pool "
              f"(seeds: {', '.join(f'{r[0]} ({a:.1%})' for r, a in zip(rows, agree))} judgments); "
              f"status settles every pair: {s}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-c", "--config", type=Path)
    ap.add_argument("--generated", type=int, default=0, help="this many generated collections")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=10, help="judgments between two looks at today's verdicts")
    ap.add_argument("--settle-every", type=int, default=100, help="judgments between two `labels status` looks")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--orders", default="random,depth,decisive,replanned,oracle",
                    help="oracle: re-planned with the hidden grades known (a reference no real order can beat by "
                         "much, not an order a team can use)")
    ap.add_argument("--smoke", action="store_true",
                    help="one tiny generated collection and one seed: checks the script runs, measures nothing")
    args = ap.parse_args()
    cases = []
    if args.smoke:
        args.config, args.generated, args.seeds, args.settle_every = None, 0, 1, 20
        cases.append(("generated (smoke)", *generated(0, n_queries=12, n_docs=40), [0, 1, 2]))
    if args.config:
        cases.append((args.config.name, *from_config(args.config)))
    for g in range(args.generated):
        cases.append((f"generated #{g}", *generated(g), [0, 1, 2]))
    for name, rankings, truth, scale in cases:
        runs = {o: [simulate(rankings, truth, scale, args.k, o, s, args.batch, args.settle_every)
                    for s in range(args.seeds)]
                for o in args.orders.split(",")}
        report(name, runs)


if __name__ == "__main__":
    main()
