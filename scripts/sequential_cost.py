"""The cost of an anytime-valid gate, on the demo (docs/gate.md "Checked again and again": real output).

For the demo's pair (all-MiniLM-L6-v2 as the baseline, BM25 as the candidate, nDCG@10 on NorthwindKBRetrieval):
the fixed-sample gate's one-sided 95% bound of the drop (resampling.drop_bound, valid for one look) and the
anytime bound of the confidence sequence (confseq.py, valid at every look) on the same queries; then, for a true
drop the size of `stats`' power line (the smallest difference these queries detect with 80% power at one look),
how many questions the anytime gate needs: streams drawn from the demo's own per-query differences, shifted to
that mean drop, 200 seeded streams of up to 3000 questions. Run from the checkout root:
    python scripts/sequential_cost.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runners.statistics.confseq import arrival_order, drop_lower_bounds, queries_to_detect  # noqa: E402
from runners.statistics.per_query import find_model, load_score_map  # noqa: E402
from runners.statistics.resampling import drop_bound  # noqa: E402
from runners.statistics.intervals import align_scores, format_number, metric_label  # noqa: E402
from runners.statistics.power import power_line  # noqa: E402
from runners.config.benchmark import BenchmarkConfig  # noqa: E402

ALPHA, METRIC, TASK, MAX_N, REPS = 0.05, "ndcg_at_10", "NorthwindKBRetrieval", 3000, 200


def main() -> int:
    cfg = BenchmarkConfig.from_file(ROOT / "configs" / "benchmarks" / "demo.yaml")
    results = cfg.results_path
    base, cand = (find_model(results, label) for label in ("all-MiniLM-L6-v2", "BM25"))
    if base is None or cand is None:
        print(f"no demo results in {results}: run `private-mteb run -c configs/benchmarks/demo.yaml` first")
        return 2
    aligned = align_scores({"all-MiniLM-L6-v2": load_score_map(results, base, TASK, METRIC),
                            "BM25": load_score_map(results, cand, TASK, METRIC)})
    by_id = dict(zip(map(str, aligned.ids), aligned.x[:, 0] - aligned.x[:, 1]))
    order = arrival_order(by_id, seed=cfg.stats.seed)  # no earlier looks: the seeded order of the ids
    d = np.array([by_id[q] for q in order])
    _, fixed = drop_bound(d, ALPHA, cfg.stats.resamples, cfg.stats.seed)
    anytime = drop_lower_bounds(d, ALPHA)
    label = metric_label(METRIC)
    print(f"{TASK}, {label}, all-MiniLM-L6-v2 -> BM25 on {d.size} queries: drop {format_number(d.mean())}")
    print(f"  fixed-sample {1 - ALPHA:.0%} one-sided bound: at least {format_number(fixed)} (valid for one look)")
    print(f"  anytime {1 - ALPHA:.0%} one-sided bound:      at least {format_number(anytime[-1])} "
          "(valid at every look)")
    first = np.flatnonzero(anytime > 0)
    print(f"  the anytime bound first rose above zero at question {int(first[0]) + 1 if first.size else 'never'} "
          "of the seeded order")
    mdd, line = power_line(aligned, METRIC)
    print(f"power: {line}")
    shifted = np.clip(d - d.mean() + mdd, -1.0, 1.0)  # the demo's spread, a true drop of the power line's size
    delays = queries_to_detect(shifted, ALPHA, MAX_N, seed=cfg.stats.seed, reps=REPS)
    found = delays[delays <= MAX_N]
    share = found.size / delays.size
    print(f"a true drop of {format_number(mdd)} with the demo's spread: the fixed-sample test detects it with 80% "
          f"power at {d.size} queries, one look; the anytime gate, looking after every question, detected it in "
          f"{share:.0%} of {REPS} streams by {MAX_N} questions: median {int(np.median(delays))} questions, "
          f"80% of streams by {int(np.percentile(delays, 80))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
