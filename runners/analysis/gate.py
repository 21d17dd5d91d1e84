"""Regression gate: should a candidate run block a merge/deploy vs. a baseline?

A gate that fails on every dip would fail on noise (a 300-query test set has
~0.01-0.03 of sampling noise on nDCG@10); a gate that ignores significance
would be flaky. So the gate fails ONLY when both hold:

1. the observed drop (baseline mean - candidate mean) is larger than
   ``max_drop`` (practically relevant), and
2. the drop is statistically significant: a ONE-SIDED paired sign-flip
   randomization test of H0 "mean(baseline - candidate) <= 0" gives p < alpha.
   (The decision uses this p-value; the bootstrap CI of the drop is reported
   for context only.)

Note that (2) tests drop > 0, not drop > max_drop: the margin is a
practical-relevance filter on the point estimate. All metrics are assumed
higher-is-better (true for nDCG, MRR, MAP, recall, precision).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..results.store import load_per_query
from .per_query import label_of, result_models
from .stats import align, bootstrap_ci, metric_label, randomization_test

__all__ = ["GateResult", "regression_check", "regression_gate"]


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`regression_check`; ``reason`` is the line to print."""

    passed: bool
    drop: float  # baseline mean - candidate mean (> 0 means the candidate is worse)
    ci: tuple[float, float]  # two-sided percentile bootstrap CI of the drop, level 1 - alpha
    p_value: float  # one-sided randomization p for "candidate is worse"
    reason: str
    n_queries: int = 0
    metric: str = ""
    max_drop: float = 0.0
    alpha: float = 0.05


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def regression_check(baseline: pd.Series, candidate: pd.Series, metric: str,
                     max_drop: float = 0.01, alpha: float = 0.05,
                     n_resamples: int = 10_000, seed: int = 0) -> GateResult:
    """Compare per-query scores of ``candidate`` against ``baseline`` (same queries).

    Queries are aligned by id (inner join, warning if the sets differ). Fails
    only if drop > max_drop AND the one-sided paired randomization p < alpha.
    """
    if max_drop < 0:
        raise ValueError("max_drop must be >= 0")
    df = align({"baseline": baseline, "candidate": candidate})
    d = (df["baseline"] - df["candidate"]).to_numpy()
    n = d.size
    drop, lo, hi = bootstrap_ci(d, n_resamples, 1.0 - alpha, "percentile", seed)
    p = float(randomization_test(d, n_resamples, seed, alternative="greater")[0])
    label = metric_label(metric)
    ci_txt = f"{1 - alpha:.0%} CI [{lo:.3f}, {hi:.3f}]"
    too_big = drop > max_drop
    significant = p < alpha
    if too_big and significant:
        passed = False
        reason = (f"FAIL: {label} dropped by {drop:.3f} (> allowed {max_drop:.3f}) and the "
                  f"drop is significant ({_p(p)}, {ci_txt})")
    elif too_big:
        passed = True
        reason = (f"PASS: {label} drop {drop:.3f} exceeds {max_drop:.3f} but is not "
                  f"significant ({_p(p)}, {ci_txt}): could be noise")
    elif drop > 0:
        passed = True
        reason = (f"PASS: {label} drop {drop:.3f} is within the allowed {max_drop:.3f} "
                  f"({_p(p)}, {ci_txt})")
    else:
        passed = True
        reason = f"PASS: {label} did not drop (change {0.0 - drop:+.3f}, {ci_txt} on the drop)"
    return GateResult(passed=passed, drop=float(drop), ci=(float(lo), float(hi)),
                      p_value=p, reason=reason, n_queries=int(n), metric=metric,
                      max_drop=float(max_drop), alpha=float(alpha))


def _resolve(target: str, default_results: Path) -> tuple[Path, str | None]:
    """A results folder, or a model name inside the default results folder."""
    p = Path(target)
    if p.is_dir():
        return p, None
    return Path(default_results), target


def _model_by_label_or_name(results_dir: Path, task: str, key: str) -> str:
    for name in result_models(results_dir, task):
        if key in (name, label_of(results_dir, name)):
            return name
    raise FileNotFoundError(f"no results for model '{key}' on task '{task}' in {results_dir}")


def regression_gate(baseline: str, candidate: str = "results", *, results_dir: Path = Path("results"),
                    tasks: list[str] | None = None, metric: str = "ndcg_at_10", max_drop: float = 0.01,
                    alpha: float = 0.05, split: str = "test", n_resamples: int = 10_000,
                    seed: int = 0) -> list[tuple[str, str, str, GateResult]]:
    """Compare candidate vs baseline per task: (task, baseline model, candidate model, result).

    Each side is a results folder (then models are matched by name) or a model name/label in
    `results_dir` (e.g. yesterday's fine-tune vs today's).
    """
    base_dir, base_model = _resolve(baseline, results_dir)
    cand_dir, cand_model = _resolve(candidate, results_dir)
    if base_dir.resolve() == cand_dir.resolve() and base_model is None and cand_model is None:
        raise FileNotFoundError("baseline and candidate are the same results folder: name a model or another folder")
    task_names = tasks or sorted(_tasks_with_runs(base_dir) & _tasks_with_runs(cand_dir))
    if not task_names:
        raise FileNotFoundError(f"no task has per-query results in both {base_dir} and {cand_dir}")
    out = []
    for task in task_names:
        if base_model or cand_model:
            pairs = [(_model_by_label_or_name(base_dir, task, base_model or cand_model),
                      _model_by_label_or_name(cand_dir, task, cand_model or base_model))]
        else:
            common = [m for m in result_models(cand_dir, task) if m in set(result_models(base_dir, task))]
            pairs = [(m, m) for m in common]
        for b, c in pairs:
            result = regression_check(load_per_query(base_dir, b, task, metric, split),
                                      load_per_query(cand_dir, c, task, metric, split), metric,
                                      max_drop=max_drop, alpha=alpha, n_resamples=n_resamples, seed=seed)
            out.append((task, label_of(base_dir, b), label_of(cand_dir, c), result))
    if not out:
        raise FileNotFoundError("no model has results on both sides to compare")
    return out


def _tasks_with_runs(results_dir: Path) -> set[str]:
    base = Path(results_dir) / "private-mteb" / "runs"
    return {p.name for p in base.glob("*/*/*") if p.is_dir()}
