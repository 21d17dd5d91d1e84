"""The corpus-growth curve from a stored growth record: metric per fraction, trend, extrapolation.

Per fraction: the mean over queries and repeats with a 95% bootstrap interval that resamples both
(queries: which questions were asked; repeats: which distractors were drawn). Trend: least squares of the
per-subset mean against ln(documents); its slope is given per doubling of the corpus. Extrapolation at 2x
and 10x the corpus uses the same fit inside the same bootstrap, so its interval carries the query and
repeat uncertainty, but not the assumption that the trend stays log-linear beyond the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...results.variants import shown_label
from ...statistics.analysis_errors import AnalysisError

MULTIPLES = (2.0, 10.0)


@dataclass
class GrowthCurve:
    model: str
    label: str
    task: str
    metric: str
    n_corpus: int
    n_labelled: int
    n_queries: int
    repeats: int
    points: pd.DataFrame  # fraction, n_docs, mean, ci_low, ci_high
    slope_per_doubling: float
    slope_ci: tuple[float, float]
    extrapolated: pd.DataFrame  # multiple, n_docs, mean, ci_low, ci_high, measured_range (bool)
    notes: list[str] = field(default_factory=list)
    n_distractors: int = 0  # documents of another collection available beyond the corpus
    distractors: str | None = None  # the entry's `distractors:` as written


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) of y = a + b x; slope 0 when x does not vary."""
    if np.ptp(x) == 0:
        return float(y.mean()), 0.0
    b, a = np.polyfit(x, y, 1)
    return float(a), float(b)


def growth_curve(record: dict[str, Any], metric: str = "ndcg_at_10", n_resamples: int = 2000, seed: int = 0,
                 confidence: float = 0.95) -> GrowthCurve:
    """Curve, trend and extrapolation of one stored growth record (runners/execution/measure/growth.py)."""
    points = record["points"]
    if not points or metric not in points[0]["per_query"]:
        known = ", ".join(sorted(points[0]["per_query"])) if points else "none"
        raise AnalysisError(f"growth record of '{record.get('model')}' on '{record.get('task')}' has no metric "
                            f"'{metric}' (stored: {known}): add it to stats.metrics and re-run `private-mteb growth`")
    qids = sorted(points[0]["per_query"][metric])
    fractions = sorted({p["fraction"] for p in points})
    repeats = max(p["repeat"] for p in points) + 1
    # (fraction index, repeat) -> per-query vector; fraction 1.0 (stored once) stands for every repeat
    cube = np.full((len(fractions), repeats, len(qids)), np.nan)
    docs = np.zeros(len(fractions))
    for p in points:
        fi = fractions.index(p["fraction"])
        row = np.array([p["per_query"][metric].get(q, np.nan) for q in qids])
        targets = range(repeats) if p["fraction"] == 1.0 else [p["repeat"]]
        for r in targets:
            cube[fi, r] = row
        docs[fi] = p["n_docs"]
    x = np.log(docs)
    alpha = 1 - confidence
    rng = np.random.default_rng(seed)
    boot_means = np.empty((n_resamples, len(fractions)))
    boot_slope = np.empty(n_resamples)
    boot_pred = np.empty((n_resamples, len(MULTIPLES)))
    n_full = record["n_corpus"]
    for i in range(n_resamples):
        qi = rng.integers(0, len(qids), len(qids))
        ri = rng.integers(0, repeats, repeats)
        sub = np.nanmean(cube[:, ri][:, :, qi], axis=2)  # fraction x repeat means
        boot_means[i] = sub.mean(axis=1)
        a, b = _fit(np.repeat(x, repeats), sub.reshape(-1))
        boot_slope[i] = b
        boot_pred[i] = [a + b * math.log(m * n_full) for m in MULTIPLES]
    means = np.nanmean(cube, axis=2)
    a, b = _fit(np.repeat(x, repeats), means.reshape(-1))

    def ci(v: np.ndarray) -> tuple[float, float]:
        return float(np.quantile(v, alpha / 2)), float(np.quantile(v, 1 - alpha / 2))

    pts = pd.DataFrame([{"fraction": f, "n_docs": int(docs[j]), "mean": float(means[j].mean()),
                         "ci_low": ci(boot_means[:, j])[0], "ci_high": ci(boot_means[:, j])[1]}
                        for j, f in enumerate(fractions)])
    ext = pd.DataFrame([{"multiple": m, "n_docs": int(round(m * n_full)), "mean": a + b * math.log(m * n_full),
                         "ci_low": ci(boot_pred[:, k])[0], "ci_high": ci(boot_pred[:, k])[1],
                         "measured_range": bool(m * n_full <= docs.max())}
                        for k, m in enumerate(MULTIPLES)])
    notes = []
    clipped = [f for j, f in enumerate(fractions) if f < 1.0 and docs[j] > round(f * n_full)]
    if clipped:
        notes.append(f"{record['n_labelled']} of {n_full} documents are relevant to some query and always kept: fractions "
                     f"{', '.join(map(str, clipped))} are clipped to {int(docs.min())} documents, so the curve "
                     "spans little of the corpus (add unlabelled documents to see growth)")
    lo, hi = ci(boot_slope * math.log(2))
    slope = b * math.log(2)
    if docs.max() < 2 * docs.min():
        notes.append(f"the subsets span {int(docs.min())}-{int(docs.max())} documents, less than a doubling: "
                     "no trend is fitted and nothing is extrapolated")
        slope, lo, hi = math.nan, math.nan, math.nan
        ext[["mean", "ci_low", "ci_high"]] = math.nan
    dis = (record.get("params") or {}).get("distractors") or {}
    label = shown_label(str(record.get("label") or record["model"]), str(record["model"]))  # as every command prints
    return GrowthCurve(record["model"], label, record["task"], metric, n_full,
                       record["n_labelled"], len(qids), repeats, pts, slope, (lo, hi), ext, notes,
                       int(record.get("n_distractors", 0)), dis.get("path"))


