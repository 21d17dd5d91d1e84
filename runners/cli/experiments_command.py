"""`private-mteb experiments`: experiment candidates vs their plain dense model, from stored results.

A command of its own beside `stats`/`check` (analysis.py): same candidate rule (`chosen_candidates`), its own table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .analysis import chosen_candidates
from .common import config_option, console, friendly_errors, load_config, offline_default, results_option


@friendly_errors
def experiments_cmd(
    config: Optional[Path] = config_option("experiments-demo.yaml"),
    results: Optional[Path] = results_option(),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: only these candidates (names or labels)"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="also write the table as CSV"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Experiment candidates vs their plain dense model: mean [CI], paired difference, Holm p, ANN overlap;
    growth curves (stored by `growth`): metric per corpus fraction and at 2x / 10x."""
    offline_default()
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    from ..analysis.cost.experiments_table import experiment_table, format_experiment_table
    from ..statistics.per_query import check_metric, stored_metrics
    from ..results.store import atomic_write_bytes

    cfg = load_config(config, results, "experiments-demo.yaml")
    from ..config.task_lookup import task_name_for  # lazy: commands import their API when they run
    tasks = [task_name_for(t, cfg) for t in cfg.tasks]
    chosen = chosen_candidates(cfg, models, tasks)
    names = list(chosen.names)
    known = stored_metrics(cfg.results_path, names[0], tasks[0])
    for m in metric or cfg.stats.metrics:
        check_metric(m, known)
    df = experiment_table(cfg.results_path, cfg, metric, models=names if models is not None else None)
    if fmt == "json":
        from .common import print_json

        print_json({"experiments": df.to_dict(orient="records")})
    else:
        if chosen.note:
            console.print(chosen.note, highlight=False, markup=False)
        console.print(format_experiment_table(df), highlight=False, markup=False)
    if csv:
        from ..results.spreadsheet import frame_csv  # CSV for people: formula-like cells neutralised

        atomic_write_bytes(csv, frame_csv(df).encode())
