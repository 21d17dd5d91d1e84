"""`private-mteb stats|check`: statistics from stored results (no model library loaded).

`stats` (and `experiments`, experiments_command.py) compare the candidates of the given config (or `--models`), never
"whatever is in the results folder": the Holm correction and the power sentence depend on the set.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import (EXIT_REGRESSION, config_option, console, err_console, fmt4, friendly_errors, load_config,
                     offline_default, results_option)

FORMATS = ("table", "markdown", "csv", "json")


def _split(text: Optional[str]) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def chosen_candidates(cfg: Any, models: Optional[str], tasks: list[str]) -> Any:
    """The config's candidates (models and experiments) or `--models` (names or labels), each with results for
    every task: one rule for every command (runners/statistics/candidate_set.py)."""
    from ..statistics.candidate_set import candidate_set

    return candidate_set(cfg, _split(models) if models is not None else None, tasks)


def _stats_table(rep: Any, confidence: float, resamples: int) -> None:
    from ..statistics.intervals import metric_label, pair_note

    label = metric_label(rep.metric)
    costs = any("p50_ms" in r for r in rep.interval_rows)  # a latency pass stored figures (analysis/cost/cost.py)
    t = Table("subset", "model", "n", label, f"{int(confidence * 100)}% CI",
              *(["p50 ms [95% CI]", "p95 ms [95% CI]", "bytes/doc", "docs/s"] if costs else []),
              title=f"{rep.task} — {label} ({rep.n_queries} queries, {resamples} resamples)")
    for r in rep.interval_rows:  # plain rows, not frames: the table format never imports pandas
        t.add_row(r["subset"], r["candidate"], str(r["n_queries"]), fmt4(r["mean"]),
                  f"[{fmt4(r['ci_low'])}, {fmt4(r['ci_high'])}]", *(_cost_cells(r) if costs else []))
    console.print(t)
    by_subset: dict[str, list[dict[str, Any]]] = {}
    for r in rep.pair_rows:
        by_subset.setdefault(r["subset"], []).append(r)
    for subset, rows in by_subset.items():
        pairs = f"{len(rows)} pair" + ("s" if len(rows) != 1 else "")
        console.print(Text.assemble((f"paired tests ({subset})", "bold"),
                                    (f": two-sided test of each pair, Holm-adjusted over {pairs}; diff = first "
                                     "- second [95% CI]", "dim")))
        for r in rows:
            console.print(Text.assemble(f"  {r['verdict']}  ", (pair_note(r), "dim")))
    console.print(Text.assemble(("power:", "yellow"), f" {rep.power}"))


def _cost_cells(r: dict[str, Any]) -> list[str]:
    from ..analysis.cost.cost import human_bytes, with_ci

    def num(v: Any) -> str:
        return "–" if v is None else f"{v:.1f}"

    return [with_ci(r, "p50"), with_ci(r, "p95"), human_bytes(r.get("bytes_per_doc")), num(r.get("docs_per_s"))]


def _decision(rep: Any, task_name: str, names: list[str], results_dir: Path, margin: Optional[float],
              confidence: float, among: str = "") -> Optional[dict[str, Any]]:
    """Cost columns into the report's interval rows, and the cheapest-not-worse sentence (None: nothing measured)."""
    from ..analysis.cost.cost import attach, cheapest_not_worse, cost_rows
    from ..statistics.per_query import label_of
    from ..statistics.intervals import metric_label

    costs = cost_rows(results_dir, task_name, names, {n: label_of(results_dir, n) for n in names})  # 95% intervals
    if not attach(rep.interval_rows, costs):
        return None
    found = cheapest_not_worse(rep.interval_rows, rep.pair_rows, costs, metric_label(rep.metric), margin, confidence,
                               among)
    missing = [f"{r['candidate']}: {r['note']}" for r in costs if r["p50_ms"] is None]
    return {"task": task_name, "metric": rep.metric, **(found or {"sentence": ""}), "not_timed": missing}


def _print_decision(d: dict[str, Any]) -> None:
    if d.get("sentence"):
        console.print(Text.assemble(("cost:", "bold"), f" {d['sentence']}"), highlight=False)
    for line in d.get("not_timed") or []:
        console.print(Text(f"  {line}", style="dim"), highlight=False)


