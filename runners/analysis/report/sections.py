"""Sections 1-4 and 7: summary, results table, forest plot, per-query picture, worst queries.

Each builder returns None when its data does not exist, so the report only shows what was stored.
Query and document text appear only with `show_text` (the report may travel by e-mail).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ...config.benchmark import StatsOptions
from ...labels.pool.judged import judged_ceiling, judged_meaning, judged_report, stored_rankings
from ...results.store import load_rankings
from ...statistics.analysis_errors import AnalysisError
from ..page import figures, numbers, text
from ..page.blocks import Figure, Paragraph, Section, Table
from ..page.data import Candidate, TaskData
from ..page.svg import figure_svg
from ...statistics.intervals import format_number, metric_label


JUDGED_K = 10


@dataclass
class Context:
    """What every section builder needs besides the task's data."""

    opts: StatsOptions
    results_dir: object
    baseline: Candidate
    show_text: bool = False
    worst_k: int = 5
    split: str = "test"
    cache: dict = field(default_factory=dict)


@dataclass
class TaskNumbers:
    """Computed once per task and shared by the sections."""

    td: TaskData
    ranking: pd.DataFrame  # ci_table of the main metric, best first
    tables: dict[str, pd.DataFrame]  # metric -> ci_table
    pairs: pd.DataFrame  # all pairs, main metric
    vs_base: list[tuple[str, pd.DataFrame]]  # subset -> candidate - baseline
    skipped: list[str]
    power: str
    baseline: str | None
    judged: dict[str, float] = field(default_factory=dict)  # label -> judged@10 (empty: no rankings/labels)
    judged_warnings: list[str] = field(default_factory=list)  # candidates clearly less judged than the baseline


def task_numbers(td: TaskData, ctx: Context) -> TaskNumbers:
    main = td.main_metric
    tables = {m: numbers.intervals(td, m, ctx.opts) for m in td.metrics}
    ranking = tables[main].sort_values("mean", ascending=False).reset_index(drop=True)
    base = ctx.baseline.label if ctx.baseline.label in td.scores[main] else None
    subs, skipped = numbers.subsets(td, main)
    vs = [(s.name, numbers.vs_baseline(s, base, ctx.opts, main)) for s in subs] if base else []
    vs = [(n, df) for n, df in vs if not df.empty]
    power = numbers.power_line(td, main)
    judged, warns = _judged(td, ctx)
    return TaskNumbers(td, ranking, tables, numbers.all_pairs(td, main, ctx.opts), vs, skipped, power, base,
                       judged, warns)


def _has_rankings(ctx: Context, name: str, task: str) -> bool:
    try:
        stored_rankings(ctx.results_dir, name, task, ctx.split)
        return True
    except AnalysisError:
        return False


def _judged(td: TaskData, ctx: Context, k: int = JUDGED_K) -> tuple[dict[str, float], list[str]]:
    """judged@k per candidate label and the below-the-baseline warnings; nothing when rankings or labels lack."""
    qrels = td.collection.qrels.get(ctx.split) if td.collection is not None else None
    known = td.collection.complete_in(ctx.split) if td.collection is not None else set()
    if not qrels or len(known) >= len(qrels):  # every question's labels declared complete: judged@k says nothing
        return {}, []
    names = [c.name for c in td.candidates if _has_rankings(ctx, c.name, td.name)]
    if not names:
        return {}, []
    base = ctx.baseline.name if ctx.baseline.name in names else None
    try:
        rep = judged_report(ctx.results_dir, td.name, qrels, names, (k,), ctx.split, base, known=known)
    except AnalysisError:  # runs stored before rankings were: the scores stand without judged@k
        return {}, []
    label = {c.name: c.label for c in td.candidates}
    return {label[r.model]: float(r.judged) for r in rep.table.itertuples()}, list(rep.warnings)


def summary(all_numbers: list[TaskNumbers], config: str = "the config") -> Section:
    """One verdict per task: best candidate (naming the set it was drawn from, as `stats` does), detectably
    better than the runner-up or not, the power line."""
    sec = Section("summary", "Summary")
    for tn in all_numbers:
        label, r = metric_label(tn.td.main_metric), tn.ranking
        best, n = r.iloc[0], len(r)
        among = f"among the {n} candidate{'s' * (n != 1)} of {config} with results"
        head = (f"{tn.td.name} ({int(best.n_queries)} queries, {label}): {among}, the best is {best.candidate} "
                f"at {text.ci(best['mean'], best.ci_low, best.ci_high)}")  # stats' best sentence: format_score
        if len(r) < 2:
            sec.blocks.append(Paragraph(text.sentence(head + "; it is the only candidate with results"), "verdict"))
        else:
            second = r.iloc[1]
            p = numbers.pair_row(tn.pairs, best.candidate, second.candidate)
            diff = text.signed_ci(p["diff"], p["diff_ci_low"], p["diff_ci_high"], 4)  # as stats' best sentence
            holm = f", Holm over all {len(tn.pairs)} pairs" if len(tn.pairs) > 1 else ""
            if p["significant"]:
                verdict = (f"; it is detectably better than the runner-up {second.candidate} by {diff} "
                           f"({text.p_value(p['p_holm'])}{holm})")
            else:
                verdict = (f"; it is NOT detectably better than the runner-up {second.candidate} (difference {diff}, "
                           f"{text.p_value(p['p_holm'])}{holm}): on this test set "
                           f"the two are tied")
            sec.blocks.append(Paragraph(text.sentence(head + verdict), "verdict"))
        sec.blocks.append(Paragraph(text.sentence(tn.power), "note"))
        for w in tn.judged_warnings:
            sec.blocks.append(Paragraph(f"Warning: {w}.", "verdict"))
    return sec


