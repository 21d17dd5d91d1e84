"""When a corpus goes to the disk-backed store (corpus_store.py): the thresholds, without pyarrow.

Apart from corpus_store.py (Arrow) so that reading a small collection, which `stats`, `check` and
`tasks stats` do for tags and labels, never imports pyarrow (part of their start-up budget, issue #10).
"""

from __future__ import annotations

import os
from pathlib import Path

#: a corpus with more documents than this, or a file larger than MIN_BYTES, goes to the store
MIN_DOCS = 200_000
MIN_BYTES = 100 * 2**20
#: overrides MIN_DOCS (0: always use the store; a huge number: never), for tests and benchmarks
MIN_DOCS_ENV = "PRIVATE_MTEB_STORE_MIN_DOCS"


def min_docs() -> int:
    value = os.environ.get(MIN_DOCS_ENV)
    return int(value) if value and value.strip().lstrip("-").isdigit() else MIN_DOCS


def wants_store(path: Path) -> bool:
    """True above the thresholds (``MIN_DOCS`` rows or ``MIN_BYTES``; the env var overrides)."""
    from .readers._io import count_rows_upper_bound  # readers import this module: no cycle at import time

    try:
        size = Path(path).stat().st_size
    except OSError:
        return False
    if os.environ.get(MIN_DOCS_ENV) is None and size > MIN_BYTES:
        return True
    limit = min_docs()
    return limit <= 0 or count_rows_upper_bound(Path(path)) > limit
