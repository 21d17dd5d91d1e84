"""Runner overhead on SciFact, measured side by side in one process (ratios, not seconds).

(a) pure encoding of the unique texts (documents as mteb forms them, queries) with the same model
(b) `private-mteb run` cold: fresh results folder and empty embedding cache
(c) plain `mteb.evaluate` on the same task instance type, no cache
(d) `private-mteb run` again, warm: everything complete -> skipped
(e) `private-mteb run --force` warm: re-evaluated from the embedding cache (no encoding)
Targets: b/a <= 1.01, b/c <= 1.0, d/b <= 0.02.

    python benchmarks/bench_runner.py [--task tests/configs/scifact.yaml] [--batch-size 32]
    python benchmarks/bench_runner.py --smoke     # the same steps on the 12-page test task (seconds)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default=str(REPO / "tests/configs/scifact.yaml"))
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--smoke", action="store_true", help="tiny size: the 12-page test task (CI runs this)")
    args = ap.parse_args()
    if args.smoke:
        args.task = str(REPO / "tests/configs/kb_tiny.yaml")

    import mteb
    import yaml

    import custom_tasks
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.model_spec import ModelSpec
    from runners.execution.encoding.models import load_model
    from runners.execution.run import run_benchmark

    name = "sentence-transformers/all-MiniLM-L6-v2"
    work = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    cfg_path = work / "bench.yaml"
    cfg_path.write_text(yaml.safe_dump({"name": "bench", "tasks": [args.task], "models": [{"name": name}],
                                        "results_dir": str(work / "results"), "encode": {"batch_size": args.batch_size}}))
    cfg = BenchmarkConfig.from_file(cfg_path)
    task = custom_tasks.get_task(args.task)
    corpus = task.collection.corpus
    docs = [((d.get("title") or "") + " " + d["text"]).strip() if d.get("title") else d["text"].strip()
            for d in corpus.values()]
    split = task.metadata.eval_splits[0]
    queries = list(task.collection.split_queries(split).values())
    texts = list(dict.fromkeys(docs)), list(dict.fromkeys(queries))
    print(f"task {task.metadata.name}: {len(texts[0])} unique documents, {len(texts[1])} unique queries")

    wrapper = load_model(ModelSpec(name=name))
    st = wrapper.model
    st.encode(["warm up"], batch_size=1)

    t = time.perf_counter()
    st.encode(texts[0], batch_size=args.batch_size, show_progress_bar=False)
    st.encode(texts[1], batch_size=args.batch_size, show_progress_bar=False)
    a = time.perf_counter() - t
    print(f"(a) pure encoding           {a:8.1f} s")

    t = time.perf_counter()
    rec_b = run_benchmark(cfg, show_progress=False)
    b = time.perf_counter() - t
    print(f"(b) private-mteb run, cold  {b:8.1f} s   nDCG@10 {rec_b[0].scores['ndcg_at_10']:.5f}")

    task_c = custom_tasks.get_task(args.task)
    t = time.perf_counter()
    res = mteb.evaluate(wrapper, task_c, cache=None, encode_kwargs={"batch_size": args.batch_size},
                        show_progress_bar=False)
    c = time.perf_counter() - t
    print(f"(c) plain mteb.evaluate     {c:8.1f} s   nDCG@10 {res.task_results[0].get_score():.5f}")

    t = time.perf_counter()
    rec_d = run_benchmark(cfg, show_progress=False)
    d = time.perf_counter() - t
    print(f"(d) private-mteb run, warm  {d:8.2f} s   status {rec_d[0].status}")

    t = time.perf_counter()
    rec_e = run_benchmark(cfg, force=True, show_progress=False)
    e = time.perf_counter() - t
    print(f"(e) run --force, warm cache {e:8.2f} s   encoded {rec_e[0].encoded}, reused {rec_e[0].reused}")

    print()
    print(f"b/a = {b / a:.3f}   (target <= 1.01)  {'OK' if b / a <= 1.01 else 'MISS'}")
    print(f"b/c = {b / c:.3f}   (target <= 1.0)   {'OK' if b / c <= 1.0 else 'MISS'}")
    print(f"d/b = {d / b:.4f}  (target <= 0.02)  {'OK' if d / b <= 0.02 else 'MISS'}")
    print(f"e/b = {e / b:.4f}  (re-evaluation from the embedding cache, no target)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
