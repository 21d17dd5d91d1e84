"""What a rater verifies in the question mode of `labels serve`: the task's generated questions not yet verified.

They are the rows of the task's added-questions file (`source: {added_questions: PATH}`, issue 38) whose
`tags.verified` is false, each shown with its source passage (`provenance.source_doc`, read from the task's corpus,
never from the added file, so the rater sees the document the task holds). The generator's model is not shown:
a rater who knows which model wrote a question judges the model, not the question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.readers._io import display_path, resolve
from custom_tasks.readers.added_questions import is_unverified as tags_unverified

from ...statistics.analysis_errors import AnalysisError
from .items import json_lines, seeded_order


@dataclass(frozen=True)
class QuestionItem:
    query_id: str
    query: str
    doc_id: str | None  # the source passage; None when the row names none the corpus holds
    title: str
    text: str


def added_path(cfg: TaskConfig) -> Path:
    """The task's added-questions file (relative paths: to the task YAML); one line when the task names none."""
    value = cfg.source.get("added_questions") if isinstance(cfg.source, dict) else None
    if not value:
        raise AnalysisError(f"task {cfg.name!r} has no added questions (source: added_questions): make some with "
                            f"`private-mteb questions generate -t {cfg.name}`")
    return resolve(cfg.base_dir, str(value))


def source_without_added(cfg: TaskConfig) -> dict[str, Any]:
    """The task's `source:` without its added questions: the question mode needs the corpus only, and reads the added
    file and its reviews itself, so a reviews file the loader would refuse (a line cut by a crash, mended when the
    server opens it) cannot keep the rater out."""
    return {k: v for k, v in cfg.source.items() if k not in ("added_questions", "use_unverified")}


def read_added(path: Path) -> list[dict[str, Any]]:
    """The added file's rows; a line that is not a question row is one line naming it."""
    path = Path(path)
    where = display_path(path)
    if not path.is_file():
        raise AnalysisError(f"{where}: added-questions file not found (`private-mteb questions generate` or "
                            "`questions sample` write it)")
    rows = []
    for n, line in json_lines(path):
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "query_id" not in row or not isinstance(row.get("query"), str):
                raise ValueError
        except ValueError:
            raise AnalysisError(f"{where}:{n}: not a question row (JSON with query_id and query)") from None
        rows.append(row)
    return rows


def is_unverified(row: dict[str, Any]) -> bool:
    """A generated question waiting for a person: `tags.verified` is false (a log question carries no flag); the
    loader's rule."""
    tags = row.get("tags")
    return isinstance(tags, dict) and tags_unverified(tags)


def source_doc(row: dict[str, Any]) -> str | None:
    prov = row.get("provenance")
    doc = prov.get("source_doc") if isinstance(prov, dict) else None
    return None if doc is None else str(doc)


def unverified_questions(path: Path, collection: Collection) -> tuple[list[QuestionItem], list[str]]:
    """The unverified questions with their passages, and one warning per kind of problem (counted, not per row)."""
    items, missing, seen = [], [], set()
    for row in read_added(path):
        qid = str(row["query_id"])
        if not is_unverified(row) or qid in seen:
            continue
        seen.add(qid)
        doc_id = source_doc(row)
        doc = collection.corpus.get(doc_id) if doc_id is not None else None
        if doc is None:
            missing.append(qid)
            items.append(QuestionItem(qid, row["query"], None, "", ""))
        else:
            items.append(QuestionItem(qid, row["query"], doc_id, doc.get("title", "") or "", doc.get("text", "")))
    warnings = []
    if missing:
        warnings.append(f"{display_path(Path(path))}: {len(missing)} question(s) name no source passage of the corpus "
                        f"(provenance.source_doc), e.g. {missing[0]!r}: shown without one, no grade asked")
    return items, warnings


def question_order(items: list[QuestionItem], rater: str, seed: int = 0) -> list[QuestionItem]:
    """This rater's seeded order (stable across restarts; two raters at once start on different questions)."""
    return seeded_order(items, rater, seed, key=lambda it: it.query_id)