def results_table(all_numbers: list[TaskNumbers], ctx: Context) -> Section:
    """Every candidate x metric with its CI, best first; the baseline row marked."""
    conf = f"{ctx.opts.confidence:.0%}"
    sec = Section("results", "Results")
    sec.blocks.append(Paragraph(f"Mean over queries with {conf} bootstrap interval ({ctx.opts.resamples} resamples, "
                                f"{ctx.opts.method}, seed {ctx.opts.seed}); sorted by the task's main metric. "
                                f"★ marks the baseline ({ctx.baseline.label})."
                                + (" " + judged_meaning(JUDGED_K, {tn.td.name: judged_ceiling(
                                    tn.td.collection.qrels.get(ctx.split, {}), JUDGED_K) for tn in all_numbers
                                    if tn.judged and tn.td.collection is not None}) + "."
                                   if any(tn.judged for tn in all_numbers) else ""),
                                "note"))
    for tn in all_numbers:
        kinds = {c.label: c.kind for c in tn.td.candidates}
        header = ["#", "candidate", "kind", "queries"] + [metric_label(m) + f" [{conf} CI]" for m in tn.td.metrics]
        header += [f"judged@{JUDGED_K}"] if tn.judged else []
        rows, marked = [], set()
        for i, cand in enumerate(tn.ranking.candidate):
            cells = []
            for m in tn.td.metrics:
                t = tn.tables[m].set_index("candidate").loc[cand]
                cells.append(text.ci(t["mean"], t.ci_low, t.ci_high))
            is_base = cand == tn.baseline
            marked |= {i} if is_base else set()
            rows.append([str(i + 1), cand + (" ★" if is_base else ""), kinds.get(cand, ""),
                         str(int(tn.ranking.n_queries.iloc[0]))] + cells
                        + ([f"{tn.judged[cand]:.2f}" if cand in tn.judged else "—"] if tn.judged else []))
        sec.subsections.append(Section(f"results-{_slug(tn.td.name)}", tn.td.name,
                                       [Table(header, rows, f"{tn.td.name}: every candidate on the common queries",
                                              marked)]))
    return sec


def forest(all_numbers: list[TaskNumbers], ctx: Context) -> Section | None:
    """Paired difference of every candidate vs the baseline, per subset, with CI and Holm-adjusted p."""
    have = [tn for tn in all_numbers if tn.vs_base]
    if not have:
        return None
    sec = Section("forest", f"Differences vs the baseline ({ctx.baseline.label})")
    sec.blocks.append(Paragraph(
        f"Each line: candidate − baseline, paired bootstrap {ctx.opts.confidence:.0%} interval; p from the paired "
        "randomization test, Holm-adjusted over the candidates compared with the baseline within each subset. "
        "Filled markers are significant after Holm (green better, red worse); grey hollow ones are not.", "note"))
    for tn in have:
        label = metric_label(tn.td.main_metric)
        fig = figures.forest(tn.vs_base, tn.baseline, label)
        blocks: list = [Figure(figure_svg(fig, f"forest-{_slug(tn.td.name)}"),
                               f"{tn.td.name}: Δ {label} vs {tn.baseline} per subset",
                               f"forest plot of {label} differences against {tn.baseline}")]
        blocks.append(_forest_table(tn, label))
        if tn.skipped:
            blocks.append(Paragraph(f"Subsets with fewer than {numbers.MIN_SUBSET} queries left out: "
                                    f"{', '.join(tn.skipped)}.", "note"))
        sec.subsections.append(Section(f"forest-{_slug(tn.td.name)}", tn.td.name, blocks))
    return sec


