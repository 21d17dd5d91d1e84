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


#: how many problems of one file are shown; the rest are counted
MAX_PROBLEMS_SHOWN = 20


class ConfigProblems(ConfigError):
    """Several problems of one config file: one ``file:line: problem`` line each (20 at most, then a count).

    ``path``/``line``/``problem`` are the first one's, so code reading a single ConfigError still works.
    """

    def __init__(self, path: str | Path | None, problems: list[tuple[int | None, str]]) -> None:
        self.problems = list(problems)
        super().__init__(path, problems[0][1], problems[0][0])

    def _format(self) -> str:
        where = self.path or "<input>"
        lines = [f"{where}:{line}: {p}" if line is not None else f"{where}: {p}"
                 for line, p in self.problems[:MAX_PROBLEMS_SHOWN]]
        rest = len(self.problems) - MAX_PROBLEMS_SHOWN
        if rest > 0:
            lines.append(f"{where}: ... and {rest} more problem(s)")
        return "\n".join(lines)
