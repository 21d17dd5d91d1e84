"""`private-mteb init DATA_DIR`: detect, write a task and a benchmark YAML, then validate both.

Nothing is overwritten unless asked (``force``): a hand-edited task YAML is worth more than a guess.
Files are written atomically, and validation reads them back through the same code `run` uses.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError
from custom_tasks.path_names import name_problem

from .init_detect import detect
from .init_templates import file_stem_from, render_benchmark_yaml, render_task_yaml, task_name_from


@dataclass
class InitResult:
    task_name: str
    format: str
    task_yaml: Path
    benchmark_yaml: Path
    columns: dict[str, str]
    counts: dict[str, Any] = field(default_factory=dict)  # documents, queries, labels per split, warnings

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task_name, "format": self.format, "task_yaml": str(self.task_yaml),
                "benchmark_yaml": str(self.benchmark_yaml), "columns": self.columns, "counts": self.counts}


def _write(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: an interrupted init never leaves half a YAML."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def plan(data_dir: Path, project: Path, name: str | None = None, stem: str | None = None) -> tuple[str, Path, Path]:
    """(task name, task YAML path, benchmark YAML path) init would write."""
    data_dir = Path(data_dir)
    stem = stem or file_stem_from(data_dir.resolve())
    problem = name_problem(stem)
    if problem:  # configs/tasks/<stem>.yaml: one file name, never a path out of the project
        raise ConfigError("--stem", f"{ascii(stem)[:80]} cannot name a file: {problem}")
    root = Path(project).resolve()
    return (name or task_name_from(data_dir.resolve()), root / "configs" / "tasks" / f"{stem}.yaml",
            root / "configs" / "benchmarks" / f"{stem}.yaml")


def init_project(data_dir: Path, project: Path | None = None, name: str | None = None, stem: str | None = None,
                 force: bool = False) -> InitResult:
    """Write ``configs/tasks/<stem>.yaml`` and ``configs/benchmarks/<stem>.yaml`` under ``project``; validate."""
    task_name, task_yaml, bench_yaml = plan(data_dir, project or Path.cwd(), name, stem)
    for path in (task_yaml, bench_yaml):
        if path.exists() and not force:
            raise ConfigError(path, "already exists: pass --force to overwrite it, or --name/--stem for another")
    det = detect(Path(data_dir))
    _write(task_yaml, render_task_yaml(det, task_name, task_yaml, Path(data_dir).resolve(), task_yaml.parents[2]))
    tags = det.source.get("tag_columns") or det.source.get("tag_fields") or []
    _write(bench_yaml, render_benchmark_yaml(task_yaml.stem, task_name, task_yaml, tags))
    columns = {k: str(v) for k, v in det.source.get("columns", {}).items()}
    return InitResult(task_name, det.format, task_yaml, bench_yaml, columns, validate(task_yaml, bench_yaml))


def validate(task_yaml: Path, bench_yaml: Path) -> dict[str, Any]:
    """Load the written collection and benchmark as `run` would; counts for the summary."""
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    from .benchmark import BenchmarkConfig
    from .task_lookup import task_config_for

    cfg = TaskConfig.from_file(task_yaml)
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    missing = [s for s in cfg.splits if s not in collection.qrels]
    if missing:
        raise ConfigError(task_yaml, f"split(s) {missing} have no labels (found: {', '.join(collection.splits)}): "
                                     "edit `splits:`")
    bench = BenchmarkConfig.from_file(bench_yaml)
    for entry in bench.tasks:
        task_config_for(entry, bench)
    return {
        "documents": len(collection.corpus),
        "queries": {s: len(collection.qrels[s]) for s in collection.splits},
        "labels": {s: sum(len(d) for d in collection.qrels[s].values()) for s in collection.splits},
        "revision": collection.content_hash(),
        "warnings": collection.warning_counts(),
    }
