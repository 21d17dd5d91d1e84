"""`private-mteb tasks lint NAME`: what in a collection bends every score, before anything is scored.

Thin over runners/labels/lint/lint_tasks.py (the data checks, and with `-c` each candidate's truncation and the
pooling gaps of stored rankings). Exit 0 with findings; `--strict` exits 1 when there is any. Reads only: nothing is
written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from .common import EXIT_REGRESSION, console, offline_default


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
    from ..labels.lint.lint_tasks import bench_entry, lint_reports
    from .common import print_json

    bench = None
    if config is not None:
        from ..config.benchmark import BenchmarkConfig

        bench = BenchmarkConfig.from_file(config)
    if target is None and bench is None:
        raise typer.BadParameter("name a task (or a task YAML), or pass -c BENCHMARK.yaml to lint its tasks")
    settings = LintSettings(doc_threshold=doc_threshold, query_threshold=query_threshold, leak_ngram=leak_ngram)
    targets = [bench_entry(target, bench)] if target else list(bench.tasks)
    reports = lint_reports(targets, bench, settings, split, on_skip=lambda t: console.print(
        Text(f"{t}: not a private task (an mteb task?): not linted", style="dim")))
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