def per_doubling(slope: float, lo: float, hi: float, unit: str = "", *, where: str = " of the corpus",
                 ci_first: bool = False) -> str | None:
    """The trend sentence every growth view prints: ``-0.0023 ndcg_at_10 per doubling of the corpus [-0.0051,
    -0.0004]`` (``ci_first``: ``-0.0023 [-0.0051, -0.0004] nDCG@10 per doubling of the corpus``; ``where=""``:
    ``... per doubling [...]``); None when no trend was fitted (NaN slope: less than a doubling measured)."""
    if slope != slope:
        return None
    from ...statistics.intervals import format_number  # never "-0.0000"

    ci = f"[{format_number(lo, 4, True)}, {format_number(hi, 4, True)}]"
    rate = f"{unit} per doubling{where}" if unit else f"per doubling{where}"
    s = format_number(slope, 4, True)
    return f"{s} {ci} {rate}" if ci_first else f"{s} {rate} {ci}"


def format_growth(curve: GrowthCurve) -> str:
    """Plain-text view for `private-mteb growth` / `experiments`."""
    m = curve.metric
    lines = [f"{curve.task} — {curve.label}: {m} vs corpus size ({curve.n_queries} queries, {curve.repeats} "
             f"repeats, {curve.n_labelled} of {curve.n_corpus} documents relevant, always kept)",
             f"  {'fraction':>8}  {'docs':>7}  {m:>10}  95% CI"]
    if curve.distractors:
        lines.insert(1, f"  beyond 1.0: the whole corpus plus documents of {curve.distractors} "
                        f"({curve.n_distractors} available)")
    for r in curve.points.itertuples():
        lines.append(f"  {r.fraction:>8g}  {r.n_docs:>7d}  {r.mean:>10.4f}  [{r.ci_low:.4f}, {r.ci_high:.4f}]")
    trend = per_doubling(curve.slope_per_doubling, *curve.slope_ci, m)
    if trend:
        lines.append(f"  trend: {trend}")
    for r in curve.extrapolated.dropna().itertuples():
        how = ("fitted" if r.measured_range else "extrapolated", "inside the measured range" if r.measured_range
               else "if the log-linear trend holds")
        lines.append(f"  {how[0]} at {r.multiple:g}x ({r.n_docs} docs): {r.mean:.4f} "
                     f"[{r.ci_low:.4f}, {r.ci_high:.4f}] ({how[1]})")
    lines += [f"  note: {n}" for n in curve.notes]
    return "\n".join(lines)
