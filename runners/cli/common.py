"""What every command shares: consoles, the exit-code contract, offline defaults, table output.

Exit codes (every command): 0 success; 1 a regression found (`check` only); 2 bad input, usage or
environment (bad data/config, missing or damaged results, unknown metric/tag/model, disk full,
permission denied); 130 interrupted. Anything unexpected is one "internal error" line and exit 2.
A traceback is printed only with PRIVATE_MTEB_DEBUG=1.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from typer.exceptions import TyperException

from .terminal import SafeConsole, styled, visible

#: the console writers of every command (runners/cli/terminal.py): user text printed literally, never as
#: emoji codes, markup or terminal control sequences; lines not wrapped when the output is not a terminal
console = SafeConsole()
err_console = SafeConsole(stderr=True)

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_NO_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS}


def debug() -> bool:
    return os.environ.get("PRIVATE_MTEB_DEBUG") == "1"


def _os_error_line(e: OSError) -> str:
    """Disk full / permission / missing file: the file and what to do."""
    from ..results.store import fault_errno  # the store's errno rule, so a numpy short write is "disk full" here too

    where, code = e.filename or "a file", fault_errno(e)
    if isinstance(e, FileNotFoundError):
        return f"{e.filename}: file not found" if e.filename else str(e)
    if code == errno.EPIPE:
        return "output closed before everything was printed (broken pipe)"
    if code in _DISK_FULL:
        return f"disk full while writing {where}: free space or point results_dir elsewhere"
    if code == errno.EROFS:
        return f"cannot write {where}: read-only file system: point results_dir elsewhere"
    if code in _NO_WRITE or isinstance(e, PermissionError):
        return f"cannot write {where}: permission denied: make it writable or point results_dir elsewhere"
    return f"{where}: {e.strerror or e}"


def error_line(e: BaseException) -> tuple[int, str]:
    """(exit code, one line) for an exception that escaped a command."""
    from custom_tasks.errors import CollectionError

    from ..statistics.analysis_errors import AnalysisError

    if isinstance(e, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(e, (CollectionError, AnalysisError)):
        return EXIT_BAD_INPUT, str(e)
    if isinstance(e, json.JSONDecodeError):
        return EXIT_BAD_INPUT, (f"a stored JSON file is damaged ({e.msg}, line {e.lineno}): re-run with "
                                "PRIVATE_MTEB_DEBUG=1 to see which, delete it and re-run `private-mteb run`")
    if isinstance(e, OSError):
        return EXIT_BAD_INPUT, _os_error_line(e)
    return EXIT_BAD_INPUT, (f"internal error: {type(e).__name__}: {e} "
                            "(run with PRIVATE_MTEB_DEBUG=1 for the traceback)")


def report_error(e: BaseException) -> int:
    """Print the one line (and, with PRIVATE_MTEB_DEBUG=1, the traceback); return the exit code."""
    code, line = error_line(e)
    if debug():
        err_console.print("".join(traceback.format_exception(e)), end="")
    err_console.print(styled(("error:", "bold red"), " ", line), soft_wrap=True)
    return code


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """The exit-code contract for one command: any exception -> one red line and exit 2 (130 on Ctrl-C)."""
    if getattr(func, "_friendly", False):
        return func

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, TyperException, SystemExit):
            raise  # typer.Exit(code) and usage errors (click's exit 2) keep their own meaning
        except BaseException as e:  # noqa: BLE001 - the one place that turns every fault into an exit code
            if not isinstance(e, (Exception, KeyboardInterrupt)):
                raise
            raise typer.Exit(report_error(e)) from None

    wrapper._friendly = True  # type: ignore[attr-defined]
    return wrapper


class App(typer.Typer):
    """A Typer whose every command is wrapped in `friendly_errors`: no command can leak a traceback."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("pretty_exceptions_enable", False)
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        register = super().command(*args, **kwargs)

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            register(friendly_errors(func))
            return func

        return decorator

    def add_typer(self, typer_instance: typer.Typer, **kwargs: Any) -> None:
        """Sub-apps (`tasks`, ...) get the same contract even when built with a plain typer.Typer."""
        _wrap_commands(typer_instance)
        super().add_typer(typer_instance, **kwargs)


def _wrap_commands(app: typer.Typer) -> None:
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = friendly_errors(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _wrap_commands(group.typer_instance)


CONFIG_HELP = ("benchmark YAML (default: the project's only configs/benchmarks/*.yaml; with several, the checkout's "
               "demo config, else pass -c)")
RESULTS_HELP = "results folder (default: the config's results_dir, relative to the config file)"


def config_option(demo: str = "demo.yaml") -> Any:
    """`--config/-c`, the same for every command; None when not given (then runners/config/discovery.py decides)."""
    return typer.Option(None, "--config", "-c", help=CONFIG_HELP.replace("demo config", demo))


def results_option() -> Any:
    """`--results`, the same for every command that reads results."""
    return typer.Option(None, "--results", file_okay=False, help=RESULTS_HELP)


def load_config(config: Optional[Path], results: Optional[Path] = None, demo: str = "demo.yaml") -> Any:
    """The benchmark config by the one discovery rule (runners/config/discovery.py), `--results` replacing its
    results_dir: every command finds results where `run -c` put them, or where `--results` says."""
    from ..config.benchmark import BenchmarkConfig
    from ..config.discovery import BENCHMARKS_DIR, config_path

    cfg = BenchmarkConfig.from_file(config_path(config, BENCHMARKS_DIR / demo))
    if results is not None:
        cfg.results_dir = str(Path(results).expanduser().resolve())
    return cfg


def offline_default() -> None:
    """Private data: nothing goes to the hub unless the user says so (PRIVATE_MTEB_ONLINE=1)."""
    if os.environ.get("PRIVATE_MTEB_ONLINE") != "1":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import logging
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*SentenceTransformers that use prompts.*")
    logging.getLogger("mteb").setLevel(logging.ERROR)


def warnings_on_console() -> None:
    """Python warnings (a report section left out, ...) as one `warning: ...` line through `err_console`, so
    the user text they quote is shown literally like every other output (installed by `main`)."""
    import warnings

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        err_console.print(styled(("warning:", "yellow"), f" {message}"), soft_wrap=True)

    warnings.showwarning = show


def print_data(text: str) -> None:
    """CSV, Markdown... on stdout: byte for byte when piped or redirected (it is data); on a terminal, control
    characters are shown as escapes (terminal.visible) like every other output."""
    if sys.stdout.isatty():
        text = visible(text.replace("\r\n", "\n"))
    sys.stdout.write(text)
    sys.stdout.flush()


def fmt4(x: float) -> str:
    """A metric's value, printed the one way every command prints it (statistics.format_score)."""
    from ..statistics.intervals import format_score

    return format_score(x)


def _json_clean(x: Any) -> Any:
    """NaN/inf -> None, numpy scalars -> Python, tuples -> lists (recursively)."""
    import math

    if isinstance(x, dict):
        return {str(k): _json_clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        try:
            x = x.item()
        except (TypeError, ValueError):
            pass
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def print_json(obj: Any) -> None:
    """Exactly one JSON document on stdout (NaN -> null), written plainly: rich would wrap and colour it."""
    sys.stdout.write(json.dumps(_json_clean(obj), indent=1, allow_nan=False, default=str) + "\n")
    sys.stdout.flush()
