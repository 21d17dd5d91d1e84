"""The corpus-growth part of the experiments section: a figure and a table per task, from stored curves.

Numbers are the experiments table's growth rows (runners/analysis/cost/growth_results.py), so the report, the
`experiments` and the `growth` commands show the same values.
"""

from __future__ import annotations

import pandas as pd

from ..cost.growth_curve import per_doubling
from ..page import figures, text
from ..page.blocks import Block, Figure, Paragraph, Table
from ..page.svg import figure_svg
from ...statistics.intervals import metric_label


def growth_blocks(rows: pd.DataFrame, task: str, metric: str) -> list[Block]:
    """Figure + table + trend line of the growth rows of one task and metric (empty list when none)."""
    rows = rows[(rows.kind == "growth") & (rows.task == task) & (rows.metric == metric)]
    if rows.empty:
        return []
    label = metric_label(metric)
    curves = []
    for cand, c in rows.groupby("candidate", sort=False):
        today = c[(c.point == "measured") & (c.fraction == 1.0)]
        curves.append((str(cand), int(today.n_docs.iloc[0]) if not today.empty else 0, c))
    out: list[Block] = [Figure(figure_svg(figures.growth(curves, label), f"growth-{task}"),
                               f"{task}: {label} as the corpus grows, with 95% CIs over queries and repeats",
                               "corpus growth curve")]
    body = []
    for cand, _, c in curves:
        for r in c.itertuples():
            body.append([cand, f"{r.fraction:g}x", f"{int(r.n_docs):,}", text.ci(r.mean, r.ci_low, r.ci_high),
                         r.point])
    out.append(Table(["curve", "corpus", "documents", f"{label} [CI]", "point"], body))
    for cand, _, c in curves:
        r0 = c.iloc[0]
        dis = (f" Beyond 1x the corpus is extended with documents of {r0.distractors}."
               if isinstance(r0.distractors, str) else "")
        slope = per_doubling(r0.slope_per_doubling, r0.slope_ci_low, r0.slope_ci_high, label, ci_first=True)
        if slope:
            trend = (f"{cand}: {slope} (least squares on log size); extrapolated values assume the "
                     "log-linear trend holds beyond the measured range.")
        else:
            trend = f"{cand}: the measured sizes span less than a doubling, so no trend is fitted."
        out.append(Paragraph(trend + dis, "note"))
    return out
