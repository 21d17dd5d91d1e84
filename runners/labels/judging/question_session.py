"""One rater's verification session: the unverified generated questions in their order, and what is reviewed.

Resuming is reading the reviews file back, as the grades mode reads the rater's file: the session starts at the first
question of the rater's order without a review. The reviews file is the task's, shared by every rater who verifies
at once, so a question someone else reviewed meanwhile counts as done too (the new lines are read before each
answer: a few bytes, not the whole file).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.config import TaskConfig

from ..questions.redact import Redactor

from ...statistics.analysis_errors import AnalysisError
from ..raters.review_store import ReadBack, ReviewLog, check_review, read_reviews
from .items import question_terms
from .question_items import QuestionItem
from .session import _shown


@dataclass
class QuestionSession:
    cfg: TaskConfig
    rater: str
    items: list[QuestionItem]  # in this rater's order
    path: Path  # the reviews file
    seen: ReadBack = field(default_factory=ReadBack)
    warnings: list[str] = field(default_factory=list)
    log: ReviewLog | None = None
    #: an edited question is redacted before it is written, as a sampled log query is (questions/redact.py)
    redactor: Redactor = field(default_factory=Redactor)
    _reading: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, cfg: TaskConfig, rater: str, items: list[QuestionItem], path: Path) -> QuestionSession:
        s = cls(cfg, rater, items, Path(path))
        s.log = ReviewLog(s.path)  # first: it mends a line cut by a crash
        s.seen = read_reviews(s.path, cfg.grades, final=True)
        s.warnings = [w for w in (s.log.repaired, *s.seen.warnings) if w]
        return s

    def refresh(self) -> None:
        """Read the lines other raters' servers appended since the last look (one reader at a time: the offset
        moves with each read)."""
        with self._reading:
            self.seen = read_reviews(self.path, self.cfg.grades, self.seen)

    def first_open(self, after: int = -1) -> int:
        """The first question after `after` without a review, else the first one at all (len(items): all done)."""
        open_ = [i for i, it in enumerate(self.items) if it.query_id not in self.seen.latest]
        return next((i for i in open_ if i > after), open_[0] if open_ else len(self.items))

    def progress(self) -> dict[str, Any]:
        done = [self.seen.latest[it.query_id] for it in self.items if it.query_id in self.seen.latest]
        return {"total": len(self.items), "done": len(done),
                **{a: sum(r.action == a for r in done) for a in ("accept", "edit", "reject")}}

    def item(self, i: int) -> dict[str, Any]:
        """What the screen shows for question i: texts (control characters made visible) and its latest review."""
        if not 0 <= i < len(self.items):
            raise AnalysisError(f"no question {i} (0..{len(self.items) - 1})")
        it = self.items[i]
        r = self.seen.latest.get(it.query_id)
        review = None if r is None else {"action": r.action, "text": None if r.text is None else _shown(r.text),
                                         "grade": r.grade, "rater": r.rater}
        return {"index": i, "query": _shown(it.query), "has_source": it.doc_id is not None, "title": _shown(it.title),
                "text": _shown(it.text), "terms": question_terms(it.query, tuple(self.cfg.languages)),
                "review": review}

    def review(self, i: int, action: str, text: str | None, grade: int | None) -> dict[str, Any]:
        """Append the review durably; only then is it counted (and acknowledged to the screen); an edit's personal
        data is replaced first (the kinds replaced come back as `redacted`). Accepting or editing
        a question that has a source passage needs the passage's grade: a verified question with no graded document
        would not be scored."""
        if not 0 <= i < len(self.items):
            raise AnalysisError(f"no question {i} (0..{len(self.items) - 1})")
        it = self.items[i]
        check_review(action, text.strip() if isinstance(text, str) else text, grade, self.cfg.grades)
        redacted: dict[str, int] = {}
        if action == "edit" and isinstance(text, str):
            result = self.redactor.redact(text.strip())  # kinds are counted, values never kept
            text, redacted = result.text, dict(result.counts)
        if it.doc_id is None and grade is not None:
            raise AnalysisError("this question names no source passage: there is nothing to grade")
        if action != "reject" and it.doc_id is not None and grade is None:
            raise AnalysisError(f"grade the source passage first ({', '.join(map(str, self.cfg.grade_scale))})")
        if action == "edit" and text in (it.query.strip(), _shown(it.query).strip()):
            action, text = "accept", None  # an edit that changes nothing (as the screen showed it) is an acceptance
        rec: dict[str, Any] = {"query_id": it.query_id, "action": action}
        if text is not None:
            rec["text"] = text
        if grade is not None:
            rec["grade"] = grade
        rec["rater"] = self.rater
        assert self.log is not None
        written = self.log.append(rec)
        self.refresh()
        return {**written, "redacted": redacted} if redacted else written

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
