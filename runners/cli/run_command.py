"""`private-mteb run`: every candidate on every task, with progress (a thin layer over execution.run)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import config_option, console, friendly_errors, load_config, offline_default


def _latency(cfg, cands: list, tasks: list, records: list, loaded: dict) -> list:
    """`run --latency`: the latency pass over the candidates that did not fail (runners/cli/latency_command.py), serving
    the models the run loaded (`loaded`) instead of loading them again."""
    from ..execution.encoding.progress import quiet_foreign_bars
    from .latency_command import LATENCY_DEFAULTS, latency_options, measure_rows

    failed = {r.candidate for r in records if r.status == "failed"}
    opts = latency_options(**LATENCY_DEFAULTS)
    opts.loaded = loaded
    with quiet_foreign_bars():
        return measure_rows(cfg, [c for c in cands if c.name not in failed], tasks, opts)


def _keep_public_comparison(cfg) -> None:
    """Compute the report's public comparison while mteb is loaded, so `report` after `run` starts fast.
    Only a cache: any failure here is the report's to show, never the run's."""
    try:
        from ..analysis.report import keep_public_comparison

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            keep_public_comparison(cfg)
    except Exception:  # noqa: BLE001 — a cache warm-up; `report` computes (and reports) it again
        pass


def _records_json(records: list, latency: list | None = None) -> str:
    """The run's records as one JSON document (NaN -> null)."""
    import json
    import math
    from dataclasses import asdict

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        return x

    failed = [r for r in records if r.status == "failed"]
    doc = {"records": [clean(asdict(r)) for r in records], "failed": len(failed), "passed": not failed}
    if latency is not None:
        doc["latency"] = [clean(r) for r in latency]
    return json.dumps(doc, indent=1, allow_nan=False)


#: `run` lints a collection up to this size (its data checks take seconds per 10^4 documents); a larger one is
#: left to `tasks lint`, which says so
LINT_MAX_DOCS = 100_000


def _lint_lines(tasks: list) -> None:
    """One line of lint findings per private task (runners/labels/lint/lint.py), before anything is scored."""
    from ..labels.lint import lint_language
    from ..labels.lint.lint import lint_collection

    for task in tasks:
        collection = getattr(task, "collection", None)
        if collection is None:
            continue  # a public mteb task
        if len(collection.corpus) > LINT_MAX_DOCS:
            console.print(Text(f"lint {collection.name}: not run for {len(collection.corpus)} documents here "
                               f"(`private-mteb tasks lint {collection.name}`)"), soft_wrap=True)
            continue
        languages = getattr(getattr(task, "task_config", None), "languages", None)
        line = lint_language.attach(lint_collection(collection), collection, languages).one_line()
        console.print(Text(line, style="yellow" if "no findings" not in line else ""), soft_wrap=True)


def _question_lines(tasks: list) -> None:
    """Per private task: its scored questions by source, the added ones left out, the ones awaiting judgment
    (runners/labels/notes/question_notes.py): what the figures below rest on, before anything is scored."""
    from ..labels.notes.question_notes import count_lines

    for task in tasks:
        collection = getattr(task, "collection", None)
        if collection is not None:
            splits = list(getattr(task.metadata, "eval_splits", []) or []) or None
            for line in count_lines(collection, splits):
                console.print(Text(line, style="yellow" if "await" in line else ""), soft_wrap=True)


