"""`private-mteb inspect worst|diff|query`: find and look at the queries a model gets wrong.

Stored results only, plus the collection read live for text; text goes to the screen, never to a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import config_option, console, friendly_errors, load_config, offline_default, print_data, print_json
from .common import results_option
from .terminal import styled

app = typer.Typer(no_args_is_help=True, help="Worst queries, per-query differences, and one query's rankings.")

CONFIG = config_option()
RESULTS = results_option()
TASK = typer.Option(None, "--task", "-t", help="task name or YAML (default: the config's only task)")
METRIC = typer.Option("ndcg_at_10", "--metric", "-m", help="per-query metric, e.g. ndcg_at_10, mrr_at_10")
SPLIT = typer.Option("test", "--split")
FORMATS = ("table", "json", "csv")
FORMAT = typer.Option("table", "--format", help="table|json|csv")


def _check_format(fmt: str, allowed: tuple[str, ...] = FORMATS) -> None:
    if fmt not in allowed:
        from custom_tasks.errors import ConfigError

        raise ConfigError("--format", f"unknown format '{fmt}' (use one of: {', '.join(allowed)})")


def _context(config: Optional[Path], task: Optional[str], need_collection: bool = False,
             results: Optional[Path] = None) -> tuple[Any, Path, str, Any]:
    """(benchmark config, results folder, task name, collection or None for a public task)."""
    from custom_tasks.errors import ConfigError
    from custom_tasks.sources import load_collection

    from ..config.task_lookup import pick_task, task_config_for

    bench = load_config(config, results)
    entry = pick_task(bench, task)
    try:
        tcfg = task_config_for(entry, bench)
    except ConfigError:
        if need_collection or Path(entry).suffix in {".yaml", ".yml"}:
            raise
        return bench, bench.results_path, entry, None  # a public mteb task: ids and scores only
    return bench, bench.results_path, tcfg.name, load_collection(tcfg.source, tcfg.base_dir, tcfg.name)


def _start(fmt: str, config: Optional[Path], task: Optional[str], results: Optional[Path],
           allowed: tuple[str, ...] = FORMATS, need_collection: bool = False) -> tuple[Any, Path, str, Any]:
    """What every inspect command does first: offline unless told, its --format checked before anything is read,
    then its context (see _context)."""
    offline_default()
    _check_format(fmt, allowed)
    return _context(config, task, need_collection=need_collection, results=results)


def _csv(columns: list[str], rows: list[list[Any]]) -> None:
    """CSV for people (formula-like cells neutralised: runners/results/spreadsheet.py) on stdout."""
    from ..results.spreadsheet import csv_text

    print_data(csv_text(columns, rows))


def _tags(tags: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in tags.items())


@app.command("worst")
@friendly_errors
def worst_cmd(
    model: str = typer.Option(..., "--model", help="results name or label, e.g. BM25"),
    config: Optional[Path] = CONFIG, results: Optional[Path] = RESULTS, task: Optional[str] = TASK,
    metric: str = METRIC, split: str = SPLIT,
    n: int = typer.Option(10, "-n", help="how many queries"),
    fmt: str = FORMAT,
) -> None:
    """The worst queries of one model on a metric (lowest first)."""
    from ..statistics.candidate_set import config_names
    from ..analysis.diagnose.inspect import model_judged, resolve_model, worst_queries
    from ..statistics.per_query import label_of
    from ..statistics.intervals import metric_label

    bench, results, task_name, collection = _start(fmt, config, task, results)
    name = resolve_model(results, task_name, model, config_names(bench))
    rows = worst_queries(results, task_name, name, metric, n, split, collection)
    judged = model_judged(results, task_name, name, collection, split)
    if fmt == "json":
        print_json({"task": task_name, "model": name, "label": label_of(results, name), "metric": metric,
                    "split": split, "judged_at_10": judged, "queries": [r.__dict__ for r in rows]})
        return
    if fmt == "csv":
        _csv(["query_id", metric, "text", "tags"], [[r.query_id, r.score, r.text, _tags(r.tags)] for r in rows])
        return
    t = Table("#", "query", metric_label(metric), "tags", "text",
              title=f"{task_name} — {len(rows)} worst queries of {label_of(results, name)} on {metric_label(metric)}")
    for i, r in enumerate(rows, 1):
        t.add_row(str(i), r.query_id, f"{r.score:.4f}", _tags(r.tags), r.text or "")
    console.print(t)
    if judged is not None:
        console.print(Text(f"judged@10 of {label_of(results, name)} on {task_name}: {judged:.2f} (share of its top-10 "
                           "that carries any label; unlabelled documents count as irrelevant)"))


@app.command("diff")
@friendly_errors
def diff_cmd(
    a: str = typer.Argument(..., help="candidate A (results name or label)"),
    b: str = typer.Argument(..., help="candidate B: wins/losses are B's against A"),
    config: Optional[Path] = CONFIG, results: Optional[Path] = RESULTS, task: Optional[str] = TASK,
    metric: str = METRIC, split: str = SPLIT,
    n: int = typer.Option(20, "-n", help="how many queries to list (0: all)"),
    fmt: str = FORMAT,
) -> None:
    """Per-query differences B - A: wins, losses, ties, largest swings first."""
    from ..statistics.candidate_set import config_names
    from ..analysis.diagnose.inspect import diff_queries, resolve_model
    from ..statistics.intervals import metric_label

    bench, results, task_name, collection = _start(fmt, config, task, results)
    ours = config_names(bench)
    rep = diff_queries(results, task_name, resolve_model(results, task_name, a, ours),
                       resolve_model(results, task_name, b, ours), metric, split, collection)
    shown = rep.rows if n <= 0 else rep.rows[:n]
    if fmt == "json":
        print_json({**rep.to_dict(), "split": split, "rows": [r.__dict__ for r in shown]})
        return
    if fmt == "csv":
        _csv(["query_id", rep.a_label, rep.b_label, "delta", "text"],
             [[r.query_id, r.a, r.b, r.delta, r.text] for r in shown])
        return
    label = metric_label(metric)
    console.print(Text(f"{task_name} — {rep.b_label} vs {rep.a_label} on {label} ({rep.wins + rep.losses + rep.ties} "
                       f"queries): {rep.b_label} wins {rep.wins}, loses {rep.losses}, ties {rep.ties}; "
                       f"mean {rep.mean_b:.4f} vs {rep.mean_a:.4f}"))
    if rep.data_note:
        console.print(Text(rep.data_note, style="yellow"))
    elif rep.only_in_one:
        console.print(Text(f"{rep.only_in_one} queries scored for one candidate only are left out", style="yellow"))
    t = Table("query", rep.a_label, rep.b_label, "B - A", "text", title=f"largest swings (first {len(shown)})")
    for r in shown:
        style = "green" if r.delta > 0 else "red" if r.delta < 0 else "dim"
        t.add_row(r.query_id, f"{r.a:.4f}", f"{r.b:.4f}", Text(f"{r.delta:+.4f}", style=style), r.text or "")
    console.print(t)


@app.command("query")
@friendly_errors
def query_cmd(
    query_id: str = typer.Argument(..., help="query id, as in the collection"),
    config: Optional[Path] = CONFIG, results: Optional[Path] = RESULTS, task: Optional[str] = TASK,
    metric: str = METRIC, split: str = SPLIT,
    models: Optional[str] = typer.Option(None, "--models", help="comma-separated names or labels (default: "
                                         "the config's candidates)"),
    k: int = typer.Option(10, "-k", help="top-k to show per candidate"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """One query: its text, labelled documents, and each candidate's top-k with grades (text shown, never stored)."""
    from ..statistics.candidate_set import config_names
    from ..analysis.diagnose.inspect import query_view, resolve_model
    from ..statistics.per_query import result_models

    bench, results, task_name, collection = _start(fmt, config, task, results, ("table", "json"), need_collection=True)
    ours = config_names(bench)
    if models:
        names = [resolve_model(results, task_name, m.strip(), ours) for m in models.split(",") if m.strip()]
    else:  # the config's candidates with results for the task, as every command compares
        names = [n for n in ours if n in result_models(results, task_name)]
        if not names:
            from ..statistics.analysis_errors import AnalysisError

            raise AnalysisError(f"no results for the candidates of {bench.path} on task '{task_name}' in {results}: "
                                f"run `private-mteb run -c {bench.path}`")
    view = query_view(results, task_name, query_id, collection, names, k, metric, split)
    if fmt == "json":
        print_json({**view.to_dict(), "split": split, "k": k})
        return
    _print_view(view, k)


