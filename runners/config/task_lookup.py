"""Which task YAML a benchmark's task entry means, wherever the command is run from.

A benchmark lists tasks by name (looked up in a ``configs/tasks`` folder) or by YAML path. Commands that
read a collection live (inspect, export, init) must find it from any working directory, so a name is
looked up first in the ``configs/tasks`` of the benchmark file's folder and those above it (like git
finds ``.git``; ``PRIVATE_MTEB_TASKS_DIR`` overrides), then in the current folder's; a relative path is
tried next to the benchmark file, then from the current folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from custom_tasks.config import TASKS_DIR_ENV, TaskConfig, find_task_configs, resolve_task_config
from custom_tasks.errors import ConfigError

from .benchmark import BenchmarkConfig

_YAML = {".yaml", ".yml"}


def _project_task_dirs(start: Path) -> list[Path]:
    """``configs/tasks`` folders from ``start`` upward (nearest first)."""
    start = start.resolve()
    return [d / "configs" / "tasks" for d in [start, *start.parents] if (d / "configs" / "tasks").is_dir()]


def task_config_for(entry: str, bench: BenchmarkConfig | None = None) -> TaskConfig:
    """The TaskConfig a benchmark task entry (name or YAML path) refers to.

    Raises ConfigError naming the benchmark file (or the tasks folder) and what is known.
    """
    path = Path(entry)
    here = bench.path.resolve().parent if bench is not None and bench.path is not None else None
    if path.suffix in _YAML:
        candidates = [path] if path.is_absolute() or here is None else [here / path, path]
        for p in candidates:
            if p.is_file():
                return TaskConfig.from_file(p)
        raise ConfigError(bench.path if bench is not None and bench.path else path, f"task file '{entry}' not found")
    if path.is_file():
        return TaskConfig.from_file(path)
    known: list[str] = []
    if here is not None and TASKS_DIR_ENV not in os.environ:  # the benchmark's own project first
        for folder in _project_task_dirs(here):
            configs = find_task_configs(folder)
            if entry in configs:
                return TaskConfig.from_file(configs[entry])
            known += [k for k in configs if k not in known]
    try:
        return resolve_task_config(entry)
    except ConfigError:
        if not known:
            raise
        raise ConfigError(bench.path, f"no private task named '{entry}' (known: {', '.join(known)})") from None


def pick_task(bench: BenchmarkConfig, task: str | None) -> str:
    """The one task a command works on: ``--task`` or the benchmark's only task."""
    if task:
        return task
    if len(bench.tasks) == 1:
        return bench.tasks[0]
    raise ConfigError(bench.path or "--config", f"the benchmark has several tasks ({', '.join(bench.tasks)}): "
                                                "choose one with --task")


def task_name_for(entry: str, bench: BenchmarkConfig | None = None) -> str:
    """The name results are filed under: a YAML's ``name:``, else the entry itself (public mteb task)."""
    try:
        return task_config_for(entry, bench).name
    except ConfigError:
        if Path(entry).suffix in _YAML:
            raise
        return entry
