"""Experiment candidates vs their plain dense model, from stored results only.

Candidate names come from the config (runners/config/experiments.py), revisions and labels
from what `run` recorded in candidates.json, so no model library is imported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...config.benchmark import BenchmarkConfig
from ...config.experiments import (
    TYPES,
    base_spec,
    chunk_level_entries,
    chunk_task_name,
    entry_base,
    parse_experiments,
    plan_experiments,
)
from ...config.task_lookup import task_name_for
from ...results.store import load_ann_agreement, load_candidates, load_per_query
from ...statistics.intervals import holm
from ...statistics.stats_frames import ci_table, paired_tests
from .growth_curve import per_doubling
from .growth_results import growth_rows


@dataclasses.dataclass(frozen=True)
class _Stored:
    name: str
    label: str
    kind: str
    revision: str | None
    base: str | None = None


def _stored(results_dir: Path, cfg: BenchmarkConfig) -> tuple[list[_Stored], list[_Stored]]:
    """(plain models, experiment candidates) as the run recorded them."""
    known = load_candidates(results_dir)

    def rev(name: str) -> str | None:
        return known.get(name, {}).get("revision")

    bases = [_Stored(m.results_name, m.default_label, "model", rev(m.results_name)) for m in cfg.models]
    for entry in parse_experiments(cfg):
        if entry.type == "rerank":  # its first stage is a candidate of the config already
            continue
        spec = base_spec(cfg, entry_base(entry))
        if all(spec.name != b.name for b in bases):
            bases.append(_Stored(spec.name, spec.default_label, "model", rev(spec.name)))
    exps = [_Stored(p.name, p.label, p.kind, rev(p.name), p.params["first"] if p.kind == "rerank" else p.base.name)
            for p in plan_experiments(cfg)]
    return bases, exps


def experiment_table(results_dir: Path, cfg: BenchmarkConfig, metrics: list[str] | None = None,
                     split: str = "test", models: list[str] | None = None) -> pd.DataFrame:
    """Every base model and experiment candidate (only those named in `models`, when given): mean
    [95% bootstrap CI] per metric, and for experiments the paired difference vs the plain dense base
    (bootstrap CI, randomization p, Holm over the experiments of one task and metric), plus ANN
    overlap@k vs exact search. Growth entries add rows of kind 'growth' (runners/analysis/cost/growth_results.py):
    one per measured corpus fraction and per fitted/extrapolated multiple (2x, 10x), with the trend."""
    st = cfg.stats
    metrics = metrics or list(st.metrics)
    rows: list[dict[str, Any]] = []
    bases, exps = _stored(results_dir, cfg)
    pairs = [(t, c) for t in (task_name_for(t, cfg) for t in cfg.tasks) for c in bases + exps
             if models is None or c.name in models]
    for entry in chunk_level_entries(cfg):
        d = next(b for b in bases if b.name == base_spec(cfg, entry.model).name)
        pairs += [(chunk_task_name(task_name_for(t, cfg), ch), dataclasses.replace(d, label=f"{d.label} (chunk level)"))
                  for t in cfg.tasks for ch in entry.chunkers()]

    def scores(c: _Stored, task: str, metric: str) -> pd.Series | None:
        try:
            return load_per_query(results_dir, c.name, task, metric, split, revision=c.revision)
        except (FileNotFoundError, KeyError):
            return None

    for metric in metrics:
        block: list[dict[str, Any]] = []
        for task, c in pairs:
            s = scores(c, task, metric)
            if s is None:
                continue
            ci = ci_table({c.label: s}, st.resamples, st.confidence, st.method, st.seed).iloc[0]
            row = {"task": task, "candidate": c.label, "model": c.name, "kind": c.kind, "metric": metric,
                   "n_queries": int(ci["n_queries"]), "mean": ci["mean"], "ci_low": ci["ci_low"],
                   "ci_high": ci["ci_high"], "base": None}
            base = next((b for b in bases + exps if b.name == c.base), None) if c.kind in TYPES else None
            b_scores = scores(base, task, metric) if base is not None else None
            if b_scores is not None:
                pt = paired_tests({c.label: s, base.label: b_scores}, st.resamples, st.seed, 1 - st.confidence,
                                  metric, st.method).iloc[0]
                row.update(base=base.label, base_mean=pt["mean_b"], diff=pt["diff"], diff_ci_low=pt["diff_ci_low"],
                           diff_ci_high=pt["diff_ci_high"], p=pt["p_randomization"])
            if c.kind in ("ann", "model"):  # a `kind: retriever` database files one too (search/retriever.py)
                rec = load_ann_agreement(results_dir, c.name, task, split, c.revision)
                row.update((rec or {}).get("summary", {}))
            block.append(row)
        tested = [r for r in block if r.get("p") is not None]
        for t in {r["task"] for r in tested}:
            group = [r for r in tested if r["task"] == t]
            for r, adj in zip(group, holm([r["p"] for r in group])):
                r["p_holm"], r["significant"] = float(adj), bool(adj < 1 - st.confidence)
        rows += block
    _add_costs(results_dir, rows, split)
    growth = growth_rows(results_dir, cfg, metrics, models)
    if growth.empty:
        return pd.DataFrame(rows)
    df = pd.concat([pd.DataFrame(rows), growth], ignore_index=True)
    df["n_docs"] = pd.Series([None if v != v else int(v) for v in df["n_docs"]], dtype=object)  # counts, not floats
    return df


def _add_costs(results_dir: Path, rows: list[dict[str, Any]], split: str) -> None:
    """The latency pass's cost columns (analysis/cost/cost.py) and their 10x / 100x projections, when any was measured."""
    from .cost import COST_COLUMNS, any_measured, at_scale, cost_row, load_latency

    costs = {(r["model"], r["task"]): cost_row(load_latency(results_dir, r["model"], r["task"], split)) for r in rows}
    if not any_measured(list(costs.values())):
        return
    for r in rows:
        c = costs[(r["model"], r["task"])]
        r.update({k: c[k] for k in COST_COLUMNS}, **at_scale(c), cost_note=c["note"] or None)


