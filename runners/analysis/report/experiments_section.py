"""Section 5: experiments (chunk size, ANN search effort, hybrid weight, corpus growth) from stored results.

Numbers come from runners.analysis.cost.experiments_table.experiment_table (the `experiments` command's table), so
the report and the terminal agree; the swept parameter of each candidate comes from the config's plan.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from ...config.benchmark import BenchmarkConfig
from ...config.experiments import growth_entries
from ..cost.experiments_table import experiment_table
from ..page import figures, text
from ..page.blocks import Figure, Paragraph, Section, Table
from ..page.data import Candidate, TaskData, quiet
from ..page.svg import figure_svg
from ...statistics.intervals import metric_label
from .growth_section import growth_blocks


def _param(c: Candidate) -> str:
    p = c.params
    if c.kind == "chunk":
        return f"size {p.get('size')} {p.get('unit')}, overlap {p.get('overlap')}"
    if c.kind == "ann":
        key = {"hnsw": "ef_search", "ivf": "nprobe"}.get(str(p.get("index")))
        return f"{p.get('index')}" + (f" {key}={p.get(key)}" if key else "")
    if c.kind == "hybrid":
        return f"{p.get('fusion')} {'k' if p.get('fusion') == 'rrf' else 'α'}={p.get('value')}"
    if c.kind == "rerank":
        return f"{str(p.get('reranker')).split('/')[-1]}, depth {p.get('depth')}"
    return ""


def _ref(rows: pd.DataFrame, name: str | None) -> tuple[float, float, float] | None:
    hit = rows[rows.model == name]
    if hit.empty:
        return None
    r = hit.iloc[0]
    return float(r["mean"]), float(r.ci_low), float(r.ci_high)


def _series(rows: pd.DataFrame, cands: dict[str, Candidate], kind: str, key: str,
            group: Any, index: str | None = None) -> list[tuple[str, list[float], pd.DataFrame]]:
    """Rows of one experiment kind grouped into lines, each sorted by its swept parameter."""
    lines: dict[str, list[tuple[float, pd.Series]]] = defaultdict(list)
    for _, r in rows[rows.kind == kind].iterrows():
        c = cands.get(r.model)
        if c is None or c.params.get(key) is None or (kind == "ann" and c.params.get("index") != index):
            continue
        lines[group(c)].append((float(c.params[key]), r))
    out = []
    for label, pts in lines.items():
        pts.sort(key=lambda t: t[0])
        out.append((label, [x for x, _ in pts], pd.DataFrame([r for _, r in pts])))
    return out


def _figures(rows: pd.DataFrame, cands: dict[str, Candidate], task: str, metric: str) -> list[Figure]:
    label, out = metric_label(metric), []
    bases = {c.base for c in cands.values() if c.base and c.kind != "rerank"}
    base_name = next(iter(bases)) if len(bases) == 1 else None
    base = _ref(rows, base_name)
    base_label = f"{next((c.label for c in cands.values() if c.name == base_name), base_name)} (plain, exact)"
    chunk = _series(rows, cands, "chunk", "size",
                    lambda c: f"overlap {c.params.get('overlap')} {c.params.get('unit')}")
    if chunk:
        fig = figures.sweep(chunk, "chunk size (tokens or characters, log scale)", label, base,
                            base_label.replace("exact", "whole documents"), log_x=True)
        out.append(Figure(figure_svg(fig, f"chunk-{task}"), f"{task}: chunk size → {label} with CI band",
                          "chunk size sweep"))
    ann = [s for s in _series(rows, cands, "ann", "ef_search", lambda c: f"HNSW M={c.params.get('M')}", "hnsw")] + \
          [s for s in _series(rows, cands, "ann", "nprobe", lambda c: f"IVF nlist={c.params.get('nlist')}", "ivf")]
    if ann:
        fig = figures.ann_sweep(ann, "search effort (ef_search / nprobe, log scale)", label, base, base_label)
        out.append(Figure(figure_svg(fig, f"ann-{task}"),
                          f"{task}: ANN search effort → overlap@10 with exact search, and {label}", "ANN sweep"))
    hybrid = _series(rows[rows.model.map(lambda n: cands.get(n) is not None and cands[n].params.get("fusion")
                                         == "weighted")], cands, "hybrid", "value", lambda c: "weighted sum")
    if hybrid:
        extra = []
        bm25 = rows[(rows.kind == "model") & rows.model.str.contains("bm25", case=False)]
        if not bm25.empty:
            r = bm25.iloc[0]
            extra.append((f"{r.candidate} alone (α=0)", 0.0, float(r["mean"]), float(r.ci_low), float(r.ci_high)))
        fig = figures.sweep(hybrid, "α: weight of the dense side in the fused score", label, base,
                            base_label.replace(", exact", ", α=1"), extra=extra)
        out.append(Figure(figure_svg(fig, f"hybrid-{task}"), f"{task}: hybrid weight → {label} with CI band",
                          "hybrid weight sweep"))
    out += _rerank_figure(rows, cands, task, label)
    return out


def _rerank_figure(rows: pd.DataFrame, cands: dict[str, Candidate], task: str, label: str) -> list[Figure]:
    """metric vs rerank depth, one line per (first stage, reranker); the first stage alone as the reference."""
    firsts = {c.params.get("first") for c in cands.values() if c.kind == "rerank"}
    first = _ref(rows, next(iter(firsts))) if len(firsts) == 1 else None
    first_label = next((c.label for c in cands.values() if c.name in firsts), "first stage")
    lines = _series(rows, cands, "rerank", "depth",
                    lambda c: f"{cands[c.params['first']].label if c.params.get('first') in cands else c.params.get('first')}"
                              f" → {str(c.params.get('reranker')).split('/')[-1]}")
    if not lines:
        return []
    fig = figures.sweep(lines, "rerank depth: documents of the first stage reordered per query (log scale)", label,
                        first, f"{first_label} alone (first stage)", log_x=True)
    return [Figure(figure_svg(fig, f"rerank-{task}"), f"{task}: rerank depth → {label} with CI band", "rerank depth sweep")]


def experiments(cfg: BenchmarkConfig, tasks: list[TaskData], cands: list[Candidate]) -> Section | None:
    """Sweeps as figures plus one table of every experiment candidate vs its plain dense model."""
    if not cfg.experiments:
        return None
    by_name = {c.name: c for c in cands}
    sec = Section("experiments", "Experiments")
    mains = sorted({td.main_metric for td in tasks})
    table = quiet(experiment_table, cfg.results_path, cfg, mains)
    growing = bool(growth_entries(cfg))
    if table.empty or not ((table.kind != "model").any() or growing):
        return None
    if (~table.kind.isin(["model", "growth"])).any():
        sec.blocks.append(Paragraph(
            "Each experiment candidate against the plain dense model it is built on (paired bootstrap CI; p from "
            "the randomization test, Holm over the experiments of a task); overlap@10 = share of the exact top 10 "
            "that the ANN index returns.", "note"))
    for td in tasks:
        everything = table[(table.task == td.name) & (table.metric == td.main_metric)]
        grown = growth_blocks(everything, td.name, td.main_metric)
        if growing and not grown and td.config is not None:  # public tasks have no corpus to grow
            grown = [Paragraph(f"No stored corpus-growth curve for {td.name} on this data: run `private-mteb growth "
                               f"-c {cfg.path.name if cfg.path else 'CONFIG'}`.", "note")]
        rows = everything[everything.kind != "growth"]
        if not grown and (rows.empty or not (rows.kind != "model").any()):
            continue
        label = metric_label(td.main_metric)
        body = []
        for r in rows.itertuples():
            c = by_name.get(r.model)
            diff = (text.signed_ci(r.diff, r.diff_ci_low, r.diff_ci_high)
                    if isinstance(getattr(r, "base", None), str) else "")
            p = text.p_value(r.p_holm) if diff and not text.missing(getattr(r, "p_holm", None)) else ""
            ov = getattr(r, "index_overlap_at_10", None)
            body.append([r.candidate, r.kind, _param(c) if c else "", text.ci(r.mean, r.ci_low, r.ci_high),
                         diff, p, "" if text.missing(ov) else f"{ov:.3f}"])
        blocks: list = list(_figures(rows, by_name, td.name, td.main_metric))
        if (rows.kind != "model").any():
            blocks.append(Table(["candidate", "kind", "setting", f"{label} [CI]", "Δ vs plain [CI]", "p (Holm)",
                                 "overlap@10"], body))
        blocks += grown
        sec.subsections.append(Section(f"experiments-{td.name.lower()}", td.name, blocks))
    return sec if sec.subsections else None
