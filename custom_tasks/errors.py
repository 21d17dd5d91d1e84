"""One error type for bad input, so every entry point can print a single clear line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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


class CollectionProblems(CollectionError):
    """Every row-level problem of a collection's files, found in one pass (issue 29): the first
    ``MAX_PROBLEMS_SHOWN`` as ``file:line: problem`` lines, the rest counted per file.

    ``path``/``line``/``problem`` are the first one's, so code reading a single CollectionError still works;
    one problem alone prints exactly as a plain CollectionError does. The warnings found in the rows read are
    listed after the errors (``warnings``: their count and one line per kind, each naming ``file:line``s), so
    one round fixes both; they never stop a run.
    """

    def __init__(self, errors: list[CollectionError], warnings: tuple[int, list[str]] = (0, [])) -> None:
        self.errors = list(errors)
        self.warnings = warnings
        self.problems: list[tuple[int | None, str]] = [(e.line, e.problem) for e in self.errors]
        first = self.errors[0]
        super().__init__(first.path, first.problem, first.line)

    def per_file(self) -> dict[str, int]:
        """Problem count per file, in the order the files were read."""
        counts: dict[str, int] = {}
        for e in self.errors:
            counts[e.path or "<input>"] = counts.get(e.path or "<input>", 0) + 1
        return counts

    def _format(self) -> str:
        if not hasattr(self, "errors"):  # during CollectionError.__init__
            return super()._format()
        shown = [str(e) for e in self.errors[:MAX_PROBLEMS_SHOWN]]
        n_warn, warn_lines = self.warnings
        tail = [f"and {n_warn} warning(s) (they do not stop a run; fix them in the same round if they matter):",
                *warn_lines] if warn_lines else []
        if len(self.errors) == 1:
            return "\n".join([shown[0], *tail])
        counts = ", ".join(f"{p}: {n}" for p, n in self.per_file().items())
        lines = [f"{len(self.errors)} problem(s) in the collection ({counts}); fix them all, then re-run:", *shown]
        rest = self.errors[MAX_PROBLEMS_SHOWN:]
        if rest:
            left: dict[str, int] = {}
            for e in rest:
                left[e.path or "<input>"] = left.get(e.path or "<input>", 0) + 1
            lines.append(f"... and {len(rest)} more problem(s) ({', '.join(f'{p}: {n}' for p, n in left.items())})")
        return "\n".join(lines + tail)


class ProblemLog:
    """Collects the row-level problems of one collection while its files are read, so one pass reports them
    all (a team fixes them in one round, not one per run).

    A row with a problem is skipped (a repeated id keeps its first row); problems about a whole file (not
    found, no such column, unparsable CSV) still end the reading, reported together with the rows before.
    """

    def __init__(self) -> None:
        self.errors: list[CollectionError] = []
        self._seen: set[str] = set()
        #: (count, one line per kind) of the warnings found so far, shown after the errors (set by the builder)
        self.warnings: tuple[int, list[str]] = (0, [])

    def add(self, e: CollectionError) -> None:
        """Record ``e`` once (a file read twice, e.g. to look for a column, reports its rows once)."""
        if str(e) not in self._seen:
            self._seen.add(str(e))
            self.errors.append(e)

    @contextmanager
    def row(self) -> Iterator[None]:
        """Around one row's checks: its CollectionError is recorded and the row skipped."""
        try:
            yield
        except CollectionProblems:
            raise
        except CollectionError as e:
            self.add(e)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Around a whole reader: a file-level error joins the row problems found before it."""
        try:
            yield
        except CollectionProblems:
            raise
        except CollectionError as e:
            if not self.errors:
                raise
            self.add(e)
            raise self.error() from None

    def error(self) -> CollectionProblems:
        return CollectionProblems(self.errors, self.warnings)

    def check(self) -> None:
        """Raise every recorded problem at once (nothing when there is none)."""
        if self.errors:
            raise self.error()
