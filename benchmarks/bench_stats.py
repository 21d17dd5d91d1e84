"""Benchmark: CIs for 10 candidates + all 45 paired tests, 500 queries x 10,000 resamples.

Target: < 2 s total on 2 CPU cores. Run: ``python benchmarks/bench_stats.py``.
Reports the best of a few repeats (first call includes one-off warm-up).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runners.statistics.stats_frames import ci_table, paired_tests  # noqa: E402

TARGET_S = 2.0


def make_data(n_models: int = 10, n_queries: int = 500, seed: int = 0) -> dict[str, pd.Series]:
    """Correlated per-query scores in [0, 1], like nDCG@10 of related models."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:04d}" for i in range(n_queries)]
    base = rng.beta(2, 3, n_queries)
    return {f"model_{m}": pd.Series(np.clip(base + rng.normal(0.004 * m, 0.12, n_queries), 0, 1),
                                    index=ids) for m in range(n_models)}


def main(repeats: int = 3, n_resamples: int = 10_000) -> float:
    data = make_data()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        cis = ci_table(data, n_resamples=n_resamples, seed=0)
        pairs = paired_tests(data, n_resamples=n_resamples, seed=0, metric="ndcg_at_10")
        times.append(time.perf_counter() - t0)
    print(f"cpus available: {len(os.sched_getaffinity(0))}")
    print(f"{len(cis)} CIs + {len(pairs)} paired tests, {len(next(iter(data.values())))} queries, "
          f"{n_resamples} resamples")
    print(f"times: {', '.join(f'{t:.3f}' for t in times)} s (first includes warm-up)")
    best = min(times)
    print(f"best: {best:.3f} s -> target < {TARGET_S:.0f} s: {'OK' if best < TARGET_S else 'MISS'}")
    print(f"worst: {max(times):.3f} s -> {'OK' if max(times) < TARGET_S else 'MISS'} even cold")
    print(pairs.verdict.iloc[-1])
    return best


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    main(*((1, 500) if args.smoke else ()))