def _markdown(df: Any) -> str:
    """A frame as a Markdown table whose text cells (labels, tag values) are literal Markdown; a figure that does
    not exist (the t-test and d_z of two identical candidates) is "n/a", never "nan"."""
    import math

    from ..analysis.markdown_text import md_text

    def cell(v: Any) -> Any:
        if isinstance(v, str):
            return md_text(v)
        return "n/a" if isinstance(v, float) and math.isnan(v) else v

    return df.map(cell).to_markdown(index=False)


def _stats_csv(reports: list[Any], decisions: Optional[list[dict[str, Any]]] = None) -> str:
    """One table: a row per interval and per pair (`kind`), each with its task, metric and power line; with
    latency figures a `decision` row per (task, metric) holds the cheapest-not-worse sentence."""
    import pandas as pd  # lazy: only csv / markdown output need it

    frames = []
    for rep in reports:
        for kind, df in (("interval", rep.intervals), ("pair", rep.pairs)):
            if not df.empty:
                frames.append(df.assign(kind=kind, task=rep.task, metric=rep.metric, power=rep.power))
    for d in decisions or []:
        frames.append(pd.DataFrame([{"kind": "decision", "task": d["task"], "metric": d["metric"],
                                     "candidate": d.get("candidate"), "verdict": d.get("verdict"),
                                     "sentence": d["sentence"]}]))
    if not frames:
        return ""
    out = pd.concat(frames, ignore_index=True)
    first = ["kind", "task", "metric", "subset"]
    from ..results.spreadsheet import frame_csv  # CSV for people: formula-like cells neutralised

    return frame_csv(out[first + [c for c in out.columns if c not in first]])


