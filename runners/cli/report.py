"""`private-mteb report`: one self-contained HTML page (or a Markdown twin) from stored results only."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer

from .common import config_option, err_console, friendly_errors, load_config, offline_default, results_option
from .terminal import styled


def _command_line() -> str:
    """The command as the user typed it, program name shortened, for the provenance section."""
    args = [Path(sys.argv[0]).name if sys.argv else "private-mteb"] + sys.argv[1:]
    if args[0] in ("__main__.py", "-c"):
        args[0] = "private-mteb"
    return shlex.join(args)


@friendly_errors
def report_cmd(
    config: Optional[Path] = config_option(),
    results: Optional[Path] = results_option(),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="report.html, or report.md for the "
                                "Markdown twin (GitHub tables, for a PR comment)"),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="candidate label or model name "
                                           "(default: the config's first model)"),
    by: Optional[list[str]] = typer.Option(None, "--by", help="query tags to break down by (default: the "
                                           "config's stats.tags)"),
    public: Optional[str] = typer.Option(None, "--public", help="public results (folder, 'mteb' or snapshot "
                                         ".json); default: the snapshot shipped with private-mteb"),
    no_public: bool = typer.Option(False, "--no-public", help="leave out the private-vs-public section"),
    worst: int = typer.Option(5, "--worst", min=1, max=50, help="worst queries shown per candidate"),
    show_text: bool = typer.Option(False, "--show-text", help="include query text and document titles "
                                   "(off by default: the report may travel)"),
    mlflow: Optional[str] = typer.Option(None, "--mlflow", help="attach the report to the newest MLflow run of each "
                                         "candidate x task at this tracking URI (default: the config's `mlflow:`)"),
    margin: Optional[float] = typer.Option(None, "--margin", min=0.0, help="non-inferiority bound for the cheapest-"
                                           "candidate sentence of 'Quality and cost', e.g. 0.01"),
) -> None:
    """A report to open, share and attach: ranking with intervals, real differences, failures, public vs private."""
    offline_default()
    from ..analysis.report import build_report, format_for, write_report

    try:
        fmt = format_for(output)
    except ValueError as e:
        err_console.print(styled(("error:", "bold red"), f" {e}"), soft_wrap=True)
        raise typer.Exit(2) from None
    cfg = load_config(config, results)
    rep = build_report(cfg, baseline=baseline, show_text=show_text, tags=by, public=public,
                       with_public=not no_public, worst=worst, command=_command_line(), margin=margin)
    write_report(rep, output, fmt)
    sections = ", ".join(s.title.split(" (")[0] for s in rep.sections)
    err_console.print(f"wrote {output} ({len(rep.sections)} sections: {sections})", highlight=False, soft_wrap=True)
    if mlflow or cfg.mlflow:
        from .history_command import attach_report

        attach_report(cfg, mlflow, output)
