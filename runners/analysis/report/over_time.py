"""The report's "over time" section, from the run history (`history:` in the config).

Per task: the main metric vs date with CIs, points coloured by what changed, corpus size on a second axis;
a table of the steps (what changed, corpus, metric [CI], paired effect vs the record before); and, where the
config has a growth experiment with a stored curve, its prediction held against the observed points at the
corpus sizes the history recorded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...config.benchmark import BenchmarkConfig
from ...results.history_store import HistoryStore
from ...statistics.analysis_errors import AnalysisError
from ..cost.growth_curve import GrowthCurve
from ..gate.history import accepted_map
from ..gate.history_timeline import Timeline, build_timelines, parse_time
from ..page import text
from ..page.blocks import Block, Figure, Paragraph, Section, Table
from ..page.over_time_figures import growth_vs_observed, over_time, predicted_at
from ..page.svg import figure_svg
from ...statistics.intervals import metric_label


def _steps_table(timelines: Sequence[Timeline], label: str) -> Table:
    rows = []
    for tl in timelines:
        for s in tl.steps:
            docs = "—" if s.corpus_size is None else f"{s.corpus_size:,}" + (f" (+{s.corpus_delta})" if s.corpus_grew else "")
            rows.append([parse_time(s.time).strftime("%Y-%m-%d %H:%M"), s.shown, s.git or "—",
                         s.what_changed() + (" · accepted" if s.accepted else ""), docs,
                         text.ci(s.mean, s.ci_low, s.ci_high), s.effect() or "—"])
    return Table(["date (UTC)", "candidate", "commit", "changed", "documents", f"{label} [95% CI]",
                  "vs the record before (paired on unchanged queries)"], rows)


def _stored_curves(cfg: BenchmarkConfig, task: str, metric: str) -> list[tuple[str, GrowthCurve]]:
    """(model results name, curve) of each growth entry on `task`: the newest stored curve on ANY data revision,
    since a prediction made on last month's corpus is what the history holds against what happened since."""
    from ...config.experiments import base_spec, growth_entries
    from ...results.growth_store import stored_growth
    from ..cost.growth_curve import growth_curve
    from ..cost.growth_results import growth_match

    out = []
    for entry in growth_entries(cfg):
        name = base_spec(cfg, entry.model).results_name
        record = stored_growth(cfg.results_path, name, task, growth_match(entry))
        if record is None:
            continue
        try:
            curve = growth_curve({**record, "label": entry.label} if entry.label else record, metric,
                                 min(cfg.stats.resamples, 2000), cfg.stats.seed, cfg.stats.confidence)
        except AnalysisError:
            continue
        out.append((name, curve))
    return out


def _growth_blocks(cfg: BenchmarkConfig, task: str, metric: str, timelines: Sequence[Timeline]) -> list[Block]:
    out: list[Block] = []
    for name, c in _stored_curves(cfg, task, metric):
        observed = [s for tl in timelines for s in tl.steps if s.model == name and s.corpus_size]
        if not observed:
            continue
        predicted = [(int(p.n_docs), float(p.mean)) for p in c.points.itertuples()]
        label = metric_label(metric)
        out.append(Figure(figure_svg(growth_vs_observed(predicted, c.slope_per_doubling, observed, c.label, label),
                                     f"history-growth-{task}-{c.label}"),
                          f"{task}: {c.label}'s growth experiment (measured on {c.n_corpus:,} documents, dashed: its "
                          "prediction) vs the history (observed) by corpus size", "predicted vs observed by corpus size"))
        last = observed[-1]
        guess = predicted_at(predicted, c.slope_per_doubling, int(last.corpus_size or 0))
        if math.isfinite(guess):
            inside = last.ci_low <= guess <= last.ci_high
            out.append(Paragraph(
                f"{c.label} at {last.corpus_size:,} documents ({parse_time(last.time):%Y-%m-%d}): observed "
                f"{text.ci(last.mean, last.ci_low, last.ci_high)}; the growth experiment on {c.n_corpus:,} documents "
                f"predicted {guess:.4f} ({'inside' if inside else 'outside'} the observed 95% CI).", "note"))
        else:
            out.append(Paragraph(f"{c.label}: the growth experiment has no trend to predict from "
                                 "(its sizes span less than a doubling).", "note"))
    return out


def over_time_section(cfg: BenchmarkConfig, tasks: Sequence[tuple[str, str]]) -> Section | None:
    """`tasks`: (name, main metric) of the report's tasks. None when the config keeps no history."""
    if cfg.history_path is None:
        return None
    store = HistoryStore(cfg.history_path)
    read = store.read()
    section = Section("over-time", "Over time")
    if read.damaged:
        section.blocks.append(Paragraph(f"{len(read.damaged)} damaged history record(s) skipped: "
                                        + "; ".join(read.damaged), "note"))
    if not read.records:
        section.blocks.append(Paragraph(f"No run history yet in {cfg.history_path}: every `private-mteb run` "
                                        "appends to it.", "note"))
        return section
    for task, main in tasks:
        timelines = build_timelines(read.records, tasks=[task], accepted=accepted_map(store, read.records),
                                    n_resamples=cfg.stats.resamples, seed=cfg.stats.seed)
        if not timelines:
            continue
        metric = timelines[0].metric or main
        label = metric_label(metric)
        sub = Section(f"over-time-{task}", task)
        n = sum(len(t.steps) for t in timelines)
        sub.blocks.append(Paragraph(
            f"{n} recorded run(s) of {len(timelines)} candidate(s). Each point is one run with its 95% CI, "
            "coloured by what changed since the run before; each step's effect is a paired test on the queries "
            "both runs share (same id, text and labels)."))
        sub.blocks.append(Figure(figure_svg(over_time(timelines, label), f"history-{task}"),
                                 f"{task}: {label} over time (points: runs; dashed: documents in the corpus)",
                                 f"{label} by run date"))
        sub.blocks.append(_steps_table(timelines, label))
        sub.blocks += _growth_blocks(cfg, task, metric, timelines)
        section.subsections.append(sub)
    return section
