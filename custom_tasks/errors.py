"""One error type for bad input, so every entry point can print a single clear line."""

from __future__ import annotations

from pathlib import Path


class CollectionError(ValueError):
    """Bad input data or config: names the file, the line/row (when known) and the problem.

    ``str(err)`` is the one line shown to users, e.g.
    ``data/qrels/test.tsv:14: grade 'x' is not an integer >= 0``.
    """

    def __init__(self, path: str | Path | None, problem: str, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.problem = problem
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.problem}"


class ConfigError(CollectionError):
    """Bad YAML config (task or benchmark): same one-line format."""
