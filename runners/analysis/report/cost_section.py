"""Report section 'Quality and cost': quality next to its price, from the latency pass's stored figures.

Per task: a quality-latency figure (each candidate a point with its CI on quality and its p50-p95 span on
latency, log scale, the Pareto front drawn), the cheapest-not-worse sentence (analysis/cost/cost.py: the paired
tests `stats` runs, or a non-inferiority test with a margin), and a table of costs, with index size and cold
encoding time at 10x / 100x the corpus (a plain multiplication, labelled so) next to the growth curve's
quality projection where one is stored. None when no candidate was measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..cost.cost import any_measured, at_scale, cheapest_not_worse, cost_rows, human_bytes, human_seconds, with_ci
from ..page.blocks import Block, Figure, Paragraph, Section, Table
from ..page.svg import figure_svg, new_figure
from ..page.text import num
from ...statistics.intervals import metric_label

FRONT, POINT = "#1a7f37", "#34495e"


def pareto(points: Sequence[tuple[str, float, float]]) -> list[str]:
    """Labels on the front of (label, latency, quality): no other point is as fast and better, or faster and as good."""
    front = []
    for label, lat, q in points:
        if not any((l2 <= lat and q2 > q) or (l2 < lat and q2 >= q) for other, l2, q2 in points if other != label):
            front.append(label)
    return front


def quality_latency(rows: pd.DataFrame, costs: dict[str, dict[str, Any]], label: str) -> Any:
    """x: p50 (marker) spanning to p95 (line), log scale; y: mean with its CI; the Pareto front as a step line."""
    pts = [(c, costs[c]["p50_ms"], float(r["mean"]), float(r["ci_low"]), float(r["ci_high"]), costs[c]["p95_ms"])
           for c, r in rows.set_index("candidate").iterrows() if c in costs and costs[c].get("p50_ms")]
    fig = new_figure(6.4, 3.9)
    ax = fig.add_subplot(1, 1, 1)
    front = set(pareto([(c, lat, q) for c, lat, q, *_ in pts]))
    order = {c: i for i, (c, *_) in enumerate(sorted(pts, key=lambda p: p[1]))}
    for c, lat, q, lo, hi, p95 in pts:
        colour = FRONT if c in front else POINT
        ax.errorbar([lat], [q], yerr=[[q - lo], [hi - q]], fmt="o", color=colour, capsize=3, ms=5)
        if p95 and p95 > lat:
            ax.plot([lat, p95], [q, q], color=colour, lw=2.5, alpha=0.45, solid_capstyle="butt")
        up = order[c] % 2 == 0  # neighbours in latency alternate above / below: close points keep legible labels
        ax.annotate(c, (lat, q), textcoords="offset points", xytext=(6, 6 if up else -12), fontsize=7.5, color=colour)
    on_front = sorted((lat, q) for c, lat, q, *_ in pts if c in front)
    if len(on_front) > 1:
        xs, ys = [on_front[0][0]], [on_front[0][1]]
        for lat, q in on_front[1:]:
            xs += [lat, lat]
            ys += [ys[-1], q]
        ax.plot(xs, ys, color=FRONT, lw=1, ls="--", label="Pareto front (faster or better than every other)")
        ax.legend(loc="lower right", fontsize=7, frameon=False)
    ax.set_xscale("log")
    ax.set_xlabel("query latency, ms (marker: p50, bar to p95; log scale)")
    ax.set_ylabel(f"{label} (mean, CI)")
    ax.grid(True, alpha=0.25)
    return fig


def _growth_at(curves: dict[str, Any], name: str, multiple: int) -> str:
    curve = curves.get(name)
    if curve is None or curve.extrapolated is None or curve.extrapolated.empty:
        return "–"
    hit = curve.extrapolated[curve.extrapolated["multiple"] == multiple]
    if hit.empty:
        return "–"
    r = hit.iloc[0]
    return f"{num(r['mean'], 3)} [{num(r['ci_low'], 3)}, {num(r['ci_high'], 3)}]"


def _table(costs: list[dict[str, Any]], ranking: pd.DataFrame, label: str, curves: dict[str, Any]) -> Table:
    means = ranking.set_index("candidate")
    rows = []
    for c in costs:
        scaled = at_scale(c)
        mean = (f"{num(means.loc[c['candidate'], 'mean'])}" if c["candidate"] in means.index else "–")
        if c["p50_ms"] is None:
            rows.append([c["candidate"], mean, c["note"] or "not measured", *["–"] * 9])
            continue
        rows.append([c["candidate"], mean, with_ci(c, "p50"), with_ci(c, "p95"),
                     "–" if c["qps"] is None else f"{c['qps']:.1f}",
                     "–" if c["docs_per_s"] is None else f"{c['docs_per_s']:.1f}", human_bytes(c["bytes_per_doc"]),
                     human_bytes(scaled["index_bytes_10x"]), human_bytes(scaled["index_bytes_100x"]),
                     human_seconds(scaled["encode_seconds_10x"]), human_seconds(scaled["encode_seconds_100x"]),
                     _growth_at(curves, c["model"], 10)])
    header = ["candidate", label, "p50 ms [95% CI]", "p95 ms [95% CI]", "q/s batched", "docs/s", "bytes/doc",
              "index at 10x (linear)", "index at 100x (linear)", "encoding at 10x (linear)",
              "encoding at 100x (linear)", f"{label} at 10x (growth curve)"]
    return Table(header, rows, caption="Costs measured by `private-mteb latency`; sizes and encoding times at 10x and "
                                       "100x the corpus are bytes/doc and docs/s times the document count (linear, "
                                       "not measured); the quality column at 10x is the growth curve's projection.")


def cost_section(cfg: Any, tasks: Sequence[Any], numbers: Sequence[Any], margin: float | None = None) -> Section | None:
    """One subsection per task with measured costs; None when nothing was measured."""
    from .over_time import _stored_curves

    subs = []
    for tn in numbers:
        td = tn.td
        names = [c.name for c in td.candidates]
        costs = cost_rows(cfg.results_path, td.name, names, {c.name: c.label for c in td.candidates})
        if not any_measured(costs):
            continue
        label = metric_label(td.main_metric)
        blocks: list[Block] = []
        intervals = [{"subset": "all", **r} for r in tn.ranking.to_dict(orient="records")]
        pairs = [{"subset": "all", **r} for r in tn.pairs.to_dict(orient="records")] if not tn.pairs.empty else []
        n = len(td.candidates)
        among = f"among the {n} candidate{'s' * (n != 1)} of {cfg.path.name if cfg.path else cfg.name} with results"
        found = cheapest_not_worse(intervals, pairs, costs, label, margin, cfg.stats.confidence, among)
        if found:
            blocks.append(Paragraph(found["sentence"][0].upper() + found["sentence"][1:] + ".", "verdict"))
        by_label = {c["candidate"]: c for c in costs}
        if sum(1 for c in costs if c["p50_ms"]) >= 1:
            fig = quality_latency(tn.ranking, by_label, label)
            blocks.append(Figure(figure_svg(fig, f"cost-{td.name}"),
                                 f"{td.name}: {label} against query latency (one query at a time); green: the Pareto "
                                 "front.", alt=f"quality against latency for {len(costs)} candidates"))
        try:
            curves = dict(_stored_curves(cfg, td.name, td.main_metric))
        except Exception:  # noqa: BLE001 - a growth record that cannot be read leaves its column empty
            curves = {}
        blocks.append(_table(costs, tn.ranking, label, curves))
        host = next((c for c in costs if c.get("cpu")), None)
        if host:
            blocks.append(Paragraph(f"Measured on {host['cpu']} with {host['threads']} torch thread(s), load average "
                                    f"{host['load_avg_1m']:.1f} during the pass ({host['measured_at']}): a busy "
                                    "machine slows every candidate, so read the ratios rather than the milliseconds.",
                                    "note"))
        subs.append(Section(f"cost-{td.name}", td.name, blocks))
    if not subs:
        return None
    return Section("cost", "Quality and cost", [], subs)
