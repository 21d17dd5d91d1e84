"""The reviews of added questions (`<added>.reviews.jsonl`, written by the judging app's question mode).

Append-only JSONL, one row per review: ``{"query_id", "action": "accept"|"edit"|"reject", "text" (edit only),
"grade" (of the question's source passage, optional), "rater", "time"}``. The latest row of a question (file
order: the file is only ever appended to) is the one that counts, so a rater can change their mind and the
history stays on disk. Read here, applied by ``added_questions.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProblemLog
from ..row_values import checked_id, parse_grade
from ._io import is_missing, read_table

ACTIONS = ("accept", "edit", "reject")


@dataclass(frozen=True)
class Review:
    """The review that counts for one question."""

    action: str
    text: str | None = None
    grade: int | None = None


def reviews_path(added: Path) -> Path:
    """Where the reviews of an added-questions file live: ``questions.jsonl`` -> ``questions.reviews.jsonl``."""
    added = Path(added)
    return added.with_name(f"{added.stem}.reviews.jsonl")


def read_reviews(path: Path, known: set[str]) -> dict[str, Review]:
    """query id -> its latest review; {} when there is no reviews file. Bad rows: every one as file:line."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    log = ProblemLog()
    t = read_table(path, "utf-8", "question reviews", log=log)
    latest: dict[str, Review] = {}
    with log.reading():
        for loc, row in t.rows:
            with t.checking():
                qid = checked_id(t, loc, t.get(loc, row, "query_id"), "query")
                if qid not in known:
                    raise t.error(loc, f"review of unknown question {qid!r} (not in the added questions): "
                                       "remove the row or restore the question")
                latest[qid] = _review(t, loc, row, qid)
    log.check()
    return latest


def _review(t: Any, loc: int, row: dict[str, Any], qid: str) -> Review:
    action = str(t.get(loc, row, "action")).strip().lower()
    if action not in ACTIONS:
        raise t.error(loc, f"action {action!r} of question {qid!r} is not one of {', '.join(ACTIONS)}")
    text = row.get("text")
    if action == "edit" and (not isinstance(text, str) or not text.strip()):
        raise t.error(loc, f"edit of question {qid!r} has no new 'text'")
    grade = row.get("grade")
    return Review(action, text.strip() if action == "edit" else None,
                  None if is_missing(grade) or grade == "" else parse_grade(t, loc, grade))
