"""`private-mteb export run|qrels`: TREC files for trec_eval, ranx and pyserini (ids and scores only)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import console, friendly_errors, offline_default
from .common import load_config
from .inspect_command import CONFIG, RESULTS, SPLIT, TASK, _check_format, print_json

app = typer.Typer(no_args_is_help=True, help="Write rankings as TREC run files and labels as TREC qrels.")
OUT = typer.Option(..., "--output", "-o", help="file to write (atomically)")
FMT = typer.Option("table", "--format", help="table|json: how the summary is printed")


def _done(fmt: str, what: str, path: Path, lines: int, **extra: str) -> None:
    if fmt == "json":
        print_json({"written": what, "path": str(path.resolve()), "lines": lines, **extra})
    else:
        console.print(f"wrote {lines} {what} lines to {path}", highlight=False)


@app.command("run")
@friendly_errors
def export_run_cmd(
    model: str = typer.Option(..., "--model", help="results name or label"),
    output: Path = OUT, config: Optional[Path] = CONFIG, results: Optional[Path] = RESULTS,
    task: Optional[str] = TASK, split: str = SPLIT,
    tag: Optional[str] = typer.Option(None, "--tag", help="run tag column (default: the model's label)"),
    fmt: str = FMT,
) -> None:
    """A model's stored top-k rankings as `qid Q0 docid rank score tag` lines."""
    offline_default()
    _check_format(fmt, ("table", "json"))
    from ..analysis.diagnose.inspect import resolve_model
    from ..statistics.per_query import label_of
    from ..statistics.candidate_set import config_names
    from ..config.task_lookup import pick_task, task_name_for
    from ..results.export import export_run

    bench = load_config(config, results)
    task_name = task_name_for(pick_task(bench, task), bench)
    results = bench.results_path
    name = resolve_model(results, task_name, model, config_names(bench))  # a label: the config's current candidate
    lines = export_run(results, name, task_name, output, split, tag or label_of(results, name).replace(" ", "_"))
    _done(fmt, "run", output, lines, model=name, task=task_name, split=split)


@app.command("qrels")
@friendly_errors
def export_qrels_cmd(
    task: str = typer.Option(..., "--task", "-t", help="task name or YAML path"),
    output: Path = OUT, split: str = SPLIT,
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark YAML whose project names the task"),
    fmt: str = FMT,
) -> None:
    """A private task's labels of one split as `qid 0 docid grade` lines (grade-0 judgements kept)."""
    offline_default()
    _check_format(fmt, ("table", "json"))
    from custom_tasks.errors import ConfigError
    from custom_tasks.sources import load_collection

    from ..config.benchmark import BenchmarkConfig
    from ..config.task_lookup import task_config_for
    from ..results.export import export_qrels

    bench = BenchmarkConfig.from_file(config) if config else None
    tcfg = task_config_for(task, bench)
    collection = load_collection(tcfg.source, tcfg.base_dir, tcfg.name)
    if split not in collection.qrels:
        raise ConfigError("--split", f"task '{tcfg.name}' has no labels for split '{split}' "
                                     f"(splits: {', '.join(collection.splits)})")
    lines = export_qrels(collection.qrels[split], output)
    _done(fmt, "qrels", output, lines, task=tcfg.name, split=split)
