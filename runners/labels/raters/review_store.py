"""The reviews of generated questions: `<added>.reviews.jsonl` beside the task's added questions, append-only.

Why this shape (the contract of issue 38, read back by the collection loader): one JSON line per review,
`{"query_id", "action": accept|edit|reject, "text" (edit only), "grade" (the source passage's, when given),
"rater", "time"}`; the latest line of a question wins, so a second look is a new line and nothing is rewritten.
Unlike a rater's grades file (store.py), several raters may review the same task's questions at once, so the file
is not held locked: each append takes an exclusive lock for the one write and is fsynced before the server
acknowledges it. The collection loader reads every line strictly (custom_tasks/readers/question_reviews.py), so a
line cut by a crash (never acknowledged: the answer waits for the whole line's fsync) is cut off when a server
opens the file or appends, under the lock; a last line without its newline that is a whole review (written by
hand) is closed with one instead. Nothing acknowledged is ever rewritten.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.readers._io import display_path
from custom_tasks.readers.question_reviews import reviews_path

__all__ = ["ACTIONS", "ReadBack", "Review", "ReviewLog", "check_review", "read_reviews", "reviews_path"]

from ...statistics.analysis_errors import AnalysisError
from .rating_store import _fsync_dir

ACTIONS = ("accept", "edit", "reject")
#: the longest question text an edit may hold (a question, not a document)
MAX_TEXT = 2000


@dataclass(frozen=True)
class Review:
    query_id: str
    action: str
    text: str | None
    grade: int | None
    rater: str
    time: str


@dataclass
class ReadBack:
    latest: dict[str, Review] = field(default_factory=dict)  # query id -> its latest review
    warnings: list[str] = field(default_factory=list)
    offset: int = 0  # bytes read: every complete line before it
    lines: int = 0  # lines read
    unended: bool = False  # the last line read had no newline (a `final` read): the next byte may close it


def check_review(action: Any, text: Any, grade: Any, grades: dict[int, str] | None = None) -> None:
    """One line naming what is wrong with a review, or nothing (the server's and the reader's one rule)."""
    if action not in ACTIONS:
        raise AnalysisError(f"action {action!r} is not one of {', '.join(ACTIONS)}")
    if action == "edit":
        if not isinstance(text, str) or not text.strip():
            raise AnalysisError("an edit needs the question's new text")
        if len(text) > MAX_TEXT:
            raise AnalysisError(f"the edited question is {len(text)} characters: at most {MAX_TEXT}")
    elif text is not None:
        raise AnalysisError(f"only an edit carries a text, not {action!r}")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)
                              or (grades is not None and grade not in grades)):
        raise AnalysisError(f"grade {grade!r} is outside the task's scale {sorted(grades or {})}")


def parse_line(line: bytes, where: str, grades: dict[int, str] | None) -> tuple[Review | None, str | None]:
    """A review, or a warning naming the line (a hand-edited or cut line is skipped, the rest kept)."""
    try:
        row = json.loads(line.decode("utf-8", errors="replace"))
        if not isinstance(row, dict):
            raise ValueError
        qid, rater, time = str(row["query_id"]), str(row.get("rater", "")), str(row.get("time", ""))
    except (ValueError, KeyError, TypeError):
        return None, f"{where}: not a review line (JSON with query_id and action): line skipped"
    try:
        check_review(row.get("action"), row.get("text"), row.get("grade"), grades)
    except AnalysisError as e:
        return None, f"{where}: {e}: line skipped"
    return Review(qid, row["action"], row.get("text"), row.get("grade"), rater, time), None


def read_reviews(path: Path, grades: dict[int, str] | None = None, since: ReadBack | None = None,
                 final: bool = False) -> ReadBack:
    """The latest review per question; with `since`, only the lines appended after its offset are read. A last line
    without its newline is left for the next read (another server may be writing it right now), unless `final`: then
    it is read under a shared lock, so no append is half-way, and counted, or named and skipped (cut by a crash)."""
    path = Path(path)
    out = since if since is not None else ReadBack()
    try:
        with open(path, "rb") as f:
            if final:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH)
            f.seek(out.offset)
            data = f.read()
    except FileNotFoundError:
        return out
    start = 1 if out.unended and data.startswith(b"\n") else 0  # the newline that closed a line read before
    end = len(data) if final else data.rfind(b"\n") + 1
    chunk = data[start:end]
    unended = bool(chunk) and not chunk.endswith(b"\n")
    if data:
        out.unended = unended
    for line in (chunk.split(b"\n")[:None if unended else -1] if chunk else []):
        out.lines += 1
        if not line.strip():
            continue
        review, warning = parse_line(line, f"{display_path(path)}:{out.lines}", grades)
        if warning:
            out.warnings.append(warning)
        elif review is not None:
            out.latest[review.query_id] = review
    out.offset += end if end > start else start
    return out


class ReviewLog:
    """Appends reviews to the shared file; `append` returns only once the line is on disk. `repaired` names a line
    cut by a crash that opening the file removed (for the server to say)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise AnalysisError(f"{display_path(self.path.parent)}: the added questions' folder is missing")
        existed = self.path.exists()
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise AnalysisError(f"{display_path(self.path)}: cannot open for appending ({e.strerror})") from None
        if not existed:
            _fsync_dir(self.path.parent)
        self._lock = threading.Lock()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            self.repaired = self._mend()
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _mend(self) -> str | None:
        """Under the lock: end the file on a whole line (see the module's docstring). The cut line's words, or None."""
        size = os.fstat(self._fd).st_size
        if not size or os.pread(self._fd, 1, size - 1) == b"\n":
            return None
        tail_start = max(0, size - 65536)
        tail = os.pread(self._fd, size - tail_start, tail_start)
        cut = tail_start + tail.rfind(b"\n") + 1
        last = tail[cut - tail_start:]
        try:
            whole = isinstance(json.loads(last.decode("utf-8")), dict)
        except ValueError:
            whole = False
        if whole:
            self._write(b"\n")
            return None
        os.ftruncate(self._fd, cut)
        os.fsync(self._fd)
        line = os.pread(self._fd, cut, 0).count(b"\n") + 1 if cut else 1
        return (f"{display_path(self.path)}:{line}: a review cut off by a crash ({len(last)} bytes, never "
                "acknowledged) removed")

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write one review (stamped with the time) durably; the record as written."""
        rec = {**record, "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")}
        line = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # another server's append waits: lines never interleave
            try:
                self._mend()
                self._write(line)  # one write() of a whole line (a kill -9 lands before or after it)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        return rec

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
