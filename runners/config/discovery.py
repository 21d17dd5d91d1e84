"""Which benchmark config a command uses when `-c` is not given (issue 29: "a way in").

The rule, the same for every command:
1. `-c CONFIG` when given;
2. else the project's only benchmark config (`configs/benchmarks/*.yaml` of the project found upward from
   the current folder, like git finds `.git`; `--project` / $PRIVATE_MTEB_PROJECT override);
3. else, when the project has several, the command's demo config if the project ships it (the checkout's
   `configs/benchmarks/demo.yaml`, so `private-mteb run` in the checkout still runs the demo);
4. else one line: several configs -> they are listed and `-c` is asked for; none -> run `init`.
Why: a team's project holds one config written by `init`; falling back to a demo file it does not have
gave "demo.yaml: benchmark config not found" with no hint.
"""

from __future__ import annotations

import os
from pathlib import Path

from custom_tasks.config import project_root
from custom_tasks.errors import ConfigError

BENCHMARKS_DIR = Path("configs") / "benchmarks"
DEMO = BENCHMARKS_DIR / "demo.yaml"


def benchmark_configs(root: Path | None = None) -> list[Path]:
    """The project's benchmark configs, sorted by name."""
    folder = (root or project_root()) / BENCHMARKS_DIR
    return sorted(p for p in folder.glob("*.y*ml") if p.is_file()) if folder.is_dir() else []


def _shown(path: Path) -> Path:
    """A path relative to the current folder when it lies below it (shorter messages), else absolute."""
    try:
        return Path(os.path.relpath(path, Path.cwd())) if path.resolve().is_relative_to(Path.cwd().resolve()) else path
    except ValueError:  # another drive
        return path


def config_path(given: Path | None, demo: Path = DEMO) -> Path:
    """The benchmark config to use: `given`, else the project's only one, else its `demo` (see module doc)."""
    if given is not None:
        return given
    root = project_root()
    found = benchmark_configs(root)
    if len(found) == 1:
        return _shown(found[0])
    if (root / demo).is_file():
        return _shown(root / demo)
    folder = _shown(root / BENCHMARKS_DIR)
    if not found:
        raise ConfigError(folder, "no benchmark config in this project: run `private-mteb init DATA_FOLDER` to "
                                  "write one, or pass -c CONFIG")
    names = ", ".join(p.name for p in found)
    raise ConfigError(folder, f"{len(found)} benchmark configs ({names}): pass -c CONFIG to choose one, "
                              f"e.g. -c {_shown(found[0])}")


def optional_config(given: Path | None, demo: Path = DEMO, fallback: Path = Path("results")) -> Path | None:
    """For commands that also work on bare results folders (`check`, `compare`): the config by the rule above;
    None when the project has none (they read `fallback`, ./results), or several while `fallback` exists
    (what they read before configs were found); several and no `fallback`: the one line asking for -c."""
    try:
        return config_path(given, demo)
    except ConfigError:
        if len(benchmark_configs()) > 1 and not fallback.is_dir():
            raise
        return None


def not_found_hint(path: Path) -> str:
    """What to do about a `-c` file that does not exist: pass another, naming the project's configs."""
    found = benchmark_configs()
    known = f" (this project has: {', '.join(str(_shown(p)) for p in found)})" if found else \
        " (this project has none: run `private-mteb init DATA_FOLDER`)"
    return f"benchmark config not found: pass -c CONFIG with an existing benchmark YAML{known}"