def _bm25_lines(tasks: list, cands: list, warnings_to: Any = None) -> None:
    """One line per task naming the analyzer BM25 uses on it (custom_tasks/bm25_analyzer.py), when a candidate
    has BM25 in it: the stemmer and stop words come from the task's languages unless its `bm25:` block says.
    ``warnings_to``: a console for the word-token warnings alone (`--format json`: stderr), no analyzer lines."""
    from ..execution.candidates.bm25 import task_analyzer, uses_bm25

    if not any(uses_bm25(c.identity) for c in cands):
        return
    from custom_tasks.macro_languages import word_tokens_warning

    for task in tasks:
        languages, analyzer = task_analyzer_languages(task), task_analyzer(task)
        if warnings_to is None:
            console.print(Text(f"BM25 analyzer for {task.metadata.name} ({', '.join(languages)}): "
                               f"{analyzer.describe()}"), soft_wrap=True)
        cfg = getattr(task, "task_config", None)
        warning = word_tokens_warning(languages, analyzer.tokenizer, getattr(cfg, "path", None) or "the task's YAML")
        if warning:
            (warnings_to or console).print(Text.assemble(("warning:", "bold yellow"), f" {task.metadata.name}: "
                                                         f"{warning}"), soft_wrap=True)


def _language_lines(cfg: Any, tasks: list, cands: list, to: Any = None) -> None:
    """One warning per candidate model that does not know a task's language (config/model_languages.py); `to`:
    the console they go to (stderr with --format json)."""
    from ..config.model_languages import config_language_lines

    infos = {c.name: c.info for c in cands}
    for line in config_language_lines(cfg.models, infos, {t.metadata.name: task_analyzer_languages(t) for t in tasks}):
        (to or console).print(Text(f"warning: {line}", style="yellow"), soft_wrap=True)


def task_analyzer_languages(task: Any) -> list[str]:
    """The languages a task declares (a multilingual public task: every subset's)."""
    langs = task.metadata.eval_langs
    return sorted({lang for ls in langs.values() for lang in ls}) if isinstance(langs, dict) else list(langs)


@friendly_errors
def run(
    config: Optional[Path] = config_option(),
    force: bool = typer.Option(False, "--force", help="re-run even what is complete"),
    fmt: str = typer.Option("table", "--format", help="table|json (json: one document on stdout, progress off)"),
    mlflow: Optional[str] = typer.Option(None, "--mlflow", help="log each (candidate, task) to this MLflow tracking "
                                         "URI (overrides the config's `mlflow: {tracking_uri}`)"),
    latency: bool = typer.Option(False, "--latency", help="then time each candidate's search one query at a time "
                                 "(as `private-mteb latency` with its defaults)"),
) -> None:
    """Evaluate every model on every task (skips what is complete for the same data).

    A model that fails to load or crashes is reported and skipped; the others still run; exit 2 at the end."""
    offline_default()
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    cfg = load_config(config)  # every config problem (experiments too) before mteb is imported
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ..execution.encoding.progress import quiet_foreign_bars
    from ..execution.run import candidates_for, run_benchmark
    from ..execution.tasks import check_tasks, load_task
    from .common import EXIT_BAD_INPUT, err_console
    from .encode_progress import ConsoleEncodeProgress, Eta, TextsPerSecond
    from .terminal import visible

    as_json = fmt == "json"
    cfg.check_model_paths()  # before anything loads: not a failed candidate minutes into the run
    if cfg.encode.engine == "ray":  # Ray missing or its head unreachable: that line alone, before anything prints
        from ..execution.distributed.ray_connect import preflight

        preflight(cfg.encode.address, cfg.encode.connect_timeout, cfg.path)
    check_tasks(cfg)
    tasks = [load_task(t, cfg) for t in cfg.tasks]
    cands = candidates_for(cfg)
    out = err_console if as_json else console  # json: stdout holds the document only
    if not as_json:
        console.print(Text.assemble((cfg.name, "bold"), f": {len(cands)} candidate(s) x {len(tasks)} task(s) -> "
                                    f"{cfg.results_path}"))
    if not as_json:
        _lint_lines(tasks)
        _question_lines(tasks)
        _bm25_lines(tasks, cands)
        _language_lines(cfg, tasks, cands)
    else:  # stdout holds the JSON document: a word-token warning still says itself, on stderr
        _bm25_lines(tasks, cands, warnings_to=err_console)
        _language_lines(cfg, tasks, cands, to=err_console)
    live = out.is_terminal and not as_json  # a bar redrawn in place; else plain lines only
    loaded: dict = {}  # --latency: the models the run loads, served by the pass after it
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TextsPerSecond(), TimeElapsedColumn(), Eta(), console=out, transient=False,
                  disable=as_json) as progress:
        bar = progress.add_task("benchmark", total=len(cands) * len(tasks))
        encode_progress = ConsoleEncodeProgress(progress, progress.console, live=live)

        def on_step(event: str, label: str, task: str, record=None) -> None:
            if event == "start":
                encode_progress.summary()  # a fresh count for this (candidate, task)
                progress.update(bar, description=visible(f"{label} on {task}"))
                return
            progress.advance(bar)
            if event == "fail":
                err_console.print(Text.assemble(("failed:", "bold red"), f" {label} on {task}: "
                                                f"{record.reason if record else ''}"), soft_wrap=True)
            elif not as_json:
                if event == "skip":
                    progress.console.print(f"  cached: {label} on {task}")
                else:
                    counts = f" (encoded {record.encoded}, reused {record.reused})" if record else ""
                    counts += f"; {record.note}" if record and record.note else ""
                    speed = encode_progress.summary()
                    speed = f"; encoding: {speed}" if speed else ""
                    progress.console.print(f"  done: {label} on {task}{counts}{speed}")

        with quiet_foreign_bars():  # model loading, Ray pre-encoding, mteb: only our bars
            records = run_benchmark(cfg, force=force, on_step=on_step, candidates=cands, tasks=tasks,
                                    show_progress=False, progress=encode_progress,
                                    keep_loaded=loaded if latency else None)
        progress.update(bar, description="benchmark")
    failed = [r for r in records if r.status == "failed"]
    latency_rows = _latency(cfg, cands, tasks, records, loaded) if latency else None
    if as_json:
        sys.stdout.write(_records_json(records, latency_rows) + "\n")
        sys.stdout.flush()
    else:
        table = results_table(records, cfg.results_path)
        if table.row_count:  # every run failed: the 'failed:' lines and the error say it, not an empty table
            console.print(table)
        if latency_rows:
            from .latency_command import print_rows

            print_rows(latency_rows)
    from .history_command import after_run

    after_run(cfg, records, cands, tasks, mlflow, quiet=as_json)  # the run history and MLflow, when configured
    _keep_public_comparison(cfg)
    if failed:
        models = sorted({r.label for r in failed})
        err_console.print(Text.assemble(("error:", "bold red"), f" {len(failed)} of {len(records)} run(s) failed "
                                        f"({', '.join(models)}): see the 'failed:' lines above"), soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT)


