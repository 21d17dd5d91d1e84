"""`private-mteb compare`: private scores beside the public MTEB leaderboard (wired with app.command("compare")).

Only argument parsing and printing live here; every number comes from runners.compare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import console, err_console as err, print_data

FORMATS = ("table", "markdown", "csv", "json")


def _split(text: Optional[str]) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _public_names(pairs: Optional[list[str]]) -> dict[str, str]:
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise typer.BadParameter(f"--public-name expects PRIVATE=PUBLIC, got {pair!r}")
        private, public = pair.split("=", 1)
        out[private.strip()] = public.strip()
    return out


def _results_of(config: Optional[Path], results: Optional[Path]) -> Path:
    """`--results`, else the `results_dir` of `-c CONFIG` (or the project's config), else ./results. The config's
    tasks are registered, so
    its results count as known tasks wherever `compare` runs (not only inside the project)."""
    if config is None and results is None:  # the project's config (runners/config/discovery.py): where `run -c` wrote
        from ..config.discovery import optional_config

        config = optional_config(None)
    if config is None:
        return results or Path("results")
    from custom_tasks.task import register, task_class

    from ..config.benchmark import BenchmarkConfig
    from ..config.task_lookup import task_config_for

    cfg = BenchmarkConfig.from_file(config)
    for entry in cfg.tasks:
        register(task_class(task_config_for(entry, cfg)))
    return results or cfg.results_path


def compare(
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark config: results from its "
                                          "results_dir, its tasks known from any folder"),
    results: Optional[Path] = typer.Option(None, "--results", help="private results folder (mteb ResultCache "
                                           "layout; default: the config's results_dir, else ./results)"),
    public: Optional[str] = typer.Option(
        None, "--public",
        help="public results: a folder in results-repo layout (a clone of embeddings-benchmark/results or an mteb "
             "ResultCache folder), 'mteb' for mteb's cache (~/.cache/mteb), or a snapshot .json; "
             "default: $PRIVATE_MTEB_PUBLIC_RESULTS, else the snapshot shipped with private-mteb"),
    benchmark: Optional[str] = typer.Option(
        None, "--benchmark", "-b", help="public set: retrieval tasks of this mteb benchmark, e.g. 'MTEB(eng, v2)', "
                                        "'BEIR', 'MTEB(deu, v1)', 'NanoBEIR' (default: the benchmark in the private "
                                        "tasks' language; MTEB(eng, v2) for English)"),
    tasks: Optional[str] = typer.Option(
        None, "--tasks", "-t", help="comma-separated task names, private and/or public (public ones replace the "
                                    "benchmark unless --benchmark is given too)"),
    models: Optional[str] = typer.Option(None, "--models", "-m", help="comma-separated model names to show"),
    public_name: Optional[list[str]] = typer.Option(
        None, "--public-name", help="PRIVATE=PUBLIC: compare a local/fine-tuned model with this public entry "
                                    "(repeatable; adds to private-mteb/candidates.json)"),
    private_only: bool = typer.Option(False, "--private-only", help="only models with private results"),
    brief: bool = typer.Option(False, "--brief", help="hide per-task public columns (means and ranks stay)"),
    fmt: str = typer.Option("table", "--format", "-f", help="table|markdown|csv|json"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="write a public-vs-private scatter plot (PNG)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="write the table here instead of stdout"),
    download: bool = typer.Option(False, "--download", help="with --public mteb: clone the results repo if absent"),
) -> None:
    """Your private scores beside the public MTEB leaderboard, and whether the public ranking predicts yours."""
    from ..analysis.compare.compare import build_comparison, display_rows, to_csv, to_json, to_markdown
    from ..analysis.compare.compare_plot import plot_comparison
    from ..analysis.compare.public import PublicSourceError, resolve_public_source

    if fmt not in FORMATS:
        raise typer.BadParameter(f"unknown format {fmt!r} ({'|'.join(FORMATS)})")
    task_list = _split(tasks)
    results = _results_of(config, results)
    try:
        source = resolve_public_source(public, download=download)
        comp = build_comparison(results, source, task_list or None, _split(models) or None,
                                _public_names(public_name), benchmark=benchmark, include_public_only=not private_only)
    except (PublicSourceError, ValueError, FileNotFoundError) as e:
        err.print(Text.assemble(("error:", "bold red"), f" {e}"), soft_wrap=True)
        raise typer.Exit(2) from None

    if fmt == "table" and output is None:
        header, rows, notes = display_rows(comp, brief)
        n_priv = len(comp.private_tasks)
        table = Table(*header, title=f"private vs public ({comp.public_set})", header_style="bold")
        for i, col in enumerate(table.columns):
            col.no_wrap = i == 0
            if 0 < i <= n_priv or header[i] in ("Mean (Private)", "Rank (Private)"):
                col.style = "cyan"
        for row in rows:
            table.add_row(*row)
        console.print(table)
        for note in notes:
            console.print(Text(note, style="bold" if note.startswith("agreement") else "dim"), soft_wrap=True)
    else:
        text = {"markdown": lambda: to_markdown(comp, brief), "csv": lambda: to_csv(comp),
                "json": lambda: to_json(comp), "table": lambda: to_markdown(comp, brief)}[fmt]()
        if output is not None:
            output.write_text(text, encoding="utf-8")
            err.print(f"wrote {output}")
        else:
            print_data(text if text.endswith("\n") else text + "\n")
    if plot is not None:
        plot_comparison(comp, plot)
        err.print(f"wrote {plot}")
