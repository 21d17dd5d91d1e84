"""A three-size chunk sweep with a cold embedding cache: shared text is encoded once.

Runs plain all-MiniLM-L6-v2, then document-level chunk candidates of three sizes, one after the
other, through `run_benchmark` into a fresh results folder and cache. Per row it prints the chunks
made, the texts encoded and reused (documents/chunks AND queries go through the cache), the texts
that were new to the cache (expected to equal "encoded"), seconds and nDCG@10. Documents that fit
in one chunk are the plain run's very strings, and chunks equal across sizes are shared, so each
size after the first encodes only the chunks that changed.

    python benchmarks/bench_chunk_sweep.py                       # demo KB, 64/128/256 tokens, overlap 16
    python benchmarks/bench_chunk_sweep.py --scifact --sizes 128 192 256
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scifact", action="store_true", help="SciFact (tests/configs/scifact.yaml) instead of the demo")
    ap.add_argument("--task", help="any task name or YAML path (default: the demo task)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    ap.add_argument("--overlap", type=int, default=16)
    ap.add_argument("--unit", choices=["tokens", "chars"], default="tokens")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:  # the 12-page test task, one chunk size
        args.task, args.sizes = str(REPO / "tests/configs/kb_tiny.yaml"), [64]
    os.chdir(REPO)

    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("mteb").setLevel(logging.ERROR)
    from runners.execution.candidates import experiment_candidates as ex
    from runners.search.chunking import Chunker, split_corpus, token_offsets
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import load_task, run_benchmark

    task_name = args.task or ("tests/configs/scifact.yaml" if args.scifact else "NorthwindKBRetrieval")
    work = Path(tempfile.mkdtemp(prefix="bench-chunks-"))
    entry = {"type": "chunk", "model": MODEL, "unit": args.unit, "sizes": args.sizes, "overlap": args.overlap}
    cfg = BenchmarkConfig(name="chunk-sweep", tasks=[task_name], models=[{"name": MODEL, "label": "MiniLM"}],
                          experiments=[entry], results_dir=str(work / "results"), cache_dir=str(work / "cache"),
                          encode={"batch_size": args.batch_size})
    task = load_task(task_name)
    coll = task.collection
    split = task.metadata.eval_splits[0]
    docs = [(d, v.get("title") or "", v["text"]) for d, v in coll.corpus.items()]
    dense = ex.dense_candidate(cfg, MODEL)
    plain = dataclasses.replace(dense, load=lambda: ex.shared_raw(dense))  # one model in memory for all rows
    sweep = ex.candidates_from_experiments(cfg)
    offsets = token_offsets(ex.shared_raw(plain)) if args.unit == "tokens" else None

    def mteb_string(title: str, text: str) -> str:  # what mteb embeds for a document
        return (title + " " + text).strip() if title else text.strip()

    seen: set[str] = set()
    unit = "tokens" if args.unit == "tokens" else "chars"
    print(f"{task.metadata.name}: {len(docs)} documents, {len(coll.split_queries(split))} queries; "
          f"chunks of {args.sizes} {unit}, overlap {args.overlap}; cold cache in {work}")
    print(f"{'candidate':<22} {'chunks':>7} {'whole docs':>10} {'new texts':>9} {'encoded':>8} {'reused':>7} "
          f"{'seconds':>8} {'nDCG@10':>8}")
    rows = [(plain, None)] + [(c, Chunker(s, args.overlap, args.unit)) for c, s in zip(sweep, args.sizes)]
    for cand, chunker in rows:
        if chunker is None:
            strings = [mteb_string(t, x) for _, t, x in docs]
            n_chunks, whole = len(docs), len(docs)
        else:
            chunks = split_corpus(docs, chunker, offsets)
            strings = [mteb_string(c.title, c.text) for c in chunks]
            n_chunks = len(chunks)
            whole = sum(1 for c in chunks if (c.start, c.end) == (0, len(coll.corpus[c.doc_id]["text"])))
        texts = set(strings) | set(coll.split_queries(split).values())
        new = len(texts - seen)
        seen |= texts
        t0 = time.perf_counter()
        (rec,) = run_benchmark(cfg.model_copy(update={"experiments": []}), candidates=[cand], tasks=[task],
                               show_progress=False)
        secs = time.perf_counter() - t0
        print(f"{cand.label:<22} {n_chunks:>7} {whole:>10} {new:>9} {rec.encoded:>8} {rec.reused:>7} "
              f"{secs:>8.1f} {rec.scores['ndcg_at_10']:>8.4f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
