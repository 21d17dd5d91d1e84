"""`private-mteb baseline save [DIR]`: a small baseline for `check --baseline DIR`, thin over
runners/analysis/gate/baseline_copy.py (what the gate reads of a results folder, and nothing else)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import App, console, print_json

app = App(help="A small baseline: what `check --baseline DIR` reads of a results folder, to commit.")


@app.command("save")
def baseline_save(
    folder: Path = typer.Argument(Path("baseline"), help="where the baseline goes (replaced if `baseline save` "
                                  "wrote it before)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark config whose results_dir is saved "
                                          "(default: the project's config, else ./results)"),
    results: Optional[Path] = typer.Option(None, "--results", help="results folder to save (default: the config's "
                                           "results_dir)"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Keep per-query scores, run identities, labels and the top-10 rankings judged@10 reads: what `check` needs
    (same verdict, same figures as the full results folder), without the embedding cache or deeper rankings."""
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    from ..analysis.gate.baseline_copy import save_baseline
    from .analysis import results_dir_of

    saved = save_baseline(results_dir_of(config, results), folder)
    if fmt == "json":
        print_json({"folder": str(saved.folder), "runs": [{"model": m, "task": t} for m, t in saved.runs],
                    "bytes": saved.size})
        return
    console.print(f"baseline saved to {saved.folder}: {len(saved.runs)} run(s), {saved.size / 1e6:.2f} MB (per-query "
                  f"scores, run identities, top-10 rankings); commit it, then: private-mteb check --baseline "
                  f"{saved.folder}", highlight=False, markup=False, soft_wrap=True)
