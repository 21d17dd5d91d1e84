"""`private-mteb stats|check|experiments`: statistics from stored results (no model library loaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .common import console, emit, fmt4, friendly_errors, offline_default


@friendly_errors
def stats_cmd(
    config: Path = typer.Option(Path("configs/benchmarks/demo.yaml"), "--config", "-c"),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t", help="default: the config's tasks"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m", help="e.g. ndcg_at_10 (repeatable)"),
    by: Optional[list[str]] = typer.Option(None, "--by", help="break down by query tag, e.g. source"),
    resamples: Optional[int] = typer.Option(None, help="bootstrap / permutation resamples"),
    seed: Optional[int] = typer.Option(None),
    fmt: str = typer.Option("table", "--format", help="table|markdown|csv|json"),
) -> None:
    """95% bootstrap intervals, paired tests of every pair (Holm), power warning."""
    offline_default()
    from ..analysis.stats import metric_label
    from ..analysis.stats_report import stats_report
    from ..config.benchmark import BenchmarkConfig

    cfg = BenchmarkConfig.from_file(config)
    opts = cfg.stats
    for task_name in task or cfg.tasks:
        for m in metric or opts.metrics:
            rep = stats_report(cfg.results_path, task_name, m, n_resamples=resamples or opts.resamples,
                               seed=opts.seed if seed is None else seed, confidence=opts.confidence,
                               method=opts.method, tags=by if by is not None else opts.tags)
            label = metric_label(m)
            if fmt != "table":
                emit(rep.intervals.assign(task=task_name, metric=m), fmt)
                if not rep.pairs.empty:
                    emit(rep.pairs.assign(task=task_name, metric=m), fmt)
                continue
            t = Table("subset", "model", "n", label, f"{int(opts.confidence * 100)}% CI",
                      title=f"{task_name} — {label} ({rep.n_queries} queries, {resamples or opts.resamples} resamples)")
            for r in rep.intervals.itertuples():
                t.add_row(r.subset, r.candidate, str(r.n_queries), fmt4(r.mean), f"[{fmt4(r.ci_low)}, {fmt4(r.ci_high)}]")
            console.print(t)
            if not rep.pairs.empty:
                for subset, rows in rep.pairs.groupby("subset", sort=False):
                    console.print(f"[bold]paired tests ({subset})[/]")
                    for r in rows.itertuples():
                        console.print(f"  {r.verdict}  [dim](t-test p={r.p_ttest:.3g}, d_z={r.cohens_dz:+.2f})[/]",
                                      highlight=False)
            console.print(f"[yellow]power:[/] {rep.power}", highlight=False)


@friendly_errors
def check_cmd(
    baseline: str = typer.Option(..., "--baseline", help="results folder of the baseline run, or a model name/label"),
    candidate: str = typer.Option("results", "--candidate", help="results folder of the new run, or a model name/label"),
    results: Path = typer.Option(Path("results"), "--results", help="where model names are looked up"),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t"),
    metric: str = typer.Option("ndcg_at_10", "--metric"),
    max_drop: float = typer.Option(0.01, "--max-drop", help="largest tolerated drop of the mean"),
    alpha: float = typer.Option(0.05, "--alpha"),
    resamples: int = typer.Option(10_000, "--resamples"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Regression gate for CI: exit 1 only if the drop is larger than allowed AND significant."""
    from ..analysis.gate import regression_gate

    outcomes = regression_gate(baseline, candidate, results_dir=results, tasks=task, metric=metric,
                               max_drop=max_drop, alpha=alpha, n_resamples=resamples, seed=seed)
    failed = 0
    for task_name, base, cand, res in outcomes:
        colour = "green" if res.passed else "red"
        console.print(f"[{colour}]{task_name}: {base} -> {cand}: {res.reason}[/]", highlight=False)
        failed += not res.passed
    if failed:
        raise typer.Exit(1)


@friendly_errors
def experiments_cmd(
    config: Path = typer.Option(Path("configs/benchmarks/experiments-demo.yaml"), "--config", "-c"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="also write the table as CSV"),
) -> None:
    """Experiment candidates vs their plain dense model: mean [CI], paired difference, Holm p, ANN overlap."""
    offline_default()
    from ..analysis.experiments import experiment_table, format_experiment_table
    from ..config.benchmark import BenchmarkConfig

    cfg = BenchmarkConfig.from_file(config)
    df = experiment_table(cfg.results_path, cfg, metric)
    console.print(format_experiment_table(df), highlight=False, markup=False)
    if csv:
        df.to_csv(csv, index=False)