@friendly_errors
def stats_cmd(
    config: Optional[Path] = config_option(),
    results: Optional[Path] = results_option(),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t", help="default: the config's tasks"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m", help="e.g. ndcg_at_10 (repeatable)"),
    by: Optional[list[str]] = typer.Option(None, "--by", help="break down by query tag, e.g. source"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's "
                                         "models and experiment candidates)"),
    resamples: Optional[int] = typer.Option(None, min=1, help="bootstrap / permutation resamples"),
    seed: Optional[int] = typer.Option(None),
    fmt: str = typer.Option("table", "--format", help="table|markdown|csv|json"),
    margin: Optional[float] = typer.Option(None, "--margin", min=0.0, help="non-inferiority bound for the "
                                           "cheapest-candidate sentence, e.g. 0.01 (default: the paired test)"),
) -> None:
    """95% bootstrap intervals, paired tests of every pair of the config's candidates (models and experiments,
    Holm), the best one and whether it beats the runner-up, power warning;
    with a latency pass stored (`private-mteb latency`): cost columns and the cheapest candidate not worse."""
    offline_default()
    if fmt not in FORMATS:
        raise typer.BadParameter(f"unknown format '{fmt}' ({'|'.join(FORMATS)})", param_hint="--format")
    from ..analysis.diagnose.analyzer_notes import analyzer_lines, stored_analyzers
    from ..statistics.per_query import read_once
    from ..statistics.stats_report import best_sentence, stats_report
    from ..labels.notes.generator_guard import source_verdict_lines
    from ..labels.judge.ppi_verdicts import ppi_report
    from ..labels.notes.label_notes import label_notes, stats_tags

    cfg = load_config(config, results)
    opts = cfg.stats
    from ..config.task_lookup import task_name_for  # lazy: commands import their API when they run
    entries = [(e, task_name_for(e, cfg)) for e in task or cfg.tasks]
    chosen = chosen_candidates(cfg, models, [name for _, name in entries])
    names = list(chosen.names)
    if chosen.note and fmt in ("table", "markdown"):
        console.print(chosen.note, highlight=False, markup=False)
    n_resamples = resamples or opts.resamples
    reports, decisions, bests = [], [], []
    analyzers: dict[str, dict[str, Any]] = {}
    with read_once():  # per-query files and collections: read once, whatever the number of metrics
        for entry, task_name in entries:
            for m in metric or opts.metrics:
                rep = stats_report(cfg.results_path, task_name, m, n_resamples=n_resamples,
                                   seed=opts.seed if seed is None else seed, confidence=opts.confidence,
                                   method=opts.method, tags=by if by is not None else stats_tags(entry, opts.tags),
                                   models=names,
                                   strict_tags=by is not None, task_source=entry)
                decision = _decision(rep, task_name, names, cfg.results_path, margin, opts.confidence, chosen.among)
                decisions += [decision] if decision else []
                best = best_sentence(rep, chosen.among)
                bests.append({"task": task_name, "metric": m, "sentence": best})
                by_source = source_verdict_lines(rep, chosen.among) if fmt in ("table", "markdown") else []
                if fmt == "table":
                    _stats_table(rep, opts.confidence, n_resamples)
                    console.print(Text.assemble(("best:", "bold"), f" {best}"), highlight=False)
                    for line in by_source:  # the verdict per source (log / human / generated), generator_guard.py
                        console.print(line, highlight=False, markup=False, soft_wrap=True)
                    if decision:
                        _print_decision(decision)
                elif fmt == "markdown":
                    console.print(_markdown(rep.intervals.assign(task=task_name, metric=m)))
                    if not rep.pairs.empty:
                        console.print(_markdown(rep.pairs.assign(task=task_name, metric=m)))
                    from ..analysis.markdown_text import md_text

                    console.print(f"power: {md_text(rep.power)}", highlight=False, markup=False, soft_wrap=True)
                    console.print(f"best: {md_text(best)}", highlight=False, markup=False, soft_wrap=True)
                    for line in by_source:
                        console.print(md_text(line), highlight=False, markup=False, soft_wrap=True)
                    if decision and decision.get("sentence"):
                        console.print(f"cost: {md_text(decision['sentence'])}", highlight=False, markup=False,
                                      soft_wrap=True)
                reports.append(rep)
            if reports and reports[-1].data_note and fmt != "json":  # data differ: said once per task
                (console if fmt != "csv" else err_console).print(reports[-1].data_note, style="yellow",
                                                                 highlight=False, markup=False)
            found = stored_analyzers(cfg.results_path, task_name, names)  # the analyzer BM25 used
            analyzers[task_name] = found
            if fmt in ("table", "markdown"):  # stored runs of the task as it was (analysis/diagnose/stale_runs.py)
                from ..analysis.diagnose.stale_runs import stale_lines

                for line in stale_lines(cfg, entry, task_name, names):
                    console.print(line, style="yellow", highlight=False, markup=False, soft_wrap=True)
            if fmt == "table":  # judged@10 and the generator guard (runners/labels/notes/label_notes.py)
                for line in label_notes(cfg, entry, names):
                    console.print(line, highlight=False, markup=False)
            if fmt in ("table", "markdown") and (ppi := ppi_report(cfg, entry, names)) is not None:
                for line in ppi.lines():  # labels.use_llm: prediction_powered (runners/labels/judge/ppi_verdicts.py)
                    console.print(line, highlight=False, markup=False, soft_wrap=True)
            if fmt in ("table", "markdown") and found:
                for line in analyzer_lines(found):
                    console.print(line, highlight=False, markup=False, soft_wrap=True)
    if fmt == "json":  # exactly one JSON document, NaN -> null (plain stdout: rich would wrap lines)
        doc: dict[str, Any] = {"candidates": {"names": names, "among": chosen.among, "narrowed": chosen.narrowed},
                               "tasks": [{**r.to_dict(), "best": b["sentence"]} for r, b in zip(reports, bests)]}
        if decisions:
            doc["decisions"] = decisions
        if any(analyzers.values()):  # task -> candidate label -> the analyzer BM25 used (null: not recorded)
            doc["bm25_analyzers"] = {t: a for t, a in analyzers.items() if a}
        from ..labels.notes.question_notes import questions_json  # by source, left out, awaiting, traffic-weighted

        doc.update({"questions": q} if (q := questions_json(cfg, entries, names)) else {})
        from ..labels.notes.unjudged_mark import config_marks  # the lines the table prints under judged@10

        marks = {name: m for entry, name in entries if (m := config_marks(cfg, entry, names))}
        doc.update({"unjudged": marks} if marks else {})
        ppi = {name: p.as_dict() for entry, name in entries if (p := ppi_report(cfg, entry, names)) is not None}
        doc.update({"prediction_powered": ppi} if ppi else {})
        typer.echo(json.dumps(doc, indent=1, allow_nan=False))
    elif fmt == "csv":
        from .common import print_data

        print_data(_stats_csv(reports, decisions))


