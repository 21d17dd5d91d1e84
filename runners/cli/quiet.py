"""Quiet by default: a command's stderr holds private-mteb's own lines only, unless `--verbose`.

The libraries a run drives talk on their own: tqdm bars (mteb's hybrid "Indexing sub-models", bm25s,
transformers' "Loading weights"), NNCF's quantisation bars, and log records: bm25s logs DEBUG, and a library
calling `logging.warning()` on the root logger (onnxruntime's quantiser does) makes Python install a default
handler that then prints every library's records ("DEBUG:bm25s:Building index..."). For the whole command the
CLI therefore holds one root handler of its own, so no default handler is ever installed:

* private-mteb's records (loggers `runners.*`, `custom_tasks.*`) of level WARNING and above are one
  `warning: ...` line on stderr; other libraries' records only from ERROR up, named by their logger;
* the libraries' bars are off (execution.encoding.progress.quiet_foreign_bars, quiet_nncf);
* LanceDB's Rust logger (env_logger, which prints `[time WARN  lance::...]` straight to stderr, past Python's
  logging) is held at `error` through its own variable, LANCEDB_LOG, read once when lancedb is first imported
  (so set here, before any retriever imports it); a LANCEDB_LOG the user set is left alone.

`--verbose` shows the libraries' bars and their records from INFO up (as `LEVEL:logger: message`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

from .common import err_console
from .terminal import styled

OWN = ("runners", "custom_tasks")
#: the variable LanceDB's Rust logger (env_logger) takes its filter from, as RUST_LOG elsewhere
LANCE_LOG_ENV = "LANCEDB_LOG"


class OwnLines(logging.Handler):
    """The CLI's root handler: our warnings as one line each, other libraries' records by level (see module)."""

    def __init__(self, verbose: bool) -> None:
        super().__init__(logging.INFO if verbose else logging.WARNING)
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        own = record.name.split(".", 1)[0] in OWN
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a library's bad format arguments must not stop the command
            message = str(record.msg)
        if own and record.levelno >= logging.WARNING:
            kind, style = ("error:", "bold red") if record.levelno >= logging.ERROR else ("warning:", "yellow")
            err_console.print(styled((kind, style), f" {message}"), soft_wrap=True)
        elif self.verbose or record.levelno >= logging.ERROR:
            err_console.print(styled((f"{record.levelname}:{record.name}:", "dim"), f" {message}"), soft_wrap=True)


@contextlib.contextmanager
def quiet_output(verbose: bool) -> Iterator[None]:
    """For one command: the root handler above, the verbose switch the execution layer reads, bars off."""
    from ..execution.encoding.progress import VERBOSE_ENV, quiet_foreign_bars

    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, OwnLines)]:  # a previous command in this process
        root.removeHandler(old)
    handler = OwnLines(verbose)
    root.addHandler(handler)
    level = root.level
    if verbose:
        root.setLevel(logging.INFO)
    before = os.environ.get(VERBOSE_ENV)
    os.environ[VERBOSE_ENV] = "1" if verbose else "0"
    lance_set = not verbose and LANCE_LOG_ENV not in os.environ
    if lance_set:
        os.environ[LANCE_LOG_ENV] = "error"
    try:
        with quiet_foreign_bars(not verbose):
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        if lance_set:
            os.environ.pop(LANCE_LOG_ENV, None)
        if before is None:
            os.environ.pop(VERBOSE_ENV, None)
        else:
            os.environ[VERBOSE_ENV] = before
