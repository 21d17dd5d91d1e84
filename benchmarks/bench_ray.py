"""Ray engine vs the single-process local run, side by side, on a 2-node Ray cluster this script starts.

One invocation: the script re-runs itself (`--inner`) inside a network + PID namespace with a 2-node
Ray cluster on loopback (tests/ray_cluster.py, 1 CPU per node, the same cluster as tests/test_ray.py).
For each workload it runs `run_benchmark` from an empty embedding cache with `engine: local` and with
`engine: ray` (2 actors), each in a fresh process, alternating which goes first over `--repeats`, and
prints the median seconds of each (run_benchmark's wall time: task load, model load, Ray connect and
actor start, encoding, evaluation; not interpreter start-up), the ratio ray/local, whether every
metric mteb stored is equal, and the max |difference| between the vectors of the two caches.

Workloads: `demo-synthetic` (the demo collection, data/demo_kb, with the fast deterministic
`factory:` encoder), `demo-minilm` (the same with the real all-MiniLM-L6-v2), `synthetic-100k`
(100,000 synthetic documents and 500 queries from benchmarks/bench_scale.py, the fast encoder).

    .venv/bin/python benchmarks/bench_ray.py                       # all workloads (needs root: unshare)
    .venv/bin/python benchmarks/bench_ray.py --workloads demo-synthetic --repeats 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEMO_TASK = REPO / "configs" / "tasks" / "northwind-kb.yaml"
SYNTHETIC = {"name": "synthetic/hash", "revision": "1", "factory": "runners.execution.encoding.synthetic:make_encoder",
             "factory_kwargs": {"dim": 384}}
MINILM = {"name": "sentence-transformers/all-MiniLM-L6-v2"}
#: workload -> (model entry, encode settings shared by both engines, Ray settings)
WORKLOADS: dict[str, tuple[dict, dict, dict]] = {
    "demo-synthetic": (SYNTHETIC, {"batch_size": 32}, {"actors": 2, "ray_batch_size": 64}),
    "demo-minilm": (MINILM, {"batch_size": 32}, {"actors": 2, "ray_batch_size": 64}),
    "synthetic-100k": (SYNTHETIC, {"batch_size": 4096}, {"actors": 2, "ray_batch_size": 1024}),
}
ATOL = 1e-6



def die(message: str, code: int = 2) -> NoReturn:
    """One line on stderr; exit 2 = this machine cannot run it, 1 = the measurement itself failed."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


CHILD = """
import json, sys, time
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
cfg = BenchmarkConfig.from_file(sys.argv[1])
t0 = time.perf_counter()
rec = run_benchmark(cfg, show_progress=False)[0]
seconds = time.perf_counter() - t0
if rec.status != "ran":
    sys.exit(f"{rec.status}: {getattr(rec, 'reason', '')}")
print(json.dumps({"seconds": seconds, "scores": rec.scores, "encoded": rec.encoded, "reused": rec.reused}))
"""


