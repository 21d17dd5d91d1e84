"""`private-mteb tasks list|validate|stats`: the private collections of configs/tasks/."""

from __future__ import annotations

from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

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
def tasks_validate(
    target: Optional[str] = typer.Argument(None, help="task name or YAML path; default: all"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Read and check collections (default: every task); one line per problem, warnings counted; exit 2 if any failed."""
    from custom_tasks.config import find_task_configs, resolve_task_config
    from custom_tasks.errors import ConfigError
    from custom_tasks.sources import load_collection
    from custom_tasks.validate import format_summary, summarize

    from .common import EXIT_BAD_INPUT, err_console, error_line, print_json

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    as_json = fmt == "json"
    targets = [target] if target else [str(p) for p in find_task_configs().values()]
    if not targets:
        raise typer.BadParameter("no task configs found in configs/tasks/")
    results, failed = [], 0
    for t in targets:
        name = t
        try:
            cfg = resolve_task_config(t)
            name = cfg.name
            collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
            missing = [s for s in cfg.splits if s not in collection.qrels]
            if missing:
                raise ConfigError(cfg.path, f"split(s) {missing} have no labels (found: {collection.splits})")
        except Exception as e:  # noqa: BLE001 - every task is checked; each problem is one line
            if target and not as_json:
                raise  # one named task: the usual one-line error
            failed += 1
            line = error_line(e)[1]
            results.append({"task": name, "ok": False, "errors": 1, "warnings": 0, "problems": [line]})
            if not as_json:
                err_console.print(Text.assemble(("error:", "bold red"), f" {name}: {line}"), soft_wrap=True)
            continue
        summary = summarize(collection)
        n_warn = sum(w["count"] for w in summary["warnings"].values())
        results.append({"task": cfg.name, "ok": True, "errors": 0, "warnings": n_warn,
                        "revision": collection.content_hash(), "summary": summary})
        if not as_json:
            console.print(Text.assemble(("ok", "green"), f" {cfg.name} (revision {collection.content_hash()})"))
            console.print(format_summary(collection), highlight=False)
    if as_json:
        print_json({"tasks": results, "failed": failed, "passed": failed == 0})
    elif len(targets) > 1:
        console.print(f"{len(targets) - failed} of {len(targets)} task(s) valid", highlight=False)
    if failed:
        if not as_json and len(targets) > 1:
            err_console.print(Text.assemble(("error:", "bold red"), f" {failed} of {len(targets)} task(s) failed "
                                            "validation"))
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command("stats")
@friendly_errors
def tasks_stats(
    name: str = typer.Argument(..., help="task name or YAML path"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Counts, text lengths and labels per query."""
    from custom_tasks.stats import collection_stats

    from .common import print_json

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    stats = collection_stats(name)
    if fmt == "json":
        print_json({"task": name, "stats": stats})
        return
    table = Table("statistic", "value", title=f"{name}")
    for key, value in stats.items():
        table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    console.print(table)
