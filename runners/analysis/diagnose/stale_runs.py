"""Do the stored results still measure the task as its YAML and files say it is now?

`run` never reuses a result whose fingerprint differs from the current config (runners/results/fingerprints.py),
but `stats`, `check` and the report read whatever is stored: after `languages:` or the `bm25:` block is edited, or
a document is added, and before the next `run`, they would print figures of the task as it was, next to the task's
current settings (the report's Tasks section would say `ron-Latn` beside an English BM25 analyzer). Each stored run
keeps its task identity (`identity.json`: the collection's content hash and `settings_fingerprint()`), so the
difference is found without loading any model, and said in one line per task naming the candidates and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from custom_tasks.config import TaskConfig

from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import task_config_for
from ...results.store import find_run, read_json
from ...statistics.per_query import label_of, task_config_collection


def stale_lines(bench: BenchmarkConfig, entry: str, task_name: str, names: Sequence[str]) -> list[str]:
    """'note: ...' lines for the candidates (results names) whose stored run on `task_name` was made with other
    task settings, or on another version of the collection, than the task has now; [] when all match, for a
    public task, or for runs stored before private-mteb kept their identity."""
    try:
        cfg = task_config_for(entry, bench)
    except Exception:  # a public task, or files the command itself reports on
        return []
    return stale_lines_of(cfg, bench.results_path, task_name, names)


def stale_lines_of(cfg: TaskConfig, results: Path, task_name: str, names: Sequence[str]) -> list[str]:
    """`stale_lines` for a task config already read (the report has it)."""
    try:
        settings_now = cfg.settings_fingerprint()
    except Exception:
        return []
    other_settings, other_data = [], []
    revision_now: str | None = None
    for name in names:
        folder = find_run(results, name, task_name)
        try:
            task = read_json(folder / "identity.json").get("task") or {} if folder is not None else {}
        except (OSError, ValueError, AttributeError):
            continue
        if not isinstance(task, dict):
            continue
        label = label_of(results, name)
        if task.get("settings") is not None and task.get("settings") != settings_now:
            other_settings.append(label)
        stored_revision = task.get("dataset_revision")
        if stored_revision:
            if revision_now is None:
                try:
                    revision_now = task_config_collection(cfg).content_hash()
                except Exception:  # unreadable files: validate/run say what is wrong with them
                    return _lines(task_name, other_settings, [])
            if stored_revision != revision_now:
                other_data.append(label)
    return _lines(task_name, other_settings, other_data)


def _lines(task: str, other_settings: list[str], other_data: list[str]) -> list[str]:
    out = []
    if other_settings:
        out.append(f"note: {task}: the stored results of {', '.join(other_settings)} were made with other task "
                   "settings than its YAML has now (languages:, bm25:, labels or scoring options): their figures "
                   "are of the task as it was; `private-mteb run` brings them up to date")
    if other_data:
        out.append(f"note: {task}: the stored results of {', '.join(other_data)} were made on another version of "
                   "the collection than its files hold now: their figures are of the data as it was; "
                   "`private-mteb run` brings them up to date")
    return out
