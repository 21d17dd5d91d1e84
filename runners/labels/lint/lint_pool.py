"""Pooling suggestion of `tasks lint -c`: questions resting on one judged document while the candidates find many
unjudged ones.

A question with a single judged document scores every other hit as wrong; when the candidates' top-k holds many
documents nobody judged, its score says more about the labels than about the models. Reads stored rankings only
(`private-mteb run` first); the remedy is `labels pool` for those questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection

from .lint import EXAMPLES, Finding, LintSettings

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import label_of
from ..pool.judged import ranked_ids, stored_rankings


def pooling_finding(results_dir: Path, collection: Collection, models: Sequence[str], settings: LintSettings,
                    split: str = "test") -> Finding | None:
    """Questions with exactly one judged document (any grade) and >= ``pool_min_unjudged`` unjudged documents in
    the union of the candidates' top-``pool_k``, but for those whose labels are declared complete; AnalysisError
    when a candidate has no stored rankings."""
    if split not in collection.qrels or not models:
        return None
    qrels = collection.qrels[split]
    known = collection.complete_in(split)  # declared complete: a single judged document is the whole story
    single = {q: labels for q, labels in qrels.items() if len(labels) == 1 and q not in known}
    unjudged: dict[str, set[str]] = {q: set() for q in single}
    for model in models:
        rankings, _ = stored_rankings(results_dir, model, collection.name, split)
        for q, labels in single.items():
            unjudged[q] |= {d for d in ranked_ids(rankings.get(q, {}))[:settings.pool_k] if d not in labels}
    rows: list[dict[str, Any]] = [{"query": q, "judged": next(iter(single[q])), "unjudged_in_top": len(u)}
                                  for q, u in unjudged.items() if len(u) >= settings.pool_min_unjudged]
    if not rows:
        return None
    rows.sort(key=lambda r: (-r["unjudged_in_top"], r["query"]))
    names = ", ".join(label_of(results_dir, m) for m in models)
    return Finding("pooling_suggested",
                   f"{len(rows)} of {len(qrels)} questions have a single judged document and >= "
                   f"{settings.pool_min_unjudged} unjudged documents in the top-{settings.pool_k} of {names}",
                   len(rows), [f"{r['query']} ({r['unjudged_in_top']} unjudged)" for r in rows[:EXAMPLES]],
                   f"judge their pooled top-{settings.pool_k}: `private-mteb labels pool -c CONFIG --depth "
                   f"{settings.pool_k}`, grade, then `labels import`", rows)


def attach(report: Any, results_dir: Path, collection: Collection, models: Sequence[str], settings: LintSettings,
           split: str = "test") -> None:
    """Add the pooling suggestion to a ``LintReport`` (a skip note when no candidate has stored rankings)."""
    try:
        found = pooling_finding(results_dir, collection, models, settings, split)
    except AnalysisError as e:
        report.skipped["pooling_suggested"] = str(e)
        return
    if found is not None:
        report.findings.append(found)
