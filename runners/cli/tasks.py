"""`private-mteb tasks list|validate|stats`: the private collections of configs/tasks/."""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table

from .common import App, console, friendly_errors

app = App(no_args_is_help=True, help="Private collections registered in configs/tasks/.")


@app.command("list")
@friendly_errors
def tasks_list() -> None:
    """List the private tasks in configs/tasks/."""
    from custom_tasks.config import TaskConfig, find_task_configs, tasks_dir
    from custom_tasks.errors import ConfigError

    found = find_task_configs()
    if not found:
        raise ConfigError(tasks_dir(), "no task configs here: run from a project folder (one with configs/tasks/), "
                                       "pass --project DIR, or set PRIVATE_MTEB_TASKS_DIR")
    table = Table("task", "format", "splits", "labels", "config")
    for name, path in found.items():
        cfg = TaskConfig.from_file(path)
        table.add_row(name, str(cfg.source.get("format")), ",".join(cfg.splits), cfg.labels, str(path))
    console.print(table)


@app.command("validate")
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


@app.command("stats")
@friendly_errors
def tasks_stats(name: str = typer.Argument(..., help="task name or YAML path")) -> None:
    """Counts, text lengths and labels per query."""
    from custom_tasks.stats import collection_stats

    stats = collection_stats(name)
    table = Table("statistic", "value", title=f"{name}")
    for key, value in stats.items():
        table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    console.print(table)
