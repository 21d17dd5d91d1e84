"""Queries identified by content: ids made from the question text, and per-query fingerprints.

* An evalset without a ``query_id`` column gets ids from its question text, never from row numbers:
  ``q-<first 10 hex of sha1(normalised text)>``. Reordering rows keeps every id; a question that repeats an
  earlier one (same normalised text) gets ``-2``, ``-3``... in order of appearance (so does a 40-bit prefix
  collision of two different texts, which is astronomically rare).
* ``text_hash`` / ``labels_hash`` are stored with each run's per-query scores, so a comparison of two results
  (runners/statistics/pairing.py) pairs only queries whose id, text and labels are the same.

Normalised = Unicode NFC with runs of whitespace collapsed to one space and the ends stripped: a re-saved
spreadsheet that re-wraps a cell keeps its ids.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping
from typing import Any

ID_PREFIX = "q-"
ID_HEX = 10


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def text_hash(text: Any) -> str:
    """sha1 hex of the normalised text (non-strings, e.g. mteb's conversation queries: of their JSON)."""
    if not isinstance(text, str):
        text = json.dumps(text, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(normalise(text).encode("utf-8")).hexdigest()


def labels_hash(labels: Mapping[str, Any]) -> str:
    """sha1 hex of one query's labels {doc_id: grade}, independent of their order."""
    items = sorted((str(d), int(g)) for d, g in labels.items())
    return hashlib.sha1(json.dumps(items).encode("utf-8")).hexdigest()


class ContentIds:
    """Makes ids from question texts for one file: ``next_id(text)`` in row order."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def next_id(self, text: Any) -> str:
        base = ID_PREFIX + text_hash("" if text is None else text)[:ID_HEX]
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}-{n}"
