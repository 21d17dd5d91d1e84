"""One rater's judging session: their items in their order, what they have judged, their pace.

Resuming is reading the rater's file back: the session starts at the first item of the rater's order without
a line (graded, skipped or marked unsure), so a restart after `kill -9` goes on where the last acknowledged
judgment left off. Pace is the median time between consecutive judgments (pauses over 10 minutes left
out, so a lunch break does not make the ETA absurd).
"""

from __future__ import annotations

import datetime as dt
import statistics
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.config import TaskConfig

from ...statistics.analysis_errors import AnalysisError
from ..raters.rating_store import RaterLog
from ..raters.ratings import Judgment, Key, read_rater_file
from .items import Item, question_terms, visible

PAUSE_S = 600.0


@dataclass
class JudgingSession:
    cfg: TaskConfig
    rater: str
    items: list[Item]  # in this rater's order
    path: Path
    judged: dict[Key, Judgment] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)  # epoch seconds of this rater's judgments, in file order
    warnings: list[str] = field(default_factory=list)
    log: RaterLog | None = None
    live: Any = None  # live_plan.LivePlan with `labels serve -c CONFIG`: re-plans the order after each judgment

    @classmethod
    def open(cls, cfg: TaskConfig, rater: str, items: list[Item], path: Path) -> JudgingSession:
        """Read what the rater did before, then lock their file for appending."""
        rf = read_rater_file(path, cfg)
        s = cls(cfg, rater, items, path, dict(rf.judgments), warnings=rf.warnings)
        s.times = sorted(t for t in (_epoch(j.time) for j in rf.judgments.values()) if t is not None)
        s.log = RaterLog(path)
        return s

    @property
    def index(self) -> dict[Key, int]:
        return {it.key: i for i, it in enumerate(self.items)}

    def first_open(self) -> int:
        """The first item without a judgment (len(items) when all are done)."""
        return next((i for i, it in enumerate(self.items) if it.key not in self.judged), len(self.items))

    def progress(self) -> dict[str, Any]:
        keys = {it.key for it in self.items}
        done = [j for k, j in self.judged.items() if k in keys]
        gaps = [b - a for a, b in zip(self.times, self.times[1:]) if 0 <= b - a <= PAUSE_S]
        per_item = statistics.median(gaps) if gaps else None
        left = len(self.items) - len(done)
        return {"total": len(self.items), "done": len(done),
                "graded": sum(j.status == "graded" for j in done),
                "skipped": sum(j.status == "skip" for j in done), "unsure": sum(j.status == "unsure" for j in done),
                "per_hour": round(3600 / per_item) if per_item else None,
                "eta_s": round(left * per_item) if per_item else None}

    def item(self, i: int) -> dict[str, Any]:
        """What the screen shows for item i: texts (control characters made visible) and the rater's judgment."""
        if not 0 <= i < len(self.items):
            raise AnalysisError(f"no item {i} (0..{len(self.items) - 1})")
        it = self.items[i]
        j = self.judged.get(it.key)
        return {"index": i, "key": list(it.key), "query": _shown(it.query), "title": _shown(it.title), "text": _shown(it.text),
                "terms": question_terms(it.query, tuple(self.cfg.languages)), "grade": j.grade if j else None, "status": j.status if j else None}

    def judge(self, i: int, grade: int | None, status: str) -> dict[str, Any]:
        """Append the judgment durably; only then is it in `judged` (and acknowledged to the screen)."""
        if not 0 <= i < len(self.items):
            raise AnalysisError(f"no item {i} (0..{len(self.items) - 1})")
        if status == "graded":
            if isinstance(grade, bool) or not isinstance(grade, int) or grade not in self.cfg.grades:
                raise AnalysisError(f"grade {grade!r} is outside the task's scale {self.cfg.grade_scale}")
        elif status in ("skip", "unsure"):
            grade = None
        else:
            raise AnalysisError(f"status {status!r} is not graded, skip or unsure")
        split, qid, doc_id = self.items[i].key
        assert self.log is not None
        rec = self.log.append({"task": self.cfg.name, "split": split, "query_id": qid, "doc_id": doc_id,
                               "grade": grade, "status": status, "rater": self.rater})
        self.judged[self.items[i].key] = Judgment(self.items[i].key, grade, status, self.rater, rec["time"])
        t = _epoch(rec["time"])
        if t is not None:
            self.times.append(t)
        return rec

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


def _shown(text: str) -> str:
    """A text as the screen shows it: NFC (the same characters, composed as the question's words are, so a
    document written in decomposed form is marked too) with control characters made visible."""
    return visible(unicodedata.normalize("NFC", text))


def _epoch(value: str) -> float | None:
    try:
        return dt.datetime.fromisoformat(value).timestamp()
    except (TypeError, ValueError):
        return None
