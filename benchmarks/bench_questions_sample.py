"""Benchmark (issue 38): `questions sample` on a large query log, in bounded memory, against just reading it.

A synthetic log is generated (fixed seed): ``--rows`` searches over ``--distinct`` queries (default 1,000,000 over
200,000), each query 3-6 words of the demo knowledge base's vocabulary, asked at least once and then with Zipf-like
frequencies; 2% of the queries also asked with a typo or in capitals (near and exact duplicates), 0.5% of the
searches carrying an e-mail address or a phone number (redacted), a timestamp and a user id on every row (the
user column is never read). Then, each in a fresh process whose peak resident memory (ru_maxrss: the model and
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
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
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


def vocabulary() -> list[str]:
    """The demo knowledge base's words (3+ letters), sorted: queries that look like the team's own topics."""
    text = (REPO / "data" / "demo_kb" / "corpus.jsonl").read_text(encoding="utf-8").lower()
    return sorted({w for w in re.findall(r"[a-z]{3,}", text)})


def make_log(path: Path, rows: int, distinct: int, seed: int = 38) -> dict[str, int]:
    """Write the synthetic CSV log; returns what was planted."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    vocab = np.array(vocabulary())
    lengths = rng.integers(3, 7, distinct)
    words = rng.integers(0, len(vocab), (distinct, 6))
    queries = np.array([" ".join(vocab[words[i, :lengths[i]]]) for i in range(distinct)], dtype=object)
    # every query asked once, the rest Zipf-like (rank r asked ~ 1/r^1.1)
    extra = rows - distinct
    ranks = np.arange(1, distinct + 1, dtype=np.float64)
    p = ranks ** -1.1
    picks = np.concatenate([np.arange(distinct), rng.choice(distinct, extra, p=p / p.sum())])
    rng.shuffle(picks)
    texts = queries[picks].copy()
    varied = rng.random(rows) < 0.02
    for i in np.flatnonzero(varied):
        t = texts[i]
        if rng.random() < 0.5:
            texts[i] = t.upper()
        else:
            j = int(rng.integers(1, len(t) - 1))
            texts[i] = t[:j - 1] + t[j] + t[j - 1] + t[j + 1:]
    personal = rng.random(rows) < 0.005
    for n, i in enumerate(np.flatnonzero(personal)):
        texts[i] += f" contact user{n}@example.com" if n % 2 else f" call +40 721 {n % 1000:03d} {n % 997:03d}"
    start = np.datetime64("2026-09-01T00:00:00")
    stamps = start + np.sort(rng.integers(0, 90 * 86400, rows)).astype("timedelta64[s]")
    frame = pd.DataFrame({"query": texts, "timestamp": np.datetime_as_string(stamps) + "Z",
                          "user_id": [f"u{u}" for u in rng.integers(0, rows // 20 + 1, rows)]})
    frame.to_csv(path, index=False)
    return {"rows": rows, "distinct": distinct, "varied": int(varied.sum()), "personal": int(personal.sum())}


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
    ap.add_argument("--embed-limit", type=int, default=20_000)
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
        print(f"log: {planted['rows']} rows over {planted['distinct']} queries ({planted['varied']} case/typo "
              f"variants, {planted['personal']} with personal data), {log.stat().st_size / 1e6:.1f} MB, made in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        task = tiny_task(folder)
        base = ["questions", "sample", str(log), "-t", str(task), "-c", str(folder / "bench.yaml"), "-n",
                str(a.size), "--date", "2026-12-05", "--embed-limit", str(a.embed_limit)]
        runs = [("pandas read_csv", child(["pandas", str(log)])),
                ("sample (no topics)", child(["cli", *base, "--topics", "1", "--dry-run"])),
                ("sample", child(["cli", *base, "--dry-run"]))]
        read_s = runs[0][1]["seconds"]
        print(f"{'':<20} {'seconds':>8} {'x read':>7} {'peak MB':>8}")
        for name, r in runs:
            print(f"{name:<20} {r['seconds']:>8.1f} {r['seconds'] / read_s:>7.1f} {r['peak_mb']:>8.0f}", flush=True)
        worst = max(r["peak_mb"] for _, r in runs[1:])
        print(f"peak {worst:.0f} MB: {'under' if worst < TARGET_PEAK_MB else 'OVER'} the {TARGET_PEAK_MB} MB target; "
              f"cores: {os.cpu_count()}")
        if a.show:
            print("\n".join(runs[-1][1]["output"]))


if __name__ == "__main__":
    main()
