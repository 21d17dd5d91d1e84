"""The best candidate of a config, said ONE way by `stats`, `check` and `history` (issue 28).

Why: a team acts on "which system is best", and it must not depend on the command asked. Every command
draws the verdict from the same set (candidate_set.candidate_set: the config's models and experiment
candidates), the same statistics (stats_report.report_from_scores with the config's `stats:` resamples, seed,
confidence and method) and the same sentence (stats_report.best_sentence, stats.format_score rounding).
`stats` and `check` read the stored results; `history` reads the latest record of each candidate, which holds
the same per-query scores, so after a run all three print the same sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import task_name_for
from ...results.variants import shown_label
from ...statistics.analysis_errors import AnalysisError
from ...statistics.candidate_set import candidate_set, config_names
from ...statistics.stats_report import best_sentence, report_from_scores, stats_report


def config_best(cfg: BenchmarkConfig, task_name: str, metric: str, results_dir: Path | None = None) -> str:
    """`stats -c CONFIG`'s best sentence for `task_name` and `metric` on the results in `results_dir` (default:
    the config's); '' when a candidate of the config has no result there (the set would not be the config's)."""
    folder = cfg.results_path if results_dir is None else Path(results_dir)
    chosen = candidate_set(cfg)
    opts = cfg.stats
    try:
        rep = stats_report(folder, task_name, metric, n_resamples=opts.resamples, seed=opts.seed,
                           confidence=opts.confidence, method=opts.method, models=list(chosen.names))
    except AnalysisError:
        return ""
    return best_sentence(rep, chosen.among)


def config_source_lines(cfg: BenchmarkConfig, task_name: str, metric: str, results_dir: Path) -> list[str]:
    """`stats`' verdict on each source of the task's questions (log / human / generated) and the warning when the
    generated ones crown another candidate; [] with one source, for a public task or without results."""
    from ...labels.notes.generator_guard import SOURCE_TAG, source_verdict_lines
    from ...labels.notes.label_notes import stats_tags

    entry = next((e for e in cfg.tasks if task_name_for(e, cfg) == task_name), task_name)
    if SOURCE_TAG not in stats_tags(entry, list(cfg.stats.tags), cfg):
        return []
    chosen = candidate_set(cfg)
    opts = cfg.stats
    try:
        rep = stats_report(results_dir, task_name, metric, n_resamples=opts.resamples, seed=opts.seed,
                           confidence=opts.confidence, method=opts.method, models=list(chosen.names), tags=[SOURCE_TAG],
                           strict_tags=False, task_source=entry)
    except AnalysisError:
        return []
    return source_verdict_lines(rep, chosen.among)


def check_best(config: Path | None, results: Path, candidate: str | None, tasks: list[str],
               metric: str) -> tuple[dict[str, str], list[str]]:
    """(task -> `stats`' best sentence of the config's candidates on the candidate's results (the new run), the
    verdict lines per source of questions), so the gate names the same best candidate as stats, history and the
    report; ({}, []) without a project config."""
    from ...config.discovery import optional_config

    found = optional_config(config)
    if found is None:
        return {}, []
    cfg = BenchmarkConfig.from_file(found)
    folder = Path(candidate) if candidate is not None and Path(candidate).is_dir() else results
    said = {t: config_best(cfg, t, metric, folder) for t in dict.fromkeys(tasks)}
    by_source = [line for t, s in said.items() if s for line in config_source_lines(cfg, t, metric, folder)]
    return {t: s for t, s in said.items() if s}, by_source


def _latest(records: Iterable[Mapping[str, Any]], name: str, task: str) -> Mapping[str, Any] | None:
    found = [r for r in records if r["task"] == task and r["candidate"].get("name") == name]
    return found[-1] if found else None  # records are read oldest first


def history_best(cfg: BenchmarkConfig, records: list[Mapping[str, Any]], tasks: Iterable[str]) -> dict[str, str]:
    """task -> the best sentence over the latest record of each of the config's candidates (their main metric),
    as `stats` words it; a task is left out when a candidate has no record on it or the records share no
    query (text and labels the same). Records of another data revision pair only their unchanged queries."""
    from .history import fingerprinted

    chosen = candidate_set(cfg)
    opts = cfg.stats
    out: dict[str, str] = {}
    for task in dict.fromkeys(tasks):
        latest = [_latest(records, n, task) for n in config_names(cfg)]
        if not latest or any(r is None or not (r.get("per_query") or {}).get("ids") for r in latest):
            continue
        metrics = {(r.get("per_query") or {}).get("metric") for r in latest}  # type: ignore[union-attr]
        if len(metrics) != 1:
            continue
        sides = [fingerprinted(r) for r in latest]  # type: ignore[arg-type]
        keep = set(sides[0])
        for side in sides[1:]:
            keep &= {q for q, (fp, _) in side.items() if q in sides[0] and sides[0][q][0] == fp}
        if not keep:
            continue
        per_query = {shown_label(str(r["candidate"].get("label")), str(r["candidate"].get("name"))):  # type: ignore[index]
                     {q: s for q, (_, s) in side.items() if q in keep} for r, side in zip(latest, sides)}
        rep = report_from_scores(task, str(metrics.pop()), per_query, opts.resamples, opts.seed, opts.confidence,
                                 opts.method)
        out[task] = best_sentence(rep, chosen.among)
    return out
