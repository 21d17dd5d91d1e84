"""A pinned earlier commit of this repository, checked out beside the current one, for side-by-side benchmarks.

Seconds on a shared machine move with the load of everything else on it; the ratio of two versions measured
alternately in one session does not. `pinned_checkout` adds a detached `git worktree` of the commit in a temporary
folder (removed afterwards); the benchmark runs both versions with the shared virtual environment, each with
its own PYTHONPATH. Not a script (the leading underscore): tests/test_benchmarks_smoke.py does not run it.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: the release the issue-36 slowdown was measured against ("the previous release")
PINNED = "d1ccbc6"

#: module of the fast deterministic `factory:` encoder, by where each version keeps it
SYNTHETIC_MODULES = ("runners/execution/encoding/synthetic.py", "runners/execution/synthetic.py")


def commit_available(commit: str) -> bool:
    """Whether this checkout's history holds the commit (a shallow CI clone may not)."""
    return subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{commit}^{{commit}}"],
                          capture_output=True).returncode == 0


@contextlib.contextmanager
def pinned_checkout(commit: str) -> Iterator[Path]:
    """A detached worktree of `commit` under a temporary folder, removed (and pruned) on exit."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `kill` still removes the worktree (finally below)
    tmp = Path(tempfile.mkdtemp(prefix="pinned-"))
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), commit],
                   check=True, capture_output=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], capture_output=True)


def synthetic_factory(tree: Path) -> str:
    """The `factory:` path of the synthetic encoder in that checkout (the module moved between versions)."""
    for rel in SYNTHETIC_MODULES:
        if (tree / rel).exists():
            return rel[:-3].replace("/", ".") + ":make_encoder"
    raise SystemExit(f"error: {tree} has no synthetic encoder ({' or '.join(SYNTHETIC_MODULES)})")
