"""The report's plots (matplotlib, Agg): forest plot, per-query picture, experiment sweeps.

Every axis says which metric it shows, intervals are drawn wherever the numbers have them, and value
axes never zoom below a span of 0.1 so a 0.002 difference cannot look like a landslide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from .svg import new_figure
from .text import p_value as fmt_p

BETTER, WORSE, NS, BASE = "#1a7f37", "#c0392b", "#7a7a7a", "#34495e"
MIN_SPAN = 0.1


def padded(lo: float, hi: float, include: float | None = None, min_span: float = MIN_SPAN,
           bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """An axis range around [lo, hi] with at least `min_span`, optionally including a value (0 for diffs)."""
    if include is not None:
        lo, hi = min(lo, include), max(hi, include)
    span = hi - lo
    if span < min_span:
        mid = (lo + hi) / 2
        lo, hi = mid - min_span / 2, mid + min_span / 2
    pad = 0.06 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    if bounds is not None:
        if lo < bounds[0]:
            lo, hi = bounds[0], max(hi, bounds[0] + min_span)
        if hi > bounds[1]:
            lo, hi = min(lo, bounds[1] - min_span), bounds[1]
    return lo, hi


def forest(panels: Sequence[tuple[str, pd.DataFrame]], baseline: str, metric_label: str) -> Figure:
    """One panel per subset: candidate - baseline with its CI; filled = significant after Holm."""
    first = panels[0][1]
    order = list(first.sort_values("diff")["candidate_a"])
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = new_figure(3.0 * ncols + 1.6, (0.28 * len(order) + 0.9) * nrows + 0.3)
    lows = pd.concat([p.diff_ci_low for _, p in panels])
    highs = pd.concat([p.diff_ci_high for _, p in panels])
    lo, hi = padded(float(lows.min()), float(highs.max()), include=0.0)
    right = hi + 0.42 * (hi - lo)  # room for the p-values
    for i, (name, df) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        df = df.set_index("candidate_a")
        for y, cand in enumerate(order):
            if cand not in df.index:
                continue
            r = df.loc[cand]
            colour = NS if not r.significant else BETTER if r["diff"] > 0 else WORSE
            ax.plot([r.diff_ci_low, r.diff_ci_high], [y, y], color=colour, lw=1.6, solid_capstyle="butt")
            ax.plot([r["diff"]], [y], "o", ms=5, color=colour, mfc=colour if r.significant else "white")
            ax.text(right - 0.02 * (right - lo), y, fmt_p(r.p_holm), fontsize=7, ha="right", va="center",
                    color=colour)
        ax.axvline(0, color=BASE, lw=0.8, ls="--")
        ax.set_xlim(lo, right)
        ax.set_ylim(-0.7, len(order) - 0.3)
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels(order if i % ncols == 0 else [""] * len(order), fontsize=8)
        n = int(df["n"].iloc[0]) if len(df) else 0
        ax.set_title(f"{name} (n={n})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.25)
        if i >= len(panels) - ncols:
            ax.set_xlabel(f"Δ {metric_label} vs {baseline}", fontsize=8)
    fig.set_layout_engine("constrained")  # titles and tick labels of stacked panels never overlap
    return fig


def per_query(a: pd.Series, b: pd.Series, name_a: str, name_b: str, metric_label: str,
              wtl: Sequence[tuple[str, int, int, int]]) -> Figure:
    """Left: per-query scores of the top two (marker area = number of queries); right: wins/ties/losses."""
    fig = new_figure(9.0, max(3.4, 0.32 * len(wtl) + 1.6))
    ax = fig.add_subplot(1, 2, 1)
    df = pd.concat({"a": a, "b": b}, axis=1).dropna().round(3)
    counts = df.groupby(["b", "a"]).size().reset_index(name="n")
    diff = np.sign(counts["a"] - counts["b"])
    colours = np.where(diff > 0, BETTER, np.where(diff < 0, WORSE, NS))
    ax.scatter(counts["b"], counts["a"], s=12 + 10 * counts["n"], c=colours, alpha=0.55, edgecolors="none")
    ax.plot([0, 1], [0, 1], color=BASE, lw=0.8, ls="--")
    ax.set_xlim(-0.04, 1.04)
    ax.set_ylim(-0.04, 1.04)
    ax.set_aspect("equal")
    ax.set_xlabel(f"{name_b}: {metric_label} per query", fontsize=8)
    ax.set_ylabel(f"{name_a}: {metric_label} per query", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)
    ax2 = fig.add_subplot(1, 2, 2)
    names = [w[0] for w in wtl][::-1]
    vals = np.array([w[1:] for w in wtl][::-1], dtype=float)
    share = vals / np.maximum(vals.sum(axis=1, keepdims=True), 1)
    left = np.zeros(len(names))
    for j, (lab, col) in enumerate(((f"{name_a} better", BETTER), ("tie", "#c8c8c8"), (f"{name_b} better", WORSE))):
        ax2.barh(range(len(names)), share[:, j], left=left, color=col, label=lab, height=0.6)
        for y, (s, v) in enumerate(zip(share[:, j], vals[:, j])):
            if s >= 0.06:
                ax2.text(left[y] + s / 2, y, str(int(v)), ha="center", va="center", fontsize=7,
                         color="white" if col != "#c8c8c8" else "black")
        left += share[:, j]
    ax2.set_yticks(range(len(names)))
    ax2.set_yticklabels(names, fontsize=8)
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("share of queries", fontsize=8)
    ax2.tick_params(axis="x", labelsize=7)
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    fig.subplots_adjust(wspace=0.55)
    return fig


def _band(ax, x: Sequence[float], rows: pd.DataFrame, colour: str, label: str) -> None:
    ax.fill_between(x, rows["ci_low"], rows["ci_high"], color=colour, alpha=0.18, lw=0)
    ax.plot(x, rows["mean"], "o-", color=colour, ms=4, lw=1.4, label=label)


def _reference(ax, value: tuple[float, float, float] | None, label: str, colour: str = BASE) -> None:
    if value is None:
        return
    mean, lo, hi = value
    ax.axhspan(lo, hi, color=colour, alpha=0.08, lw=0)
    ax.axhline(mean, color=colour, lw=1, ls="--", label=label)


def _value_axis(ax, values: Sequence[float], metric_label: str) -> None:
    lo, hi = padded(float(np.nanmin(values)), float(np.nanmax(values)), bounds=(0.0, 1.02))
    ax.set_ylim(lo, hi)
    ax.set_ylabel(metric_label, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)


def sweep(series: Sequence[tuple[str, list[float], pd.DataFrame]], xlabel: str, metric_label: str,
          base: tuple[float, float, float] | None, base_label: str, log_x: bool = False,
          extra: Sequence[tuple[str, float, float, float, float]] = ()) -> Figure:
    """metric vs a swept parameter with CI bands; the plain model as a dashed reference line with its band.

    `extra` adds single points with whiskers (label, x, mean, low, high), e.g. BM25 alone at alpha=0.
    """
    fig = new_figure(5.6, 3.4)
    ax = fig.add_subplot()
    values: list[float] = []
    for i, (label, x, rows) in enumerate(series):
        _band(ax, x, rows, f"C{i}", label)
        values += list(rows["ci_low"]) + list(rows["ci_high"])
    _reference(ax, base, base_label)
    if base is not None:
        values += [base[1], base[2]]
    for j, (label, x, mean, lo, hi) in enumerate(extra):
        ax.errorbar([x], [mean], yerr=[[mean - lo], [hi - mean]], fmt="s", color=f"C{len(series) + j}", ms=5,
                    capsize=3, label=label)
        values += [lo, hi]
    if log_x:
        _log2_axis(ax, series)
    ax.set_xlabel(xlabel, fontsize=8)
    _value_axis(ax, values, metric_label)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig


def _log2_axis(ax: Any, series: Sequence[tuple[Any, list[float], Any]]) -> None:
    """A log2 x axis ticked at exactly the swept values (search effort, chunk size)."""
    ax.set_xscale("log", base=2)
    xs = sorted({v for _, x, _ in series for v in x})
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{v:g}" for v in xs])


def ann_sweep(series: Sequence[tuple[str, list[float], pd.DataFrame]], xlabel: str, metric_label: str,
              base: tuple[float, float, float] | None, base_label: str) -> Figure:
    """Left: overlap@10 with exact search vs search effort; right: the metric with CI band vs effort."""
    fig = new_figure(9.0, 3.3)
    ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    values: list[float] = []
    for i, (label, x, rows) in enumerate(series):
        if "index_overlap_at_10" in rows:
            ax1.plot(x, rows["index_overlap_at_10"], "o-", color=f"C{i}", ms=4, lw=1.4, label=label)
        _band(ax2, x, rows, f"C{i}", label)
        values += list(rows["ci_low"]) + list(rows["ci_high"])
    _reference(ax2, base, base_label)
    if base is not None:
        values += [base[1], base[2]]
    ax1.axhline(1.0, color=BASE, lw=0.8, ls="--")
    ax1.set_ylim(*padded(0.9, 1.0, bounds=(0.0, 1.01)) if all(
        (rows.get("index_overlap_at_10", pd.Series([1.0])) >= 0.9).all() for _, _, rows in series) else (0, 1.02))
    ax1.set_ylabel("overlap@10 with exact search", fontsize=8)
    ax1.grid(alpha=0.25)
    ax1.tick_params(labelsize=7)
    for ax in (ax1, ax2):
        _log2_axis(ax, series)
        ax.set_xlabel(xlabel, fontsize=8)
    _value_axis(ax2, values, metric_label)
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.subplots_adjust(wspace=0.35)
    return fig


def growth(curves: Sequence[tuple[str, int, pd.DataFrame]], metric_label: str) -> Figure:
    """Metric vs documents (log x): measured points with CI band, the log-linear fit (dashed) and the
    fitted/extrapolated multiples with whiskers; a vertical line marks today's corpus.

    `curves`: (label, corpus size, experiments-table growth rows of one curve).
    """
    fig = new_figure(5.6, 3.4)
    ax = fig.add_subplot()
    values: list[float] = []
    for i, (label, n_corpus, rows) in enumerate(curves):
        colour = f"C{i}"
        meas = rows[rows.point == "measured"].sort_values("n_docs")
        _band(ax, list(meas.n_docs), meas, colour, f"{label} (measured)")
        fit = rows[rows.point != "measured"].sort_values("n_docs")
        values += list(meas.ci_low) + list(meas.ci_high) + list(fit.ci_low) + list(fit.ci_high)
        slope = float(rows.slope_per_doubling.iloc[0])
        if fit.empty or slope != slope:
            continue
        n0, m0 = float(fit.n_docs.iloc[0]), float(fit["mean"].iloc[0])
        xs = np.geomspace(float(meas.n_docs.min()), float(fit.n_docs.max()), 50)
        ax.plot(xs, m0 + slope * np.log2(xs / n0), "--", color=colour, lw=1, label=f"{label} (log-linear fit)")
        ax.errorbar(fit.n_docs, fit["mean"], yerr=[fit["mean"] - fit.ci_low, fit.ci_high - fit["mean"]], fmt="D",
                    color=colour, mfc="white", ms=5, capsize=3, label=f"{label} at 2x / 10x")
        ax.axvline(n_corpus, color=BASE, lw=0.8, ls=":")
    ax.set_xscale("log")
    ticks = sorted({int(n) for _, _, rows in curves for n in rows.n_docs})
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks], fontsize=7, rotation=45 if len(ticks) > 6 else 0)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("documents in the corpus (log scale; dotted: today's corpus)", fontsize=8)
    _value_axis(ax, values, metric_label)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig
