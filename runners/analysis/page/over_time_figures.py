"""The "over time" figures: metric vs date from the run history, and observed vs predicted corpus growth.

Points are coloured by what changed since the record before (model, settings, data, nothing); whiskers are
each record's 95% CI; corpus size is drawn on a second axis. The growth figure holds the growth
experiment's log-linear prediction against the metric the history observed at the corpus sizes it had.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timezone

import matplotlib.dates as mdates
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from ..gate.history_timeline import Step, Timeline, parse_time
from .figures import BASE, padded
from .svg import new_figure

#: what changed -> colour (the first of these parts a step changed decides)
CHANGE_COLOURS = {"first record": "#7a7a7a", "model": "#c0392b", "settings": "#e67e22", "data": "#2471a3",
                  "nothing": "#34495e"}
_SETTINGS = {"task settings", "encode settings", "experiment", "fingerprint"}


def change_kind(step: Step) -> str:
    """'first record' | 'model' | 'settings' | 'data' | 'nothing': the colour class of a step."""
    parts = set(step.changed)
    if "first record" in parts:
        return "first record"
    if "model" in parts:
        return "model"
    if parts & _SETTINGS:
        return "settings"
    return "data" if "data" in parts else "nothing"


def _value_axis(ax, lows: list[float], highs: list[float], label: str) -> None:
    finite = [v for v in lows + highs if math.isfinite(v)]
    if finite:
        ax.set_ylim(*padded(min(finite), max(finite), bounds=(0.0, 1.0)))
    ax.set_ylabel(label, fontsize=8)
    ax.tick_params(labelsize=7)


def _date_axis(ax) -> None:
    """Dates a reader can read at any span (days apart or seconds apart): matplotlib's AutoDateLocator picks
    the ticks and ConciseDateFormatter writes only what changes ("Nov", "08", "14:30"), with the rest once in
    the offset ("2026-Dec"), all in UTC; the default formatter wrote "05:46.300000"."""
    locator = mdates.AutoDateLocator(tz=timezone.utc, minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=timezone.utc))
    ax.tick_params(axis="x", labelsize=7)


def over_time(timelines: Sequence[Timeline], metric_label: str) -> Figure:
    """Metric vs date per candidate (a line each) with CI whiskers, points coloured by what changed;
    corpus size on the right axis (grey steps)."""
    fig = new_figure(6.4, 3.4)
    ax = fig.add_subplot()
    lows, highs, sizes = [], [], {}
    for i, tl in enumerate(timelines):
        xs = [parse_time(s.time) for s in tl.steps]
        ys = [s.mean for s in tl.steps]
        ax.plot(xs, ys, "-", color=f"C{i}", lw=1, alpha=0.7, label=tl.candidate)
        for x, s in zip(xs, tl.steps):
            colour = CHANGE_COLOURS[change_kind(s)]
            ax.errorbar([x], [s.mean], yerr=[[s.mean - s.ci_low], [s.ci_high - s.mean]], fmt="o", color=colour,
                        ms=5, capsize=3, lw=1)
            lows.append(s.ci_low)
            highs.append(s.ci_high)
            if s.corpus_size is not None:
                sizes[x] = s.corpus_size
    _value_axis(ax, lows, highs, metric_label)
    handles = [Line2D([], [], color=f"C{i}", lw=1, label=tl.candidate) for i, tl in enumerate(timelines)]
    handles += [Line2D([], [], color=c, marker="o", ls="", label=k) for k, c in CHANGE_COLOURS.items()]
    if sizes:
        ax2 = ax.twinx()
        when = sorted(sizes)
        ax2.step(when, [sizes[w] for w in when], where="post", color="#999999", lw=1, ls="--")
        top = max(sizes.values())
        ax2.set_ylim(0, top * 1.15 if top else 1)
        ax2.set_ylabel("documents in the corpus (dashed)", fontsize=8, color="#666666")
        ax2.tick_params(labelsize=7, colors="#666666")
    _date_axis(ax)
    ax.set_xlabel("run date (UTC)", fontsize=8)
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=4, frameon=False)
    return fig


def growth_vs_observed(predicted: Sequence[tuple[int, float]], slope_per_doubling: float,
                       observed: Sequence[Step], label: str, metric_label: str) -> Figure:
    """The growth experiment's points and log-linear trend (dashed, extended over every observed size) vs the
    history's observed metric at its corpus sizes (filled, with CIs, labelled by date)."""
    fig = new_figure(5.6, 3.4)
    ax = fig.add_subplot()
    docs = np.array([n for n, _ in predicted], dtype=float)
    means = np.array([m for _, m in predicted])
    sizes = [s.corpus_size for s in observed if s.corpus_size]
    lo_x, hi_x = min([*docs, *sizes]), max([*docs, *sizes])
    xs = np.geomspace(lo_x, hi_x if hi_x > lo_x else lo_x * 2, 60)
    a, b = _trend(predicted, slope_per_doubling)
    ax.plot(docs, means, "o", mfc="white", color=BASE, ms=5, label=f"{label}: growth experiment (measured)")
    if math.isfinite(slope_per_doubling):
        ax.plot(xs, a + b * np.log(xs), "--", color=BASE, lw=1, label="predicted (log-linear trend)")
    for s in observed:
        if not s.corpus_size:
            continue
        ax.errorbar([s.corpus_size], [s.mean], yerr=[[s.mean - s.ci_low], [s.ci_high - s.mean]], fmt="o",
                    color=CHANGE_COLOURS[change_kind(s)], ms=5, capsize=3)
        ax.annotate(parse_time(s.time).strftime("%m-%d"), (s.corpus_size, s.mean), fontsize=6,
                    xytext=(3, 3), textcoords="offset points")
    ax.plot([], [], "o", color=CHANGE_COLOURS["data"], label="observed (history), coloured by what changed")
    ax.set_xscale("log")
    ticks = sorted({int(n) for n in [*docs, *sizes]})
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks], fontsize=7, rotation=45 if len(ticks) > 6 else 0)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("documents in the corpus (log scale)", fontsize=8)
    _value_axis(ax, [*means, *(s.ci_low for s in observed)], [*means, *(s.ci_high for s in observed)], metric_label)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1, frameon=False)
    return fig


def _trend(predicted: Sequence[tuple[int, float]], slope_per_doubling: float) -> tuple[float, float]:
    """(a, b) of metric = a + b ln(documents): the growth fit's slope through the measured points' centre (the
    least-squares intercept, as every fraction has the same number of repeats)."""
    b = slope_per_doubling / math.log(2)
    docs = np.array([n for n, _ in predicted], dtype=float)
    return float(np.mean(np.array([m for _, m in predicted]) - b * np.log(docs))), b


def predicted_at(predicted: Sequence[tuple[int, float]], slope_per_doubling: float, n_docs: int) -> float:
    """The trend's value at `n_docs` (NaN without a trend)."""
    if not math.isfinite(slope_per_doubling) or not predicted or n_docs <= 0:
        return float("nan")
    a, b = _trend(predicted, slope_per_doubling)
    return a + b * math.log(n_docs)
