"""Benchmark (issue 38): `questions sample` on a large query log, in bounded memory, against just reading it.

The issue's generated log is written (scripts/query_log_generator.py, fixed seed): ``--rows`` rows over ``--distinct``
queries (default 1,000,000 over 200,000) about the demo knowledge base's topics with Zipf-like frequencies and a
count column, exact and near duplicates, planted personal data of every kind, timestamps, user and session ids
(never read). Then, each in a fresh process whose peak resident memory (ru_maxrss: the model and
libraries included) is reported:

* ``pandas``: ``pd.read_csv(log)``, the whole file at once: the floor any tool that reads the log pays;
* ``sample``: ``private-mteb questions sample LOG -t TASK -n 200`` into a copy of the tiny task, with a cold
  embedding cache (MiniLM vectors of up to --embed-limit queries for the topic clusters);
* ``sample (no topics)``: the same with ``--topics 1``: the log's own cost, without the model.

The figure is the ratio of the sample's time to the pandas read; the target (issue 38) is a peak under 1.5 GB and
minutes on 2 cores. ``--smoke``: 20,000 rows over 4,000 queries, one repeat (what the test suite runs).

    .venv/bin/python benchmarks/bench_questions_sample.py            # full size
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TARGET_PEAK_MB = 1536

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
mode = sys.argv[1]
if mode == "pandas":
    import pandas as pd
    frame = pd.read_csv(sys.argv[2])
    rows = len(frame)
else:
    from runners.cli import app
    try:
        app(sys.argv[2:], standalone_mode=False)
    except SystemExit as e:
        if e.code:
            raise
    rows = 0
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                  / 1024, "rows": rows}))
"""


def make_log(path: Path, rows: int, distinct: int, seed: int = 38) -> dict[str, int]:
    """The issue's generated log (scripts/query_log_generator.py), streamed to CSV; returns what was planted."""
    from scripts.query_log_generator import make_query_log

    log = make_query_log(n_rows=rows, n_distinct=distinct, seed=seed)
    log.write(path)
    return {"rows": rows, "distinct": len(log.queries), "variants": len(log.exact_variants) + len(log.near_duplicates),
            "personal": len(log.sensitive)}


def tiny_task(folder: Path) -> Path:
    data = folder / "kb_tiny"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", data)
    task = folder / "kb_tiny.yaml"
    task.write_text((REPO / "tests" / "configs" / "kb_tiny.yaml").read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    bench = folder / "bench.yaml"
    bench.write_text(json.dumps({"name": "b", "tasks": [str(task)], "models": [{"name": "bm25"}],
                                 "results_dir": str(folder / "results"), "cache_dir": str(folder / "cache")}))
    return task


def child(args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=REPO, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args[0]} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    lines = out.stdout.strip().splitlines()
    return {**json.loads(lines[-1]), "output": lines[:-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--distinct", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=200, help="questions drawn")
    ap.add_argument("--embed-limit", type=int, default=5_000)
    ap.add_argument("--smoke", action="store_true", help="20,000 rows over 4,000 queries")
    ap.add_argument("--show", action="store_true", help="print the command's report")
    a = ap.parse_args()
    if a.smoke:
        a.rows, a.distinct, a.embed_limit = 20_000, 4_000, 200
    with tempfile.TemporaryDirectory(prefix="bench-questions-") as tmp:
        folder = Path(tmp)
        log = folder / "log.csv"
        t0 = time.perf_counter()
        planted = make_log(log, a.rows, a.distinct)
        print(f"log: {planted['rows']} rows over {planted['distinct']} distinct queries ({planted['variants']} planted "
              f"exact/near variants, {planted['personal']} planted personal values), {log.stat().st_size / 1e6:.1f} MB, "
              f"made in {time.perf_counter() - t0:.1f} s", flush=True)
        task = tiny_task(folder)
        base = ["questions", "sample", str(log), "-t", str(task), "-c", str(folder / "bench.yaml"), "-n",
                str(a.size), "--date", "2026-12-05", "--embed-limit", str(a.embed_limit)]
        print(f"{'':<20} {'seconds':>8} {'x read':>7} {'peak MB':>8}", flush=True)
        runs: list[tuple[str, dict]] = []
        for name, args in (("pandas read_csv", ["pandas", str(log)]),
                           ("sample (no topics)", ["cli", *base, "--topics", "1", "--dry-run"]),
                           ("sample", ["cli", *base, "--dry-run"])):
            r = child(args)
            runs.append((name, r))
            read_s = runs[0][1]["seconds"]
            print(f"{name:<20} {r['seconds']:>8.1f} {r['seconds'] / read_s:>7.1f} {r['peak_mb']:>8.0f}", flush=True)
        worst = max(r["peak_mb"] for _, r in runs[1:])
        print(f"peak {worst:.0f} MB: {'under' if worst < TARGET_PEAK_MB else 'OVER'} the {TARGET_PEAK_MB} MB target; "
              f"cores: {os.cpu_count()}")
        if a.show:
            print("\n".join(runs[-1][1]["output"]))


if __name__ == "__main__":
    main()
