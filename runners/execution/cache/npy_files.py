"""The files of the vector store: an array written whole or not at all, and room for the memory maps it opens.

Split from vector_store.py (which keeps the shards' layout and lookups): these two are about the file system.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from ...results.store import tmp_path_for


def save_npy(path: Path, array: np.ndarray) -> None:
    """np.save to a temp name, fsync, rename: readers see the whole file or none."""
    tmp = tmp_path_for(path)
    try:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def room_for_files(needed: int, spare: int = 256) -> None:
    """Each shard and index holds memory maps, an open file each: raise the soft open-file limit if it would bind
    (a default of 1024 is ~500 shards, 25M documents), as far as the hard limit allows."""
    try:
        import resource
    except ImportError:  # not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or needed + spare <= soft:
        return
    want = max(needed + spare, 2 * soft)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
