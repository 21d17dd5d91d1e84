"""Leftovers of killed runs: staging folders and temp files whose writer is gone, removed when a run starts.

A run evaluates into `private-mteb/.staging/<pid>-<id>/` (held by a flock while it lives) and writes every file
through a temp name carrying its pid (store.atomic_write_bytes), so what a killed run left is told apart from
what a live one is writing, and a concurrent run's work is never removed.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

from .locks import FileLock
from .store import SIDE

#: temp files carry their writer's pid: `.<name>.<pid>-<random>.tmp`
_TMP_PID = re.compile(r"\.(\d+)-[A-Za-z0-9_]+\.tmp$")
#: a temp file without a pid in its name (older versions) is stale after this long
_TMP_MAX_AGE_S = 600.0


def staging_root(results_dir: Path) -> Path:
    return Path(results_dir) / SIDE / ".staging"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale_tmp(path: Path, now: float) -> bool:
    m = _TMP_PID.search(path.name)
    if m:
        return not _pid_alive(int(m.group(1)))
    try:
        return now - path.stat().st_mtime > _TMP_MAX_AGE_S
    except OSError:
        return False


def clean_leftovers(results_dir: Path, *extra_roots: Path) -> int:
    """Remove staging folders and temp files of runs that are no longer alive; returns how many.

    A staging folder is live while its `<name>.lock` is held (flock dies with the process); a temp
    file while the pid in its name is alive. Best effort: a read-only folder is left as it is.
    """
    removed = 0
    stage = staging_root(results_dir)
    if stage.is_dir():
        entries = sorted(stage.iterdir())
        folders = {e.name for e in entries if e.is_dir()}
        for entry in entries:
            if entry.suffix == ".lock" and entry.stem in folders:
                continue  # handled with its folder
            lock_path = entry if entry.suffix == ".lock" else entry.with_name(entry.name + ".lock")
            try:
                lock = FileLock(lock_path, blocking=False)
                if not lock.acquire():
                    continue
            except OSError:
                continue
            try:
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
                lock_path.unlink(missing_ok=True)
            except OSError:
                pass
            finally:
                lock.release()
    now = time.time()
    roots = [Path(results_dir) / "results", Path(results_dir) / SIDE, *extra_roots]
    seen: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            continue
        for tmp in root.rglob("*.tmp"):
            if tmp in seen or stage in tmp.parents:
                continue
            seen.add(tmp)
            if tmp.is_file() and _stale_tmp(tmp, now):
                try:
                    tmp.unlink()
                    removed += 1
                except OSError:
                    pass
    return removed
