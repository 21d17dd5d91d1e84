"""Task names of a benchmark config -> mteb task objects (private collections or mteb's registry)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_tasks.config_problems import did_you_mean
from custom_tasks.errors import ConfigError
from custom_tasks.yaml_io import line_at, read_yaml

from ..config.benchmark import BenchmarkConfig
from .encoding.models import check_models


def load_task(name: str, bench: BenchmarkConfig | None = None) -> Any:
    """A private task (configs/tasks or a YAML path) or a public mteb task, with per-query capture.

    With ``bench``, a private task is scored on the grades its `labels:` policy names (config/label_policy.py):
    with `use_llm: fill_unjudged` the judge's grades fill the pairs no human graded, the task's revision is the
    merged collection's, and ``task.labels_used`` says which grades those are (the run identity records it)."""
    from custom_tasks.config import find_task_configs
    from custom_tasks.task import get_task, task_from_collection, with_per_query_capture

    if name in find_task_configs() or Path(name).suffix in {".yaml", ".yml"}:
        task = get_task(name)
        if bench is None or not bench.labels.fills:
            return task
        from ..config.label_policy import scored_collection

        collection, used = scored_collection(task.collection, task.task_config, bench)
        task = task_from_collection(collection, task.task_config)
        task.labels_used = used.as_dict()
        return task
    import mteb  # lazy: ~5 s of torch, only for public tasks

    return with_per_query_capture(mteb.get_task(name))


def task_revision(task: Any) -> str:
    return str(task.metadata.dataset.get("revision"))


def check_tasks(cfg: BenchmarkConfig) -> None:
    """Every task must be a configured private task or a task in mteb's registry."""
    import mteb

    from custom_tasks.config import find_task_configs

    check_models(cfg)
    private = find_task_configs()
    for name in cfg.tasks:
        if name in private or Path(name).suffix in {".yaml", ".yml"}:
            continue
        try:
            mteb.get_task(name)
        except Exception:
            known = ", ".join(private) or "none"
            near = did_you_mean(name, list(private))
            line = line_at(read_yaml(cfg.path, "models, tasks, ...")[1], ["tasks", cfg.tasks.index(name)]) \
                if cfg.path is not None else None
            raise ConfigError(cfg.path, f"unknown task '{name}'{near}: not in configs/tasks (known: {known}) "
                                        "nor in mteb's registry", line) from None
