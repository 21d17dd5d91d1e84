"""`private-mteb tasks lint NAME`: what in a collection bends every score, before anything is scored.

Thin over runners/labels/lint/lint.py (the data checks), runners/labels/lint/truncation.py (each candidate's tokenizer,
with `-c`) and runners/labels/lint/lint_pool.py (stored rankings, with `-c`). Exit 0 with findings; `--strict` exits 1
when there is any. Reads only: nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from .common import EXIT_REGRESSION, console, offline_default


def lint_reports(targets: list[str], bench: Any, settings: Any, split: str) -> list[Any]:
    """A LintReport per task entry: the data checks, and with a benchmark its truncation and pooling checks."""
    from custom_tasks.config import resolve_task_config
    from ..labels.lint import lint_language
    from ..labels.lint.lint import lint_collection

    from ..analysis.per_query import task_config_collection

    from custom_tasks.errors import ConfigError

    reports = []
    for t in targets:
        if bench is not None:
            from ..config.task_lookup import task_config_for

            try:
                cfg = task_config_for(t, bench)
            except ConfigError:
                if len(targets) == 1 or Path(t).suffix in (".yaml", ".yml"):
                    raise
                console.print(Text(f"{t}: not a private task (an mteb task?): not linted", style="dim"))
                continue
        else:
            cfg = resolve_task_config(t)
        collection = task_config_collection(cfg)
        report = lint_language.attach(lint_collection(collection, settings), collection, cfg.languages)
        if bench is not None:
            from ..labels.lint import lint_pool
            from ..config.experiments import plan_experiments
            from ..labels.lint import truncation

            truncation.attach(report, collection, bench)
            models = [m.results_name for m in bench.models] + [p.name for p in plan_experiments(bench)]
            lint_pool.attach(report, bench.results_path, collection, models, settings, split)
        else:
            report.skipped["truncation"] = "needs the candidates: pass -c BENCHMARK.yaml"
            report.skipped["pooling_suggested"] = "needs stored rankings: pass -c BENCHMARK.yaml after `run`"
        reports.append(report)
    return reports


def _bench_entry(target: str, bench: Any) -> str:
    """The benchmark's task entry (e.g. a YAML path) whose task is named ``target``, else ``target`` itself."""
    if bench is None:
        return target
    from ..config.task_lookup import task_name_for

    for entry in bench.tasks:
        try:
            if task_name_for(entry, bench) == target:
                return entry
        except Exception:  # noqa: BLE001 - an entry that does not resolve is reported when it is linted
            continue
    return target


def print_report(report: Any) -> None:
    """One block per finding: the count line, the worst examples, what to do; then what was skipped."""
    n = len(report.findings)
    console.print(Text.assemble((report.task, "bold"), f" (revision {report.revision}, {report.documents} documents, "
                                f"{report.queries} queries): {n or 'no'} finding{'' if n == 1 else 's'}"))
    for f in report.findings:
        console.print(Text.assemble("  ", (f.check, "yellow"), f": {f.summary}"), soft_wrap=True)
        console.print(Text("    worst: " + "; ".join(f.examples)), soft_wrap=True)
        console.print(Text("    do: " + f.action), soft_wrap=True)
    for check, why in report.skipped.items():
        console.print(Text(f"  skipped {check}: {why}", style="dim"), soft_wrap=True)


def tasks_lint(
    target: Optional[str] = typer.Argument(None, help="task name or YAML path; default: the tasks of -c"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark config: adds truncation per "
                                          "candidate and the pooling suggestion (from stored rankings)"),
    fmt: str = typer.Option("text", "--format", help="text|json"),
    strict: bool = typer.Option(False, "--strict", help="exit 1 when there is any finding"),
    doc_threshold: float = typer.Option(0.8, "--doc-threshold", min=0.05, max=1.0,
                                        help="near-duplicate documents: 3-word shingle Jaccard at least this"),
    query_threshold: float = typer.Option(0.8, "--query-threshold", min=0.05, max=1.0,
                                          help="near-duplicate questions: 4-character shingle Jaccard at least this"),
    leak_ngram: int = typer.Option(8, "--leak-ngram", min=2, help="leakage: this many question words copied "
                                   "verbatim from a relevant document"),
    split: str = typer.Option("test", "--split", help="split of the pooling suggestion"),
) -> None:
    """Duplicates, truncation, leaked and near-duplicate questions, pooling gaps, unreachable documents."""
    offline_default()
    if fmt not in ("text", "table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (text|json)", param_hint="--format")
    from ..labels.lint.lint import LintSettings

    from .common import print_json

    bench = None
    if config is not None:
        from ..config.benchmark import BenchmarkConfig

        bench = BenchmarkConfig.from_file(config)
    if target is None and bench is None:
        raise typer.BadParameter("name a task (or a task YAML), or pass -c BENCHMARK.yaml to lint its tasks")
    settings = LintSettings(doc_threshold=doc_threshold, query_threshold=query_threshold, leak_ngram=leak_ngram)
    targets = [_bench_entry(target, bench)] if target else list(bench.tasks)
    reports = lint_reports(targets, bench, settings, split)
    for r in reports:
        for f in r.findings:
            f.action = f.action.replace("-c CONFIG", f"-c {config}")
    if fmt == "json":
        print_json({"tasks": [r.as_dict() for r in reports],
                    "findings": sum(len(r.findings) for r in reports)})
    else:
        for r in reports:
            print_report(r)
    if strict and any(r.findings for r in reports):
        raise typer.Exit(EXIT_REGRESSION)
