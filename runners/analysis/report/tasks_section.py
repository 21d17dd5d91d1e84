"""The report's task section: what each task is (languages, size) and the analyzer BM25 used on it.

A lexical score is only readable with its analyzer: a Romanian task scored with English's stemmer is a different
number from the same task with Romanian's (custom_tasks/bm25_analyzer.py). Read from the task's YAML and the
stored results (analyzer_notes.py), never from a model library.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...config.model_languages import config_language_lines
from ...results.store import load_candidates

from ..diagnose.analyzer_notes import analyzer_lines, stored_analyzers
from ..diagnose.stale_runs import stale_lines_of
from ..page.blocks import Paragraph, Section, Table
from ..page.data import TaskData


def tasks_section(tasks: list[TaskData], results_dir: Path, split: str = "test", models: Sequence[Any] = ()) -> Section:
    """One row per task: languages, queries, documents, BM25's analyzer (as stored with its results); under the
    table, one warning per candidate model that does not know a task's language (`models`: the config's entries,
    their languages as the run recorded them in candidates.json)."""
    rows, notes = [], []
    langs_of = {td.name: td.config.languages for td in tasks if td.config is not None}
    fit = config_language_lines(models, load_candidates(results_dir), langs_of) if models and langs_of else []
    for td in tasks:
        if td.config is not None:  # stored runs of the task as it was: said beside its current languages
            notes += stale_lines_of(td.config, results_dir, td.name, [c.name for c in td.candidates])
        langs = ", ".join(td.config.languages) if td.config is not None else "— (a public mteb task)"
        n_queries = len(next(iter(td.scores[td.main_metric].values())))
        n_docs = str(len(td.collection.corpus)) if td.collection is not None else "—"
        found = stored_analyzers(results_dir, td.name, [c.name for c in td.candidates], split)
        analyzer = "; ".join(line.removeprefix("BM25 analyzer").lstrip(": ") for line in analyzer_lines(found)) \
            if found else "— (no BM25 candidate)"
        rows.append([td.name, langs, str(n_queries), n_docs, analyzer])
    return Section("tasks", "Tasks", [
        Paragraph("Each task's languages (the task YAML's `languages:`) and the analyzer BM25 used on it: its stemmer "
                  "and stop words come from the language as mteb chooses them, unless the task's `bm25:` block "
                  "sets them (docs/candidates.md).", "note"),
        Table(["task", "languages", "queries", "documents", "BM25 analyzer"], rows),
        *[Paragraph(line, "verdict") for line in notes],
        *[Paragraph(f"Warning: {line}", "verdict") for line in fit]])
