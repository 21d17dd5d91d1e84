"""How far an encode backend's stored results drift from the reference's: per-query score differences and rankings.

For each variant (`<model>@onnx`, `<model>@onnx-int8`, ...) against the reference (`<model>`, torch fp32) on one
task: the mean difference of a per-query metric (variant - reference) with its paired bootstrap CI, the paired
sign-flip p-value, Holm-adjusted over the variants compared (stats.pair_columns, resampling.holm), and the share
of queries whose top-10 changed (the ten document ids in rank order; ties broken by document id, as a reader of
the stored rankings would).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...results.store import find_run, read_json
from ...statistics.analysis_errors import AnalysisError
from ...statistics.intervals import align_scores, pair_columns
from ...statistics.per_query import load_score_map
from ...statistics.resampling import holm


def top_k(results_dir: Path, model: str, task: str, split: str = "test", k: int = 10,
          subset: str = "default") -> dict[str, list[str]]:
    """query id -> its top-k document ids from the stored rankings."""
    folder = find_run(Path(results_dir), model, task)
    path = folder / f"rankings_{split}.json.gz" if folder is not None else None
    if path is None or not path.exists():
        raise AnalysisError(f"no stored rankings for model '{model}' on task '{task}' in {results_dir}: "
                            "run `private-mteb run` (or `backends`) first")
    ranked = read_json(path)["subsets"].get(subset, {})
    return {q: [d for d, _ in sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))[:k]] for q, docs in ranked.items()}


def changed_share(ref: dict[str, list[str]], other: dict[str, list[str]]) -> float:
    """Share of the reference's queries whose top-k list (ids and order) differs in `other`."""
    if not ref:
        return float("nan")
    return sum(ref[q] != other.get(q) for q in ref) / len(ref)


def drift_rows(results_dir: Path, task: str, reference: str, variants: list[str], metric: str = "ndcg_at_10",
               split: str = "test", n_resamples: int = 10_000, seed: int = 0, alpha: float = 0.05) -> list[dict[str, Any]]:
    """One dict per variant: mean_ref, mean, diff (variant - reference), diff_ci_low/high, p, p_holm, significant,
    n (paired queries), top10_changed."""
    ref_scores = load_score_map(Path(results_dir), reference, task, metric, split)
    ref_top = top_k(results_dir, reference, task, split)
    rows = []
    for name in variants:
        aligned = align_scores({name: load_score_map(Path(results_dir), name, task, metric, split),
                                reference: ref_scores}, on_mismatch="raise")
        cols = pair_columns(aligned, n_resamples=n_resamples, seed=seed, alpha=alpha, metric=metric)
        assert cols is not None  # two candidates: one pair
        rows.append({"variant": name, "n": int(cols["n"]), "mean": float(cols["mean_a"][0]),
                     "mean_ref": float(cols["mean_b"][0]), "diff": float(cols["diff"][0]),
                     "diff_ci_low": float(cols["diff_ci_low"][0]), "diff_ci_high": float(cols["diff_ci_high"][0]),
                     "p": float(cols["p_randomization"][0]),
                     "top10_changed": changed_share(ref_top, top_k(results_dir, name, task, split))})
    adjusted = holm(np.array([r["p"] for r in rows], dtype=float)) if rows else []
    for row, p in zip(rows, adjusted):
        row["p_holm"] = float(p)
        row["significant"] = bool(p < alpha)
    return rows
