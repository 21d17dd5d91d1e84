"""Which analyzer BM25 used on a task, as its stored results say (`stats` and the report name it).

`run` stores the analyzer (custom_tasks/bm25_analyzer.py: stemmer, stop words, case, normalisation) with every
result that has BM25 in it (the per-query file's `bm25_analyzer`); a score of a lexical candidate is only readable
next to it. Read here from those files only: no mteb, no bm25s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...config.model_spec import BM25_NAME
from ...results.store import load_candidates
from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import stored_run_meta

NOT_RECORDED = "not recorded (stored before private-mteb recorded BM25's analyzer; `run --force` records it)"


def stored_analyzers(results_dir: Path, task: str, names: Sequence[str], split: str = "test"
                     ) -> dict[str, dict[str, Any] | None]:
    """label -> the analyzer record BM25 used, for the candidates (results names) with BM25 in them; None for a
    BM25 or hybrid result stored before analyzers were recorded."""
    known = load_candidates(results_dir)
    out: dict[str, dict[str, Any] | None] = {}
    for name in names:
        try:
            meta = stored_run_meta(results_dir, name, task, split)
        except (AnalysisError, OSError, ValueError):
            continue
        label = str(known.get(name, {}).get("label") or name)
        record = meta.get("bm25_analyzer")
        if isinstance(record, dict):
            out[label] = record
        elif name == BM25_NAME or known.get(name, {}).get("experiment") == "hybrid":
            out[label] = None
    return out


def analyzer_text(record: dict[str, Any] | None) -> str:
    """The stored one-line description, or why there is none."""
    return str(record.get("description")) if record else NOT_RECORDED


def analyzer_lines(found: dict[str, dict[str, Any] | None]) -> list[str]:
    """'BM25 analyzer: ...' once when every BM25 candidate used the same one, else one line per analyzer
    naming its candidates."""
    by_text: dict[str, list[str]] = {}
    for label, record in found.items():
        by_text.setdefault(analyzer_text(record), []).append(label)
    if len(by_text) == 1:
        return [f"BM25 analyzer: {next(iter(by_text))}"]
    return [f"BM25 analyzer ({', '.join(labels)}): {text}" for text, labels in by_text.items()]
