"""`private-mteb init DATA_DIR`: a task YAML and a benchmark YAML for a folder of files, validated."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from .common import console, friendly_errors, offline_default
from .inspect_command import _check_format, print_json


@friendly_errors
def init_cmd(
    data_dir: Path = typer.Argument(..., help="folder with your corpus and questions (beir, evalset, trec, tables, judgments)"),
    project: Optional[Path] = typer.Option(None, "--project", help="project folder that gets configs/tasks and "
                                           "configs/benchmarks (default: the project this folder is in, found "
                                           "upward like git; else the current folder)"),
    name: Optional[str] = typer.Option(None, "--name", help="task name (default: from the folder name)"),
    stem: Optional[str] = typer.Option(None, "--stem", help="YAML file name without .yaml (default: from the folder)"),
    force: bool = typer.Option(False, "--force", help="overwrite existing YAML files"),
    fmt: str = typer.Option("table", "--format", help="table|json: how the summary is printed"),
) -> None:
    """Detect the format and columns, write configs/tasks/<name>.yaml and configs/benchmarks/<name>.yaml, validate."""
    offline_default()
    _check_format(fmt, ("table", "json"))
    from ..config.init_project import init_project

    if project is None:  # inside a project's sub-folder: its configs/, never a second one here
        from custom_tasks.config import project_root

        project = project_root()
    res = init_project(data_dir, project, name, stem, force)
    if fmt == "json":
        print_json(res.to_dict())
        return
    c = res.counts
    console.print(Text(f"detected format: {res.format}" + (f" (columns: {', '.join(f'{k}={v}' for k, v in res.columns.items())})"
                                                            if res.columns else "")))
    if res.how:  # the columns no name matched, told from their values (init_roles.py)
        console.print(Text("told from the values (no name matched):\n" + "\n".join(f"  {role} = {how}"
                                                                                   for role, how in res.how.items())))
    console.print(Text(f"wrote {res.task_yaml}\nwrote {res.benchmark_yaml}"))
    per_split = ", ".join(f"{s}: {n} queries, {c['labels'][s]} labels" for s, n in c["queries"].items())
    warn = ", ".join(f"{k} x{n}" for k, n in c["warnings"].items())
    console.print(Text(f"ok {res.task_name}: {c['documents']} documents; {per_split}" + (f"; warnings: {warn}" if warn else ""),
                       style="green"))
    for line in res.languages.lines() if res.languages else []:
        console.print(Text(line))
    if res.bm25:
        console.print(Text(f"BM25's analyzer: {res.bm25}"))
    if res.dense:
        console.print(Text(f"dense model: {res.dense}"))
    from ..config.init_templates import grades_hint

    if grades_hint(res.grades) and "grades_map:" not in res.task_yaml.read_text(encoding="utf-8").replace("# grades_map:", ""):
        console.print(Text(f"note: your grades are {', '.join(map(str, res.grades))} (no 0): if 1 means best, "
                           f"uncomment `grades_map:` in {res.task_yaml.name}, then private-mteb tasks validate {res.task_name}"))
    if res.complete == "declared":
        console.print(Text(f"labels: complete_labels: true written in {res.task_yaml.name}: every question has one "
                           "labelled document and its column names it the answer, so an unjudged document counts as "
                           "known not relevant (delete the line if other documents may answer too)"))
    elif res.complete == "proposed":
        console.print(Text(f"labels: every question has exactly one labelled document: if it is the only answer, "
                           f"uncomment `complete_labels: true` in {res.task_yaml.name} (no unjudged marks, no "
                           "pooling suggestions)"))
    console.print(Text(f"next: review the comments in {res.task_yaml.name}, then "
                       f"private-mteb run -c {res.benchmark_yaml}"))
