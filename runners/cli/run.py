"""`private-mteb run`: every candidate on every task, with progress (a thin layer over execution.run)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table

from .common import console, friendly_errors, offline_default


@friendly_errors
def run(
    config: Path = typer.Option(Path("configs/benchmarks/demo.yaml"), "--config", "-c", help="benchmark YAML"),
    force: bool = typer.Option(False, "--force", help="re-run even what is complete"),
) -> None:
    """Evaluate every model on every task (skips what is complete for the same data)."""
    offline_default()
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from ..config.benchmark import BenchmarkConfig
    from ..execution.run import candidates_for, run_benchmark
    from ..execution.tasks import check_tasks, load_task

    cfg = BenchmarkConfig.from_file(config)
    check_tasks(cfg)
    tasks = [load_task(t) for t in cfg.tasks]
    cands = candidates_for(cfg)
    console.print(f"[bold]{cfg.name}[/]: {len(cands)} candidate(s) x {len(tasks)} task(s) -> {cfg.results_path}")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False) as progress:
        bar = progress.add_task("benchmark", total=len(cands) * len(tasks))

        def on_step(event: str, label: str, task: str) -> None:
            if event == "start":
                progress.update(bar, description=f"{label} on {task}")
            else:
                progress.advance(bar)
                verb = "cached" if event == "skip" else "done"
                progress.console.print(f"  {verb}: {label} on {task}")

        records = run_benchmark(cfg, force=force, on_step=on_step, candidates=cands, tasks=tasks,
                                show_progress=sys.stderr.isatty())
        progress.update(bar, description="benchmark")
    from ..analysis.stats import metric_label
    from ..execution.run import SUMMARY_METRICS

    table = Table("model", "task", *[metric_label(m) for m in SUMMARY_METRICS], "time", title="results (test split)")
    for r in records:
        cells = [f"{r.scores.get(m, float('nan')):.4f}" for m in SUMMARY_METRICS]
        when = "cached" if r.status == "skipped" else f"{r.seconds:.1f}s"
        table.add_row(r.label, r.task, *cells, when)
    console.print(table)
