"""A rater's append-only file: each judgment is one JSON line, flushed and fsynced before it is acknowledged.

Why this shape: a judging session is hours of a person's work, so the file is never rewritten (a re-grade is a
new line, the last one wins), a server killed mid-write leaves at worst one partial last line (named and
skipped when read back, and closed with a newline before the next append so it cannot swallow the next
judgment), and an exclusive lock on the file keeps two servers from writing as the same rater at once.
Two raters have two files, so they never touch each other's.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Any

from custom_tasks.readers._io import display_path

from ...statistics.analysis_errors import AnalysisError


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RaterLog:
    """The open, locked file of one rater; `append` returns only once the line is on disk."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise AnalysisError(f"{display_path(self.path)} is open in another judging server: grade in that one, "
                                "or stop it first") from None
        if not existed:
            _fsync_dir(self.path.parent)
        self._lock = threading.Lock()
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":  # a line cut by a crash: close it so the next one stands alone
                    self._write(b"\n")

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write one judgment (stamped with the time) durably; the record as written."""
        rec = {**record, "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")}
        line = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            self._write(line)
        return rec

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # releases the lock
            self._fd = -1