def _grade_cell(grade: Optional[int]) -> Text:
    if grade is None:
        return Text("unlabelled", style="dim")
    return Text(str(grade), style="bold green" if grade > 0 else "yellow")


def _print_view(view: Any, k: int) -> None:
    from ..statistics.intervals import metric_label

    tags = f" ({_tags(view.tags)})" if view.tags else ""
    console.print(styled(("query ", "bold"), (view.query_id, "bold cyan"), tags, ": ", view.text))
    t = Table("doc", "grade", "title", "snippet", title="labelled documents")
    for h in view.labels:
        t.add_row(h.doc_id, _grade_cell(h.grade), h.title, h.snippet)
    console.print(t)
    label = metric_label(view.metric)
    for c in view.candidates:
        score = "n/a" if c.metric_score is None else f"{c.metric_score:.4f}"
        t = Table("rank", "doc", "score", "grade", "title", "snippet",
                  title=f"{c.label} — top-{k} ({label} {score})")
        for h in c.hits:
            t.add_row(str(h.rank), h.doc_id, f"{h.score:.4f}", _grade_cell(h.grade), h.title, h.snippet)
        console.print(t)
        if c.judged_at_10 is not None:
            console.print(Text(f"  judged@10 of {c.label} on the task: {c.judged_at_10:.2f}"))
        missed = [f"{h.doc_id} (grade {h.grade})" for h in view.labels if h.grade and h.doc_id not in c.found]
        if missed:
            console.print(Text(f"  not in {c.label}'s top-{k}: {', '.join(missed)}", style="yellow"))
    for name in view.stale:
        console.print(Text(f"note: {name} was run on another version of the collection; grades and text are "
                           "today's", style="yellow"))
