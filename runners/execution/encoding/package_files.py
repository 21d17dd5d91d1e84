"""The file plumbing of offline model packages: an OS file lock polled with a timeout, and the pieces of a
split zip read as one seekable file (offline_packages.py reads the packages through these).

Standard library only, like offline_packages.py.
"""

from __future__ import annotations

import bisect
import io
import os
import time
from pathlib import Path

LOCK_TIMEOUT_S = 1800.0

class OfflineModelError(RuntimeError):
    """An offline model package is installed but unusable (a part missing, mismatched or corrupt).

    The message is one line and names what to install or reinstall.
    """


try:  # POSIX
    import fcntl

    def _try_lock(fh) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fh) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _try_lock(fh) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(fh) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)


class _FileLock:
    """An exclusive lock on a file, polled until ``timeout`` (released by the OS if the process dies)."""

    def __init__(self, path: Path, what: str, timeout: float = LOCK_TIMEOUT_S) -> None:
        self.path, self.what, self.timeout = path, what, timeout
        self._fh = None

    def __enter__(self) -> _FileLock:
        fh = open(self.path, "a+b")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                _try_lock(fh)
                self._fh = fh
                return self
            except OSError:
                if time.monotonic() > deadline:
                    fh.close()
                    raise OfflineModelError(f"waited {self.timeout:.0f}s for another process unpacking {self.what} "
                                            f"(lock {self.path}); try again") from None
                time.sleep(0.1)

    def __exit__(self, *exc) -> None:
        try:
            _unlock(self._fh)
        finally:
            self._fh.close()
            self._fh = None


class _ConcatFile(io.RawIOBase):
    """Read-only, seekable view of several files as one (the pieces of a split zip)."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self._files = []
        try:
            for p in paths:
                self._files.append(open(p, "rb"))
        except BaseException:
            self.close()
            raise
        self._sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._starts = [0]
        for s in self._sizes[:-1]:
            self._starts.append(self._starts[-1] + s)
        self._size = sum(self._sizes)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._size:
            i = bisect.bisect_right(self._starts, self._pos) - 1
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            want = min(len(view) - done, self._starts[i] + self._sizes[i] - self._pos)
            got = f.readinto(view[done:done + want])
            if not got:
                break
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        for f in getattr(self, "_files", ()):
            f.close()
        super().close()
