"""Advisory file locks (fcntl.flock) so concurrent runs on one results folder never compute the same thing twice.

A lock is a small file next to what it protects. flock locks die with their process, so a killed run
never leaves a lock held; a lock file left on disk is harmless. After locking, the holder checks that
the path still names the file it locked (a cleaner may have removed and recreated it), else retries.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType


class FileLock:
    """Exclusive lock on `path` (created if missing); `blocking=False` -> `acquired` may be False."""

    def __init__(self, path: Path, blocking: bool = True) -> None:
        self.path = Path(path)
        self.blocking = blocking
        self.acquired = False
        self._fd: int | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if self.blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                os.close(fd)
                return False
            except BaseException:
                os.close(fd)
                raise
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd, self.acquired = fd, True
                return True
            os.close(fd)  # the file was replaced while we waited: lock the current one

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd, self.acquired = None, False

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def is_held(path: Path) -> bool:
    """True when a live process holds the lock at `path` (a missing file is not held)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