def _cost_cell(r: Any) -> str:
    from .cost import human_bytes, ms

    p50 = getattr(r, "p50_ms", None)
    if p50 is None or p50 != p50:
        note = getattr(r, "cost_note", None)
        return f"  ({note})" if isinstance(note, str) and note.startswith("latency not measurable") else ""
    rate = getattr(r, "docs_per_s", None)
    return (f"  p50 {ms(p50)} ms, p95 {ms(r.p95_ms)} ms, {human_bytes(r.bytes_per_doc)}/doc, "
            f"{'–' if rate is None or rate != rate else f'{rate:.1f}'} docs/s")


def format_experiment_table(df: pd.DataFrame) -> str:
    """Plain-text view: mean [CI], diff vs base [CI] with Holm p, overlap@k vs exact search."""
    from ...statistics.intervals import format_diff, format_p, format_score

    if df.empty:
        return "(no experiment results)"
    lines = []
    for (task, metric), g in df.groupby(["task", "metric"], sort=False):
        lines.append(f"{task} — {metric}")
        for r in g[g.kind != "growth"].itertuples(index=False):
            cell = (f"  {r.candidate:<38} {format_score(r.mean)} [{format_score(r.ci_low)}, "
                    f"{format_score(r.ci_high)}]")
            if isinstance(getattr(r, "base", None), str):  # the p-value as every command prints it
                cell += (f"  vs {r.base}: {format_diff(r.diff, r.diff_ci_low, r.diff_ci_high, 4)}"
                         f" {format_p(r.p_holm)} Holm{' *' if r.significant else ''}")
            for k in ("index_overlap_at_10", "index_overlap_at_100"):
                v = getattr(r, k, None)
                if v is not None and v == v:
                    cell += f"  {k.replace('index_overlap_at_', 'overlap@')} vs exact={v:.3f}"
            lines.append(cell + _cost_cell(r))
        lines += _growth_lines(g[g.kind == "growth"])
    return "\n".join(lines)


def _growth_lines(g: pd.DataFrame) -> list[str]:
    """One block per growth curve: metric [CI] per corpus fraction, trend per doubling, 2x / 10x."""
    out: list[str] = []
    if g.empty:
        return out
    for (cand, _), c in g.groupby(["candidate", "distractors"], sort=False, dropna=False):
        r0 = c.iloc[0]
        slope = per_doubling(r0.slope_per_doubling, r0.slope_ci_low, r0.slope_ci_high, where="")
        trend = f"trend {slope}" if slope else "no trend (less than a doubling)"
        out.append(f"  {cand}: metric per corpus size, {trend}")
        if isinstance(r0.distractors, str):
            out.append(f"    beyond 1x: the corpus plus documents of {r0.distractors}")
        for r in c.itertuples(index=False):
            tag = "" if r.point == "measured" else f" {r.point}"
            out.append(f"    {r.fraction:>5g}x {int(r.n_docs):>8d} docs  {r.mean:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]{tag}")
    return out


def ann_agreement_table(results_dir: Path, runs: Sequence[tuple[str, str, str, str]],
                        split: str = "test") -> pd.DataFrame:
    """One row per (label, model name, revision, task): mean overlap@k vs exact search, timings."""
    rows = []
    for label, name, revision, task in runs:
        rec = load_ann_agreement(results_dir, name, task, split, revision)
        if rec is None:
            continue
        rows.append({"candidate": label, "model": name, "task": task, "index": rec["index"], **rec["summary"],
                     "ms_per_query_index": rec.get("ms_per_query_index"),
                     "ms_per_query_exact": rec.get("ms_per_query_exact")})
    return pd.DataFrame(rows)