def summary_cells(record: Any, results_dir: Path) -> list[str]:
    """The run table's metric cells, from the same value `stats` prints: the mean of the stored per-query
    scores, formatted by stats.format_score (mteb's JSON value, rounded to 5 decimals, only when no per-query
    scores are stored)."""
    from ..statistics.analysis_errors import AnalysisError
    from ..statistics.per_query import load_score_map
    from ..statistics.intervals import format_score, mean_score
    from ..execution.run import SUMMARY_METRICS

    cells = []
    for m in SUMMARY_METRICS:
        value = record.scores.get(m, float("nan"))
        try:
            value = mean_score(load_score_map(results_dir, record.candidate, record.task, m))
        except (AnalysisError, ValueError):  # no per-query file, metric or finite score stored: mteb's value
            pass
        cells.append(format_score(value))
    return cells


def results_table(records: list[Any], results_dir: Path) -> Table:
    """The table `run` prints: one row per candidate x task that ran or was reused."""
    from ..statistics.intervals import metric_label
    from ..execution.run import SUMMARY_METRICS
    from ..results.variants import shown_label  # the label every command prints

    table = Table("model", "task", *[metric_label(m) for m in SUMMARY_METRICS], "time", title="results (test split)")
    for r in records:
        if r.status == "failed":
            continue
        when = "cached" if r.status == "skipped" else f"{r.seconds:.1f}s"
        table.add_row(shown_label(r.label, r.candidate), r.task, *summary_cells(r, results_dir), when)
    return table