def write_config(folder: Path, task_yaml: Path, model: dict, encode: dict) -> Path:
    import yaml

    folder.mkdir(parents=True)
    cfg = {"name": folder.name, "tasks": [str(task_yaml)], "results_dir": str(folder / "results"),
           "models": [model], "encode": encode}
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def run_child(cfg: Path) -> dict[str, Any]:
    """run_benchmark on `cfg` in a fresh process; its seconds, scores and counts."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(cfg)], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        die(f"run of {cfg} failed (exit {proc.returncode}): {(proc.stderr.strip().splitlines() or [''])[-1]}", 1)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cache_diff(local_cfg: Path, ray_cfg: Path) -> tuple[int, float]:
    """(vectors compared, max |local - ray|) over every vector of the two caches (same keys required)."""
    import numpy as np

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.cache.vector_store import VectorStore

    def stores(cfg: Path) -> dict[str, VectorStore]:
        root = BenchmarkConfig.from_file(cfg).cache_path
        return {str(p.parent.relative_to(root)): VectorStore(p.parent) for p in root.rglob("shard-*.keys.npy")}

    local, ray = stores(local_cfg), stores(ray_cfg)
    if set(local) != set(ray):
        die(f"the caches hold different models: {sorted(local)} vs {sorted(ray)}", 1)
    n, worst = 0, 0.0
    for name, store in local.items():
        keys = store._unique_keys()
        if not np.array_equal(keys, ray[name]._unique_keys()):
            die(f"the caches of {name} hold different texts", 1)
        worst = max(worst, float(np.abs(store.get(keys) - ray[name].get(keys)).max(initial=0.0)))
        n += len(keys)
    return n, worst


def _same(x: Any, y: Any) -> bool:
    """Exactly equal, NaN included (mteb stores NaN for e.g. nAUC at a cutoff beyond the corpus)."""
    return x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))


def scores_equal(a: dict[str, Any], b: dict[str, Any]) -> tuple[bool, list[str]]:
    """Every value mteb stored equal (exactly); the names of those that differ."""
    differ = sorted(k for k in set(a) | set(b) if not _same(a.get(k), b.get(k)))
    return not differ, differ


def cluster_nodes(address: str) -> int:
    import logging

    import ray

    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    alive = len({n["NodeID"] for n in ray.nodes() if n["Alive"]})
    ray.shutdown()
    return alive


def inner(names: list[str], repeats: int, docs: int) -> None:
    from benchmarks.bench_scale import make_task

    address = os.environ.get("RAY_TEST_ADDRESS", "")
    if not address:
        die("--inner runs inside the cluster benchmarks/bench_ray.py starts; run it without --inner")
    print(f"cluster: {cluster_nodes(address)} alive Ray nodes at {address} (1 CPU each), "
          f"{os.cpu_count()} CPU cores on this machine", flush=True)
    print(f"{'workload':<16} {'texts':>8} {'local s':>8} {'ray s':>8} {'ray/local':>9}  "
          f"{'scores equal':<22} max|vec diff|", flush=True)
    failed = False
    for name in names:
        model, encode, ray_encode = WORKLOADS[name]
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
            folder = Path(tmp)
            task = make_task(folder / "task", docs) if name == "synthetic-100k" else DEMO_TASK
            times: dict[str, list[float]] = {"local": [], "ray": []}
            equal, differ, n_vec, worst = True, [], 0, 0.0
            for r in range(repeats):
                cfgs = {"local": write_config(folder / f"local-{r}", task, model, {**encode, "engine": "local"}),
                        "ray": write_config(folder / f"ray-{r}", task, model,
                                            {**encode, "engine": "ray", "address": address, **ray_encode})}
                order = ["local", "ray"] if r % 2 == 0 else ["ray", "local"]
                out = {engine: run_child(cfgs[engine]) for engine in order}
                for engine in order:
                    times[engine].append(out[engine]["seconds"])
                counts = {e: (out[e]["encoded"], out[e]["reused"]) for e in ("local", "ray")}
                if counts["ray"] != counts["local"]:  # the record counts what the cluster encoded, as locally
                    die(f"{name}: (encoded, reused) {counts['ray']} with Ray, {counts['local']} locally", 1)
                ok, diff = scores_equal(out["local"]["scores"], out["ray"]["scores"])
                equal, differ = equal and ok, sorted(set(differ) | set(diff))
                n, w = cache_diff(cfgs["local"], cfgs["ray"])
                n_vec, worst = n, max(worst, w)
                for engine in order:  # keep disk use flat: the next repeat starts from empty caches again
                    shutil.rmtree(cfgs[engine].parent)
            local_s, ray_s = statistics.median(times["local"]), statistics.median(times["ray"])
            n_metrics = len(out["local"]["scores"])
            verdict = f"yes (all {n_metrics})" if equal else f"NO: {', '.join(differ[:3])}"
            failed |= not equal or worst > ATOL
            print(f"{name:<16} {n_vec:>8} {local_s:>8.1f} {ray_s:>8.1f} {ray_s / local_s:>8.2f}x  "
                  f"{verdict:<22} {worst:.1e}{'' if worst <= ATOL else ' (> 1e-6!)'}", flush=True)
            if repeats > 1:
                print(f"{'':<16} runs: local {' '.join(f'{t:.1f}' for t in times['local'])}, "
                      f"ray {' '.join(f'{t:.1f}' for t in times['ray'])}", flush=True)
    if failed:
        die("scores or vectors differ between the engines (see the table)", 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    ap.add_argument("--repeats", type=int, default=2, help="runs of each engine (order alternates); median shown")
    ap.add_argument("--docs", type=int, default=100_000, help="documents of the synthetic-100k workload")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds before the cluster is torn down")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        args.workloads, args.repeats = ["demo-synthetic"], 1
    if args.inner:
        inner(args.workloads, args.repeats, args.docs)
        return
    from tests.ray_cluster import run_in_cluster, why_not

    if why_not():  # --smoke: exit 77, which the smoke test reports as skipped (this machine cannot run it)
        die(f"cannot start a local Ray cluster: {why_not()}", 77 if args.smoke else 2)
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, str(Path(__file__).resolve()), "--inner",
                                            "--repeats", str(args.repeats), "--docs", str(args.docs),
                                            "--workloads", *args.workloads])
    t0 = time.perf_counter()
    try:
        proc = run_in_cluster(cmd, timeout=args.timeout, capture=False, object_store_bytes=300_000_000)
    except subprocess.TimeoutExpired:
        die(f"the benchmark ran past --timeout {args.timeout:.0f} s", 1)
    print(f"(total {time.perf_counter() - t0:.0f} s including cluster start/stop)")
    if proc.returncode == 3:
        die("a Ray node did not start (its log is above)")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
