"""`private-mteb` command line: a thin layer over the Python API (custom_tasks, runners).

Every command module imports only typer and rich at start-up; the API behind a command is
imported when the command runs, so `--help` and the analysis commands start fast.
"""

from __future__ import annotations

import sys

from . import analysis, run, tasks
from . import export as export_cmds
from . import inspect as inspect_cmds
from . import labels as labels_cmds
from .growth import growth_cmd
from .common import App, report_error
from .compare import compare
from .init import init_cmd
from .report import report_cmd

app = App(add_completion=False, no_args_is_help=True,
          help="Score embedding models on your own documents with MTEB's metrics.")
app.add_typer(tasks.app, name="tasks")
app.add_typer(labels_cmds.app, name="labels")
app.command("run")(run.run)
app.command("stats")(analysis.stats_cmd)
app.command("check")(analysis.check_cmd)
app.command("experiments")(analysis.experiments_cmd)
app.command("compare")(compare)
app.command("growth")(growth_cmd)
app.add_typer(inspect_cmds.app, name="inspect")
app.add_typer(export_cmds.app, name="export")
app.command("init")(init_cmd)
app.command("report")(report_cmd)


def main() -> None:
    """Entry point: every command is wrapped by `friendly_errors`; this catches what escapes before one runs."""
    try:
        app()
    except SystemExit:
        raise
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - the exit-code contract (runners/cli/common.py)
        sys.exit(report_error(e))


__all__ = ["app", "main"]