def _forest_table(tn: TaskNumbers, label: str) -> Table:
    """Candidates x subsets; the 'all' column carries the CI, every cell the Holm p (✓ = significant)."""
    first = tn.vs_base[0][1].sort_values("diff", ascending=False)
    header = ["candidate"] + [f"{name} (n={int(df.n.iloc[0])})" for name, df in tn.vs_base]
    rows = []
    for cand in first.candidate_a:
        row = [cand]
        for i, (_, df) in enumerate(tn.vs_base):
            hit = df[df.candidate_a == cand]
            if hit.empty:
                row.append("—")
                continue
            r = hit.iloc[0]
            d = text.signed_ci(r["diff"], r.diff_ci_low, r.diff_ci_high) if i == 0 else format_number(r["diff"], 3, True)
            row.append(f"{d} {text.p_value(r.p_holm)}{' ✓' if r.significant else ''}")
        rows.append(row)
    return Table(header, rows, f"Δ {label} vs {tn.baseline}: difference [CI for all queries], Holm p; "
                               "✓ = significant")


def per_query(all_numbers: list[TaskNumbers], ctx: Context) -> Section | None:
    """Where the top two candidates differ: per-query scatter and wins/ties/losses per subset."""
    have = [tn for tn in all_numbers if len(tn.ranking) >= 2]
    if not have:
        return None
    sec = Section("per-query", "Per query: the top two candidates")
    for tn in have:
        a, b = tn.ranking.candidate.iloc[0], tn.ranking.candidate.iloc[1]
        label = metric_label(tn.td.main_metric)
        subs, _ = numbers.subsets(tn.td, tn.td.main_metric)
        wtl = [(s.name, *numbers.win_tie_loss(s.scores[a], s.scores[b])) for s in subs]
        fig = figures.per_query(tn.td.scores[tn.td.main_metric][a], tn.td.scores[tn.td.main_metric][b], a, b,
                                label, wtl)
        rows = [[name, str(w), str(t), str(lo)] for name, w, t, lo in wtl]
        sec.subsections.append(Section(f"per-query-{_slug(tn.td.name)}", f"{tn.td.name}: {a} vs {b}", [
            Figure(figure_svg(fig, f"pq-{_slug(tn.td.name)}"),
                   f"{label} per query (marker area: number of queries at that point) and wins/ties/losses",
                   f"per-query comparison of {a} and {b}"),
            Table(["subset", f"{a} better", "tie", f"{b} better"], rows)]))
    return sec


def worst_queries(all_numbers: list[TaskNumbers], ctx: Context) -> Section | None:
    """The lowest-scoring queries of every candidate, by id; text and titles only with --show-text."""
    sec = Section("worst", "Worst queries per candidate")
    k = ctx.worst_k
    sec.blocks.append(Paragraph(
        f"The {k} lowest-scoring queries of each candidate (ties: deeper first relevant document first). "
        "Cells: query id (score; rank of the first relevant document in the stored top-k, — if absent)."
        + ("" if ctx.show_text else " Query text and titles are left out; add --show-text to include them."), "note"))
    for tn in all_numbers:
        td, m = tn.td, tn.td.main_metric
        qrels = td.collection.qrels.get(ctx.split, {}) if td.collection is not None else {}
        rows, detail = [], []
        for cand in tn.ranking.candidate:
            c = next(x for x in td.candidates if x.label == cand)
            rankings = _rankings(ctx, c, td.name)
            ranks = {q: numbers.first_relevant_rank(rankings.get(q, {}), qrels.get(q, {})) for q in rankings} \
                if qrels else {}
            worst = numbers.worst_queries(td.scores[m][cand], k, ranks)
            rows.append([cand] + [f"{q} ({s:.2f}; {ranks.get(q) or '—'})" for q, s in worst])
            if ctx.show_text and td.collection is not None:
                for q, s in worst:
                    top = max(rankings.get(q, {}).items(), key=lambda kv: kv[1], default=(None, 0))[0]
                    rel = sorted(qrels.get(q, {}).items(), key=lambda kv: -kv[1])
                    detail.append([cand, q, f"{s:.2f}", td.collection.queries.get(q, ""),
                                   _title(td, top), "; ".join(_title(td, d) for d, g in rel if g > 0)])
        blocks: list = [Table(["candidate"] + [f"#{i + 1}" for i in range(k)], rows,
                              f"{td.name}: lowest {metric_label(m)}")]
        if detail:
            blocks.append(Table(["candidate", "query id", metric_label(m), "query", "top-ranked document",
                                 "relevant documents"], detail))
        sec.subsections.append(Section(f"worst-{_slug(td.name)}", td.name, blocks))
    return sec


def _rankings(ctx: Context, c: Candidate, task: str) -> dict[str, dict[str, float]]:
    try:
        return load_rankings(ctx.results_dir, c.name, task, ctx.split, c.revision)
    except (FileNotFoundError, KeyError, OSError):
        return {}


def _title(td: TaskData, doc: str | None) -> str:
    if doc is None or td.collection is None:
        return "—"
    d = td.collection.corpus.get(doc, {})
    return f"{d.get('title') or '(untitled)'} [{doc}]"


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name).strip("-").lower()