def results_dir_of(config: Optional[Path], results: Optional[Path]) -> Path:
    """`--results`, else the `results_dir` of `-c CONFIG` (or of the project's config found by
    runners/config/discovery.py: where `run -c` put them), else ./results (check, compare)."""
    if results is not None:
        return results
    from ..config.discovery import optional_config

    found = optional_config(config)
    if found is not None:
        from ..config.benchmark import BenchmarkConfig

        return BenchmarkConfig.from_file(found).results_path
    return Path("results")


@friendly_errors
def check_cmd(
    baseline: str = typer.Option(..., "--baseline", help="results folder of the baseline run, a model name/label, "
                                 "or history:last / history:accepted (the run history of -c CONFIG)"),
    candidate: Optional[str] = typer.Option(None, "--candidate", help="results folder of the new run, or a model "
                                            "name/label (default: the results folder)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark config: its candidates, results "
                                          "from its results_dir (default: the project's config, else ./results)"),
    results: Optional[Path] = typer.Option(None, "--results", help="where model names are looked up (default: the "
                                           "config's results_dir, else ./results)"),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t"),
    metric: str = typer.Option("ndcg_at_10", "--metric"),
    max_drop: float = typer.Option(0.01, "--max-drop", help="largest tolerated drop of the mean (>= 0)"),
    alpha: float = typer.Option(0.05, "--alpha", help="significance level, 0 < alpha < 1"),
    resamples: int = typer.Option(10_000, "--resamples"),
    seed: int = typer.Option(0, "--seed"),
    allow_missing: bool = typer.Option(False, "--allow-missing",
                                       help="skip (and list) baseline models/tasks the candidate lacks"),
    allow_changed_data: bool = typer.Option(False, "--allow-changed-data",
                                            help="when the data differ, decide on the unchanged queries only"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
    sequential: bool = typer.Option(False, "--sequential", help="the drop's bound from a confidence sequence, "
                                    "valid however often this comparison is checked (default: the config's "
                                    "stats: gate:, else the fixed-sample test, valid for one look)"),
) -> None:
    """Regression gate for CI: exit 1 only if the drop is larger than allowed AND significant (one-sided);
    a changed corpus (documents added or removed, the same questions and labels) is compared and said;
    exit 2 if it cannot check everything the baseline has, the questions or labels differ (see
    --allow-changed-data), or an option is wrong."""
    from ..analysis.gate.gate import regression_gate

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    only, mode, history, qrels, scales, complete = None, "anytime" if sequential else None, None, None, None, None
    scope = config
    if scope is None and results is None and (candidate is None or not Path(candidate).is_dir()):
        from ..config.discovery import optional_config  # the candidate is the project config's results folder

        scope = optional_config(None)
    if scope is not None:  # the config's candidates (models and experiments), as every command compares
        from ..statistics.candidate_set import config_names
        from ..config.benchmark import BenchmarkConfig

        scoped = BenchmarkConfig.from_file(scope)
        only, history = config_names(scoped), scoped.history_path
        mode = mode or scoped.stats.gate
        from ..labels.notes.unjudged_mark import config_labels

        qrels, scales, complete = config_labels(scoped)  # judged@10 and the unjudged mark on the labels `stats` reads
    mode = mode or "fixed"
    results = results_dir_of(config, results)
    from ..results.look_store import LookStore  # each decision is a look, counted (analysis/gate/gate_looks.py)

    folder = Path(candidate) if candidate is not None and Path(candidate).is_dir() else Path(results)
    looks = LookStore(history if history is not None else folder / "private-mteb")  # the candidate's folder
    if baseline.startswith("history:"):  # the run history's latest / accepted record (private-mteb history)
        from .history_command import history_check

        run = history_check(baseline, config, results, candidate, task, metric=metric, max_drop=max_drop,
                            alpha=alpha, n_resamples=resamples, seed=seed, allow_missing=allow_missing, mode=mode)
    else:
        run = regression_gate(baseline, str(results) if candidate is None else candidate, results_dir=results,
                              tasks=task, metric=metric, max_drop=max_drop, alpha=alpha, n_resamples=resamples,
                              seed=seed, allow_missing=allow_missing, allow_changed_data=allow_changed_data,
                              only=only, mode=mode, looks=looks, qrels=qrels, scales=scales, complete=complete)
    from ..analysis.gate.best import check_best

    best, by_source = check_best(config, results, candidate, [t for t, *_ in run], metric)
    ppi = _check_ppi(scoped if scope is not None else None, run)
    if fmt == "json":
        from dataclasses import asdict

        from .common import print_json

        print_json({"best": [{"task": t, "sentence": s} for t, s in best.items()],
                    "outcomes": [{"task": t, "baseline": b, "candidate": c, **asdict(r)} for t, b, c, r in run],
                    "skipped": list(run.skipped), "passed": run.passed, "judged": list(run.judged),
                    "data": [{"task": t, **p.to_dict(), "corpus": ch.to_dict() if ch else None}
                             for (t, *_), p, ch in zip(run, run.pairings, run.corpora or [None] * len(run))],
                    **({"prediction_powered": [p.as_dict() for p, _ in ppi]} if ppi else {})})
        if not run.passed:
            raise typer.Exit(EXIT_REGRESSION)
        return
    for line in run.judged:  # judged@10 of both sides and the underestimation warning (labels)
        console.print(line, highlight=False, markup=False)
    for p, shown in ppi:  # the prediction-powered lines `stats` prints for baseline and candidate
        for line in p.lines(shown):
            console.print(f"{p.task}: {line}", highlight=False, markup=False, soft_wrap=True)
    for line in _stale_candidate(config, results, candidate, [t for t, *_ in run]):
        console.print(line, style="yellow", highlight=False, markup=False, soft_wrap=True)
    for line in run.data_notes:  # the data differ: on how many queries it decided (--allow-changed-data)
        console.print(line, style="yellow", highlight=False, markup=False)
    for what in run.skipped:
        console.print(f"skipped (not in the candidate, --allow-missing): {what}", style="yellow")
    for task_name, base, cand, res in run:
        colour = "green" if res.passed else "red"
        console.print(f"{task_name}: {base} -> {cand}: {res.reason}", style=colour)
    for task_name, sentence in best.items():  # the verdict `stats` prints, on the candidate side
        console.print(f"{task_name}: {sentence}", highlight=False, markup=False, soft_wrap=True)
    for line in by_source:  # the verdict on each source of questions (generator_guard.source_verdict_lines)
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if not run.passed:
        raise typer.Exit(EXIT_REGRESSION)


def _check_ppi(bench: Any, run: Any) -> list[tuple[Any, set[str]]]:
    """(the task's prediction-powered figures over the config's candidates, the baseline and candidate labels of
    the gate's pairs): the lines `stats` prints, filtered (runners/labels/judge/ppi_verdicts.py). [] unless the
    config admits LLM grades for inference (`labels: {use_llm: prediction_powered}`). 95% intervals whatever
    --alpha says (that is the gate's level): one verdict, the one `stats` prints."""
    if bench is None or not bench.labels.prediction_powered:
        return []
    from ..config.task_lookup import task_name_for
    from ..labels.judge.ppi_verdicts import ppi_report
    from ..statistics.candidate_set import config_names

    out = []
    for entry in bench.tasks:
        shown = {lab for t, b, c, _ in run if t == task_name_for(entry, bench) for lab in (b, c)}
        if shown and (p := ppi_report(bench, entry, config_names(bench))) is not None:
            out.append((p, shown))
    return out


def _stale_candidate(config: Optional[Path], results: Path, candidate: Optional[str], tasks: list[str]) -> list[str]:
    """The candidate side's stored runs made with other task settings or data than the project's task has now
    (analysis/diagnose/stale_runs.py); nothing without a project config or when the candidate is another folder."""
    from ..config.discovery import optional_config

    found = optional_config(config)
    if found is None or (candidate is not None and Path(candidate).resolve() != Path(results).resolve()):
        return []
    from ..statistics.candidate_set import config_names
    from ..analysis.diagnose.stale_runs import stale_lines
    from ..config.benchmark import BenchmarkConfig
    from ..config.task_lookup import task_name_for

    bench = BenchmarkConfig.from_file(found)
    if bench.results_path.resolve() != Path(results).resolve():
        return []
    names = config_names(bench)
    return [line for entry in bench.tasks if task_name_for(entry, bench) in tasks
            for line in stale_lines(bench, entry, task_name_for(entry, bench), names)]
