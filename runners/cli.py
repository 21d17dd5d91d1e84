"""`private-mteb` command line: a thin layer over the Python API (custom_tasks, runners)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Score embedding models on your own documents with MTEB's metrics.")
tasks_app = typer.Typer(no_args_is_help=True, help="Private collections registered in configs/tasks/.")
app.add_typer(tasks_app, name="tasks")
console = Console(width=None if sys.stdout.isatty() else 140)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input -> one red line and exit code 2, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from custom_tasks.errors import CollectionError

        try:
            return func(*args, **kwargs)
        except CollectionError as e:
            err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except FileNotFoundError as e:
            err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def _offline_default() -> None:
    """Private data: nothing goes to the hub unless the user says so (PRIVATE_MTEB_ONLINE=1)."""
    if os.environ.get("PRIVATE_MTEB_ONLINE") != "1":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*SentenceTransformers that use prompts.*")
    logging.getLogger("mteb").setLevel(logging.ERROR)


# ---------------------------------------------------------------- tasks
@tasks_app.command("list")
@friendly_errors
def tasks_list() -> None:
    """List the private tasks in configs/tasks/."""
    from custom_tasks.config import TaskConfig, find_task_configs

    table = Table("task", "format", "splits", "labels", "config")
    for name, path in find_task_configs().items():
        cfg = TaskConfig.from_file(path)
        table.add_row(name, str(cfg.source.get("format")), ",".join(cfg.splits), cfg.labels, str(path))
    console.print(table)


@tasks_app.command("validate")
@friendly_errors
def tasks_validate(target: Optional[str] = typer.Argument(None, help="task name or YAML path; default: all")) -> None:
    """Read and check a collection; one clear line per problem, warnings counted."""
    from custom_tasks.config import find_task_configs, resolve_task_config
    from custom_tasks.sources import load_collection
    from custom_tasks.validate import format_summary

    targets = [target] if target else list(find_task_configs().values())
    if not targets:
        raise typer.BadParameter("no task configs found in configs/tasks/")
    for t in targets:
        cfg = resolve_task_config(t)
        collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
        missing = [s for s in cfg.splits if s not in collection.qrels]
        if missing:
            from custom_tasks.errors import ConfigError

            raise ConfigError(cfg.path, f"split(s) {missing} have no labels (found: {collection.splits})")
        console.print(f"[green]ok[/] {cfg.name} (revision {collection.content_hash()})")
        console.print(format_summary(collection), highlight=False)


@tasks_app.command("stats")
@friendly_errors
def tasks_stats(name: str = typer.Argument(..., help="task name or YAML path")) -> None:
    """Counts, text lengths and labels per query."""
    from custom_tasks.stats import collection_stats

    stats = collection_stats(name)
    table = Table("statistic", "value", title=f"{name}")
    for key, value in stats.items():
        table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    console.print(table)


# ---------------------------------------------------------------- run
@app.command("run")
@friendly_errors
def run(
    config: Path = typer.Option(Path("configs/benchmarks/demo.yaml"), "--config", "-c", help="benchmark YAML"),
    force: bool = typer.Option(False, "--force", help="re-run even what is complete"),
) -> None:
    """Evaluate every model on every task (skips what is complete for the same data)."""
    _offline_default()
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .config import BenchmarkConfig, check_tasks
    from .run import candidates_for, load_task, run_benchmark

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
    from .run import SUMMARY_METRICS
    from .stats import metric_label

    table = Table("model", "task", *[metric_label(m) for m in SUMMARY_METRICS], "time", title="results (test split)")
    for r in records:
        cells = [f"{r.scores.get(m, float('nan')):.4f}" for m in SUMMARY_METRICS]
        when = "cached" if r.status == "skipped" else f"{r.seconds:.1f}s"
        table.add_row(r.label, r.task, *cells, when)
    console.print(table)


# ---------------------------------------------------------------- statistics
def _fmt(x: float) -> str:
    return f"{x:.4f}"


@app.command("stats")
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
    _offline_default()
    from .analysis import stats_report
    from .config import BenchmarkConfig
    from .stats import metric_label

    cfg = BenchmarkConfig.from_file(config)
    opts = cfg.stats
    for task_name in task or cfg.tasks:
        for m in metric or opts.metrics:
            rep = stats_report(cfg.results_path, task_name, m, n_resamples=resamples or opts.resamples,
                               seed=opts.seed if seed is None else seed, confidence=opts.confidence,
                               method=opts.method, tags=by if by is not None else opts.tags)
            label = metric_label(m)
            if fmt != "table":
                _emit(rep.intervals.assign(task=task_name, metric=m), fmt)
                if not rep.pairs.empty:
                    _emit(rep.pairs.assign(task=task_name, metric=m), fmt)
                continue
            t = Table("subset", "model", "n", label, f"{int(opts.confidence * 100)}% CI",
                      title=f"{task_name} — {label} ({rep.n_queries} queries, {resamples or opts.resamples} resamples)")
            for r in rep.intervals.itertuples():
                t.add_row(r.subset, r.candidate, str(r.n_queries), _fmt(r.mean), f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]")
            console.print(t)
            if not rep.pairs.empty:
                for subset, rows in rep.pairs.groupby("subset", sort=False):
                    console.print(f"[bold]paired tests ({subset})[/]")
                    for r in rows.itertuples():
                        console.print(f"  {r.verdict}  [dim](t-test p={r.p_ttest:.3g}, d_z={r.cohens_dz:+.2f})[/]",
                                      highlight=False)
            console.print(f"[yellow]power:[/] {rep.power}", highlight=False)


def _emit(df: Any, fmt: str) -> None:
    if fmt == "csv":
        console.print(df.to_csv(index=False), end="", highlight=False, markup=False)
    elif fmt == "json":
        console.print(df.to_json(orient="records", indent=1), highlight=False, markup=False)
    elif fmt == "markdown":
        console.print(df.to_markdown(index=False), highlight=False, markup=False)
    else:
        raise typer.BadParameter(f"unknown format '{fmt}' (table|markdown|csv|json)")


@app.command("check")
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
    from .analysis import regression_gate

    outcomes = regression_gate(baseline, candidate, results_dir=results, tasks=task, metric=metric,
                               max_drop=max_drop, alpha=alpha, n_resamples=resamples, seed=seed)
    failed = 0
    for task_name, base, cand, res in outcomes:
        colour = "green" if res.passed else "red"
        console.print(f"[{colour}]{task_name}: {base} -> {cand}: {res.reason}[/]", highlight=False)
        failed += not res.passed
    if failed:
        raise typer.Exit(1)


@app.command("experiments")
@friendly_errors
def experiments_cmd(
    config: Path = typer.Option(Path("configs/benchmarks/experiments-demo.yaml"), "--config", "-c"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="also write the table as CSV"),
) -> None:
    """Experiment candidates vs their plain dense model: mean [CI], paired difference, Holm p, ANN overlap."""
    _offline_default()
    from .config import BenchmarkConfig
    from .experiments import experiment_table, format_experiment_table

    cfg = BenchmarkConfig.from_file(config)
    df = experiment_table(cfg.results_path, cfg, metric)
    console.print(format_experiment_table(df), highlight=False, markup=False)
    if csv:
        df.to_csv(csv, index=False)


from .cli_compare import compare  # noqa: E402

app.command("compare")(compare)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
