"""What every command shares: consoles, the error contract, offline defaults, table output."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable

import typer
from rich.console import Console

console = Console(width=None if sys.stdout.isatty() else 140)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def friendly_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input -> one red line and exit code 2, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from custom_tasks.errors import CollectionError

        try:
            return func(*args, **kwargs)
        except CollectionError as e:
            err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except FileNotFoundError as e:
            err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


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


def emit(df: Any, fmt: str) -> None:
    if fmt == "csv":
        console.print(df.to_csv(index=False), end="", highlight=False, markup=False)
    elif fmt == "json":
        console.print(df.to_json(orient="records", indent=1), highlight=False, markup=False)
    elif fmt == "markdown":
        console.print(df.to_markdown(index=False), highlight=False, markup=False)
    else:
        raise typer.BadParameter(f"unknown format '{fmt}' (table|markdown|csv|json)")


def fmt4(x: float) -> str:
    return f"{x:.4f}"
