"""Benchmark: what the latency pass costs next to a cold run, and whether it repeats.

On the latency demo (configs/benchmarks/latency-demo.yaml: all-MiniLM-L6-v2, BM25, their RRF hybrid, BM25's top 20
reranked by MiniLM, a run file), in a temporary results folder and embedding cache:
1. a cold run (`run_benchmark`: every text encoded, every candidate scored), timed;
2. the latency pass with the given options (`private-mteb latency`'s defaults unless told), timed: its cost as a
   share of the cold run (target: at most 10%);
3. the pass again: each candidate's p50 in the two passes (target: within 10% of each other on an idle machine).
The load average is printed with the figures: on a shared, busy machine the milliseconds mean little, the ratios
(pass / cold run, candidate / fastest) are the result.

    python benchmarks/bench_latency.py [--queries 32] [--repeats 3] [--threads 1]
    python benchmarks/bench_latency.py --smoke     # the tiny task, BM25 and a bag-of-words encoder
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _config(tmp: Path, smoke: bool) -> Path:
    import yaml

    if smoke:
        cfg = {"name": "bench-latency-smoke", "tasks": [str(ROOT / "tests" / "configs" / "kb_tiny.yaml")],
               "models": [{"name": "bm25", "label": "BM25"},
                          {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1",
                           "label": "bag of words"}]}
    else:
        cfg = yaml.safe_load((ROOT / "configs" / "benchmarks" / "latency-demo.yaml").read_text())
        for m in cfg["models"]:
            if m.get("path"):
                m["path"] = str((ROOT / "configs" / "benchmarks" / m["path"]).resolve())
    cfg["results_dir"] = str(tmp / "results")
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def main(smoke: bool, queries: int, repeats: int, threads: int | None) -> dict[str, float]:
    os.environ.setdefault("TQDM_DISABLE", "1")
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.experiments import clear_shared
    from runners.execution.latency import LatencyOptions, measure
    from runners.execution.progress import quiet_foreign_bars
    from runners.execution.rerank import clear_scorers
    from runners.execution.run import candidates_for, run_benchmark
    from runners.execution.tasks import load_task

    with tempfile.TemporaryDirectory() as d, quiet_foreign_bars():
        clear_shared(), clear_scorers()
        cfg = BenchmarkConfig.from_file(_config(Path(d), smoke))
        tasks = [load_task(t) for t in cfg.tasks]
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        records = run_benchmark(cfg, show_progress=False, tasks=tasks)
        cold = time.perf_counter() - t0
        failed = [r for r in records if r.status == "failed"]
        if failed:
            raise SystemExit(f"the cold run failed: {failed[0].label}: {failed[0].reason}")
        opts = LatencyOptions(queries=queries, repeats=repeats, threads=threads)
        passes, seconds = [], []
        for _ in range(2):
            t0 = time.perf_counter()
            passes.append(measure(cfg, candidates_for(cfg), tasks, LatencyOptions(**vars(opts))))
            seconds.append(time.perf_counter() - t0)
        load1 = os.getloadavg()[0]
    first, second = ({r["label"]: r for r in p} for p in passes)
    fastest = min(r["latency_ms"]["p50"] for r in first.values() if r["measurable"])
    print(f"cold run {cold:.1f} s; latency pass {seconds[0]:.1f} s = {100 * seconds[0] / cold:.0f}% of it "
          f"(target <= 10%); again {seconds[1]:.1f} s ({queries} queries x {repeats} repetitions, "
          f"threads {threads or 'default'}); load average {load0:.1f} -> {load1:.1f}")
    print(f"{'candidate':<34} {'p50 #1 ms':>10} {'p50 #2 ms':>10} {'#2/#1':>6} {'x fastest':>9} {'p95 #1 ms':>10}")
    worst = 0.0
    for label, a in first.items():
        if not a["measurable"]:
            print(f"{label:<34} {a['note']}")
            continue
        p1, p2 = a["latency_ms"]["p50"], second[label]["latency_ms"]["p50"]
        worst = max(worst, abs(p2 - p1) / ((p1 + p2) / 2))
        print(f"{label:<34} {p1:>10.2f} {p2:>10.2f} {p2 / p1:>6.2f} {p1 / fastest:>9.2f} {a['latency_ms']['p95']:>10.2f}")
    print(f"largest p50 disagreement between the two passes: {100 * worst:.0f}% (target <= 10% on an idle machine)")
    return {"cold_s": cold, "pass_s": seconds[0], "share": seconds[0] / cold, "p50_disagreement": worst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="the tiny task, BM25 and a bag-of-words encoder")
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="torch threads during the passes")
    args = ap.parse_args()
    main(args.smoke, args.queries or (4 if args.smoke else 32), args.repeats or (1 if args.smoke else 3), args.threads)
