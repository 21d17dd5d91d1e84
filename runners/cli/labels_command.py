"""`private-mteb labels judged|pool|import|judge|serve|plan|agreement|merge|status`: how much of each score rests on
labels, and growing them.

Thin over runners/labels/pool/judged.py, pool.py and label_import.py (the judging commands: labels_judging.py);
no model library is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import App, config_option, console, friendly_errors, load_config, offline_default, results_option
from .labels_judge import config_models as _models
from .labels_judge import judge_cmd
from .labels_judging import register
from .labels_status import register as register_status

app = App(no_args_is_help=True, help="Label coverage (judged@k), pooling for annotators, importing their grades, "
                                     "judging in a browser and raters' agreement.")


@app.command("judged")
@friendly_errors
def judged(
    config: Optional[Path] = config_option(),
    results: Optional[Path] = results_option(),
    k: list[int] = typer.Option([10], "--k", "-k", help="cut-off(s), repeatable"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="name or label (default: the first model)"),
    split: str = typer.Option("test", "--split"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """judged@k of every candidate and task: the share of its top-k that carries any label."""
    offline_default()
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    from ..statistics.per_query import resolve_models
    from ..labels.pool.judged import judged_for_config

    cfg = load_config(config, results)
    config = cfg.path
    names = _models(cfg, models)
    base = resolve_models(cfg.results_path, [baseline])[0] if baseline else None
    reports = judged_for_config(cfg, names, k, split, base)
    if fmt == "json":
        from .common import print_json

        print_json({"split": split, "tasks": [{"task": rep.task, "rows": rep.rows, "warnings":
                                               [w.replace("CONFIG", str(config)) for w in rep.warnings],
                                               "max_judged": {str(x): c[0] for x, c in rep.ceilings.items()}}
                                              for rep in reports]})
        return
    if models:
        from ..statistics.candidate_set import candidate_set

        console.print(candidate_set(cfg, names).note, highlight=False, markup=False)  # --models narrowed the set
    for rep in reports:
        t = Table("model", *[f"judged@{x}" for x in sorted(set(k))], "queries",
                  title=f"{rep.task} — share of the top-k with a label ({split} split)")
        for model, g in rep.table.groupby("model", sort=False):
            t.add_row(str(g["candidate"].iloc[0]), *[f"{v:.3f}" for v in g["judged"]], str(g["n_queries"].iloc[0]))
        console.print(t)
        for x, (top, per_query) in sorted(rep.ceilings.items()):
            if top < 0.995:  # a known-item task: 1 labelled document per query caps judged@10 at 0.10
                console.print(Text(f"judged@{x} is at most {top:.2f} on {rep.task}: {per_query:.1f} labelled "
                                   "documents per query; compare candidates with each other and with that maximum"))
        for line in rep.warnings:
            console.print(Text.assemble(("warning:", "yellow"), f" {line.replace('CONFIG', str(config))}"))


@app.command("pool")
@friendly_errors
def pool(
    config: Optional[Path] = config_option(),
    results: Optional[Path] = results_option(),
    depth: int = typer.Option(10, "--depth", min=1, help="top-k of each candidate to pool"),
    out: Path = typer.Option(Path("pool.csv"), "--out", "-o", help="CSV path; a .jsonl twin is written next to it"),
    task: Optional[str] = typer.Option(None, "--task", "-t", help="default: the config's only task"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's)"),
    split: str = typer.Option("test", "--split"),
    seed: int = typer.Option(0, "--seed", help="shuffle seed: the order hides which model found a pair"),
) -> None:
    """Write the unlabelled (query, document) pairs of the candidates' top-k for annotators (CSV + JSONL)."""
    offline_default()
    from ..config.task_lookup import pick_task, task_config_for
    from ..labels.pool.judged import task_collection
    from ..labels.pool.pool import build_pool, write_pool

    cfg = load_config(config, results)
    entry = pick_task(cfg, task)
    collection = task_collection(entry, cfg, llm=False)  # pairs no human graded
    scale = "; ".join(f"{g} = {meaning}" for g, meaning in task_config_for(entry, cfg).grades.items())
    p = build_pool(cfg.results_path, collection, _models(cfg, models), depth, split, seed)
    csv_path, jsonl_path = write_pool(p.rows, out)
    waiting = f", {p.n_awaiting} of them awaiting judgment" if p.n_awaiting else ""
    waiting += (f"; {p.n_complete} questions left out: their labels are declared complete (`complete_labels`)"
                if p.n_complete else "")
    console.print(f"{len(p.rows)} unlabelled pairs for {p.n_queries} queries{waiting} (top-{depth} of "
                  f"{len(p.per_model)} candidates, shuffled with seed {seed}) -> {csv_path}, {jsonl_path}",
                  highlight=False)
    console.print(Text(f"fill 'grade' ({scale}; leave empty to skip), then `private-mteb labels import {csv_path} "
                       f"-t {collection.name}`, or judge in a browser: `private-mteb labels serve -t {collection.name} "
                       f"--pool {jsonl_path} --rater NAME`"), highlight=False)


@app.command("import")
@friendly_errors
def import_cmd(
    file: Path = typer.Argument(..., help="the filled pool file (CSV, TSV, JSONL or Parquet)"),
    task: str = typer.Option(..., "--task", "-t", help="task name (configs/tasks) or YAML path"),
    annotator: Optional[str] = typer.Option(None, "--annotator", help="default: the file's 'annotator' column, "
                                                                       "else your user name"),
) -> None:
    """Validate the grades, merge them (annotator, date, source `pooled`) into the task's labels file."""
    from custom_tasks.config import resolve_task_config

    from ..labels.raters.label_import import import_labels

    cfg = resolve_task_config(task)
    r = import_labels(file, cfg, annotator)
    console.print(f"{cfg.name}: {r.added} new, {r.changed} changed, {r.unchanged} unchanged judgment(s) -> "
                  f"{r.labels_path}" + (f" (now named by {cfg.path})" if r.yaml_changed else "")
                  + (f"; {r.ungraded} row(s) without a grade left out" if r.ungraded else ""), highlight=False)
    console.print(f"data revision {r.old_revision} -> {r.new_revision}: `private-mteb run` re-scores every "
                  "candidate (dense ones from cached vectors, nothing is encoded again)", highlight=False)


app.command("judge")(friendly_errors(judge_cmd))  # the LLM judge (runners/cli/labels_judge.py)
register(app)  # serve, plan, agreement, merge (runners/cli/labels_judging.py)
register_status(app)  # status (runners/cli/labels_status.py)
