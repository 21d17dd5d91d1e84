"""The public-vs-private scatter of `compare --plot` and the report: metric on the axes, CI whiskers.

Why its own module: the numbers live in compare.py; this file only draws them, with axes that name the
metric, never zoom below a span of 0.1 (so a 0.0015 difference looks as small as it is), private 95%
bootstrap whiskers from the stored per-query scores, and nothing clipped at the frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..plot_text import literal_text
from .compare import PRIVATE_FLAG, PRIVATE_MEAN, PUBLIC_FLAG, PUBLIC_MEAN, Comparison, _registry


def _main_score(comp: Comparison, task: str) -> str | None:
    """The task's main score as the comparison recorded it, else from mteb's registry."""
    if task in comp.main_scores:
        return comp.main_scores[task]
    cls = _registry().get(task)
    return getattr(getattr(cls, "metadata", None), "main_score", None) if cls is not None else None


def _main_score_label(comp: Comparison, task_names: Sequence[str]) -> str:
    """The main metric of these tasks as people read it ("nDCG@10"), or "main score" when they differ."""
    from ...statistics.intervals import metric_label

    scores = {_main_score(comp, name) for name in task_names}
    return metric_label(scores.pop()) if len(scores) == 1 and None not in scores else "main score"


def private_intervals(comp: Comparison, confidence: float = 0.95, n_resamples: int = 10_000,
                      seed: int = 0) -> dict[str, tuple[float, float]]:
    """Bootstrap CI of each model's private mean from its stored per-query main scores.

    Each task is resampled over its own queries and the resampled task means are averaged, so the interval
    is that of the mean the table shows. Models without per-query files (or not on every task) get none.
    """
    import numpy as np

    from ...results.store import load_per_query
    from ...statistics.intervals import bootstrap_counts

    if comp.private_results_dir is None or not comp.private_tasks:
        return {}
    out: dict[str, tuple[float, float]] = {}
    revs = comp.revisions[~comp.revisions["public"].astype(bool)] if len(comp.revisions) else comp.revisions
    for model in comp.table.index[comp.table[PRIVATE_MEAN].notna()]:
        boots = []
        for task in comp.private_tasks:
            metric = _main_score(comp, task) or "ndcg_at_10"
            rev = revs.loc[(revs["model"] == model) & (revs["task"] == task), "revision"] if len(revs) else []
            try:
                s = load_per_query(comp.private_results_dir, str(model), task, metric,
                                   revision=str(rev.iloc[0]) if len(rev) else None)
            except (FileNotFoundError, KeyError, OSError, ValueError):
                break
            x = s.to_numpy(dtype=float)[:, None]
            boots.append((bootstrap_counts(len(x), n_resamples, seed) @ x / len(x))[:, 0])
        else:
            if boots:
                alpha = (1 - confidence) / 2
                lo, hi = np.quantile(np.mean(boots, axis=0), [alpha, 1 - alpha])
                out[str(model)] = (float(lo), float(hi))
    return out


@literal_text()
def comparison_figure(comp: Comparison, intervals: Mapping[str, tuple[float, float]] | None = None) -> Any:
    """Public vs private mean per model (hollow = incomplete), labelled; private 95% CI whiskers where the
    per-query scores are stored (or `intervals` gives them; pass {} for none).

    Axes name the metric, never zoom below a span of 0.1 (a 0.0015 difference must look small) and the
    labels stay inside the figure. Returns a matplotlib Figure on the Agg canvas (no display).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t = comp.table
    pts = t[t[PRIVATE_MEAN].notna() & t[PUBLIC_MEAN].notna()]
    intervals = private_intervals(comp) if intervals is None else intervals
    fig = Figure(figsize=(7, 5.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs, ys = list(pts[PUBLIC_MEAN]), list(pts[PRIVATE_MEAN])
    for model, row in pts.iterrows():
        hollow = bool(row[PRIVATE_FLAG] or row[PUBLIC_FLAG])
        x, y = row[PUBLIC_MEAN], row[PRIVATE_MEAN]
        ci = intervals.get(str(model))
        if ci is not None:
            ax.errorbar([x], [y], yerr=[[max(y - ci[0], 0)], [max(ci[1] - y, 0)]], fmt="none", ecolor="C0",
                        elinewidth=1, capsize=3, alpha=0.8)
            ys += [ci[0], ci[1]]
        ax.scatter(x, y, s=40, facecolors="none" if hollow else "C0", edgecolors="C0", zorder=3)
        ax.annotate(str(model).split("/")[-1], (x, y), fontsize=8, xytext=(5, 4), textcoords="offset points")
    pub_label, priv_label = _main_score_label(comp, comp.public_tasks), _main_score_label(comp, comp.private_tasks)
    ax.set_xlabel(f"public: mean {pub_label}, {comp.public_set} ({len(comp.public_tasks)} tasks)")
    ax.set_ylabel(f"private: mean {priv_label} ({len(comp.private_tasks)} task{'s' * (len(comp.private_tasks) != 1)})"
                  + (", 95% CI" if intervals else ""))
    ax.set_title(comp.agreement.sentence, fontsize=8, wrap=True)
    ax.grid(alpha=0.3)
    for values, setter in ((xs, ax.set_xlim), (ys, ax.set_ylim)):
        if values:
            lo, hi = min(values), max(values)
            pad = max(0.1 - (hi - lo), 0) / 2 + 0.08 * max(hi - lo, 0.1)
            # scores live in [0, 1]: never show far past it, but leave room so a point at 1.0 is not on the frame
            setter(max(lo - pad, -0.02) if lo >= 0 else lo - pad, min(hi + pad, 1.02) if hi <= 1 else hi + pad)
    if (pts[PRIVATE_FLAG] | pts[PUBLIC_FLAG]).any():
        ax.text(0.99, 0.01, "hollow: incomplete scores, left out of the correlation", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="0.4")
    fig.tight_layout()
    return fig


def plot_comparison(comp: Comparison, path: str | Path,
                    intervals: Mapping[str, tuple[float, float]] | None = None) -> Path:
    """Write the public-vs-private scatter as PNG, or SVG/PDF by suffix."""
    with literal_text():  # model names with `$` are drawn as typed
        comparison_figure(comp, intervals).savefig(path, dpi=120, bbox_inches="tight")
    return Path(path)
