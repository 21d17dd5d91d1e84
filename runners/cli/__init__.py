"""`private-mteb` command line: a thin layer over the Python API (custom_tasks, runners).

Every command module imports only typer and rich at start-up; the API behind a command is
imported when the command runs, so `--help` and the analysis commands start fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from . import analysis
from . import baseline as baseline_cmds
from . import export_command as export_cmds
from . import history_command as history_cmds
from . import inspect_command as inspect_cmds
from . import labels_command as labels_cmds
from . import questions_command as questions_cmds
from . import run_command as run
from . import tasks_command as tasks
from .backends import backends_cmd
from .common import App, report_error, warnings_on_console
from .compare_command import compare
from .experiments_command import experiments_cmd
from .growth_command import growth_cmd
from .init import init_cmd
from .latency_command import latency_cmd
from .report import report_cmd

app = App(add_completion=True, no_args_is_help=True,
          help="Score embedding models on your own documents with MTEB's metrics.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"private-mteb {version('private-mteb')}")
        except PackageNotFoundError:
            typer.echo("private-mteb (not installed as a package)")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    project: Optional[Path] = typer.Option(
        None, "--project", envvar="PRIVATE_MTEB_PROJECT", file_okay=False,
        help="project folder (with configs/); default: found upward from the current folder, like git"),
    _show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the version and exit"),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="also show the libraries' own progress bars and log lines (mteb, "
                                      "transformers, NNCF, bm25s, ...)"),
) -> None:
    """Score embedding models on your own documents with MTEB's metrics."""
    from .quiet import quiet_output

    ctx.with_resource(quiet_output(verbose))  # for the whole command: only private-mteb's own lines
    if project is not None:
        if not project.is_dir():
            raise typer.BadParameter(f"{project} is not a folder", param_hint="--project")
        os.environ["PRIVATE_MTEB_PROJECT"] = str(project.resolve())


app.add_typer(tasks.app, name="tasks")
app.add_typer(labels_cmds.app, name="labels")
app.add_typer(questions_cmds.app, name="questions")
app.command("run")(run.run)
app.command("stats")(analysis.stats_cmd)
app.command("check")(analysis.check_cmd)
app.command("experiments")(experiments_cmd)
app.command("latency")(latency_cmd)
app.command("compare")(compare)
app.command("growth")(growth_cmd)
app.command("backends")(backends_cmd)
app.add_typer(inspect_cmds.app, name="inspect")
app.add_typer(history_cmds.app, name="history")
app.add_typer(export_cmds.app, name="export")
app.add_typer(baseline_cmds.app, name="baseline")
app.command("init")(init_cmd)
app.command("report")(report_cmd)


def main() -> None:
    """Entry point: every command is wrapped by `friendly_errors`; this catches what escapes before one runs."""
    warnings_on_console()
    try:
        app()
    except SystemExit:
        raise
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - the exit-code contract (runners/cli/common.py)
        sys.exit(report_error(e))


__all__ = ["app", "main"]
