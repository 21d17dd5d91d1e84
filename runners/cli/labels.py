"""`private-mteb labels judged|pool|import`: how much of each score rests on labels, and growing them.

Thin over runners/analysis/judged.py, pool.py and label_import.py; no model library is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from .common import App, console, friendly_errors, offline_default

app = App(no_args_is_help=True, help="Label coverage (judged@k), pooling for annotators, importing their grades.")


def _models(cfg: object, models: Optional[str]) -> list[str]:
    """Results names: `--models a,b` (names or labels), else the config's models and experiment candidates."""
    from ..analysis.per_query import resolve_models
    from ..config.experiments import plan_experiments

    if models:
        return resolve_models(cfg.results_path, [m.strip() for m in models.split(",") if m.strip()])
    return [m.results_name for m in cfg.models] + [p.name for p in plan_experiments(cfg)]


@app.command("judged")
@friendly_errors
def judged(
    config: Path = typer.Option(Path("configs/benchmarks/demo.yaml"), "--config", "-c"),
    k: list[int] = typer.Option([10], "--k", "-k", help="cut-off(s), repeatable"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="name or label (default: the first model)"),
    split: str = typer.Option("test", "--split"),
) -> None:
    """judged@k of every candidate and task: the share of its top-k that carries any label."""
    offline_default()
    from ..analysis.judged import judged_for_config
    from ..analysis.per_query import resolve_models
    from ..config.benchmark import BenchmarkConfig

    cfg = BenchmarkConfig.from_file(config)
    names = _models(cfg, models)
    base = resolve_models(cfg.results_path, [baseline])[0] if baseline else None
    for rep in judged_for_config(cfg, names, k, split, base):
        t = Table("model", *[f"judged@{x}" for x in sorted(set(k))], "queries",
                  title=f"{rep.task} — share of the top-k with a label ({split} split)")
        for model, g in rep.table.groupby("model", sort=False):
            t.add_row(str(g["candidate"].iloc[0]), *[f"{v:.3f}" for v in g["judged"]], str(g["n_queries"].iloc[0]))
        console.print(t)
        for line in rep.warnings:
            console.print(f"[yellow]warning:[/] {line.replace('CONFIG', str(config))}", highlight=False)
